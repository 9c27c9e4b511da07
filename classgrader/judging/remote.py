"""The student's side of a test run in the grader (judge.py), as the grader sees it: a function
or class of the student's is a Remote, called in their kernel; an object that is not data (a
module, an optimizer, a generator) stays there and is a RemoteObject, asked about by its handle
(answer_server.py). Inputs go as data; those the test built itself (a model, an optimizer over
its parameters, a loader) go pickled, and what the student's function did to them comes back as
data and is put into the test's own objects. The test's files are mirrored around each call
(mirror.py)."""
import builtins
import importlib
import io
import os
from collections.abc import Callable
from typing import Any, TypedDict, TypeGuard

import torch

from autograder import trace
from classgrader.in_kernel import answer_server, protocol, walk
from classgrader.in_kernel.autograd_bridge import tensors_in
from classgrader.in_kernel.identity import tagged
from classgrader.judging import autograd_bridge, graph_replay, identity, mirror

JUDGE_MODULE = "__course_judge__"  # the module name of what the setup cells define in the grader
Ask = Callable[[protocol.Request], Any]  # a request to the student's kernel -> its answer as data


class Target(TypedDict, total=False):
    """What a Call calls: a function of the notebook's by name, or an object kept there."""
    name: str
    handle: int


class Inputs(TypedDict, total=False):
    """A Call's inputs: as data, or pickled."""
    args: protocol.Record
    kwargs: protocol.Record
    pickled: bytes


class CallerState(TypedDict):
    grad: bool
    inference: bool
    rng: str


def student_error(name: str, message: str) -> Exception:
    """The student's exception, as the test would have seen it: a built-in exception by its own
    class (a test may expect a ValueError); anything else as a RuntimeError of the same name."""
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception) and kind.__module__ == "builtins":
        return kind(message)
    return type(name, (RuntimeError,), {"__module__": "builtins"})(message)


def answer_of(data: Any, what: str, handles=None) -> protocol.Answer:
    """The answer the kernel sent (portable() data, its handles rebuilt by `handles`), as one of
    protocol's Answer kinds; the student's exception for a Raised one; RuntimeError for anything
    that is not an answer (NO_ANSWER included)."""
    try:
        answer = protocol.answer(trace.materialize(data, handles))
    except protocol.Malformed:
        raise RuntimeError(f"{what}: the notebook sent back no answer") from None
    if answer["kind"] == "raised":
        raise student_error(answer["name"], answer["message"])
    return answer


def returned(data: Any, what: str, handles=None) -> Any:
    """The value of a Returned answer (see answer_of)."""
    answer = answer_of(data, what, handles)
    if answer["kind"] != "returned":
        raise RuntimeError(f"{what}: the notebook sent back no answer")
    return answer["value"]


def defined(names: list[str], ask: Ask, handles) -> dict[str, Any]:
    """What the student's notebook defines under `names`: a Remote for a callable, the value
    for any other; a name it does not define, or every name when no Found answer came, is left
    out (the test then meets a NameError, as in the kernel)."""
    try:
        found = protocol.answer(trace.materialize(ask({"op": "names", "names": names}), handles))
    except protocol.Malformed:
        return {}
    if found["kind"] != "found":
        return {}
    values = {name: value for name, value in found["values"].items() if name in names}
    return {**values, **{name: Remote(name, ask, handles) for name in found["callables"] if name in names}}


CALLS = [0]  # calls of the student's code so far, in this process: what may change an object there


