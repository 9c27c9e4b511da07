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
import os
import stat
import tempfile
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
PROCESS_NAMES = {"id", "autograd", "gc", "weakref", "sys",
                 # the course's probes of what ran in a process: code a file carried, graphs kept
                 "PAYLOAD_RAN", "SavedTensorCount", "GraphLeakProbe"}
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


def _returned(reply, what: str):
    """The value a ("returned", value, ...) reply carries; the student's exception for a
    ("raised", name, message) one."""
    if not isinstance(reply, tuple) or not reply or reply[0] not in ("returned", "raised"):
        raise RuntimeError(f"{what}: the notebook sent back no answer")
    if reply[0] == "raised":
        raise _student_error(str(reply[1]), str(reply[2]))
    return reply


class Remote:
    """A function or class of the student's, called in their kernel. `ask(request)` sends a
    request there and returns the reply's data (raising KernelLost when the kernel is gone);
    `handles` rebuilds what is not data as RemoteObject stand-ins (Judge.handle)."""

    def __init__(self, name: str, ask, handles=None, target: dict | None = None):
        self.__name__ = self.__qualname__ = name
        self._ask, self._handles, self._target = ask, handles, target or {"name": name}

    def __call__(self, *args, **kwargs):
        files = test_files(args, kwargs)
        for path in files:
            folder = os.path.isdir(path)
            self._do({"op": "put", "path": path, "folder": folder, "data": None if folder else _read_own(path)})
            for name, data in _own_folder(path):
                self._do({"op": "put", "path": os.path.join(path, name), "data": data})
        reply = _returned(trace.materialize(self._ask({"op": "call", **self._target, **_inputs(args, kwargs)}),
                                            self._handles), f"{self.__name__}()")
        for path in files:
            _take_file(path, self._do({"op": "fetch", "path": path}))
        if len(reply) != 4:
            raise RuntimeError(f"{self.__name__}(): the notebook sent back no answer")
        _, result, args_after, kwargs_after = reply
        _write_back(list(args), args_after)
        _write_back(dict(kwargs), kwargs_after)
        return result

    def _do(self, request: dict):
        return _returned(trace.materialize(self._ask(request)), f"{self.__name__}()")[1]

    def __repr__(self):
        return f"<function {self.__name__}>"


# -- the test's own files: a checkpoint the student's function writes or reads ------------------
_made_by_test = []  # the folders the running test made (tempfile.mkdtemp), real paths


@contextlib.contextmanager
def _watching_mkdtemp():
    """While a test runs here, note each folder it makes with tempfile.mkdtemp (TemporaryDirectory
    too): only there are its files mirrored. A path that merely names some folder (one the
    student's function returned, say) is never read or written by root."""
    original = tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        folder = original(*args, **kwargs)
        _made_by_test.append(os.path.realpath(folder) + os.sep)
        return folder
    tempfile.mkdtemp = mkdtemp
    try:
        yield
    finally:
        tempfile.mkdtemp = original
        _made_by_test.clear()


def test_files(args, kwargs) -> list[str]:
    """Paths among a call's inputs that lie in a folder the running test made (tempfile.mkdtemp):
    the student's function may read or write them, so they are mirrored in the kernel's own file
    system around the call."""
    found = []
    for value in _flat((args, kwargs)):
        if isinstance(value, (str, os.PathLike)) and not isinstance(value, RemoteObject):
            path = os.fspath(value)
            if isinstance(path, str) and path not in found and any(
                    os.path.realpath(path).startswith(folder) or os.path.realpath(path) + os.sep == folder
                    for folder in _made_by_test):
                found.append(path)
    return found


