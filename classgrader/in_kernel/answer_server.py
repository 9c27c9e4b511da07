"""The student's side of a test judged outside their process (judge.py): imported in the
student's grading kernel, it answers the grader's questions about the names the answer cells
define, with data only. It never sees a test: only the names asked about and the inputs of a
call, never an expected value. What it sends back is the student's output, whatever code sent
it; a kernel that rewrites this module only changes its own answers.

    serve(globals(), path)   # started by the grader once per test (answer_channel.py)

Each request and answer is a frame on the grader's socket, of a kind protocol.py names
(Names, Call, GetAttr, GetItem, Look, Put, Fetch, Backward; Found, Returned, Called, Raised):
portable() data, a token pairing them. A request that is not one of them is answered Raised.

A call's inputs may come pickled ({"pickled": torch.save bytes of (args, kwargs)}) when the test
built them itself (a model, an optimizer over its parameters, a loader, a lambda) or some are
views of others or hang from its graphs: the grader wrote them, so loading them here is safe,
and one pickle keeps what they share (the optimizer's parameters are the model's, a view's
storage its base's; graphs are computed again here: replay). The function gets copies;
"state" hands back what it did to a module or an optimizer (values, gradients, requires_grad,
training modes; the optimizer's state), as data. A call runs in the caller's autograd mode and
random state (as_called), and what it returns that it was given goes back as a reference to the
grader's own object (identity.Given).

What is not data (a module, an optimizer, a generator, a bound method) is kept here, in a table
that lives as long as the test's conversation, and sent as a handle: its number, type name, the
torch classes it derives from and whether it can be called. The grader's stand-in for it
(judge.RemoteObject) asks about it by number; a number this table never gave out is refused."""
import contextlib
import io

import torch

from autograder import trace
from classgrader.in_kernel import autograd_bridge, identity, protocol
from classgrader.in_kernel.protocol import Answer, Request, dumps, loads, raised, read_frame, returned, send_frame


def _found(namespace: dict, names: list[str]) -> protocol.Found:
    defined = [name for name in names if name in namespace]
    return {"kind": "found", "callables": [name for name in defined if callable(namespace[name])],
            "values": {name: namespace[name] for name in defined if not callable(namespace[name])}}


MAX_ITEMS = 100_000  # what one "iterate" lists: a generator without end is not data


def torch_bases(kind: type) -> list[str]:
    """The torch classes `kind` derives from, nearest first, as module.qualname."""
    return [f"{base.__module__}.{base.__qualname__}" for base in kind.__mro__
            if base.__module__.split(".")[0] == "torch"]


class Handles:
    """The objects this conversation sent as handles, by number (the same object, the same
    number), kept alive until it ends."""

    def __init__(self):
        self.objects, self.numbers = [], {}
        self.calls = autograd_bridge.Calls()  # calls whose results require grad, for "backward"

    def record(self, value) -> dict:
        """portable()'s `objects`: what the grader gets for a value that is not data."""
        if type(value) is identity.Given:
            return {"given": value.number} if value.path is None else {"given_path": trace.portable(value.path)}
        if id(value) not in self.numbers:
            self.numbers[id(value)] = len(self.objects)
            self.objects.append(value)
        kind = type(value)
        return {"handle": self.numbers[id(value)], "object": f"{kind.__module__}.{kind.__qualname__}",
                "callable": callable(value), "bases": torch_bases(kind)}

    def find(self, record: dict):
        """materialize()'s `handles`: the object a handle the grader sent back stands for."""
        number = record["handle"]
        if type(number) is not int or not 0 <= number < len(self.objects):
            raise ValueError(f"no such handle: {number!r}")
        return self.objects[number]


def state_of(target):
    """What a call may have changed in a module or an optimizer, as data."""
    if isinstance(target, torch.nn.Module):
        return {"parameters": [[name, p.detach(), p.requires_grad, p.grad] for name, p in target.named_parameters()],
                "buffers": [[name, b] for name, b in target.named_buffers()],
                "training": [m.training for m in target.modules()]}
    if isinstance(target, torch.optim.Optimizer):
        return target.state_dict()
    raise TypeError(f"no state to send for a {type(target).__qualname__}")


_namespace: dict = {}  # the notebook's names, as the last request met them (defined_in_notebook)


def defined_in_notebook(qualname: str):
    """What the notebook's own cells define under `qualname` (a class or function of the
    course's setup cells, which a pickled input names: the grader ran the same cells)."""
    head, *rest = str(qualname).split(".")
    if head not in _namespace:
        raise AttributeError(f"the notebook defines no {qualname}")
    value = _namespace[head]
    for name in rest:
        value = getattr(value, name)
    return value


def function_from_code(code: bytes, name: str, used: dict, defaults, kwdefaults, closure):
    """A function the test defined (a lambda it passes to the student's function), rebuilt from
    what remote._by_code sent: its code runs here, on the values it names, as the test's would."""
    import builtins
    import marshal
    import types
    function = types.FunctionType(marshal.loads(code), {"__builtins__": builtins, **used}, str(name), defaults,
                                  None if closure is None else tuple(types.CellType(value) for value in closure))
    function.__kwdefaults__ = kwdefaults
    return function


def replay(func, args, kwargs):
    """A tensor the test computed with autograd, computed again here from the same inputs (a
    torch.Tensor method when named by a string), recording its graph (judging/graph_replay.py)."""
    if isinstance(func, str):
        func = getattr(torch.Tensor, func)
    with torch.enable_grad():
        return func(*args, **kwargs)