class Remote:
    """A function or class of the student's, called in their kernel. `ask(request)` sends a
    request there and returns the reply's data (raising KernelLost when the kernel is gone);
    `handles` rebuilds what is not data as RemoteObject stand-ins (Judge.handle)."""

    def __init__(self, name: str, ask: Ask, handles=None, target: Target | None = None):
        self.__name__ = self.__qualname__ = name
        self._ask, self._handles, self._target = ask, handles, target or {"name": name}

    def __call__(self, *args, **kwargs):
        files = mirror.test_files(_flat((args, kwargs)))
        for path in files:
            folder = os.path.isdir(path)
            self._do({"op": "put", "path": path, "folder": folder, "data": None if folder else mirror.read_own(path)})
            for name, data in mirror.own_folder(path):
                self._do({"op": "put", "path": os.path.join(path, name), "folder": False, "data": data})
        leaves = [t for t in tensors_in((args, kwargs)) if t.requires_grad]
        sent: list = []  # the tensors a pickled call numbered (identity.tagged)
        request: protocol.Call = {"op": "call", **self._target, **_inputs(args, kwargs, sent), **caller_state()}

        def found(record):  # a handle, or an object the call was given, which the result is again
            if "given" in record or "given_path" in record:
                if "given_path" in record:
                    record = {"given_path": trace.materialize(record["given_path"])}
                return identity.resolve(record, sent, args, kwargs)
            return self._handles(record)
        CALLS[0] += 1
        try:
            answer = answer_of(self._ask(request), f"{self.__name__}()", found)
        finally:
            CALLS[0] += 1
        for path in files:
            mirror.take_file(path, self._do({"op": "fetch", "path": path}))
        if answer["kind"] != "called":
            raise RuntimeError(f"{self.__name__}(): the notebook sent back no answer")
        _write_back(list(args), answer["args"])
        _write_back(dict(kwargs), answer["kwargs"])
        result, call = answer["result"], answer["call"]
        if call is not None and torch.is_grad_enabled():
            result = autograd_bridge.attach(result, leaves, lambda grads: self._do({
                "op": "backward", "call": call, "grads": trace.portable(grads, _sent)}), keep=sent)
        return result

    def _do(self, request: protocol.Request) -> Any:
        CALLS[0] += 1  # a backward, a file put or fetched: objects there may have changed
        return returned(self._ask(request), f"{self.__name__}()")

    def __repr__(self):
        return f"<function {self.__name__}>"


def caller_state() -> CallerState:
    """What of the caller's process a call carries, so that the student's function runs as if
    called here: whether autograd records (a `with torch.no_grad()` around the call) and the
    state of torch's random generator (the test seeds it for dropout masks and shuffles). The
    state goes one way: what the function draws never changes the inputs the test makes next."""
    import base64
    return {"grad": torch.is_grad_enabled(), "inference": torch.is_inference_mode_enabled(),
            "rng": base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode()}


class _BuiltHere(Exception):
    """An input the test built itself (not data, not a stand-in)."""


def _strictly_sent(value) -> dict:
    if isinstance(value, RemoteObject):
        return _sent(value)
    raise _BuiltHere


def _inputs(args, kwargs, sent: list) -> Inputs:
    """A call's inputs as the request carries them: as data (stand-ins by their handles); or,
    when the test built some itself (a model, an optimizer over its parameters, a loader), or
    some tensors are views of others or hang from a graph it recorded (graph_replay), the lot
    pickled, so the student's function gets real copies sharing what the originals share (the
    tensors pickled are appended to `sent`). What cannot be pickled (an object of the kernel's
    among what the test built) reaches the kernel by its type name only."""
    flat = list(_flat((args, kwargs)))
    if not _views_among(flat) and not graph_replay.has_recipe(flat):
        try:
            return {"args": trace.portable(list(args), _strictly_sent),
                    "kwargs": trace.portable(dict(kwargs), _strictly_sent)}
        except _BuiltHere:
            pass
    try:
        if not any(isinstance(v, RemoteObject) for v in flat):
            return {"pickled": _pickled((list(args), dict(kwargs)), sent)}
    except Exception:  # not picklable: sent as below
        del sent[:]
    return {"args": trace.portable(list(args), _sent), "kwargs": trace.portable(dict(kwargs), _sent)}


def _views_among(values) -> bool:
    """Whether a tensor among `values` is a view, or shares its storage with another: what
    data sent one tensor at a time would lose (torch.save keeps it)."""
    storages = []
    for value in values:
        if isinstance(value, torch.Tensor) and not isinstance(value, RemoteObject) and value.device.type != "meta":
            if value._base is not None:
                return True
            if value.untyped_storage().nbytes():
                storages.append(value.untyped_storage().data_ptr())
    return len(set(storages)) < len(storages)


TEST_FILE = "<test>"  # what the judge compiles a test's code as (a function the test defines)


