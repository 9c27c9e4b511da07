"""Inspect a checkpoint file without running it: what it holds, and what it would need to load.

`torch.save` writes a zip archive. Each tensor's raw bytes sit in their own record (data/0,
data/1, ...), and one record, data.pkl, is a *pickle*: a small program for a stack machine that
rebuilds the saved object. Most of its instructions push numbers and strings or build dicts and
lists, but two matter for safety. GLOBAL names a function or class by module and name, and REDUCE
calls it. A state_dict only names torch's tensor-rebuilding functions; a pickled model names your
class; a malicious file can name `builtins.exec`.

This module never runs that program. It reads the instructions one at a time with
`pickletools.genops`, which decodes an opcode and its argument and executes nothing, and follows
them on a stack of inert placeholders. A GLOBAL becomes a name (nothing is imported or looked
up), a REDUCE becomes a record of "call this name with these arguments" (nothing is called).
From those records it rebuilds the structure of the object (dict keys, nesting, and for each
tensor its shape, stride, dtype, the device the file names, and bytes) and lists every global
the file names, each marked allowed or not by the allowlist `torch.load(weights_only=True)` uses.

Two layers, so the facts can be tested without a browser:

    inspect_checkpoint(path)        # pure: a CheckpointReport (tree of entries, storages, globals)
    report_html(report)             # pure: that report as HTML with stable data- hooks
    CheckpointInspector(folder)     # ipywidgets wiring: pick a file in a folder, see its report

Compared with torch.serialization.get_unsafe_globals_in_checkpoint(path), which also reads
data.pkl statically and executes nothing: that function lists the unsafe globals (as a set, in
no fixed order) and raises on any opcode that torch's own reader does not implement (every
protocol-4 pickle, for example). This module reads every pickle protocol, keeps the globals in
the order the file names them, reports the opcodes weights_only would refuse, the structure
and the sizes, and also reads legacy (pre-1.6, non-zip) torch files and bare pickles."""
import functools
import html
import io
import math
import pickletools
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

import ipywidgets as widgets
import torch

MAX_ENTRIES = 2000                # rows of the tree kept; a bigger file is reported as truncated
MAX_DEPTH = 64                    # nesting followed; deeper is reported, not followed
MAX_PICKLE_BYTES = 256 * 2**20    # a zip's data.pkl larger than this is not read (tensor records do not count)
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C   # what torch's pre-zip format pickles first

# The opcodes torch 2.13's weights-only unpickler implements (torch/_weights_only_unpickler.py,
# Unpickler.load): anything else makes torch.load(weights_only=True) fail with "Unsupported operand".
# torch.save writes protocol 2, which uses only these; pickle's default protocol 4 adds FRAME,
# MEMOIZE, SHORT_BINUNICODE, STACK_GLOBAL..., all refused.
WEIGHTS_ONLY_OPCODES = frozenset({
    "PROTO", "STOP", "GLOBAL", "NEWOBJ", "REDUCE", "BUILD", "APPEND", "APPENDS", "SETITEM",
    "SETITEMS", "MARK", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "NONE", "NEWFALSE", "NEWTRUE",
    "EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT", "EMPTY_SET", "BININT", "BININT1", "BININT2",
    "BINFLOAT", "BINUNICODE", "SHORT_BINSTRING", "BINPERSID", "BINGET", "LONG_BINGET", "BINPUT",
    "LONG_BINPUT", "LONG1"})


# ---- the allowlist: the same names torch.load(weights_only=True) and get_unsafe_globals_... use ----

def allowed_globals() -> frozenset[str]:
    """Every "module.name" torch.load(weights_only=True) accepts right now: torch's built-in allowlist
    plus whatever add_safe_globals / the safe_globals context added (read fresh on every call)."""
    from torch import _weights_only_unpickler as wou   # private, but it is the allowlist torch uses;
    return frozenset(wou._get_allowed_globals()) | frozenset(wou._get_user_allowed_globals())


def blocked_modules() -> frozenset[str]:
    """Modules weights_only refuses even when a name in them was allowlisted (sys, os, posix, nt)."""
    from torch import _weights_only_unpickler as wou
    return frozenset(getattr(wou, "_blocklisted_modules", ("sys", "os", "posix", "nt")))


def _global_name(module: str, name: str) -> str:
    # The same renaming torch applies to GLOBAL (Python 2 names such as __builtin__.set).
    from torch._utils import IMPORT_MAPPING, NAME_MAPPING
    if (module, name) in NAME_MAPPING:
        module, name = NAME_MAPPING[(module, name)]
    elif module in IMPORT_MAPPING:
        module = IMPORT_MAPPING[module]
    return f"{module}.{name}"


# ---- inert placeholders for what the pickle program would build ----

class _Sym:
    """Base of everything the walk builds instead of a real object."""


class _Global(_Sym):
    def __init__(self, name: str, module: str = ""):
        self.name, self.module = name, module   # name: "module.qualname"

    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


class _Call(_Sym):
    """The result of calling a global (REDUCE, NEWOBJ, INST, OBJ): never computed, only recorded."""

    def __init__(self, func, args, how: str):
        self.func, self.args, self.how = func, args, how
        self.state = None            # what BUILD would pass to __setstate__
        self.items: list = []        # what SETITEM(S) would store into it (OrderedDict, Counter)
        self.listitems: list = []    # what APPEND(S) would append to it


class _Dict(_Sym):
    def __init__(self, items=()):
        self.items = list(items)     # [(key, value)]: keys need not be hashable placeholders


class _List(_Sym):
    def __init__(self, items=()):
        self.items = list(items)


