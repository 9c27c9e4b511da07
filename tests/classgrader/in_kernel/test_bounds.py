"""What a kernel sends is bounded before anything walks it (classgrader/in_kernel/bounds.py): through the
answer channel's frames and through the record files its checks write."""
import io
import os

import pytest
import torch

from classgrader.in_kernel import answer_server, bounds
from classgrader.judging import verify


def shared_chain(levels: int):
    """A few hundred bytes as a pickle, 2**levels nodes as a tree."""
    node = {"plain": 1}
    for _ in range(levels):
        node = {"list": [node, node]}
    return node


def test_a_walk_of_shared_references_is_refused_before_it_starts():
    walked = []

    def walk(node):  # what materialize and rebuild do: a tree walk
        walked.append(1)
        for child in node.get("list", []):
            walk(child)
    small = shared_chain(10)
    walk(small)
    assert len(walked) == 2**11 - 1, "without the check, a walk meets every path once"
    assert bounds.check(small) is small, "a tree of two thousand nodes is fine"
    looked_at = []
    original = bounds._children
    bounds._children = lambda node: looked_at.append(1) or original(node)
    try:
        with pytest.raises(bounds.Unbounded, match="more than"):
            bounds.check(shared_chain(64))  # 2**65 nodes as a tree
    finally:
        bounds._children = original
    assert len(looked_at) < 1000, "counted with each shared part once, not walked"


def test_data_that_contains_itself_or_nests_too_deep_is_refused():
    loop = []
    loop.append(loop)
    with pytest.raises(bounds.Unbounded, match="contains itself"):
        bounds.check({"list": [loop]})
    deep = {"plain": 1}
    for _ in range(bounds.MAX_DEPTH + 1):
        deep = {"list": [deep]}
    with pytest.raises(bounds.Unbounded, match="nested"):
        bounds.check(deep)
    assert bounds.check({"dict": [[{"plain": "a"}, {"tensor": torch.ones(3)}]]})


def test_a_reply_of_shared_references_is_refused_by_the_channel():
    buffer = io.BytesIO()
    torch.save({"tuple": [{"plain": "token"}, shared_chain(64)]}, buffer)
    frame = b"T" + buffer.getvalue()
    assert len(frame) < 5000, "small as bytes"
    with pytest.raises(bounds.Unbounded):
        answer_server.loads(frame)
    honest = answer_server.dumps({"tuple": [{"plain": "token"}, {"tensor": torch.ones(2)}]})
    assert answer_server.loads(honest)["tuple"][0] == {"plain": "token"}


def test_a_record_file_of_shared_references_is_refused_unread(tmp_path):
    record = [{"kind": "audit", "name": "audit", "got": shared_chain(64), "expected": {"plain": None}, "options": {}}]
    torch.save(record, tmp_path / f"{os.getpid()}-000001.pt")
    with pytest.raises(bounds.Unbounded):
        verify.read_records([str(tmp_path / f"{os.getpid()}-000001.pt")])