def _pickled(value, sent: list) -> bytes:
    """torch.save's bytes (which keep the storage tensors share, views included), where a class
    or function the setup cells define here is named, to be taken in the kernel from its own
    run of the same cells (answer_server.defined_in_notebook), a function the test defines (a
    lambda) goes as its code and the values it uses, a module by its name, a student's function
    by its name in their notebook, a tensor the test computed with autograd as the operation
    that computes it (graph_replay), any other tensor under a number, appended to `sent`
    (identity)."""
    import pickle
    import types

    aliases, alias_ids = [], set()  # kept alive, so that their ids stay theirs

    class NotebookPickler(pickle.Pickler):
        def reducer_override(self, obj):
            computed = graph_replay.recipe(obj)
            if computed is not None:
                return answer_server.replay, computed
            if type(obj) is torch.Tensor and id(obj) not in alias_ids:
                aliases.append(obj.detach())  # the same storage, pickled as torch.save does
                alias_ids.add(id(aliases[-1]))
                sent.append(obj)
                return tagged, (len(sent) - 1, aliases[-1], obj.requires_grad)
            if isinstance(obj, types.FunctionType) and obj.__code__.co_filename == TEST_FILE:
                return answer_server.function_from_code, _by_code(obj)
            if isinstance(obj, (type, types.FunctionType)) and getattr(obj, "__module__", None) == JUDGE_MODULE:
                return answer_server.defined_in_notebook, (obj.__qualname__,)
            if isinstance(obj, types.ModuleType):
                return importlib.import_module, (obj.__name__,)
            if isinstance(obj, Remote) and "name" in obj._target:
                return answer_server.defined_in_notebook, (obj._target["name"],)
            if isinstance(obj, RemoteObject):
                raise pickle.PicklingError("an object of the kernel's")
            return NotImplemented

    module = types.ModuleType("notebook_pickle")  # what torch.save takes as its pickle module
    module.Pickler = NotebookPickler  # type: ignore[attr-defined]  # a module made here, given its one name
    buffer = io.BytesIO()
    torch.save(value, buffer, pickle_module=module, pickle_protocol=4)
    return buffer.getvalue()


def _by_code(function) -> tuple:
    """What answer_server.function_from_code rebuilds a test's function from: its compiled code,
    name, the global values its code names, defaults and closure values."""
    import marshal
    code, names = function.__code__, set()
    stack = [code]
    while stack:  # the names of nested functions and comprehensions too
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(const for const in current.co_consts if isinstance(const, type(code)))
    used = {name: function.__globals__[name] for name in sorted(names)
            if name in function.__globals__ and name != "__builtins__"}
    closure = tuple(cell.cell_contents for cell in function.__closure__) if function.__closure__ else None
    return marshal.dumps(code), function.__name__, used, function.__defaults__, function.__kwdefaults__, closure


def _flat(value):
    """Every value in nested lists, tuples and dicts, their subclasses too."""
    return walk.values(value, _opened)


def _opened(node) -> bool:
    return not isinstance(node, RemoteObject) and walk.loosely(node)  # a stand-in is asked nothing here


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
            value: Any = module
            for name in parts[cut:]:  # by the namespaces themselves: no module __getattr__ runs
                value = vars(value).get(name) if hasattr(value, "__dict__") else None
            return value if isinstance(value, type) else None
    return None


# The torch classes a stand-in may claim to be: objects whose behaviour is Python code all the
# way down (a module, an optimizer, a loader), so that a claim only ever leads Python code to ask
# the stand-in's attributes. Never a tensor, a generator, a dtype or any class torch's C++ code
# reads the memory of: a proxy that said it was a torch.Tensor would be read as one there (and
# could crash the grader), and every one of its attributes would be the kernel's fresh word.
CLAIMABLE_ROOTS = ("torch.nn.modules.module.Module", "torch.optim.optimizer.Optimizer",
                   "torch.optim.lr_scheduler.LRScheduler", "torch.utils.data.dataset.Dataset",
                   "torch.utils.data.dataloader.DataLoader", "torch.utils.data.sampler.Sampler")
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not by C code