class _Set(_Sym):
    def __init__(self, items=(), frozen=False):
        self.items, self.frozen = list(items), frozen


class _PersId(_Sym):
    """A persistent id: in a torch file, a reference to a tensor storage stored outside the pickle."""

    def __init__(self, pid):
        self.pid = pid


class _Opaque(_Sym):
    def __init__(self, what: str):
        self.what = what


_BASE_TENSOR_FUNCS = frozenset(f"torch._utils.{n}" for n in (
    "_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_qtensor",
    "_rebuild_meta_tensor_no_storage", "_rebuild_sparse_tensor", "_rebuild_nested_tensor",
    "_rebuild_wrapper_subclass", "_rebuild_device_tensor_from_numpy"))   # one call per tensor object


def _storage_info(pid) -> "StorageInfo | None":
    """What a persistent id ('storage', type, key, location, numel[, view]) declares."""
    if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
        return None
    _, stype, key, location, numel = pid[:5]
    if not isinstance(numel, int) or isinstance(numel, bool):
        return None
    dtype = _storage_dtype(stype)
    untyped = isinstance(stype, _Global) and stype.short() == "UntypedStorage"
    size = _itemsize(dtype)
    if untyped:
        return StorageInfo(str(key), "untyped", str(location), numel, numel, None)
    if size is None:
        return None
    return StorageInfo(str(key), dtype, str(location), numel, numel * size, None)


class _Walk:
    """Follow a pickle's opcodes on placeholders. Nothing is imported, called or constructed."""

    def __init__(self, allowed: frozenset, blocked: frozenset):
        self.allowed, self.blocked = allowed, blocked
        self.globals: dict[str, int] = {}          # name -> how many times the file names it
        self.modules: dict[str, str] = {}           # name -> its module, as the file spells it
        self.unsupported: dict[str, int] = {}      # opcode name -> count (weights_only refuses them)
        self.refusals: list[str] = []               # structural reasons weights_only would refuse
        self.protocol = None
        self.storages: dict[str, StorageInfo] = {}  # every storage a persistent id declares
        self.tensors = 0                            # calls to a function that builds a tensor

    def is_safe(self, name: str) -> bool:
        # torch refuses a blocked module (sys, os, posix, nt) even when the name was allowlisted
        return name in self.allowed and self.modules.get(name) not in self.blocked

    def _global(self, module, name) -> _Global:
        if isinstance(module, str) and isinstance(name, str):
            full = _global_name(module, name)
            module = full[:len(full) - len(name) - 1] if full.endswith("." + name) else module
        else:                                   # STACK_GLOBAL on something that is not two strings
            full, module = "<not a name>", ""
        self.globals[full] = self.globals.get(full, 0) + 1
        self.modules.setdefault(full, module)
        return _Global(full, module)

    def _refuse(self, text: str):
        if text not in self.refusals:
            self.refusals.append(text)

    def run(self, stream):
        """Walk one pickle (up to its STOP) from a binary stream; return the placeholder it builds."""
        stack, marks, memo = [], [], {}

        def pop_mark():
            nonlocal stack
            items, stack = stack, marks.pop()
            return items

        for op, arg, _pos in pickletools.genops(stream):
            name = op.name
            if name not in WEIGHTS_ONLY_OPCODES:
                self.unsupported[name] = self.unsupported.get(name, 0) + 1
            if name == "PROTO":
                self.protocol = arg
            elif name == "STOP":
                return stack.pop() if stack else None
            elif name in ("FRAME",):
                pass
            elif name == "MARK":
                marks.append(stack)
                stack = []
            elif name == "POP":
                stack.pop()
            elif name == "POP_MARK":
                pop_mark()
            elif name == "DUP":
                stack.append(stack[-1])
            elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = stack[-1]
            elif name == "MEMOIZE":
                memo[len(memo)] = stack[-1]
            elif name in ("GET", "BINGET", "LONG_BINGET"):
                stack.append(memo[arg])
            elif name in ("NONE", "NEWTRUE", "NEWFALSE"):
                stack.append({"NONE": None, "NEWTRUE": True, "NEWFALSE": False}[name])
            elif name in ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT",
                          "BINFLOAT", "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE",
                          "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES",
                          "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8"):
                stack.append(arg)               # genops already decoded the literal
            elif name in ("NEXT_BUFFER", "READONLY_BUFFER"):
                stack.append(_Opaque("an out-of-band buffer"))
            elif name == "EMPTY_TUPLE":
                stack.append(())
            elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
                n = int(name[-1])
                items = tuple(stack[-n:])
                del stack[-n:]
                stack.append(items)
            elif name == "TUPLE":
                items = tuple(pop_mark())      # pop first: pop_mark rebinds `stack`
                stack.append(items)
            elif name == "EMPTY_LIST":
                stack.append(_List())
            elif name == "LIST":
                items = pop_mark()
                stack.append(_List(items))
            elif name == "EMPTY_DICT":
                stack.append(_Dict())
            elif name == "DICT":
                items = pop_mark()
                stack.append(_Dict(zip(items[::2], items[1::2])))
            elif name == "EMPTY_SET":
                stack.append(_Set())
            elif name == "FROZENSET":
                items = pop_mark()
                stack.append(_Set(items, frozen=True))
            elif name == "ADDITEMS":
                items = pop_mark()
                target = stack[-1]
                if isinstance(target, _Set):
                    target.items.extend(items)
            elif name in ("APPEND", "APPENDS"):
                items = [stack.pop()] if name == "APPEND" else pop_mark()
                target = stack[-1]
                if isinstance(target, _List):
                    target.items.extend(items)
                else:
                    self._refuse(f"{name} into something that is not a list")
                    if isinstance(target, _Call):
                        target.listitems.extend(items)
            elif name in ("SETITEM", "SETITEMS"):
                if name == "SETITEM":
                    value, key = stack.pop(), stack.pop()
                    pairs = [(key, value)]
                else:
                    items = pop_mark()
                    pairs = list(zip(items[::2], items[1::2]))
                target = stack[-1]
                if isinstance(target, _Dict):
                    target.items.extend(pairs)
                elif isinstance(target, _Call):
                    if _func_name(target) not in ("collections.OrderedDict", "collections.Counter"):
                        self._refuse(f"{name} into something that is not a dict")
                    target.items.extend(pairs)
                else:
                    self._refuse(f"{name} into something that is not a dict")
            elif name == "GLOBAL":
                module, _, qualname = arg.partition(" ")
                stack.append(self._global(module, qualname))
            elif name == "STACK_GLOBAL":
                qualname, module = stack.pop(), stack.pop()
                stack.append(self._global(module, qualname))
            elif name in ("EXT1", "EXT2", "EXT4"):
                import copyreg   # a dictionary lookup in the extension registry, nothing more
                module, qualname = copyreg._inverted_registry.get(arg, (f"<copyreg extension {arg}>", ""))
                stack.append(self._global(module, qualname) if qualname else self._global(module, "?"))
            elif name == "INST":
                module, _, qualname = arg.partition(" ")
                items = tuple(pop_mark())
                stack.append(_Call(self._global(module, qualname), items, "INST"))
            elif name == "OBJ":
                cls, *args = pop_mark()
                stack.append(_Call(cls, tuple(args), "OBJ"))
            elif name == "REDUCE":
                args = stack.pop()
                func = stack.pop()
                if isinstance(func, _Global) and func.name in _BASE_TENSOR_FUNCS:
                    self.tensors += 1
                stack.append(_Call(func, args if isinstance(args, tuple) else (args,), "REDUCE"))
            elif name == "NEWOBJ":
                args = stack.pop()
                cls = stack.pop()
                stack.append(_Call(cls, args if isinstance(args, tuple) else (args,), "NEWOBJ"))
            elif name == "NEWOBJ_EX":
                kwargs, args, cls = stack.pop(), stack.pop(), stack.pop()
                call = _Call(cls, args if isinstance(args, tuple) else (args,), "NEWOBJ_EX")
                call.state = kwargs
                stack.append(call)
            elif name == "BUILD":
                state = stack.pop()
                target = stack[-1]
                if isinstance(target, _Call):
                    target.state = state
                else:
                    self._refuse("BUILD on something that is not an object")
            elif name in ("PERSID", "BINPERSID"):
                pid = arg if name == "PERSID" else stack.pop()
                if name == "BINPERSID" and not (
                        isinstance(pid, int) or (isinstance(pid, tuple) and pid and pid[0] == "storage")):
                    self._refuse("a persistent id that is not a tensor storage")
                info = _storage_info(pid)
                if info is not None and info.key not in self.storages:
                    self.storages[info.key] = info
                stack.append(_PersId(pid))
            else:                                   # an opcode this walk does not know: say so
                raise ValueError(f"unknown pickle opcode {name}")
        raise ValueError("the pickle ended without STOP")


