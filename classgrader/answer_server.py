"""The student's side of a test judged outside their process (judge.py): imported in the
student's grading kernel, it answers the grader's questions about the names the answer cells
define, with data only. It never sees a test: only the names asked about and the inputs of a
call, never an expected value. What it sends back is the student's output, whatever code sent
it; a kernel that rewrites this module only changes its own answers.

    serve_loop(globals())

The grader starts serve_loop once per test. Each request comes as the answer to the kernel's
input() prompt (Jupyter's stdin channel), and each reply goes back as the next prompt's text:
a message each way, no cell execution, no file (answer_channel.py is the other end).
Requests and replies are base64 of torch.save of portable() data, a token pairing them.

Ops: "names" {"names": [...]} -> {name: ("callable",) | ("value", value) | ("missing",)}
     "call" {"name", "args", "kwargs"} -> ("returned", result, args after, kwargs after)
                                          | ("raised", exception type name, message)"""
import base64
import io

import torch

from autograder import trace

MAX_MESSAGE = 2000


def _describe(namespace: dict, name: str):
    if name not in namespace:
        return ("missing",)
    value = namespace[name]
    return ("callable",) if callable(value) else ("value", value)


def _call(namespace: dict, request: dict):
    function = namespace.get(request["name"])
    args = trace.materialize(request["args"])
    kwargs = trace.materialize(request["kwargs"])
    if function is None:
        raise NameError(f"name '{request['name']}' is not defined")
    result = function(*args, **kwargs)
    return ("returned", result, args, kwargs)


def answer(namespace: dict, request: dict):
    """The reply to one request, as a value portable() can write."""
    if request["op"] == "names":
        return {name: _describe(namespace, name) for name in request["names"]}
    try:
        return _call(namespace, request)
    except BaseException as error:  # the student's function may raise anything, exit included
        return ("raised", type(error).__name__, str(error)[:MAX_MESSAGE])


def encode(value) -> str:
    """A value as text for a message: base64 of torch.save of its portable() data."""
    buffer = io.BytesIO()
    torch.save(trace.portable(value), buffer)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def respond(namespace: dict, request: str) -> str:
    """The encoded reply, (token, answer), to one encoded request."""
    data = torch.load(io.BytesIO(base64.b64decode(request)), weights_only=True)
    reply = answer(namespace, data)
    try:
        return encode((data["token"], reply))
    except RecursionError:  # a result nested too deeply to be data
        return encode((data["token"], ("raised", "ValueError", "the result is nested too deeply to read")))


def serve_loop(namespace: dict) -> None:
    """Answer requests read with input() until an empty one; each reply is the next prompt."""
    reply = ""
    while True:
        request = input(reply)
        if not request:
            return
        reply = respond(namespace, request)
