"""integrity.findings: the grader's tools as the zygote found them, compared with now."""
import pytest
import torch

import autograder
from autograder import checks
from classgrader import integrity


def test_nothing_found_when_nothing_changed():
    assert integrity.findings() == []


@pytest.mark.parametrize("owner, name", [(torch, "isclose"), (torch.Tensor, "__eq__"), (autograder, "check_value"),
                                         (checks, "_check_values"), (integrity.trace, "record")])
def test_a_replaced_tool_is_named(monkeypatch, owner, name):
    monkeypatch.setattr(owner, name, lambda *a, **k: True)
    label = {torch: "torch", torch.Tensor: "torch.Tensor", autograder: "autograder", checks: "autograder.checks",
             integrity.trace: "autograder.trace"}[owner]
    assert f"{label}.{name} replaced" in integrity.findings()


def test_a_replaced_module_and_a_trace_function_are_named(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "autograder.checks", object())
    assert "module autograder.checks replaced in sys.modules" in integrity.findings()
    monkeypatch.undo()
    sys.settrace(lambda *a: None)
    try:
        assert "a trace or profile function installed" in integrity.findings()
    finally:
        sys.settrace(None)