def _func_name(call: _Call) -> str:
    return call.func.name if isinstance(call.func, _Global) else "<computed>"


# ---- the report ----

@dataclass(frozen=True)
class Entry:
    """One node of the saved object: a tensor, a number, a container, an object of some class..."""
    path: tuple[str, ...]           # keys from the top: ("model", "fc.weight")
    kind: str                       # tensor, dict, list, tuple, set, int, float, bool, str, bytes,
                                    # complex, none, dtype, device, global, object, storage,
                                    # reference (an object already shown elsewhere), unknown
    type_name: str = ""             # Parameter / Tensor / OrderedDict / the class or function's name
    shape: tuple[int, ...] | None = None
    stride: tuple[int, ...] | None = None
    dtype: str | None = None        # "torch.float32"
    device: str | None = None       # the location the file records: "cpu", "cuda:0", "meta"
    nbytes: int | None = None       # a tensor's numel * element size, like tensor.nbytes
    storage: str | None = None      # the storage record the tensor reads ("0" for data/0)
    requires_grad: bool | None = None
    global_name: str | None = None  # objects and globals: the "module.name" the loader would call
    safe: bool = True               # False if loading this node needs a global outside the allowlist
    value: str | None = None        # a short text: the number, the string, the call
    length: int | None = None       # containers: number of items
    built_by: str | None = None     # objects: "call" (a function called with arguments: REDUCE) or
                                    # "instance" (a class's __new__, then its attributes set: NEWOBJ)
    children: tuple["Entry", ...] = ()

    @property
    def key(self) -> str:
        return ".".join(self.path)

    @property
    def depth(self) -> int:
        return len(self.path)


@dataclass(frozen=True)
class StorageInfo:
    """One tensor storage the file declares (several tensors may read one storage)."""
    key: str
    dtype: str
    device: str
    numel: int                      # elements the pickle declares
    nbytes: int                     # declared bytes: what loading would allocate
    record_bytes: int | None        # bytes the archive really holds for it (None: not a zip file)


@dataclass(frozen=True)
class GlobalRef:
    name: str                       # "module.name", as torch's error message and allowlist spell it
    safe: bool                      # in the weights_only allowlist (and not in a blocked module)
    count: int                      # how many times the pickle names it


