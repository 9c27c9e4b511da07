"""Every wire between the grader and a kernel, in one module both ends import: what each message
holds (the TypedDicts below, each op's a Literal, so the op list is written once), how it is
framed and encoded, and what a reader refuses.

The answer channel: the grader's judging/answer_channel.py asks, answer_server.py in the
student's kernel answers, one frame each way. A frame is a length (8 bytes, network order), then
a payload: "J" and JSON when the data holds no tensor and no bytes (most questions: 2 us against
60 us each way), else "T" and torch.save. A payload is read as data only either way (json, or
torch.load(weights_only=True)), its size first, and bounded (bounds.py) before anything walks
it: whatever wrote it, reading runs nothing. The grader sends Asked {token, request}; the kernel
sends Answered {token, answer}, the answer one of the Answer kinds as trace.portable data (the
encoding the checks' records use too: autograder/trace.py, which a student's kernel has anyway).

The zygote's socket: kernel_relay.py sends KernelWanted as one JSON line (with its stdin, stdout
and stderr), kernel_zygote.py answers KernelStarted once it forked, KernelEnded when the kernel
ended.

`conforming(kind, data)` is the one check of every message read: exactly the fields of `kind`,
each of its type (a bool is no int), or Malformed. This module imports only the standard library
at its top, so the relay, which starts without torch, imports it too."""
import json
import struct
import types
import typing
from typing import Any, Literal, NotRequired, TypedDict, TypeVar

from classgrader.in_kernel import bounds

MAX_FRAME = 64 * 2**20
MAX_MESSAGE = 2000  # of a raised exception's message
HEADER = struct.Struct("!Q")

Record = dict[str, Any]  # a value as trace.portable writes it


# -- the answer channel: requests (grader -> kernel) ---------------------------------------------
class Names(TypedDict):
    """What the answer cells define under these names."""
    op: Literal["names"]
    names: list[str]


class Call(TypedDict):
    """Call a function of the notebook's (`name`) or an object it keeps (`handle`), on inputs as
    data (`args`, `kwargs`) or pickled by the grader (`pickled`: torch.save bytes of both), in
    the caller's autograd mode and random state."""
    op: Literal["call"]
    name: NotRequired[str]
    handle: NotRequired[int]
    args: NotRequired[Record]
    kwargs: NotRequired[Record]
    pickled: NotRequired[bytes]
    grad: bool
    inference: bool
    rng: str  # torch.get_rng_state()'s bytes, base64


class Look(TypedDict):
    """What a kept object is: its items, its length, vars(), a module's or optimizer's state."""
    op: Literal["iterate", "len", "vars", "state"]
    handle: int


class GetAttr(TypedDict):
    op: Literal["getattr"]
    handle: int
    attr: str


class GetItem(TypedDict):
    op: Literal["getitem"]
    handle: int
    key: Record


class Put(TypedDict):
    """A file of the test's (`data`; None: only its folder), or a folder (`folder`), mirrored."""
    op: Literal["put"]
    path: str
    data: bytes | None
    folder: bool


class Fetch(TypedDict):
    """What a call left at a path of the test's."""
    op: Literal["fetch"]
    path: str


class Backward(TypedDict):
    """The gradients of a numbered call's inputs, given those of its outputs."""
    op: Literal["backward"]
    call: int
    grads: Record


Request = Names | Call | Look | GetAttr | GetItem | Put | Fetch | Backward


class Asked(TypedDict):
    token: str
    request: Request


# -- the answer channel: answers (kernel -> grader) ----------------------------------------------
class Found(TypedDict):
    """The answer to Names: the names that hold something callable, and the others' values (a
    name in neither is not defined)."""
    kind: Literal["found"]
    callables: list[str]
    values: dict[str, Any]


class Returned(TypedDict):
    kind: Literal["returned"]
    value: Any


class Called(TypedDict):
    """A call's answer: its result, its inputs after it (what it did in place), and its number
    when what it returns requires grad (for a Backward), else None."""
    kind: Literal["called"]
    result: Any
    args: list[Any]
    kwargs: dict[str, Any]
    call: int | None


class Raised(TypedDict):
    """What the student's code (or the kernel's end) raised: its type's name and its message."""
    kind: Literal["raised"]
    name: str
    message: str


