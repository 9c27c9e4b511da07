"""The wire both ends speak: requests the kernel's end takes, frames and payloads read as data."""
import pickle
import socket

import pytest
import torch

from autograder import trace
from classgrader.in_kernel import protocol


def test_a_request_names_a_known_op_and_carries_its_fields():
    assert protocol.request("names", "t1", names=["q1"]) == {"op": "names", "token": "t1", "names": ["q1"]}
    assert protocol.request("call", "t2", name="f", pickled=b"...")["op"] == "call"
    with pytest.raises(ValueError, match="no such op"):
        protocol.request("exec", "t3", code="import os")
    with pytest.raises(ValueError, match="needs handle"):
        protocol.request("getattr", "t4", attr="weight")
    with pytest.raises(ValueError, match="name or handle"):
        protocol.request("call", "t5", args=[], kwargs={})


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
    with pytest.raises(ValueError):
        protocol.loads(protocol.dumps(deep))  # bounds.check: nested past the depth a reply may have


def test_a_frame_over_its_limit_or_cut_short_is_no_frame():
    left, right = socket.socketpair()
    with left, right:
        protocol.send_frame(left, b"J[1]")
        assert protocol.read_frame(right) == b"J[1]"
        protocol.send_frame(left, b"x" * 100)
        assert protocol.read_frame(right, limit=10) is None
    left, right = socket.socketpair()
    with right:
        left.sendall(protocol.HEADER.pack(50) + b"short")
        left.close()
        assert protocol.read_frame(right) is None


def test_a_raised_answer_names_the_exception_and_keeps_its_message_short():
    name, message = protocol.raised(KeyError("x" * 10_000))[1:]
    assert name == "KeyError" and len(message) == protocol.MAX_MESSAGE
    assert protocol.returned(1, 2) == ("returned", 1, 2)
    assert issubclass(protocol.KernelLost, BaseException) and not issubclass(protocol.KernelLost, Exception)
