"""integrity.findings: the grader's tools as the zygote found them, compared with now."""
import pytest
import torch

import autograder
from autograder import checks
from classgrader.in_kernel import integrity


def test_nothing_found_when_nothing_changed():
    assert integrity.findings() == []


@pytest.mark.parametrize(("owner", "name"), [(torch, "isclose"), (torch.Tensor, "__eq__"), (autograder, "check_value"),
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


def test_a_swapped_code_is_named_though_the_object_is_the_same(covered):
    original_code, original = checks.check_value.__code__, checks.check_value
    checks.check_value.__code__ = (lambda got, expected, *, name="", reveal=False, rel_tol=0, abs_tol=0: None).__code__
    try:
        assert checks.check_value is original  # an identity check sees nothing: the route
        found = integrity.findings()
    finally:
        checks.check_value.__code__ = original_code
    assert "autograder.checks.check_value replaced" in found and "autograder.check_value replaced" in found
    assert integrity.findings() == []
    covered("a check helper whose __code__ is swapped is the same object, and is named by the audit")


def test_swapped_defaults_and_the_audits_own_code_are_named():
    defaults = checks.check_value.__kwdefaults__
    checks.check_value.__kwdefaults__ = {**defaults, "abs_tol": 1e9}  # everything "close enough"
    try:
        assert "autograder.checks.check_value replaced" in integrity.findings()
    finally:
        checks.check_value.__kwdefaults__ = defaults
    code = integrity.audit.__code__
    integrity.audit.__code__ = (lambda: None).__code__
    try:
        assert "classgrader.in_kernel.integrity.audit replaced" in integrity.findings()
    finally:
        integrity.audit.__code__ = code
    assert integrity.findings() == []


def test_shell_hooks_that_hide_errors_are_named(covered):
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    integrity._baseline.clear()
    try:
        assert integrity.findings() == []  # the baseline, before any student code
        shell.showtraceback = lambda *a, **k: None
        shell.events.register("post_run_cell", lambda result: setattr(result, "error_in_exec", None))
        found = integrity.findings()
    finally:
        integrity._baseline.clear()
        InteractiveShell.clear_instance()
    assert "shell method showtraceback changed" in found and "event callback changed" in found
    covered("a replaced showtraceback and an error-clearing post_run_cell callback are named by the audit")