@dataclass(frozen=True)
class CheckpointReport:
    path: str
    name: str
    file_bytes: int
    format: str                     # "zip" (torch.save), "legacy" (torch.save before 1.6), "pickle",
                                    # "torchscript", "unknown" (unreadable)
    protocol: int | None
    root: Entry | None
    storages: tuple[StorageInfo, ...]
    globals: tuple[GlobalRef, ...]  # every global the file names, in order of first appearance
    unsafe_globals: tuple[str, ...]
    unsupported_opcodes: tuple[str, ...]
    reasons: tuple[str, ...]        # why torch.load(weights_only=True) would refuse it; empty if it would not
    problems: tuple[str, ...]       # things that look wrong (sizes the file cannot back up...)
    error: str | None               # the file could not be read as a pickle at all
    truncated: bool = False
    tensor_count: int = 0
    total_bytes: int = 0            # sum of the declared bytes of the distinct storages

    @property
    def loads_with_weights_only(self) -> bool:
        """Would torch.load(path) (weights_only=True) accept it? Predicted statically, nothing run."""
        return not self.reasons

    @property
    def safe(self) -> bool:
        return self.loads_with_weights_only

    def entries(self) -> list[Entry]:
        """Every entry, parents before children (the root first)."""
        out, todo = [], [self.root] if self.root is not None else []
        while todo:
            e = todo.pop()
            out.append(e)
            todo.extend(reversed(e.children))
        return out

    def entry(self, key: str) -> Entry:
        """The entry at a dotted key, e.g. report.entry("model.fc.weight") (the root is "")."""
        for e in self.entries():
            if e.key == key:
                return e
        raise KeyError(key)

    def keys(self) -> list[str]:
        return [e.key for e in self.entries()]


# ---- from placeholders to entries ----

_TENSOR_FUNCS = {
    "torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3",
    "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state",
    "torch._utils._rebuild_meta_tensor_no_storage", "torch._utils._rebuild_qtensor",
    "torch._utils._rebuild_sparse_tensor", "torch._utils._rebuild_nested_tensor",
    "torch._utils._rebuild_wrapper_subclass", "torch._utils._rebuild_device_tensor_from_cpu_tensor",
    "torch._utils._rebuild_device_tensor_from_numpy", "torch._tensor._rebuild_from_type_v2",
}


@functools.lru_cache(maxsize=1)
def _storage_names() -> dict:
    """"FloatStorage" -> torch.float32, for every typed storage class torch knows."""
    return {v: k for k, v in torch.storage._dtype_to_storage_type_map().items()}


def _storage_dtype(storage_type) -> str | None:
    """torch.FloatStorage -> "torch.float32", by name (no import, no getattr on the file's module)."""
    if not isinstance(storage_type, _Global):
        return None
    dtype = _storage_names().get(storage_type.short())
    return str(dtype) if dtype is not None else None


def _dtype_text(x) -> str | None:
    if isinstance(x, _Global) and x.module == "torch":
        candidate = getattr(torch, x.short(), None)          # a lookup in torch itself, by a name
        if isinstance(candidate, torch.dtype):
            return str(candidate)
    return None


def _itemsize(dtype_text: str | None) -> int | None:
    if dtype_text is None:
        return None
    d = getattr(torch, dtype_text.removeprefix("torch."), None)
    return d.itemsize if isinstance(d, torch.dtype) else None


def _device_text(x) -> str | None:
    if isinstance(x, str):
        return x
    if isinstance(x, _Call) and _func_name(x) == "torch.device":
        parts = [str(a) for a in x.args if isinstance(a, (str, int))]
        return ":".join(parts) if parts else None
    return None


def _ints(x) -> tuple[int, ...] | None:
    if isinstance(x, _Call) and _func_name(x) == "torch.Size" and x.args:
        x = x.args[0]
    if isinstance(x, tuple) and all(isinstance(i, int) and not isinstance(i, bool) for i in x):
        return x
    return None