def _read_own(path: str) -> bytes | None:
    """A file of the test's, read without following a link (None when there is none)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read() if stat.S_ISREG(os.fstat(handle.fileno()).st_mode) else None


def _own_folder(path: str) -> list:
    if not os.path.isdir(path) or os.path.islink(path):
        return []
    return [(name, _read_own(os.path.join(path, name))) for name in sorted(os.listdir(path))
            if os.path.isfile(os.path.join(path, name))]


def _write_own(path: str, data) -> None:
    """What the kernel sent for a file of the test's, written there (never through a link).
    Only bytes: the test reads it as data (torch.load(weights_only=True))."""
    if type(data) is not bytes:
        return
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def _take_file(path: str, sent) -> None:
    if os.path.isdir(path) and isinstance(sent, list):
        for pair in sent:
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and os.sep not in pair[0] \
                    and pair[0] not in (".", ".."):
                _write_own(os.path.join(path, pair[0]), pair[1])
    elif not os.path.isdir(path):
        _write_own(path, sent)


class _BuiltHere(Exception):
    """An input the test built itself (not data, not a stand-in)."""


def _strictly_sent(value) -> dict:
    if isinstance(value, RemoteObject):
        return _sent(value)
    raise _BuiltHere


def _inputs(args, kwargs) -> dict:
    """A call's inputs as the request carries them: as data (stand-ins by their handles); or,
    when the test built some itself (a model, an optimizer over its parameters, a loader), the
    lot pickled, so the student's function gets real copies sharing what the originals share.
    What cannot be pickled (a lambda, a hook) reaches the kernel by its type name only."""
    try:
        return {"args": trace.portable(list(args), _strictly_sent), "kwargs": trace.portable(dict(kwargs), _strictly_sent)}
    except _BuiltHere:
        pass
    try:
        if not any(isinstance(v, RemoteObject) for v in _flat((args, kwargs))):
            return {"pickled": _pickled((list(args), dict(kwargs)))}
    except Exception:  # not picklable: sent as below
        pass
    return {"args": trace.portable(list(args), _sent), "kwargs": trace.portable(dict(kwargs), _sent)}


JUDGE_MODULE = "__course_judge__"  # the module name of what the setup cells define here


def _pickled(value) -> bytes:
    """pickle.dumps, where a class or function the setup cells define here is named, to be
    taken in the kernel from its own run of the same cells (answer_server.defined_in_notebook)."""
    import pickle
    import types
    from . import answer_server

    class NotebookPickler(pickle.Pickler):
        def reducer_override(self, obj):
            if isinstance(obj, (type, types.FunctionType)) and getattr(obj, "__module__", None) == JUDGE_MODULE:
                return answer_server.defined_in_notebook, (obj.__qualname__,)
            return NotImplemented

    buffer = io.BytesIO()
    NotebookPickler(buffer, protocol=4).dump(value)
    return buffer.getvalue()


def _flat(value, depth=0):
    """Every value in nested lists, tuples and dicts."""
    yield value
    if depth < 20 and isinstance(value, (list, tuple)) and not isinstance(value, RemoteObject):
        for item in value:
            yield from _flat(item, depth + 1)
    elif depth < 20 and isinstance(value, dict):
        for item in value.values():
            yield from _flat(item, depth + 1)


def _sent(value) -> dict:
    """portable()'s `objects` on the grader's side: a stand-in goes back as its handle; any
    other object as its type name (the kernel gets a stand-in that can do nothing)."""
    if isinstance(value, RemoteObject):
        return {"handle": object.__getattribute__(value, "_record")["handle"]}
    kind = type(value)
    return {"object": f"{kind.__module__}.{kind.__qualname__}", "callable": callable(value)}


def torch_class(path: str) -> type | None:
    """The torch class `path` (module.qualname) names, if torch has already loaded it; a name
    the kernel sent never imports anything."""
    import sys
    parts = str(path).split(".")
    if parts[0] != "torch":
        return None
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is not None:
            value = module
            for name in parts[cut:]:  # by the namespaces themselves: no module __getattr__ runs
                value = vars(value).get(name) if hasattr(value, "__dict__") else None
            return value if isinstance(value, type) else None
    return None


class RemoteObject:
    """An object of the student's kernel that is not data (a module, an optimizer, a
    generator, a bound method): it stays there, and what a test does with it (an attribute,
    a call, a loop over it, its length, an item, vars()) is asked for there, by its handle.
    isinstance() sees the torch classes it derives from; type() names its own class."""
    __slots__ = ("_record", "_ask", "_handles")

    def _op(self, op: str, **details):
        record = object.__getattribute__(self, "_record")
        reply = trace.materialize(object.__getattribute__(self, "_ask")({"op": op, "handle": record["handle"], **details}),
                                  object.__getattribute__(self, "_handles"))
        return _returned(reply, f"{type(self).__qualname__}")[1]

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # Python's own probes are answered here, never there
        return self._op("getattr", attr=name)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__qualname__}: the grader does not change objects in your notebook")

    def __iter__(self):
        return iter(self._op("iterate"))

    def __len__(self):
        return self._op("len")

    def __bool__(self):
        try:
            return bool(self._op("len"))
        except TypeError:
            return True

    def __getitem__(self, key):
        return self._op("getitem", key=trace.portable(key, _sent))

    @property
    def __dict__(self):
        return self._op("vars")

    @property
    def __class__(self):
        return object.__getattribute__(self, "_claims")()

    def _claims(self) -> type:
        """The class isinstance() sees: the object's own, when torch's; else one named like it
        that derives from the nearest torch class it does (RemoteObject when none)."""
        record = object.__getattribute__(self, "_record")
        own = torch_class(record["object"])
        if own is not None:
            return own
        for base in record.get("bases", []):
            found = torch_class(base)
            if found is not None:
                return _standing_for(record["object"], found)
        return type(self)

    def __repr__(self):
        return f"<{type(self).__qualname__} object in your notebook>"


class RemoteCallable(RemoteObject):
    """A RemoteObject that can be called (a module, a bound method): the call is made there."""
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        record = object.__getattribute__(self, "_record")
        call = Remote(type(self).__qualname__, object.__getattribute__(self, "_ask"),
                      object.__getattribute__(self, "_handles"), {"handle": record["handle"]})
        return call(*args, **kwargs)


_classes = {}


def _standing_for(path: str, base: type) -> type:
    """A class named `path` deriving from `base`, made once; never instantiated."""
    if (path, base) not in _classes:
        module, _, name = str(path).rpartition(".")
        _classes[(path, base)] = type(name or "object", (base,), {"__module__": module or "builtins", "__qualname__": name})
    return _classes[(path, base)]


def _stand_in(record: dict, ask, handles) -> RemoteObject:
    """A RemoteObject for a handle record, its type named after the object's own class."""
    module, _, name = str(record.get("object", "object")).rpartition(".")
    key = (module, name, bool(record.get("callable")))
    if key not in _classes:
        base = RemoteCallable if record.get("callable") else RemoteObject
        _classes[key] = type(name or "object", (base,), {"__module__": module or "builtins",
                                                                  "__qualname__": name or "object", "__slots__": ()})
    stand_in = object.__new__(_classes[key])
    object.__setattr__(stand_in, "_record", record)
    object.__setattr__(stand_in, "_ask", ask)
    object.__setattr__(stand_in, "_handles", handles)
    return stand_in


