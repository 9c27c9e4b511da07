"""graph_replay: a tensor the test computed with autograd reaches the student's kernel with its
graph."""
import torch

from answering import Student, error_of
from classgrader.judging import graph_replay, judge

WALK = """
def walk(t):
    ops, leaves, seen, stack = [], [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions)
    return sorted(ops), leaves
"""
WALK_TEST = """
w = torch.randn(3, requires_grad=True)
b = torch.randn((), requires_grad=True)
shared = torch.tanh(w * 2)
out = (shared ** 2 + shared * b).sum()   # a diamond, and Python's ** operator
ops, leaves = walk(out)
check_value(ops, ["AddBackward0", "MulBackward0", "MulBackward0", "PowBackward0", "SumBackward0", "TanhBackward0"],
            name="the graph's nodes", reveal=True)
check_value(sorted(id(leaf) for leaf in leaves), sorted([id(w), id(b)]), name="the leaves are the test's own")
check_tensor(out.detach(), ((torch.tanh(w * 2) ** 2) + torch.tanh(w * 2) * b).sum().detach(), name="its value")
"""


def test_a_graph_the_test_computed_reaches_the_student_whole_and_its_leaves_come_back_as_themselves(monkeypatch):
    student = Student(WALK)
    assert error_of(student.judged(WALK_TEST, {"walk"})) is None
    assert any("pickled" in request for request in student.requests)
    # Without it, the tensor reaches the kernel as data, a leaf: a walk finds no node to check,
    # and a shadow of a graph-walking test could check nothing.
    monkeypatch.setattr(judge, "looks_at_graphs", lambda code: False)
    assert "the graph's nodes: wrong value" in error_of(Student(WALK).judged(WALK_TEST, {"walk"}))


def test_what_would_not_replay_exactly_crosses_as_a_plain_tensor():
    w = torch.randn(4, requires_grad=True)
    with graph_replay.recording():
        dropped = torch.nn.functional.dropout(w * 1.0, 0.5)   # random: again, it would differ
        changed = w * 3.0
        with torch.no_grad():
            changed.add_(1.0)                                  # changed in place since
        kept = torch.tanh(w)
        assert graph_replay.recipe(dropped) is None and graph_replay.recipe(changed) is None
        assert graph_replay.recipe(kept) is not None and graph_replay.recipe(w) is None   # a leaf has none
    assert graph_replay.recipe(kept) is None  # nothing is noted once the test is over