def _short(v, limit=60, depth=0) -> str:
    """A one-line text for a placeholder, used for values and call arguments."""
    if depth > 3:
        text = "..."
    elif isinstance(v, (bool, int, float, complex, type(None))):
        text = repr(v)
    elif isinstance(v, (str, bytes, bytearray)):
        text = repr(v)
    elif isinstance(v, tuple):
        text = "(" + ", ".join(_short(i, 20, depth + 1) for i in v[:8]) + (", ..." if len(v) > 8 else "") \
            + ("," if len(v) == 1 else "") + ")"
    elif isinstance(v, _Global):
        text = v.name
    elif isinstance(v, _Call):
        text = f"{_func_name(v)}(...)"
    elif isinstance(v, _Dict):
        text = "{...}"
    elif isinstance(v, _List):
        text = "[...]"
    else:
        text = "..."
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Describer:
    def __init__(self, walk: _Walk):
        self.walk = walk
        self.shown: dict[int, tuple] = {}       # id(placeholder) -> path where it was first shown
        self.count = 0
        self.truncated = False

    def storage(self, pid) -> tuple[str | None, str | None, str | None, StorageInfo | None]:
        """(key, dtype, device, info) of the storage a persistent id names; Nones if it names none."""
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            return None, None, None, None
        key = str(pid[2])
        return key, _storage_dtype(pid[1]), str(pid[3]), self.walk.storages.get(key)

    def tensor(self, call: _Call, path, type_name="Tensor") -> Entry:
        fname, a = _func_name(call), call.args
        info = dict(kind="tensor", type_name=type_name, global_name=fname, safe=self.walk.is_safe(fname))
        if fname in ("torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state") \
                and a and isinstance(a[0], _Call):
            inner = self.tensor(a[0], path, "Parameter")
            grad = a[1] if len(a) > 1 and isinstance(a[1], bool) else inner.requires_grad
            return replace(inner, requires_grad=grad, global_name=fname, safe=inner.safe and info["safe"])
        if fname == "torch._tensor._rebuild_from_type_v2" and len(a) >= 3 and isinstance(a[0], _Global):
            inner_call = _Call(a[0], a[2] if isinstance(a[2], tuple) else (), "REDUCE")
            inner = self.tensor(inner_call, path)
            cls = a[1].name if isinstance(a[1], _Global) else "a tensor subclass"
            return replace(inner, type_name=cls,
                           safe=inner.safe and isinstance(a[1], _Global) and self.walk.is_safe(a[1].name))
        shape = stride = dtype = device = key = grad = None
        if fname in ("torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2",
                     "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_qtensor") and len(a) >= 4:
            if isinstance(a[0], _PersId):
                key, dtype, device, _ = self.storage(a[0].pid)
            shape, stride = _ints(a[2]), _ints(a[3])
            if fname == "torch._utils._rebuild_tensor_v3" and len(a) >= 7:
                dtype = _dtype_text(a[6]) or dtype
            at = 5 if fname == "torch._utils._rebuild_qtensor" else 4
            if fname != "torch._utils._rebuild_tensor" and len(a) > at and isinstance(a[at], bool):
                grad = a[at]
        elif fname == "torch._utils._rebuild_meta_tensor_no_storage" and len(a) >= 3:
            dtype, shape, stride, device = _dtype_text(a[0]), _ints(a[1]), _ints(a[2]), "meta"
            grad = a[3] if len(a) > 3 and isinstance(a[3], bool) else None
        elif fname == "torch._utils._rebuild_wrapper_subclass" and len(a) >= 7:
            dtype, shape, stride, device = _dtype_text(a[1]), _ints(a[2]), _ints(a[3]), _device_text(a[6])
        elif fname in ("torch._utils._rebuild_device_tensor_from_cpu_tensor",
                       "torch._utils._rebuild_device_tensor_from_numpy") and len(a) >= 3:
            if isinstance(a[0], _Call) and _func_name(a[0]) in _TENSOR_FUNCS:
                inner = self.tensor(a[0], path)
                shape, stride, key = inner.shape, inner.stride, inner.storage
            dtype, device = _dtype_text(a[1]), _device_text(a[2])
        size = _itemsize(dtype)
        nbytes = math.prod(shape) * size if shape is not None and size is not None else None
        return Entry(path=path, shape=shape, stride=stride, dtype=dtype, device=device, nbytes=nbytes,
                     storage=key, requires_grad=grad, **info)

    def items(self, pairs, path, depth) -> tuple:
        pairs, out = list(pairs), []
        for i, (k, v) in enumerate(pairs):
            if self.count >= MAX_ENTRIES:           # one row says what is left out, then stop
                self.truncated = True
                out.append(Entry(path + ("...",), "unknown", value=f"{len(pairs) - i} more not shown"))
                break
            seg = k if isinstance(k, str) else _short(k, 40)
            out.append(self.describe(v, path + (seg,), depth + 1))
        return tuple(out)

    def describe(self, v, path=(), depth=0) -> Entry:
        self.count += 1
        if self.count > MAX_ENTRIES:
            self.truncated = True
            return Entry(path, "unknown", value="not shown: the report stops at "
                                                f"{MAX_ENTRIES} entries")
        if depth > MAX_DEPTH:
            self.truncated = True
            return Entry(path, "unknown", value=f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, bool):
            return Entry(path, "bool", "bool", value=repr(v))
        if isinstance(v, int):
            return Entry(path, "int", "int", value=_short(v))
        if isinstance(v, float):
            return Entry(path, "float", "float", value=repr(v))
        if isinstance(v, str):
            return Entry(path, "str", "str", value=_short(v), length=len(v))
        if isinstance(v, (bytes, bytearray)):
            return Entry(path, "bytes", type(v).__name__, value=_short(v), length=len(v))
        if v is None:
            return Entry(path, "none", "None", value="None")
        if isinstance(v, tuple):
            return Entry(path, "tuple", "tuple", length=len(v), value=_short(v),
                         children=self.items(((str(i), x) for i, x in enumerate(v)), path, depth))
        if isinstance(v, _Global):
            dtype = _dtype_text(v)
            if dtype:
                return Entry(path, "dtype", "dtype", dtype=dtype, value=dtype, global_name=v.name)
            return Entry(path, "global", v.short(), global_name=v.name, safe=self.walk.is_safe(v.name),
                         value=v.name)
        if isinstance(v, _PersId):
            key, dtype, device, info = self.storage(v.pid)
            return Entry(path, "storage", "storage", dtype=dtype, device=device, storage=key,
                         nbytes=info.nbytes if info else None)
        if isinstance(v, _Opaque):
            return Entry(path, "unknown", value=v.what)
        if id(v) in self.shown:                 # memo: the same object again (shared, or a cycle)
            where = ".".join(self.shown[id(v)]) or "(the whole file)"
            return Entry(path, "reference", value=f"same object as {where}")
        self.shown[id(v)] = path
        if isinstance(v, _Dict):
            return Entry(path, "dict", "dict", length=len(v.items), children=self.items(v.items, path, depth))
        if isinstance(v, _List):
            return Entry(path, "list", "list", length=len(v.items),
                         children=self.items(((str(i), x) for i, x in enumerate(v.items)), path, depth))
        if isinstance(v, _Set):
            kind = "frozenset" if v.frozen else "set"
            return Entry(path, "set", kind, length=len(v.items), value=_short(tuple(v.items)))
        if isinstance(v, _Call):
            return self.call(v, path, depth)
        return Entry(path, "unknown", value=type(v).__name__)

    def call(self, c: _Call, path, depth) -> Entry:
        fname = _func_name(c)
        safe = isinstance(c.func, _Global) and self.walk.is_safe(fname)
        a = c.args
        if fname in _TENSOR_FUNCS:
            return self.tensor(c, path)
        if fname in ("collections.OrderedDict", "collections.Counter"):
            # (an OrderedDict's BUILD state is its _metadata attribute: version numbers, not shown)
            return Entry(path, "dict", fname.split(".")[1], global_name=fname, length=len(c.items),
                         children=self.items(c.items, path, depth))
        if fname in ("builtins.set", "builtins.frozenset") and a and isinstance(a[0], _List):
            return Entry(path, "set", fname.split(".")[1], global_name=fname, length=len(a[0].items),
                         value=_short(tuple(a[0].items)))
        if fname == "_codecs.encode" and a and isinstance(a[0], str):
            return Entry(path, "bytes", "bytes", global_name=fname, value=_short(a[0].encode("latin-1",
                                                                                      "replace")))
        if fname == "builtins.bytearray":
            return Entry(path, "bytes", "bytearray", global_name=fname, value=_short(a[0] if a else b""))
        if fname == "builtins.complex" and all(isinstance(x, (int, float)) for x in a):
            return Entry(path, "complex", "complex", global_name=fname, value=repr(complex(*a[:2])))
        if fname == "torch.Size" and _ints(c) is not None:
            return Entry(path, "tuple", "torch.Size", global_name=fname, length=len(_ints(c)),
                         value=_short(_ints(c)))
        if fname == "torch.device":
            return Entry(path, "device", "torch.device", global_name=fname, device=_device_text(c),
                         value=_device_text(c))
        # Any other call: an object of some class (NEWOBJ), or whatever a function returns (REDUCE).
        shown_args = ", ".join(_short(x, 40) for x in a)
        name = c.func.short() if isinstance(c.func, _Global) else "?"
        is_call = c.how in ("REDUCE", "INST", "OBJ")
        value = f"{fname}({shown_args})" if is_call else None
        kids: list = []
        state = c.state
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], (_Dict, type(None))):
            state = state[0]                    # (dict, slotstate): attributes first
        if isinstance(state, _Dict):
            kids.extend(self.items(state.items, path, depth))
        elif state is not None:
            kids.append(self.describe(state, path + ("(state)",), depth + 1))
        kids.extend(self.items(c.items, path, depth))
        kids.extend(self.items(((str(i), x) for i, x in enumerate(c.listitems)), path, depth))
        for i, x in enumerate(a):
            if isinstance(x, (_Call, _Dict, _List, _PersId)):
                kids.append(self.describe(x, path + (f"(arg {i})",), depth + 1))
        return Entry(path, "object", name, global_name=fname, safe=safe, value=value, children=tuple(kids),
                     built_by="call" if is_call else "instance")