def _write_back(given, after) -> None:
    """What the student's function did in place to its inputs, done to the test's own: a test
    that checks an input was left alone sees it changed, a model trained in the kernel is
    trained here."""
    import torch
    if isinstance(after, RemoteObject) and isinstance(given, (torch.nn.Module, torch.optim.Optimizer)) \
            and not isinstance(given, RemoteObject):
        _take_state(given, after._op("state"))
    elif isinstance(given, torch.Tensor) and isinstance(after, torch.Tensor):
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


def _take_state(given, state) -> None:
    """A module's or an optimizer's state, as answer_server.state_of sent it, put into the
    test's own object (whose parameters stay the same objects, as the test holds them)."""
    import torch
    if isinstance(given, torch.optim.Optimizer):
        given.load_state_dict(state)
        return
    parameters, buffers = dict(given.named_parameters()), dict(given.named_buffers())
    with torch.no_grad():
        for name, value, requires_grad, grad in state["parameters"]:
            if name in parameters:
                parameters[name].data = value
                parameters[name].requires_grad_(bool(requires_grad))
                parameters[name].grad = grad
        for name, value in state["buffers"]:
            if name in buffers:
                buffers[name].data = value
    for module, training in zip(given.modules(), state["training"]):
        module.training = bool(training)


class Judge:
    """One student's tests, run here. `setup` is the source notebook's setup and helper cells,
    `answers` the names its answer cells define, `ask` the way to the student's kernel."""

    def __init__(self, setup: list[str], answers: set[str], ask):
        self.answers, self.ask, self.stand_ins = answers, ask, {}
        self.namespace = {"__name__": JUDGE_MODULE, "__builtins__": builtins}
        with contextlib.redirect_stdout(io.StringIO()):
            for code in setup:
                exec(compile(code, "<setup>", "exec"), self.namespace)
        self.after_setup = dict(self.namespace)  # where each shadow starts

    def handle(self, record: dict) -> RemoteObject:
        """The stand-in for an object the kernel keeps (the same handle, the same stand-in)."""
        number = record.get("handle")
        if number not in self.stand_ins:
            self.stand_ins[number] = _stand_in(record, self.ask, self.handle)
        return self.stand_ins[number]

    def _bind(self, code: str, namespace: dict) -> None:
        """The student's names this test uses, as their kernel has them now."""
        self.stand_ins = {}  # handles are numbered afresh for each test's conversation
        wanted = sorted(used_names(code) & self.answers)
        if not wanted:
            return
        found = trace.materialize(self.ask({"op": "names", "names": wanted}), self.handle)
        for name in wanted:
            kind = found.get(name, ("missing",)) if isinstance(found, dict) else ("missing",)
            if kind[0] == "callable":
                namespace[name] = Remote(name, self.ask, self.handle)
            elif kind[0] == "value" and len(kind) == 2:
                namespace[name] = kind[1]
            else:
                namespace.pop(name, None)  # a NameError, as in the kernel

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
            with contextlib.redirect_stdout(printed), warnings.catch_warnings(), _watching_mkdtemp():
                warnings.simplefilter("ignore")  # raised by the test's own code: it would show hidden lines
                self._bind(code, namespace)
                exec(compile(code if shadow_failed is None else shadow_code(code), "<test>", "exec"), namespace)
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