Answer = Found | Returned | Called | Raised


class Answered(TypedDict):
    token: str
    answer: Record  # an Answer as trace.portable data


# -- the zygote's socket -------------------------------------------------------------------------
class KernelWanted(TypedDict):
    """relay -> zygote: the kernel to fork (work_area.jail_spec's jail, or None)."""
    connection_file: str
    cwd: str
    env: dict[str, str]
    jail: dict[str, Any] | None
    arguments: list[str]


class KernelStarted(TypedDict):
    """zygote -> relay, once forked: the kernel's pid and its memory cgroup (None: none)."""
    pid: int
    memory: str | None


class KernelEnded(TypedDict):
    """zygote -> relay, when the kernel ended: its wait status."""
    exit: int


# -- what a reader refuses -----------------------------------------------------------------------
class Malformed(ValueError):
    """A message that is not what its wire carries: an unknown op, a field missing, extra or of
    the wrong type."""


class KernelLost(BaseException):
    """The student's kernel died or timed out while answering: (ename, evalue) for the cell.
    A BaseException, so that no `except Exception` in a test swallows it."""


class NotAFrame(ValueError):
    """Bytes that are neither kind of payload."""


Message = TypeVar("Message")
REQUESTS: dict[str, type] = {op: kind for kind in typing.get_args(Request)
                             for op in typing.get_args(typing.get_type_hints(kind)["op"])}
ANSWERS: dict[str, type] = {typing.get_args(typing.get_type_hints(kind)["kind"])[0]: kind
                            for kind in typing.get_args(Answer)}
OPS = tuple(REQUESTS)


Check = typing.Callable[[object], bool]


def _check(hint: Any) -> Check:
    """Whether a value is of type `hint` (the few kinds the messages use), looking into lists and
    dicts; exact types only, so that True is no int and a str subclass no str. Made once a hint."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return lambda value: True
    if origin is Literal:
        return lambda value: type(value) is str and value in arguments
    if typing.is_typeddict(hint):  # a message within a message (the class run's records hold flags)
        return lambda value: _conforms(hint, value)
    if origin in (types.UnionType, typing.Union):
        options = [_check(option) for option in arguments]
        return lambda value: any(option(value) for option in options)
    if origin is list:
        item = _check(arguments[0])
        return lambda value: type(value) is list and (arguments[0] is Any or all(map(item, value)))
    if origin is dict:
        key, item = _check(arguments[0]), _check(arguments[1])
        return lambda value: type(value) is dict and all(key(k) and item(v) for k, v in value.items())
    kind = type(None) if hint is None else hint
    return lambda value: type(value) is kind


_FIELDS: dict[object, tuple[dict[str, tuple[Any, Check]], frozenset[str]]] = {}


def _fields(kind: object) -> tuple[dict[str, tuple[Any, Check]], frozenset[str]]:
    """A message kind's fields, each with its type and its check, and the required ones."""
    if kind not in _FIELDS:
        hints = typing.get_type_hints(kind)
        _FIELDS[kind] = ({field: (hint, _check(hint)) for field, hint in hints.items()},
                         frozenset(getattr(kind, "__required_keys__", ())))
    return _FIELDS[kind]


def conforming(kind: type[Message], data: object) -> Message:
    """`data` as a `kind` message (a TypedDict above), once it has exactly its fields, each of its
    type; Malformed otherwise."""
    if type(data) is not dict:
        raise Malformed(f"a {kind.__name__} is a dict, not a {type(data).__name__}")
    fields, required = _fields(kind)
    missing, extra = required - data.keys(), data.keys() - fields.keys()
    if missing or extra:
        raise Malformed(f"a {kind.__name__} {'lacks ' + ', '.join(sorted(missing)) if missing else ''}"
                        f"{' and ' if missing and extra else ''}"
                        f"{'has no field ' + ', '.join(sorted(map(str, extra))) if extra else ''}")
    for field, value in data.items():
        hint, check = fields[field]
        if not check(value):
            raise Malformed(f"a {kind.__name__}'s {field} is not a {hint}")
    return typing.cast(Message, data)


