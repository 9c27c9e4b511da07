"""Has student code changed how the grader's checks behave? Imported by the kernel zygote
before any student code exists, so what it notes below is the real thing; the grader calls
`audit()` after every student cell and after every test cell (see isolated_execute.py).

It checks what objects do, not only which objects they are: a function whose __code__,
defaults, closure or globals were swapped is still the same object. Watched: the course's check
library (every module-level function, class method and name of every autograder module), this
audit itself and trace.py, torch's comparison functions, and every IPython and ipykernel hook
through which an error can be hidden or a cell skipped.

An audit that finds nothing still writes a record: an audit that never ran (its cell turned
into `pass` by an input transformer, say) is then noticed by its absence.

What it cannot do: student code runs in this process and can, in principle, rewrite this
module's own memory (its notes of the originals) consistently. That is why no verdict rests on
the audit alone: tests that look only at values are judged in the grader (judge.py); for the
rest, the grader re-checks every record in its own process, and flags a test whose records part
from its own run of the solution in a kernel no student code ran in (verify.py)."""
import builtins
import contextlib
import json
import os
import sys
import types

import torch

import autograder  # noqa: F401 (its __init__ loads every check module _library watches)
from autograder import trace

for _later in ("autograder.autograd_probe", "autograder.checkpoints"):  # test cells of later units
    with contextlib.suppress(ImportError):                              # import these: watch them too
        __import__(_later)

# What a tamperer would replace to make wrong answers pass, beyond the check library itself
# (every name of every autograder module is watched by _library, below).
WATCHED = {
    "torch": (torch, ["allclose", "isclose", "equal", "eq", "ne", "all", "any", "is_tensor",
                      "tensor", "as_tensor", "testing", "load", "save"]),
    "torch.Tensor": (torch.Tensor, ["__eq__", "__ne__", "__bool__", "eq", "equal", "allclose",
                                    "isclose", "all", "any", "item", "tolist", "detach", "cpu", "to"]),
    "torch.testing": (torch.testing, ["assert_close"]),
    "json": (json, ["dump", "dumps"]),
    "builtins": (builtins, ["isinstance", "type", "getattr", "len", "repr", "str", "bool", "int",
                            "float", "tuple", "__import__", "AssertionError", "Exception",
                            "compile", "exec", "eval"]),
}
# What a module name may be bound to and still be watched: state (counters, pending records,
# flags) changes as it should, and is left out.
BEHAVIOUR = (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType, staticmethod, classmethod)
# The shell's ways into running a cell or reporting its error; replacing any can skip or hide.
SHELL_METHODS = ("run_cell", "run_cell_async", "_run_cell", "run_ast_nodes", "run_code", "transform_cell",
                 "transform_ast", "should_run_async", "showtraceback", "_showtraceback", "showsyntaxerror",
                 "showindentationerror", "set_custom_exc", "ex", "ev")
KERNEL_METHODS = ("do_execute", "execute_request", "dispatch_shell", "send_response")