def _call(namespace: dict, request: protocol.Call, handles: Handles) -> protocol.Called:
    if "handle" in request:
        function = handles.find({"handle": request["handle"]})
    else:
        function = namespace.get(request["name"])
        if function is None:
            raise NameError(f"name '{request['name']}' is not defined")
    identity.MET.clear()
    if "pickled" in request:  # written by the grader: see the module's docstring
        args, kwargs = torch.load(io.BytesIO(request["pickled"]), weights_only=False)
    else:
        args = trace.materialize(request["args"], handles.find)
        kwargs = trace.materialize(request["kwargs"], handles.find)
    given = identity.given_objects(args, kwargs)
    inputs = autograd_bridge.prepare((args, kwargs))
    with as_called(request):
        result = function(*args, **kwargs)
    call = handles.calls.keep(inputs, result)
    return {"kind": "called", "result": identity.as_given(result, given), "args": args, "kwargs": kwargs,
            "call": call}


@contextlib.contextmanager
def as_called(request: protocol.Call):
    """The caller's autograd mode and random state (remote.caller_state) for one call; this
    process's own random state is back afterwards."""
    import base64
    saved = torch.get_rng_state()
    try:
        state = bytearray(base64.b64decode(request["rng"], validate=True))
        torch.set_rng_state(torch.frombuffer(state, dtype=torch.uint8))
        with torch.inference_mode(request["inference"]), torch.set_grad_enabled(request["grad"]):
            yield
    finally:
        torch.set_rng_state(saved)


MAX_FILES = 100  # what one "fetch" of a folder sends back


def _file(request: protocol.Put | protocol.Fetch) -> protocol.Returned:
    """The test's files, which its calls read or write (a checkpoint), mirrored in this sandbox's
    own file system. Put: the file where the grader has it (data None: only its folder), or the
    folder itself. Fetch: what is there now, as bytes for a file, or [name, bytes] pairs for the
    regular files of a folder; None when nothing is."""
    import os
    path = request["path"]
    if request["op"] == "put":
        os.makedirs(path if request["folder"] else os.path.dirname(path), exist_ok=True)
        if request["data"] is not None:
            with open(path, "wb") as handle:
                handle.write(request["data"])
        return returned(None)
    if os.path.isdir(path):
        files = sorted(name for name in os.listdir(path) if os.path.isfile(os.path.join(path, name)))[:MAX_FILES]
        return returned([[name, _read(os.path.join(path, name))] for name in files])
    return returned(_read(path) if os.path.isfile(path) else None)


def _read(path: str) -> bytes | None:
    import os
    if os.path.getsize(path) > protocol.MAX_FRAME // 4:
        return None
    with open(path, "rb") as handle:
        return handle.read()


def _about(request: Request, handles: Handles) -> protocol.Returned:
    """An op on a handle: what the grader's stand-in asks of the object it stands for."""
    if request["op"] == "put" or request["op"] == "fetch":
        return _file(request)
    if request["op"] == "backward":
        grads = trace.materialize(request["grads"], handles.find)
        return returned(handles.calls.backward(request["call"], grads if isinstance(grads, list) else []))
    if request["op"] == "names" or request["op"] == "call":
        raise ValueError(f"not an op on a handle: {request['op']}")
    target = handles.find({"handle": request["handle"]})
    if request["op"] == "getattr":
        return returned(getattr(target, request["attr"]))
    if request["op"] == "getitem":
        return returned(target[trace.materialize(request["key"], handles.find)])
    op = request["op"]
    if op == "iterate":
        items: list = []
        for item in target:
            if len(items) == MAX_ITEMS:
                raise ValueError(f"more than {MAX_ITEMS} items")
            items.append(item)
        return returned(items)
    if op == "len":
        return returned(len(target))
    if op == "vars":
        return returned(dict(vars(target)))
    return returned(state_of(target))


def answer(namespace: dict, data: object, handles: Handles | None = None) -> Answer:
    """The answer to one request (`data`, refused unless it is one of protocol's Request kinds),
    as a value portable() can write."""
    handles = handles if handles is not None else Handles()
    global _namespace
    _namespace = namespace
    try:
        request = protocol.request(data)
        if request["op"] == "names":
            return _found(namespace, request["names"])
        if request["op"] == "call":
            return _call(namespace, request, handles)
        return _about(request, handles)
    except BaseException as error:  # the student's function may raise anything, exit included
        return raised(error)


def respond(namespace: dict, payload: bytes, handles: Handles | None = None) -> bytes:
    """The encoded protocol.Answered to one encoded protocol.Asked (Raised, under the token it
    carries, if any, when it is not one)."""
    handles = handles if handles is not None else Handles()
    data = loads(payload)
    token = data.get("token") if type(data) is dict and type(data.get("token")) is str else ""
    try:
        reply = answer(namespace, protocol.asked(data)["request"], handles)
    except protocol.Malformed as error:
        reply = raised(error)
    try:
        return dumps({"token": token, "answer": trace.portable(reply, handles.record)})
    except RecursionError:  # a result nested too deeply to be data
        return dumps({"token": token, "answer": trace.portable(
            raised(ValueError("the result is nested too deeply to read")))})


def serve(namespace: dict, path: str) -> None:
    """Connect to the grader's socket at `path` and answer each request frame with a reply
    frame, until an empty one."""
    import socket
    handles = Handles()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        while True:
            request = read_frame(connection)
            if not request:
                return
            send_frame(connection, respond(namespace, request, handles))
