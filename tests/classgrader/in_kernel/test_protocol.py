"""The wires both ends speak: every message kind travels and comes back the same, anything else
(an unknown op or kind, a field missing, extra or of the wrong type, a frame too big or nested
too deep) is refused before it is used, and payloads are read as data only."""
import pickle
import socket

import pytest
import torch

from autograder import trace
from classgrader.in_kernel import bounds, protocol

REQUESTS = [
    {"op": "names", "names": ["q1", "model"]},
    {"op": "call", "name": "f", "args": trace.portable([1, torch.ones(2)]), "kwargs": trace.portable({"k": "v"}),
     "grad": True, "inference": False, "rng": "AAAA"},
    {"op": "call", "handle": 3, "pickled": b"\x80\x04.", "grad": False, "inference": True, "rng": ""},
    {"op": "getattr", "handle": 0, "attr": "weight"},
    {"op": "getitem", "handle": 0, "key": trace.portable(2)},
    *({"op": op, "handle": 1} for op in ("iterate", "len", "vars", "state")),
    {"op": "put", "path": "/w/ckpt.pt", "data": b"bytes", "folder": False},
    {"op": "put", "path": "/w/runs", "data": None, "folder": True},
    {"op": "fetch", "path": "/w/ckpt.pt"},
    {"op": "backward", "call": 0, "grads": trace.portable([torch.ones(1), None])},
]
ANSWERS = [
    {"kind": "found", "callables": ["f"], "values": {"q1": "c", "w": torch.ones(2)}},
    {"kind": "returned", "value": [1, (2, "three")]},
    {"kind": "called", "result": torch.zeros(1), "args": [torch.ones(1)], "kwargs": {"lr": 0.1}, "call": None},
    {"kind": "called", "result": 4, "args": [], "kwargs": {}, "call": 7},
    {"kind": "raised", "name": "ValueError", "message": "no negative sizes"},
]


def over_the_wire(data):
    return protocol.loads(protocol.dumps(data))


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


def test_the_op_list_is_written_once_in_the_request_kinds():
    assert set(protocol.OPS) == {"names", "call", "getattr", "getitem", "iterate", "len", "vars", "state",
                                 "put", "fetch", "backward"}
    assert {request["op"] for request in REQUESTS} == set(protocol.OPS)  # each kind is exercised below


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: r["op"])
def test_every_request_kind_travels_and_is_taken_as_itself(request_):
    asked = protocol.asked(over_the_wire({"token": "t1", "request": request_}))
    assert asked["token"] == "t1" and same(asked["request"], request_)


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda a: f"{a['kind']}")
def test_every_answer_kind_travels_and_is_taken_as_itself(answer):
    data = over_the_wire({"token": "t2", "answer": trace.portable(answer)})
    answered = protocol.conforming(protocol.Answered, data)
    assert answered["token"] == "t2" and same(protocol.answer(trace.materialize(answered["answer"])), answer)


FORGED_REQUESTS = {
    "an unknown op": {"op": "exec", "code": "import os"},
    "no op": {"names": ["q1"]},
    "a field missing": {"op": "getattr", "attr": "weight"},
    "a field it does not have": {"op": "len", "handle": 0, "code": "import os"},
    "a bool for an int": {"op": "len", "handle": True},
    "a str for a list": {"op": "names", "names": "q1"},
    "a list of the wrong items": {"op": "names", "names": ["q1", 2]},
    "a call naming both": {"op": "call", "name": "f", "handle": 0, "pickled": b"", "grad": True, "inference": False,
                           "rng": ""},
    "a call naming neither": {"op": "call", "pickled": b"", "grad": True, "inference": False, "rng": ""},
    "a call with inputs twice": {"op": "call", "name": "f", "pickled": b"", "args": {"list": []},
                                 "kwargs": {"dict": []}, "grad": True, "inference": False, "rng": ""},
    "a call without kwargs": {"op": "call", "name": "f", "args": {"list": []}, "grad": True, "inference": False,
                              "rng": ""},
    "not a dict": ["names", ["q1"]],
}


@pytest.mark.parametrize("forged", FORGED_REQUESTS.values(), ids=FORGED_REQUESTS.keys())
def test_a_request_of_no_kind_is_refused(forged):
    with pytest.raises(protocol.Malformed):
        protocol.request(forged)
    with pytest.raises(protocol.Malformed):
        protocol.asked({"token": "t", "request": forged})


def test_a_request_without_its_token_is_refused():
    for envelope in ({"request": REQUESTS[0]}, {"token": 7, "request": REQUESTS[0]},
                     {"token": "t", "request": REQUESTS[0], "more": 1}):
        with pytest.raises(protocol.Malformed):
            protocol.asked(envelope)


FORGED_ANSWERS = {
    "an unknown kind": {"kind": "exec", "code": "import os"},
    "a positional tuple": ("returned", 1),
    "a field missing": {"kind": "called", "result": 1, "args": [], "kwargs": {}},
    "a field it does not have": {"kind": "returned", "value": 1, "also": 2},
    "a bool for a call number": {"kind": "called", "result": 1, "args": [], "kwargs": {}, "call": True},
    "a tuple for the args": {"kind": "called", "result": 1, "args": (1,), "kwargs": {}, "call": None},
    "a keyword that is no str": {"kind": "called", "result": 1, "args": [], "kwargs": {1: 2}, "call": None},
    "a name that is no str": {"kind": "raised", "name": ValueError, "message": "m"},
    "callables that are no names": {"kind": "found", "callables": [None], "values": {}},
}


