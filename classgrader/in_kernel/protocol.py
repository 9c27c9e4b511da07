"""The wire between a test judged outside the student's process and the student's kernel: the
one module both ends import (the grader's judging.answer_channel, the kernel's answer_server).

A frame is a length (8 bytes, network order), then a payload: "J" and JSON when the data holds
no tensor and no bytes (most questions: 2 us against 60 us each way), else "T" and torch.save.
A payload is read as data only either way (json, or torch.load(weights_only=True)), its size
first, and bounded (bounds.py) before anything walks it: whatever wrote it, reading runs nothing.

A request is {"op": OP, "token": ..., **fields}; the reply is (token, answer), the answer one of
    ("returned", value, ...)          ("raised", exception type name, message)
and, for "names", {name: ("callable",) | ("value", value) | ("missing",)}. The ops and what
each carries (answer_server.py says what each does):"""
import io
import json
import struct

import torch

from classgrader.in_kernel import bounds

OPS = {
    "names": {"names"},                      # what the answer cells define under these names
    "call": {"args", "kwargs"},              # + "name" | "handle", "grad", "inference", "rng" or "pickled"
    "getattr": {"handle", "attr"},
    "getitem": {"handle", "key"},
    "iterate": {"handle"}, "len": {"handle"}, "vars": {"handle"}, "state": {"handle"},
    "put": {"path"},                         # + "data" | "folder": a file or folder of the test's
    "fetch": {"path"},                       # what a call left at a path of the test's
    "backward": {"call", "grads"},           # gradients of a numbered call's inputs
}
MAX_FRAME = 64 * 2**20
MAX_MESSAGE = 2000  # of a raised exception's message
HEADER = struct.Struct("!Q")


class KernelLost(BaseException):
    """The student's kernel died or timed out while answering: (ename, evalue) for the cell.
    A BaseException, so that no `except Exception` in a test swallows it."""


class NotAFrame(ValueError):
    """Bytes that are neither kind of payload."""


def request(op: str, token: str, **fields) -> dict:
    """A request as the kernel's end expects it; ValueError for an op or fields it does not take."""
    if op not in OPS:
        raise ValueError(f"no such op: {op!r}")
    missing = OPS[op] - set(fields)
    if op == "call" and not ({"name", "handle"} & set(fields)):
        missing.add("name or handle")
    if op == "call" and "pickled" in fields:
        missing -= {"args", "kwargs"}
    if missing:
        raise ValueError(f"a {op!r} request needs {', '.join(sorted(missing))}")
    return {"op": op, "token": token, **fields}


def returned(*values) -> tuple:
    return ("returned", *values)


def raised(error: BaseException) -> tuple:
    return ("raised", type(error).__name__, str(error)[:MAX_MESSAGE])


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


def dumps(data) -> bytes:
    """portable() data (or a request made of it) as a frame's payload: JSON refuses exactly what
    needs torch.save (a tensor, bytes), so it is tried first."""
    try:
        return b"J" + json.dumps(data).encode()
    except TypeError:
        buffer = io.BytesIO()
        torch.save(data, buffer)
        return b"T" + buffer.getvalue()


def loads(payload: bytes):
    """A frame's payload read back as data only, bounded before anything walks it."""
    kind, body = payload[:1], payload[1:]
    if kind == b"J":
        return bounds.check(json.loads(body))
    if kind == b"T":
        return bounds.check(torch.load(io.BytesIO(body), weights_only=True))
    raise NotAFrame("not a frame of the answer channel")
