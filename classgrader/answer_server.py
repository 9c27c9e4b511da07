"""The student's side of a test judged outside their process (judge.py): imported in the
student's grading kernel, it answers the grader's questions about the names the answer cells
define, with data only. It never sees a test: only the names asked about and the inputs of a
call, never an expected value. What it sends back is the student's output, whatever code sent
it; a kernel that rewrites this module only changes its own answers.

    serve(globals(), path)   # started by the grader once per test (answer_channel.py)

Each request and reply is a frame on the grader's socket: torch.save of portable() data, a
token pairing them.

Ops: "names" {"names": [...]} -> {name: ("callable",) | ("value", value) | ("missing",)}
     "call" {"name", "args", "kwargs"} -> ("returned", result, args after, kwargs after)
                                          | ("raised", exception type name, message)"""
import io
import struct

import torch

from autograder import trace

MAX_MESSAGE = 2000
MAX_FRAME = 64 * 2**20
HEADER = struct.Struct("!Q")


def send_frame(connection, payload: bytes) -> None:
    connection.sendall(HEADER.pack(len(payload)) + payload)


def read_frame(connection, limit: int = MAX_FRAME) -> bytes | None:
    """One frame's payload; None when the connection ended or the frame is over `limit`."""
    header = _read_exactly(connection, HEADER.size)
    if header is None:
        return None
    size = HEADER.unpack(header)[0]
    return None if size > limit else _read_exactly(connection, size)


def _read_exactly(connection, size: int) -> bytes | None:
    parts, left = [], size
    while left:
        chunk = connection.recv(min(left, 2**20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


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


def encode(value) -> bytes:
    """A value as the bytes of a frame: torch.save of its portable() data."""
    buffer = io.BytesIO()
    torch.save(trace.portable(value), buffer)
    return buffer.getvalue()


def respond(namespace: dict, request: bytes) -> bytes:
    """The encoded reply, (token, answer), to one encoded request."""
    data = torch.load(io.BytesIO(request), weights_only=True)
    reply = answer(namespace, data)
    try:
        return encode((data["token"], reply))
    except RecursionError:  # a result nested too deeply to be data
        return encode((data["token"], ("raised", "ValueError", "the result is nested too deeply to read")))


def serve(namespace: dict, path: str) -> None:
    """Connect to the grader's socket at `path` and answer each request frame with a reply
    frame, until an empty one."""
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        while True:
            request = read_frame(connection)
            if not request:
                return
            send_frame(connection, respond(namespace, request))
