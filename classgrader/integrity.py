"""Has student code changed how the grader's checks behave? Imported by the kernel zygote
before any student code exists, so the originals below are the real ones; the grader calls
`audit()` after every student cell and after every test cell (see isolated_execute.py).

An audit that finds nothing still writes a record: an audit that never ran (its cell turned
into `pass` by an input transformer, say) is then noticed by its absence."""
import builtins
import json
import os
import sys

import torch

import autograder
from autograder import checks, misconceptions, quiz, trace

# What a tamperer would replace to make wrong answers pass.
WATCHED = {
    "torch": (torch, ["allclose", "isclose", "equal", "eq", "ne", "all", "any", "is_tensor",
                      "tensor", "as_tensor", "testing", "load", "save"]),
    "torch.Tensor": (torch.Tensor, ["__eq__", "__ne__", "__bool__", "eq", "equal", "allclose",
                                    "isclose", "all", "any", "item", "tolist", "detach", "cpu", "to"]),
    "torch.testing": (torch.testing, ["assert_close"]),
    "autograder": (autograder, ["check_tensor", "check_value", "check_keys", "check_raises",
                                "check_answer", "check_choice", "pitfall_if", "GradingError"]),
    "autograder.checks": (checks, ["check_tensor", "check_value", "check_keys", "check_raises",
                                   "_check_values", "_check_graph", "_same_device", "GradingError",
                                   "record"]),
    "autograder.quiz": (quiz, ["check_answer", "check_choice", "record"]),
    "autograder.misconceptions": (misconceptions, ["pitfall_if", "record"]),
    "autograder.trace": (trace, ["record", "portable", "flush", "has_tensor"]),
    "json": (json, ["dump", "dumps"]),
    "builtins": (builtins, ["isinstance", "type", "getattr", "len", "repr", "str", "bool", "int",
                            "float", "tuple", "__import__", "AssertionError", "Exception"]),
}
ORIGINALS = {(owner, name): getattr(obj, name) for owner, (obj, names) in WATCHED.items()
             for name in names}
MODULES = {name: sys.modules[name] for name in
           ("torch", "autograder", "autograder.checks", "autograder.quiz", "autograder.misconceptions",
            "autograder.trace", "builtins")}
_baseline = {}


def _shell_hooks():
    from IPython import get_ipython
    shell = get_ipython()
    if shell is None:
        return {}
    # Identities, not counts: swapping one transformer for another is as bad as adding one.
    return {"input transformer": tuple(map(id, shell.input_transformers_cleanup + shell.input_transformers_post)),
            "AST transformer": tuple(map(id, shell.ast_transformers)),
            "custom exception handler": tuple(map(id, shell.custom_exceptions))}


def findings() -> list[str]:
    found = [f"{owner}.{name} replaced" for (owner, name), original in ORIGINALS.items()
             if getattr(WATCHED[owner][0], name, None) is not original]
    found += [f"module {name} replaced in sys.modules" for name, module in MODULES.items()
              if sys.modules.get(name) is not module]
    hooks = _shell_hooks()
    _baseline.setdefault("hooks", hooks)  # the first audit runs before any student code
    found += [f"{kind} registered" for kind, ids in hooks.items()
              if ids != _baseline["hooks"].get(kind, ())]
    if sys.gettrace() is not None or sys.getprofile() is not None:
        found.append("a trace or profile function installed")
    return found


def reap_children() -> None:
    """Collect exited child processes: a student's forks that ended still count against the
    kernel's process limit until reaped, and would starve the test cells that follow."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def audit() -> None:
    reap_children()
    trace.record("audit", "integrity", findings())
    trace.flush()


def after_cell(result=None) -> None:
    """IPython's post_run_cell hook in grading kernels (grading_kernel.py): every cell ends with
    an audit and its checks' records on disk, with no extra round trip from the grader. A cell
    after which no audit appears has had the hook removed, and counts as tampering."""
    audit()