# -- shadows: what the grader can establish itself of a test run in the student's kernel ------
SHADOW_FAILED = "__course_shadow_failed__"


class _Shadow(ast.NodeTransformer):
    """A test made to go on past what it cannot do here: each statement outside a function
    runs on its own (a failure is noted and the next one runs), `with` blocks run their bodies
    without their context (one that changes how a process runs would change the grader's),
    and calls that change how a process runs are left out."""

    def _guarded(self, statement):
        return ast.Try(body=[statement], handlers=[ast.ExceptHandler(
            type=ast.Name("Exception", ast.Load()), name="__course_error__",
            body=[ast.Expr(ast.Call(ast.Name(SHADOW_FAILED, ast.Load()), [ast.Name("__course_error__", ast.Load())], []))])],
            orelse=[], finalbody=[])

    def _statements(self, body):
        result = []
        for statement in body:
            if isinstance(statement, (ast.With, ast.AsyncWith)):
                result.extend(self._statements(statement.body))
                continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                result.append(statement)  # a helper keeps raising as the test wrote it
                continue
            if any(isinstance(node, ast.Call) and _called_name(node) in PROCESS_SETTINGS for node in ast.walk(statement)) \
                    and not isinstance(statement, (ast.For, ast.While, ast.If, ast.Try)):
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