# ---- reading the file ----

def _read_zip(path) -> tuple[bytes, dict[str, int], str]:
    """data.pkl, the byte size of each storage record, and the format ("zip" or "torchscript")."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        if not names:
            raise ValueError("an empty zip archive")
        prefix = names[0].split("/", 1)[0] + "/"    # torch reads the records under the first folder
        fmt = "torchscript" if any(n == prefix + "constants.pkl" for n in names) else "zip"
        info = zf.getinfo(prefix + "data.pkl") if prefix + "data.pkl" in names else None
        if info is None:
            raise ValueError("a zip archive without data.pkl: not a torch.save file")
        if info.file_size > MAX_PICKLE_BYTES:
            raise ValueError(f"data.pkl is {info.file_size:,} bytes; not read (limit {MAX_PICKLE_BYTES:,})")
        data = zf.read(info)
        records = {n[len(prefix + "data/"):]: zf.getinfo(n).file_size for n in names
                   if n.startswith(prefix + "data/") and n != prefix + "data/"}
    return data, records, fmt


def inspect_checkpoint(path) -> CheckpointReport:
    """Read a checkpoint's structure and needs without executing it. Raises only if there is no file.

    Works on torch.save files (zip, any pickle protocol), legacy torch files and bare pickles."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no file at {path}")
    walk = _Walk(allowed_globals(), blocked_modules())
    file_bytes = path.stat().st_size
    records, root_sym, error, fmt = None, None, None, "unknown"
    reasons: list[str] = []
    try:
        with open(path, "rb") as f:
            head = f.read(4)
        if head == b"PK\x03\x04":                  # torch's own test for the zip format
            data, records, fmt = _read_zip(path)
            root_sym = walk.run(io.BytesIO(data))
        else:
            with open(path, "rb") as stream:        # genops reads as it goes: no need to read it all
                first = walk.run(stream)
                if isinstance(first, int) and first == LEGACY_MAGIC:
                    fmt = "legacy"
                    walk.run(stream)                # protocol version
                    walk.run(stream)                # sys_info
                    root_sym = walk.run(stream)     # the saved object (raw storage bytes follow it)
            if fmt != "legacy":
                fmt, root_sym = "pickle", first
                reasons.append("a bare pickle, not a torch.save file: torch.load takes its first "
                               "object for a magic number and fails (with weights_only=False it "
                               "unpickles the whole object, running anything it names, before failing)")
    except Exception as exc:                        # not a pickle, truncated, corrupt...
        error = f"{type(exc).__name__}: {exc}"

    describer = _Describer(walk)
    root = None
    if error is None:
        try:
            root = describer.describe(root_sym)
        except RecursionError:                      # a pathological nesting the limits did not catch
            error = "RecursionError: the object is nested too deeply to describe"
    globals_ = tuple(GlobalRef(n, walk.is_safe(n), c) for n, c in walk.globals.items())
    unsafe = tuple(g.name for g in globals_ if not g.safe)
    if fmt == "torchscript":
        reasons.append("a TorchScript archive: torch.load hands it to torch.jit.load, which runs its code")
    if unsafe:
        reasons.append("it names globals outside the weights_only allowlist: " + ", ".join(unsafe))
    if walk.unsupported:
        reasons.append("it uses pickle opcodes the weights_only reader does not implement: "
                       + ", ".join(walk.unsupported))
    reasons.extend(walk.refusals)
    if error is not None:
        reasons.append(f"it cannot be read as a checkpoint ({error})")
    problems = []
    storages = tuple(replace(s, record_bytes=None if records is None else records.get(s.key))
                     for s in walk.storages.values())
    for s in storages:
        if s.record_bytes is not None and s.record_bytes < s.nbytes:
            problems.append(f"storage {s.key} claims {s.nbytes:,} bytes but the file holds only "
                            f"{s.record_bytes:,}")
        if records is not None and s.record_bytes is None:
            problems.append(f"storage {s.key} has no record in the archive")
    return CheckpointReport(
        path=str(path), name=path.name, file_bytes=file_bytes, format=fmt, protocol=walk.protocol,
        root=root, storages=storages, globals=globals_, unsafe_globals=unsafe,
        unsupported_opcodes=tuple(walk.unsupported), reasons=tuple(reasons), problems=tuple(problems),
        error=error, truncated=describer.truncated, tensor_count=walk.tensors,
        total_bytes=sum(s.nbytes for s in storages))