def fingerprint(obj):
    """What an object does, as identities: for a function its code, defaults, closure cells'
    contents and globals; for a bound method its function and owner; else the object."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, types.MethodType):
        return ("method", fingerprint(obj.__func__), id(obj.__self__))
    if isinstance(obj, types.FunctionType):
        cells = tuple(id(cell.cell_contents) if _filled(cell) else None for cell in obj.__closure__ or ())
        return (id(obj), id(obj.__code__), id(obj.__defaults__), id(obj.__kwdefaults__),
                _snapshot(obj.__kwdefaults__), id(obj.__globals__), cells)
    return id(obj)


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (reading it is the test: an empty cell raises)
        return True
    except ValueError:
        return False


def _snapshot(mapping):
    return None if mapping is None else tuple(sorted((k, id(v)) for k, v in mapping.items()))


def _library():
    """Every name of the check library's modules, this module's and trace's, and every
    function or method they define, by what it does."""
    seen = {}
    modules = {name: module for name, module in sys.modules.items()
               if (name == "autograder" or name.startswith("autograder.") or name == __name__)
               and isinstance(module, types.ModuleType)}  # anything else is named by MODULES
    for name, module in sorted(modules.items()):
        for attr, value in list(vars(module).items()):
            if not isinstance(value, BEHAVIOUR) or attr.startswith("__"):
                continue
            seen[f"{name}.{attr}"] = fingerprint(value)
            if isinstance(value, type) and value.__module__ == name:
                for method, inner in vars(value).items():
                    if isinstance(inner, (types.FunctionType, staticmethod, classmethod)):
                        seen[f"{name}.{attr}.{method}"] = fingerprint(inner)
    return seen


def _named():
    return {f"{owner}.{name}": fingerprint(getattr(obj, name, None))
            for owner, (obj, names) in WATCHED.items() for name in names}


_baseline: dict = {}


def _hooks():
    """The shell's and kernel's hooks, by what they do; empty outside IPython."""
    from IPython import get_ipython
    shell = get_ipython()
    if shell is None:
        return {}
    manager = shell.input_transformer_manager
    found = {"shell": id(shell), "shell class": id(type(shell)),
             "input transformer": tuple(map(fingerprint, manager.cleanup_transforms + manager.line_transforms
                                            + shell.input_transformers_post)),
             "token transformer": tuple(map(id, manager.token_transformers)),
             "AST transformer": tuple(map(fingerprint, shell.ast_transformers)),
             "custom exception handler": (shell.custom_exceptions, fingerprint(shell.CustomTB)),
             "compiler": (id(shell.compile), fingerprint(type(shell.compile).__call__),
                          fingerprint(type(shell.compile).ast_parse)),
             "event callback": tuple((event, tuple(fingerprint(c) for c in callbacks if not _plotting(c)))
                                     for event, callbacks in sorted(shell.events.callbacks.items())),
             "event trigger": fingerprint(shell.events.trigger)}
    for name in SHELL_METHODS:
        found[f"shell method {name}"] = (name in vars(shell), fingerprint(getattr(type(shell), name, None)))
    kernel = getattr(shell, "kernel", None)
    if kernel is not None:
        for name in KERNEL_METHODS:
            found[f"kernel method {name}"] = (name in vars(kernel), fingerprint(getattr(type(kernel), name, None)))
        found["kernel handlers"] = tuple(sorted((k, fingerprint(v)) for k, v in kernel.shell_handlers.items()))
    return found


def _plotting(callback) -> bool:
    """matplotlib's inline backend registers this when a student plots: allowed. (A forger could
    dress a function up as it; the records' comparison with the grader's own run still flags it.)"""
    code = getattr(callback, "__code__", None)
    return (getattr(callback, "__module__", None) == "matplotlib_inline.backend_inline"
            and getattr(callback, "__name__", None) == "flush_figures" and code is not None
            and code.co_filename.startswith(sys.prefix) and code.co_filename.endswith("backend_inline.py"))


def findings() -> list[str]:
    now = {**_named(), **_library()}
    found = [f"{name} replaced" for name, original in ORIGINALS.items() if now.get(name) != original]
    found += [f"module {name} replaced in sys.modules" for name, module in MODULES.items()
              if sys.modules.get(name) is not module]
    hooks = _hooks()
    _baseline.setdefault("hooks", hooks)  # the first audit runs before any student code
    found += [f"{kind} changed" for kind, value in hooks.items() if value != _baseline["hooks"].get(kind)]
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


# Noted last, so that this module's own functions are among what is watched.
ORIGINALS = {**_named(), **_library()}
MODULES = {name: sys.modules[name] for name in
           ("torch", "autograder", "autograder.checks", "autograder.quiz", "autograder.misconceptions",
            "autograder.trace", "builtins", __name__)}