@pytest.mark.parametrize("forged", FORGED_ANSWERS.values(), ids=FORGED_ANSWERS.keys())
def test_an_answer_of_no_kind_is_refused(forged):
    with pytest.raises(protocol.Malformed):
        protocol.answer(forged)


def test_a_raised_answer_keeps_its_message_short_whoever_wrote_it():
    made = protocol.raised(KeyError("x" * 10_000))
    assert made["name"] == "KeyError" and len(made["message"]) == protocol.MAX_MESSAGE
    forged = protocol.answer({"kind": "raised", "name": "E", "message": "y" * 10_000})
    assert len(forged["message"]) == protocol.MAX_MESSAGE
    assert issubclass(protocol.KernelLost, BaseException) and not issubclass(protocol.KernelLost, Exception)


ZYGOTE_MESSAGES = [
    (protocol.KernelWanted, {"connection_file": "/r/k.json", "cwd": "/w", "env": {"HOME": "/w"},
                             "jail": {"workdir": "/w"}, "arguments": ["--x=1"]}),
    (protocol.KernelWanted, {"connection_file": "/r/k.json", "cwd": "/w", "env": {}, "jail": None, "arguments": []}),
    (protocol.KernelStarted, {"pid": 41, "memory": "/sys/fs/cgroup/k"}),
    (protocol.KernelStarted, {"pid": 41, "memory": None}),
    (protocol.KernelEnded, {"exit": 3 << 8}),
]


@pytest.mark.parametrize(("kind", "message"), ZYGOTE_MESSAGES, ids=lambda m: getattr(m, "__name__", ""))
def test_every_zygote_message_travels_as_one_line(kind, message):
    line = protocol.line(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert protocol.read_line(kind, line) == message


@pytest.mark.parametrize(("kind", "line"), [
    (protocol.KernelWanted, b""),                                             # a relay gone before it asked
    (protocol.KernelWanted, b"not json\n"),
    (protocol.KernelWanted, b'{"connection_file": "/r/k.json", "cwd": "/w"}\n'),  # fields missing
    (protocol.KernelWanted, b'{"connection_file": "/r/k.json", "cwd": "/w", "env": {"A": 1}, "jail": null, '
                            b'"arguments": []}\n'),                             # an environment value no str
    (protocol.KernelStarted, b'{"pid": "41", "memory": null}\n'),
    (protocol.KernelStarted, b'{"pid": 41}\n'),
    (protocol.KernelEnded, b'{"exit": 1.5}\n'),
])
def test_a_zygote_message_of_no_kind_is_refused(kind, line):
    with pytest.raises(protocol.Malformed):
        protocol.read_line(kind, line)


def test_a_payload_is_json_without_tensors_and_torch_save_with_them():
    assert protocol.dumps({"op": "names", "names": ["q1"]}).startswith(b"J")
    with_tensor = protocol.dumps(trace.portable([torch.ones(2), float("nan")]))
    assert with_tensor.startswith(b"T")
    back = trace.materialize(protocol.loads(with_tensor))
    assert torch.equal(back[0], torch.ones(2)) and back[1] != back[1]
    assert protocol.loads(protocol.dumps({"plain": float("inf")})) == {"plain": float("inf")}


def test_a_payload_is_read_as_data_only_and_bounded():
    with pytest.raises(protocol.NotAFrame):
        protocol.loads(pickle.dumps(print))  # neither kind of payload: never unpickled
    with pytest.raises(pickle.UnpicklingError):
        protocol.loads(b"T" + pickle.dumps(print, protocol=2))  # torch.load(weights_only=True) refuses it
    deep = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(bounds.Unbounded):
        protocol.loads(protocol.dumps(deep))  # nested past the depth a message may have
    shared = [0]
    for _ in range(30):
        shared = [shared, shared]  # small as a pickle, 2^30 values to a walk
    with pytest.raises(bounds.Unbounded):
        protocol.loads(protocol.dumps({"token": "t", "answer": torch.ones(1), "x": shared}))


def test_a_frame_over_its_limit_or_cut_short_is_no_frame():
    left, right = socket.socketpair()
    with left, right:
        protocol.send_frame(left, b"J[1]")
        assert protocol.read_frame(right) == b"J[1]"
        protocol.send_frame(left, b"x" * 100)
        assert protocol.read_frame(right, limit=10) is None
    left, right = socket.socketpair()
    with right:
        left.sendall(protocol.HEADER.pack(protocol.MAX_FRAME + 1))  # read no further than its header
        left.close()
        assert protocol.read_frame(right) is None
    left, right = socket.socketpair()
    with right:
        left.sendall(protocol.HEADER.pack(50) + b"short")
        left.close()
        assert protocol.read_frame(right) is None
