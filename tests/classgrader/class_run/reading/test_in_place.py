"""in_place: the writes into a parameter a function never binds again, and the honest shapes
that are not read as such."""
import ast

import pytest

from classgrader.class_run.reading.in_place import writes

IMPORTED = {"torch": "torch", "nn": "torch.nn", "init": "torch.nn.init"}


def written(code: str, in_class: bool = False) -> list[str]:
    function = ast.parse(code).body[0]
    return [name for _, name in writes(function, in_class, IMPORTED)]


@pytest.mark.parametrize("body", [
    "x.sub_(x.mean(0))", "x.data = x.data * 0", "x.data[0] = 1", "x[:] = 0", "x[0] -= 1",
    "torch.add(x, 1, out=x)", "torch.zero_(x)", "init.zeros_(x)", "x.clamp_(min=0)",
])
def test_each_kind_of_write_into_a_handed_tensor_is_found(body):
    assert written(f"def f(x):\n    {body}\n    return x") == ["x"]


@pytest.mark.parametrize("body", [
    "n += 1",                      # an integer bound anew
    "batch[k] = 0",                # a dict filled by a name
    "batch['seen'] = True",        # or by a string
    "x.requires_grad_()",          # the graph's flag, no value
    "x = x.clone()\n    x.zero_()",  # bound again: the function's own from there on
])
def test_honest_shapes_are_not_writes(body):
    assert written(f"def f(x, n=0, batch=None, k=None):\n    {body}\n    return x") == []


def test_a_method_s_own_object_is_its_own_and_a_static_method_has_none():
    assert written("def reset(self):\n    self.zero_()", in_class=True) == []
    assert written("@staticmethod\ndef reset(x):\n    x.zero_()", in_class=True) == ["x"]


def test_a_nested_function_s_writes_are_its_own():
    assert written("def outer(x):\n    def inner(y):\n        y.zero_()\n    return inner") == []