def claimable(kind: object) -> TypeGuard[type]:
    """Whether a stand-in may claim `kind`: a class deriving from one of CLAIMABLE_ROOTS, with
    no class made by C code anywhere in its MRO but `object`."""
    if not isinstance(kind, type):
        return False
    roots = tuple(filter(None, map(torch_class, CLAIMABLE_ROOTS)))
    return issubclass(kind, roots) and all(base is object or base.__flags__ & _HEAP_TYPE for base in kind.__mro__)


class RemoteObject:
    """An object of the student's kernel that is not data (a module, an optimizer, a
    generator, a bound method): it stays there, and what a test does with it (an attribute,
    a call, a loop over it, its length, an item, vars()) is asked for there, by its handle.
    isinstance() sees the torch classes it derives from; type() names its own class."""
    __slots__ = ("_ask", "_handles", "_read", "_record")

    def _op(self, op: str, **details):
        record = object.__getattribute__(self, "_record")
        ask, handles = object.__getattribute__(self, "_ask"), object.__getattribute__(self, "_handles")
        return returned(ask({"op": op, "handle": record["handle"], **details}), f"{type(self).__qualname__}", handles)

    def _read_once(self, op: str, key=None):
        """What the object says for `op` (an attribute, its length, its vars), asked once until
        a call of the student's code could have changed it: two reads never disagree."""
        read = object.__getattribute__(self, "_read")
        if read.get("calls") != CALLS[0]:
            read.clear()
            read["calls"] = CALLS[0]
        if (op, key) not in read:
            try:
                read[(op, key)] = ("value", self._op(op, **({"attr": key} if op == "getattr" else {})))
            except Exception as error:
                read[(op, key)] = ("error", error)
        kind, value = read[(op, key)]
        if kind == "error":
            raise value
        return value

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # Python's own probes are answered here, never there
        return self._read_once("getattr", name)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__qualname__}: the grader does not change objects in your notebook")

    def __iter__(self):
        return iter(self._op("iterate"))

    def __len__(self):
        return self._read_once("len")

    def __bool__(self):
        try:
            return bool(self._read_once("len"))
        except TypeError:
            return True

    def __getitem__(self, key):
        return self._op("getitem", key=trace.portable(key, _sent))

    @property
    def __dict__(self):  # type: ignore[override]  # a stand-in's vars() are the object's there
        return self._read_once("vars")

    @property  # type: ignore[misc]  # what isinstance() sees (_claims), read-only on purpose
    def __class__(self):
        return object.__getattribute__(self, "_claims")()

    def _claims(self) -> type:
        """The class isinstance() sees: the object's own, when a torch class a stand-in may
        claim (claimable); else one named like it that derives from the nearest such class it
        does; else its own stand-in class, which no torch function takes for anything."""
        record = object.__getattribute__(self, "_record")
        own = torch_class(record["object"])
        if claimable(own):
            return own
        for base in record.get("bases", []):
            found = torch_class(base)
            if claimable(found):
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


_classes: dict = {}


def _standing_for(path: str, base: type) -> type:
    """A class named `path` deriving from `base`, made once; never instantiated."""
    if (path, base) not in _classes:
        module, _, name = str(path).rpartition(".")
        _classes[(path, base)] = type(name or "object", (base,),
                                      {"__module__": module or "builtins", "__qualname__": name})
    return _classes[(path, base)]


def stand_in(record: dict, ask, handles) -> RemoteObject:
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
    object.__setattr__(stand_in, "_read", {})
    return stand_in


def _write_back(given, after) -> None:
    """What the student's function did in place to its inputs, done to the test's own: a test
    that checks an input was left alone sees it changed, a model trained in the kernel is
    trained here."""
    if isinstance(after, RemoteObject) and isinstance(given, (torch.nn.Module, torch.optim.Optimizer)) \
            and not isinstance(given, RemoteObject):
        _take_state(given, after._op("state"))
    elif isinstance(given, torch.Tensor) and isinstance(after, torch.Tensor):
        if given.shape == after.shape and given.dtype == after.dtype and given.device.type != "meta":
            after = after.to(given.device)
            if not torch.equal(given.detach(), after.detach()):
                with torch.no_grad():
                    given.copy_(after)  # an expanded tensor (stride 0) never gets here: it cannot change
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
