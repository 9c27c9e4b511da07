"""Test cells judged outside the student's process, the way PrairieLearn's grader does it: the
test runs here, in the grader, over the source notebook's own setup cells; every name an answer
cell defines is fetched from the student's kernel as data (a value) or stands for a call made
there (a function or class), with inputs sent as data and the result sent back as data
(answer_server.py). The expected values, the comparisons and the verdict never enter the
student's process, so nothing it does (forged records, a blinded audit, a function that reads
its caller's frame, a hook that reads the test's code) can change them.

Which tests are judged here is decided by the grader's own run of the solution (isolated_execute):
a test judged here must pass for the solution, and must not look at what only exists inside a
process (see observes_process). The rest run in the student's kernel, re-checked as before.
"""
import ast
import builtins
import contextlib
import io
import warnings
import zlib

from nbformat.notebooknode import NotebookNode

from autograder import trace


class KernelLost(BaseException):
    """The student's kernel died or timed out while answering: (ename, evalue) for the cell.
    A BaseException, so that no `except Exception` in a test swallows it."""


# What only exists inside one process: object identity, storage shared between tensors, the
# autograd graph and its gradients, memory layout. Data sent across cannot carry them, so a
# test that looks at them runs in the student's kernel.
PROCESS_ATTRIBUTES = {"data_ptr", "storage", "untyped_storage", "_base", "grad_fn", "grad", "backward",
                      "_version", "stride", "is_contiguous", "register_hook", "retain_grad", "is_set_to",
                      "storage_offset", "retains_grad"}
PROCESS_NAMES = {"id", "autograd", "gc", "weakref", "sys"}
# Calls that change how code runs in the process that makes them (warnings turned into errors,
# strict device checks, a pretended GPU, a default dtype): made here, they would not reach the
# student's function, and a test could pass for a wrong answer that they exist to catch.
PROCESS_SETTINGS = {"simplefilter", "filterwarnings", "strict_devices", "pretend_accelerators",
                    "set_default_dtype", "set_default_device", "set_grad_enabled", "set_detect_anomaly",
                    "use_deterministic_algorithms", "set_printoptions", "setrecursionlimit"}


def _called_name(node: ast.Call) -> str | None:
    function = node.func
    return function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) else None


def observes_process(code: str, answers: frozenset = frozenset()) -> str | None:
    """Why a test must run in the student's process, or None when it only looks at values: it
    compares identities, looks at storage, the graph or gradients, changes how code runs in its
    process, or calls one of the student's `answers` inside a `with` block (whose context would
    stay in the grader's process)."""
    try:
        tree = ast.parse(code)
    except SyntaxError as error:
        return f"it does not parse ({error.msg})"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PROCESS_ATTRIBUTES:
            return f"it looks at .{node.attr}"
        if isinstance(node, ast.Name) and node.id in PROCESS_NAMES:
            return f"it uses {node.id}"
        if isinstance(node, ast.Call) and _called_name(node) in PROCESS_SETTINGS:
            return f"it calls {_called_name(node)}(), which changes how code runs in its process"
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            sides = [node.left, *node.comparators]
            if not any(isinstance(side, ast.Constant) and side.value in (None, True, False) for side in sides):
                return "it compares identities with `is`"
        if isinstance(node, (ast.With, ast.AsyncWith)):
            inside = {n.id for statement in node.body for n in ast.walk(statement) if isinstance(n, ast.Name)}
            if inside & set(answers):
                return f"it calls {sorted(inside & set(answers))[0]} inside a `with` block"
    return None


def defined_names(code: str) -> set[str]:
    """The names an answer cell defines at its top level (functions, classes, assignments);
    imports are left out: a module is the course's, not an answer."""
    names = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def used_names(code: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}


def seed_of(name: str) -> int:
    """The random seed a test starts from, the same in every run that grades it."""
    return zlib.crc32(str(name).encode()) % 2**31


def _student_error(name: str, message: str) -> Exception:
    """The student's exception, as the test would have seen it: a built-in exception by its own
    class (a test may expect a ValueError); anything else as a RuntimeError of the same name."""
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception) and kind.__module__ == "builtins":
        return kind(message)
    return type(name, (RuntimeError,), {"__module__": "builtins"})(message)