def _conforms(kind: type[Message], data: object) -> bool:
    try:
        conforming(kind, data)
    except Malformed:
        return False
    return True


def request(data: object) -> Request:
    """`data` as one of the Request kinds, by its op; Malformed for anything else. A Call names
    a function or a handle (one of them), and carries its inputs as data or pickled."""
    op = data.get("op") if type(data) is dict else None
    if type(op) is not str or op not in REQUESTS:
        raise Malformed(f"no such op: {op!r}")
    checked: Request = conforming(REQUESTS[op], data)
    if checked["op"] == "call":
        if ("name" in checked) == ("handle" in checked):
            raise Malformed("a Call names a function or a handle, one of them")
        if ("pickled" in checked) == ("args" in checked or "kwargs" in checked) or \
                ("args" in checked) != ("kwargs" in checked):
            raise Malformed("a Call carries args and kwargs, or pickled inputs")
    return checked


def asked(data: object) -> Asked:
    """`data` as an Asked: a token, and a request of one of the Request kinds."""
    if type(data) is not dict or data.keys() != {"token", "request"} or type(data["token"]) is not str:
        raise Malformed("an Asked is a token and a request")
    return {"token": data["token"], "request": request(data["request"])}


def answer(data: object) -> Answer:
    """`data` (an Answered's answer, materialized) as one of the Answer kinds; Malformed for
    anything else. A Raised message is cut to MAX_MESSAGE, whatever length the kernel sent."""
    kind = data.get("kind") if type(data) is dict else None
    if type(kind) is not str or kind not in ANSWERS:
        raise Malformed(f"no such answer: {kind!r}")
    checked: Answer = conforming(ANSWERS[kind], data)
    if checked["kind"] == "raised":
        checked["message"] = checked["message"][:MAX_MESSAGE]
    return checked


def raised(error: BaseException) -> Raised:
    return {"kind": "raised", "name": type(error).__name__, "message": str(error)[:MAX_MESSAGE]}


def returned(value: Any) -> Returned:
    return {"kind": "returned", "value": value}


# -- frames and payloads --------------------------------------------------------------------------
class Connection(typing.Protocol):
    def sendall(self, data: bytes, /) -> None: ...
    def recv(self, size: int, /) -> bytes: ...


def send_frame(connection: Connection, payload: bytes) -> None:
    connection.sendall(HEADER.pack(len(payload)) + payload)


def read_frame(connection: Connection, limit: int = MAX_FRAME) -> bytes | None:
    """One frame's payload; None when the connection ended or the frame is over `limit`."""
    header = _read_exactly(connection, HEADER.size)
    if header is None:
        return None
    size: int = HEADER.unpack(header)[0]
    return None if size > limit else _read_exactly(connection, size)


def _read_exactly(connection: Connection, size: int) -> bytes | None:
    parts, left = [], size
    while left:
        chunk = connection.recv(min(left, 2**20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def dumps(data: object) -> bytes:
    """Data (a message of plain values, tensors and bytes) as a frame's payload: JSON refuses
    exactly what needs torch.save (a tensor, bytes), so it is tried first."""
    try:
        return b"J" + json.dumps(data).encode()
    except TypeError:
        import io

        import torch  # here, not above: the relay imports this module and starts without torch
        buffer = io.BytesIO()
        torch.save(data, buffer)
        return b"T" + buffer.getvalue()


def loads(payload: bytes) -> Any:
    """A frame's payload read back as data only, bounded before anything walks it."""
    kind, body = payload[:1], payload[1:]
    if kind == b"J":
        return bounds.check(json.loads(body))
    if kind == b"T":
        import io

        import torch
        return bounds.check(torch.load(io.BytesIO(body), weights_only=True))
    raise NotAFrame("not a frame of the answer channel")


def line(message: KernelWanted | KernelStarted | KernelEnded) -> bytes:
    """A zygote message as the one JSON line it travels as."""
    return json.dumps(message).encode() + b"\n"


def read_line(kind: type[Message], text: str | bytes) -> Message:
    """A zygote message read back from its line; Malformed (a ValueError) for anything else."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise Malformed(f"a {kind.__name__} is one JSON line: {error}") from None
    return conforming(kind, data)
