"""autograd_bridge, the kernel's side: the calls whose results hang from a graph are kept for
the grader's backward, and both sides find a call's tensors in the same order (the whole bridge,
both sides at once, is tests/classgrader/judging/test_autograd_bridge.py)."""
import pytest
import torch

from classgrader.in_kernel import autograd_bridge


def test_the_kernel_keeps_only_calls_with_a_graph_and_refuses_numbers_it_never_gave():
    calls = autograd_bridge.Calls()
    x = torch.ones(2, requires_grad=True)
    inputs = autograd_bridge.prepare(([x], {}))
    assert calls.keep(inputs, torch.ones(2)) is None and calls.keep(inputs, x) is None  # no graph behind either
    number = calls.keep(inputs, (x * 3).sum())
    (first,) = calls.backward(number, [torch.tensor(1.0)])
    (second,) = calls.backward(number, [torch.tensor(2.0)])
    assert torch.equal(first, torch.full((2,), 3.0)) and torch.equal(second, torch.full((2,), 6.0))
    assert x.grad is None  # each backward's gradient went back to the grader, not onto the copy
    for forged in [7, -1, "0", None]:
        with pytest.raises(ValueError, match="no such call"):
            calls.backward(forged, [torch.tensor(1.0)])


def test_both_sides_walk_a_calls_tensors_in_the_same_order():
    a, b, c = torch.zeros(1), torch.ones(1), torch.full((1,), 2.0)
    assert [t.item() for t in autograd_bridge.tensors_in(([a, {"k": b, "j": 3}], {"c": c}))] == [0.0, 1.0, 2.0]