class Remote:
    """A function or class of the student's, called in their kernel. `ask(request)` sends a
    request there and returns the reply's data (raising KernelLost when the kernel is gone)."""

    def __init__(self, name: str, ask):
        self.__name__ = self.__qualname__ = name
        self._ask = ask

    def __call__(self, *args, **kwargs):
        reply = trace.materialize(self._ask({"op": "call", "name": self.__name__,
                                             "args": trace.portable(list(args)),
                                             "kwargs": trace.portable(dict(kwargs))}))
        if not isinstance(reply, tuple) or not reply or reply[0] not in ("returned", "raised"):
            raise RuntimeError(f"{self.__name__}(): the notebook sent back no answer")
        if reply[0] == "raised":
            raise _student_error(str(reply[1]), str(reply[2]))
        _, result, args_after, kwargs_after = reply
        _write_back(list(args), args_after)
        _write_back(dict(kwargs), kwargs_after)
        return result

    def __repr__(self):
        return f"<function {self.__name__}>"


def _write_back(given, after) -> None:
    """What the student's function did in place to its inputs, done to the test's own: a test
    that checks an input was left alone sees it changed."""
    import torch
    if isinstance(given, torch.Tensor) and isinstance(after, torch.Tensor):
        if given.shape == after.shape and given.dtype == after.dtype and given.device.type != "meta":
            with torch.no_grad():
                given.copy_(after.to(given.device))
    elif isinstance(given, list) and isinstance(after, list) and len(given) == len(after):
        for mine, theirs in zip(given, after):
            _write_back(mine, theirs)
        if all(not isinstance(v, (torch.Tensor, list, dict)) for v in given):
            given[:] = after
    elif isinstance(given, dict) and isinstance(after, dict):
        for key in given:
            if key in after:
                _write_back(given[key], after[key])


class Judge:
    """One student's tests, run here. `setup` is the source notebook's setup and helper cells,
    `answers` the names its answer cells define, `ask` the way to the student's kernel."""

    def __init__(self, setup: list[str], answers: set[str], ask):
        self.answers, self.ask = answers, ask
        self.namespace = {"__name__": "__course_judge__", "__builtins__": builtins}
        with contextlib.redirect_stdout(io.StringIO()):
            for code in setup:
                exec(compile(code, "<setup>", "exec"), self.namespace)

    def _bind(self, code: str) -> None:
        """The student's names this test uses, as their kernel has them now."""
        wanted = sorted(used_names(code) & self.answers)
        if not wanted:
            return
        found = trace.materialize(self.ask({"op": "names", "names": wanted}))
        for name in wanted:
            kind = found.get(name, ("missing",)) if isinstance(found, dict) else ("missing",)
            if kind[0] == "callable":
                self.namespace[name] = Remote(name, self.ask)
            elif kind[0] == "value" and len(kind) == 2:
                self.namespace[name] = kind[1]
            else:
                self.namespace.pop(name, None)  # a NameError, as in the kernel

    def run(self, code: str) -> list[NotebookNode]:
        """Run one test; its outputs as a notebook cell would hold them (an error output when it
        failed, worded as in the kernel: the exception's name and message, no hidden code)."""
        printed = io.StringIO()
        outputs = []
        from autograder import seed_everything
        seed_everything(seed_of(code))  # its inputs the same for every student
        try:
            with contextlib.redirect_stdout(printed), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # raised by the test's own code: it would show hidden lines
                self._bind(code)
                exec(compile(code, "<test>", "exec"), self.namespace)
        except KernelLost:
            raise
        except BaseException as error:  # the test failed: any exception, as nbgrader counts it
            error_output = NotebookNode(output_type="error", ename=type(error).__name__, evalue=str(error),
                                        traceback=[f"{type(error).__name__}: {error}"])
            outputs.append(error_output)
        if printed.getvalue():
            outputs.insert(0, NotebookNode(output_type="stream", name="stdout", text=printed.getvalue()))
        return outputs
