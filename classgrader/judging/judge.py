"""Test cells judged outside the student's process, the way PrairieLearn's grader does it: the
test runs here, in the grader, over the source notebook's own setup cells; every name an answer
cell defines is fetched from the student's kernel as data (a value) or stands for a call made
there (a function or class), with inputs sent as data and the result sent back as data
(answer_server.py). The expected values, the comparisons and the verdict never enter the
student's process, so nothing it does (forged records, a blinded audit, a function that reads
its caller's frame, a hook that reads the test's code) can change them.

Which tests are judged here is decided by the grader's own run of the solution (isolated_execute):
a test judged here must pass for the solution, and must not look at what only exists inside a
process (see observes_process). The rest run in the student's kernel, their records re-checked here, and
each is shadowed: its value checks run here too (Judge.shadow), so that the kernel's word alone
earns nothing where they reach. The student's functions and objects, and the test's own inputs
and files, cross over as remote.py and mirror.py say.
"""
import ast
import builtins
import contextlib
import functools
import io
import warnings
import zlib

from nbformat.notebooknode import NotebookNode

from autograder import memory_probe, trace
from classgrader.in_kernel.protocol import KernelLost
from classgrader.judging import graph_replay, mirror, remote
from classgrader.judging.remote import JUDGE_MODULE, RemoteObject, stand_in

# What only exists inside one process: object identity, storage shared between tensors, the
# autograd graph and its gradients, memory layout. Data sent across cannot carry them, so a
# test that looks at them runs in the student's kernel.
PROCESS_ATTRIBUTES = {"data_ptr", "storage", "untyped_storage", "_base", "grad_fn", "grad", "backward",
                      "_version", "stride", "is_contiguous", "register_hook", "retain_grad", "is_set_to",
                      "storage_offset", "retains_grad"}
PROCESS_NAMES = {"id", "autograd", "gc", "weakref", "sys",
                 # the course's probes of what ran in a process: code a file carried, graphs kept,
                 # what a function asked of PyTorch while it ran
                 "PAYLOAD_RAN", "SavedTensorCount", "GraphLeakProbe", "broadcasts_asked"}
# Calls that change how code runs in the process that makes them (warnings turned into errors,
# strict device checks, a pretended GPU, a default dtype): made here, they would not reach the
# student's function, and a test could pass for a wrong answer that they exist to catch.
PROCESS_SETTINGS = {"simplefilter", "filterwarnings", "strict_devices", "pretend_accelerators",
                    "set_default_dtype", "set_default_device", "set_grad_enabled", "set_detect_anomaly",
                    "use_deterministic_algorithms", "set_printoptions", "setrecursionlimit"}


# Contexts a call carries to the student's kernel (remote.caller_state): autograd's mode. A
# `with` of these alone may hold a call of the student's, and stays in a shadow.
GRAD_CONTEXTS = {"no_grad", "enable_grad", "inference_mode", "set_grad_enabled"}
# Contexts that measure the student's kernel from outside when the grader runs them (Judge's
# meter): they stay in a shadow too, and there measure what the kernel cannot report lower.
MEASURING_CONTEXTS = {"PeakMemory"}
# Contexts that only reword an error raised inside them (autograder.checks.explained_errors): what a
# call of the student's sees is the same with or without them, so a test in one is routed as its body.
REWORDING_CONTEXTS = {"explained_errors"}


def _grad_context(node, measuring: bool = False, rewording: bool = False) -> bool:
    """Whether a `with` statement's contexts are all autograd modes (torch.no_grad() ...), given
    measuring also measurements of the kernel (PeakMemory() as memory), given rewording also
    contexts that only reword an error (explained_errors())."""
    def kept(item):
        called = isinstance(item.context_expr, ast.Call) and _called_name(item.context_expr)
        plain = item.optional_vars is None
        return ((plain and (called in GRAD_CONTEXTS or (rewording and called in REWORDING_CONTEXTS)))
                or (measuring and called in MEASURING_CONTEXTS))
    return all(kept(item) for item in node.items)


def _called_name(node: ast.Call) -> str | None:
    function = node.func
    if isinstance(function, ast.Name):
        return function.id
    return function.attr if isinstance(function, ast.Attribute) else None