# ---- HTML: a verdict, a table of entries, the globals; every text escaped (the file chose it) ----

def format_shape(shape) -> str:
    return "" if shape is None else ", ".join(str(n) for n in shape)


def _shape_text(shape) -> str:
    return "" if shape is None else f"({format_shape(shape)}{',' if len(shape) == 1 else ''})"


def _attr(x) -> str:
    return html.escape("" if x is None else str(x), quote=True)


_CELL = "border-bottom:1px solid #ddd;padding:2px 8px;text-align:left"
_UNSAFE = "background:#fde2e2"


def _row(e: Entry) -> str:
    label = html.escape(e.path[-1]) if e.path else "<i>(the whole file)</i>"
    what = e.type_name if e.kind in ("tensor", "dict", "object", "global") and e.type_name else e.kind
    if e.kind == "object" and e.global_name:
        what = (f"result of calling {e.global_name}" if e.built_by == "call"
                else f"instance of {e.global_name}")
    note = e.value or ""
    if e.kind in ("dict", "list", "tuple", "set") and e.length is not None:
        note = f"{e.length} item{'s' if e.length != 1 else ''}"
        if e.value and e.kind != "dict" and e.length:
            note += f": {e.value}"
    if e.kind == "tensor" and e.requires_grad:
        note = "requires_grad"
    cells = (f'<td style="{_CELL};padding-left:{8 + 16 * max(e.depth - 1, 0)}px"><code>{label}</code></td>',
             f'<td style="{_CELL}">{html.escape(what)}</td>',
             f'<td style="{_CELL}">{html.escape(_shape_text(e.shape))}</td>',
             f'<td style="{_CELL}">{html.escape(e.dtype or "")}</td>',
             f'<td style="{_CELL}">{html.escape(e.device or "")}</td>',
             f'<td style="{_CELL};text-align:right">{"" if e.nbytes is None else f"{e.nbytes:,}"}</td>',
             f'<td style="{_CELL};color:#555">{html.escape(note)}</td>')
    style = f' style="{_UNSAFE}"' if not e.safe else ""
    return (f'<tr data-key="{_attr(e.key)}" data-kind="{_attr(e.kind)}" data-shape="{_attr(format_shape(e.shape))}" '
            f'data-dtype="{_attr(e.dtype)}" data-bytes="{_attr(e.nbytes)}" data-device="{_attr(e.device)}" '
            f'data-depth="{e.depth}" data-safe="{str(e.safe).lower()}"'
            + (f' data-global="{_attr(e.global_name)}"' if e.kind in ("object", "global") else "")
            + f"{style}>{''.join(cells)}</tr>")