@functools.lru_cache(maxsize=256)  # routing asks for every test of every student: parse each once
def observes_process(code: str, answers: frozenset = frozenset()) -> str | None:
    """Why a test must run in the student's process, or None when it only looks at values: it
    compares identities, looks at storage, the graph or gradients, changes how code runs in its
    process, or calls one of the student's `answers` inside a `with` block (whose context would
    stay in the grader's process; autograd's mode is carried to the call, see GRAD_CONTEXTS)."""
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
        if isinstance(node, (ast.With, ast.AsyncWith)) and not _grad_context(node, rewording=True):
            inside = {n.id for statement in node.body for n in ast.walk(statement) if isinstance(n, ast.Name)}
            if inside & set(answers):
                return f"it calls {sorted(inside & set(answers))[0]} inside a `with` block"
    return None


@functools.lru_cache(maxsize=256)  # every student meets the same tests: parse each once
def looks_at_graphs(code: str) -> bool:
    """Whether a test builds autograd graphs of its own (tensors it makes require grad) or walks
    them: then the graphs of the tensors it computes travel with them to the student's kernel
    (graph_replay). Other tests skip the noting, which costs a little on every operation."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Attribute) and node.attr in ("grad_fn", "next_functions", "requires_grad_"):
            return True
        if isinstance(node, ast.keyword) and node.arg == "requires_grad":
            return True
    return False


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


@functools.lru_cache(maxsize=256)
def used_names(code: str) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name))


def seed_of(name: str) -> int:
    """The random seed a test starts from, the same in every run that grades it."""
    return zlib.crc32(str(name).encode()) % 2**31


class Judge:
    """One student's tests, run here. `setup` is the source notebook's setup and helper cells,
    `answers` the names its answer cells define, `ask` the way to the student's kernel, and
    `kernel_meter()` a fresh meter of its memory (kernel_memory.py), for autograder.memory_probe."""

    def __init__(self, setup: list[str], answers: set[str], ask, kernel_meter=None):
        self.answers, self.ask = answers, ask
        self.stand_ins: dict[object, RemoteObject] = {}  # by the handle a record names, as the kernel sent it
        self.kernel_meter = kernel_meter or _no_kernel_meter
        self.namespace = {"__name__": JUDGE_MODULE, "__builtins__": builtins}
        # Folders the setup cells make (a helper's scratch folder): kept while this student's
        # tests may use them, removed by close().
        self.setup_folders: list[str] = []
        with contextlib.redirect_stdout(io.StringIO()), mirror.noting_mkdtemp(self.setup_folders):
            for code in setup:
                exec(compile(code, "<setup>", "exec"), self.namespace)
        self.after_setup = dict(self.namespace)  # where each shadow starts
        # The student's names the setup cells' own helpers call (a test's helper that runs their
        # function): bound for every test, where those helpers look them up.
        self.helpers_use = set().union(set(), *(used_names(code) for code in setup)) & set(answers)

    def close(self) -> None:
        """This student's tests are done: the setup cells' folders go."""
        mirror.remove(self.setup_folders)

    def handle(self, record: dict) -> RemoteObject:
        """The stand-in for an object the kernel keeps (the same handle, the same stand-in)."""
        number = record.get("handle")
        if number not in self.stand_ins:
            self.stand_ins[number] = stand_in(record, self.ask, self.handle)
        return self.stand_ins[number]

    def _bind(self, code: str, namespace: dict) -> None:
        """The student's names this test and the setup cells' helpers use, as their kernel has
        them now (in the test's namespace, and in the setup cells', where helpers look)."""
        self.stand_ins = {}  # handles are numbered afresh for each test's conversation
        wanted = sorted((used_names(code) | self.helpers_use) & self.answers)
        if not wanted:
            return
        found = remote.defined(wanted, self.ask, self.handle)
        for name in wanted:
            if name in found:
                namespace[name] = found[name]
            else:
                namespace.pop(name, None)  # a NameError, as in the kernel
            if namespace is not self.namespace:
                self.namespace.pop(name, None)
                if name in namespace:
                    self.namespace[name] = namespace[name]

    def _execute(self, code: str, shadow_failed=None) -> tuple[list, str]:
        """Run code here as a test: (its outputs as a notebook cell holds them, what it printed).
        A test shares one namespace with the tests judged before it, as cells share a kernel's;
        a shadow (given shadow_failed) starts from the setup cells' alone, whichever tests ran
        before it, so that it does the same for every student."""
        printed = io.StringIO()
        outputs = []
        from autograder import seed_everything
        seed_everything(seed_of(code))  # its inputs the same for every student
        namespace = self.namespace if shadow_failed is None else {**self.after_setup, SHADOW_FAILED: shadow_failed}
        try:
            with contextlib.redirect_stdout(printed), warnings.catch_warnings(), mirror.watching_mkdtemp(), \
                    memory_probe.measured_elsewhere(self.kernel_meter):
                warnings.simplefilter("ignore")  # raised by the test's own code: it would show hidden lines
                self._bind(code, namespace)
                with graph_replay.recording() if looks_at_graphs(code) else contextlib.nullcontext():
                    exec(compiled(code, shadow=shadow_failed is not None), namespace)
        except KernelLost:
            raise
        except BaseException as error:  # the test failed: any exception, as nbgrader counts it
            outputs.append(NotebookNode(output_type="error", ename=type(error).__name__, evalue=str(error),
                                        traceback=[f"{type(error).__name__}: {error}"]))
        return outputs, printed.getvalue()

    def run(self, code: str) -> list[NotebookNode]:
        """Run one test; its outputs as a notebook cell would hold them (an error output when it
        failed, worded as in the kernel: the exception's name and message, no hidden code)."""
        outputs, printed = self._execute(code)
        if printed:
            outputs.insert(0, NotebookNode(output_type="stream", name="stdout", text=printed))
        return outputs

    def shadow(self, code: str) -> tuple[list, list]:
        """The value checks of a test that must run in the student's kernel, done here as well:
        (the checks that passed, the messages of the statements that failed). See shadow_code."""
        failed = []
        with trace.watching() as passed:
            self._execute(code, lambda error: failed.append(f"{type(error).__name__}: {error}"))
        return passed, failed


def _no_kernel_meter():
    raise memory_probe.MemoryUnmeasured("the grader was given no way to measure the student's kernel")


# -- shadows: what the grader can establish itself of a test run in the student's kernel ------
SHADOW_FAILED = "__course_shadow_failed__"


class _Shadow(ast.NodeTransformer):
    """A test made to go on past what it cannot do here: each statement outside a function
    runs on its own (a failure is noted and the next one runs), `with` blocks run their bodies
    without their context (one that changes how a process runs would change the grader's; an
    autograd mode stays, as calls carry it, and so does a measurement of the kernel from outside),
    and calls that change how a process runs are left out."""

    def _guarded(self, statement):
        return ast.Try(body=[statement], handlers=[ast.ExceptHandler(
            type=ast.Name("Exception", ast.Load()), name="__course_error__",
            body=[ast.Expr(ast.Call(ast.Name(SHADOW_FAILED, ast.Load()),
                                    [ast.Name("__course_error__", ast.Load())], []))])],
            orelse=[], finalbody=[])

    def _statements(self, body):
        result = []
        for statement in body:
            if isinstance(statement, (ast.With, ast.AsyncWith)) and not _grad_context(statement, measuring=True):
                result.extend(self._statements(statement.body))
                continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                result.append(statement)  # a helper keeps raising as the test wrote it
                continue
            sets_process = any(isinstance(node, ast.Call) and _called_name(node) in PROCESS_SETTINGS
                               for node in ast.walk(statement))
            compound = isinstance(statement, (ast.For, ast.While, ast.If, ast.Try, ast.With, ast.AsyncWith))
            if sets_process and not compound:
                continue
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(statement, field, None), list) and getattr(statement, field):
                    setattr(statement, field, self._statements(getattr(statement, field)) or [ast.Pass()])
            if isinstance(statement, ast.Try):
                for handler in statement.handlers:
                    handler.body = self._statements(handler.body) or [ast.Pass()]
            result.append(self._guarded(statement))
        return result

    def visit_Module(self, node):
        node.body = self._statements(node.body)
        return node


@functools.lru_cache(maxsize=256)
def compiled(code: str, shadow: bool = False):
    """A test's code compiled as the judge runs it (as its shadow, given shadow), once for the
    whole class: a code object runs the same in every namespace."""
    return compile(shadow_code(code) if shadow else code, remote.TEST_FILE, "exec")


def shadow_code(code: str):
    """The test's code as the grader's shadow of it runs (see _Shadow), compiled."""
    return ast.fix_missing_locations(_Shadow().visit(ast.parse(code)))


def missing_checks(reference: list, passed: list) -> list[str]:
    """The checks the solution's shadow passed that this one did not, by name, in order."""
    import collections
    left = collections.Counter(passed)
    missing = []
    for check in reference:
        if left[check] > 0:
            left[check] -= 1
        else:
            missing.append(check[1])
    return missing