def report_html(report: CheckpointReport) -> str:
    """A report as HTML, with data- hooks for tests. Nothing in it loads or runs anything."""
    r = report
    safe = str(r.loads_with_weights_only).lower()
    if r.error is not None:
        verdict = (f"<b>{html.escape(r.name)}</b> could not be read as a checkpoint: "
                   f"<code>{html.escape(r.error)}</code>.")
    elif r.loads_with_weights_only:
        verdict = (f"<code>torch.load</code> with <code>weights_only=True</code> (the default) would accept "
                   f"<b>{html.escape(r.name)}</b>: every global it names is on torch's allowlist.")
    else:
        verdict = (f"<code>torch.load</code> with <code>weights_only=True</code> (the default) would "
                   f"<b>refuse</b> <b>{html.escape(r.name)}</b>. Loading it with "
                   f"<code>weights_only=False</code> would run what it names: treat it as a program.")
    sizes = (f"{r.tensor_count} tensor{'s' if r.tensor_count != 1 else ''} in {len(r.storages)} "
             f"storage{'s' if len(r.storages) != 1 else ''}: <b>{r.total_bytes:,} bytes</b> of tensor data "
             f"declared; the file is {r.file_bytes:,} bytes ({html.escape(r.format)}"
             + (f", pickle protocol {r.protocol}" if r.protocol is not None else "") + ").")
    reasons = "".join(f'<li class="refusal-reason">{html.escape(x)}</li>' for x in r.reasons)
    problems = "".join(f'<li class="checkpoint-problem">{html.escape(x)}</li>' for x in r.problems)
    unsafe = "".join(f'<li class="unsafe-global" data-global="{_attr(g.name)}" data-count="{g.count}">'
                     f"<code>{html.escape(g.name)}</code></li>" for g in r.globals if not g.safe)
    allowed = "".join(f'<li class="allowed-global" data-global="{_attr(g.name)}" data-count="{g.count}">'
                      f"<code>{html.escape(g.name)}</code></li>" for g in r.globals if g.safe)
    head = "".join(f'<th style="{_CELL}">{h}</th>' for h in
                   ("key", "kind", "shape", "dtype", "device (saved on)", "bytes", "note"))
    rows = "".join(_row(e) for e in r.entries())
    more = ('<p class="checkpoint-truncated">The file holds more than this report shows '
            f"(it stops at {MAX_ENTRIES} entries or {MAX_DEPTH} levels).</p>") if r.truncated else ""
    parts = [f'<div class="checkpoint-inspector" data-safe="{safe}" data-file="{_attr(r.name)}" '
             f'data-format="{_attr(r.format)}" data-total-bytes="{r.total_bytes}" '
             f'data-tensors="{r.tensor_count}">',
             f'<p class="checkpoint-verdict">{verdict}</p>']
    if reasons:
        parts.append(f'<ul class="refusal-reasons">{reasons}</ul>')
    if r.error is None:
        parts.append(f'<p class="checkpoint-sizes">{sizes}</p>')
    if problems:
        parts.append(f'<ul class="checkpoint-problems">{problems}</ul>')
    if rows:
        parts.append(f'<table class="checkpoint-entries" style="border-collapse:collapse">'
                     f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{more}")
    if unsafe:
        parts.append("<p>What it would need to load: globals outside the allowlist, which "
                     "<code>weights_only=False</code> would import and call:</p>"
                     f'<ul class="unsafe-globals">{unsafe}</ul>')
    if allowed:
        parts.append(f'<details><summary>{sum(1 for g in r.globals if g.safe)} allowlisted globals it names '
                     f'</summary><ul class="allowed-globals">{allowed}</ul></details>')
    parts.append("</div>")
    return "".join(parts)


def checkpoint_html(path) -> str:
    """inspect_checkpoint(path) as HTML."""
    return report_html(inspect_checkpoint(path))


# ---- the widget: a dropdown of the files in a folder, one HTML view ----

def list_files(folder) -> list[Path]:
    """The regular files directly in a folder, by name (hidden files left out; none if it is gone)."""
    if not Path(folder).is_dir():
        return []
    return sorted((p for p in Path(folder).iterdir() if p.is_file() and not p.name.startswith(".")),
                  key=lambda p: p.name)


class CheckpointInspector(widgets.VBox):
    """Pick a file in a folder; see what it holds and what it would need to load. Nothing is loaded."""

    def __init__(self, path_or_dir):
        target = Path(path_or_dir)
        if not target.exists():
            raise FileNotFoundError(f"no file or folder at {target}")
        self.folder = target if target.is_dir() else target.parent
        self.file_picker = widgets.Dropdown(description="file", layout=widgets.Layout(width="420px"))
        self.rescan_button = widgets.Button(description="rescan folder", tooltip="list the folder's files again")
        self.view = widgets.HTML()
        self.report: CheckpointReport | None = None
        super().__init__([widgets.HBox([self.file_picker, self.rescan_button]), self.view])
        self.rescan(selected=target if target.is_file() else None)
        self.file_picker.observe(self.refresh, names="value")
        self.rescan_button.on_click(lambda _button: self.rescan())
        self.refresh()

    def rescan(self, selected=None):
        """List the folder's files again, keeping the current choice if it is still there."""
        keep = str(selected) if selected is not None else self.file_picker.value
        options = [(p.name, str(p)) for p in list_files(self.folder)]
        values = [v for _, v in options]
        self.file_picker.options = options
        if keep in values:
            self.file_picker.value = keep
        elif values:
            self.file_picker.value = values[0]

    def refresh(self, change=None):
        path = self.file_picker.value
        if path is None:
            self.report = None
            self.view.value = (f'<div class="checkpoint-inspector" data-safe="" data-file="">'
                               f"<p>No files in <code>{html.escape(str(self.folder))}</code> yet.</p></div>")
            return
        try:
            self.report = inspect_checkpoint(path)
            self.view.value = report_html(self.report)
        except OSError as exc:               # the file vanished between listing and reading
            self.report = None
            self.view.value = (f'<div class="checkpoint-inspector" data-safe="" data-file="{_attr(Path(path).name)}">'
                               f"<p>{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</p></div>")


__all__ = ["CheckpointInspector", "CheckpointReport", "Entry", "GlobalRef", "StorageInfo", "allowed_globals",
           "blocked_modules", "checkpoint_html", "inspect_checkpoint", "list_files", "report_html",
           "WEIGHTS_ONLY_OPCODES"]


if __name__ == "__main__":  # python -m utils.checkpoint_inspector FILE: print the report as text
    import sys
    for arg in sys.argv[1:]:
        rep = inspect_checkpoint(arg)
        print(f"{rep.name}: weights_only would {'accept' if rep.loads_with_weights_only else 'refuse'}")
        for e in rep.entries():
            print("  " * e.depth + f"{e.key or '(file)'}: {e.kind} {format_shape(e.shape)} {e.dtype or ''} "
                  f"{e.nbytes if e.nbytes is not None else ''} {e.value or ''}".rstrip())
        for reason in rep.reasons:
            print("  refuse:", reason)
