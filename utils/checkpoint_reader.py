"""Read a checkpoint file without running it: what it holds, and what it would need to load.

`torch.save` writes a zip archive. Each tensor's raw bytes sit in their own record (data/0,
data/1, ...), and one record, data.pkl, is a pickle: a program that rebuilds the saved object.
A state_dict's program only names torch's tensor-rebuilding functions; a pickled model names your
class; a malicious file can name `builtins.exec`.

utils.pickle_walk follows that program on inert placeholders (nothing imported, nothing called).
This module turns what it built into a report: the structure of the object (dict keys, nesting,
and for each tensor its shape, stride, dtype, the device the file names, and bytes), every global
the file names, each marked allowed or not by the allowlist `torch.load(weights_only=True)` uses,
and why that load would refuse the file. Pure data: no HTML, no widgets
(utils.checkpoint_inspector draws the report).

    report = inspect_checkpoint(path)     # a CheckpointReport: entries, storages, globals, reasons
    report.loads_with_weights_only        # would torch.load(path) accept it? predicted, nothing run
    report.entry("model.fc.weight")       # one Entry: kind, shape, dtype, device, nbytes, safe...

Compared with torch.serialization.get_unsafe_globals_in_checkpoint(path), which also reads
data.pkl statically and executes nothing: that function lists the unsafe globals (as a set, in
no fixed order) and raises on any opcode that torch's own reader does not implement (every
protocol-4 pickle, for example). This module reads every pickle protocol, keeps the globals in
the order the file names them, reports the opcodes weights_only would refuse, the structure
and the sizes, and also reads legacy (pre-1.6, non-zip) torch files and bare pickles."""
import functools
import io
import math
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from utils import pickle_walk as pw
from utils.pickle_walk import WEIGHTS_ONLY_OPCODES, allowed_globals, blocked_modules

MAX_ENTRIES = 2000                # rows of the tree kept; a bigger file is reported as truncated
MAX_DEPTH = 64                    # nesting followed; deeper is reported, not followed
MAX_PICKLE_BYTES = 256 * 2**20    # a zip's data.pkl larger than this is not read (tensor records do not count)
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C   # what torch's pre-zip format pickles first


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

_BASE_TENSOR_FUNCS = frozenset(f"torch._utils.{n}" for n in (
    "_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_qtensor",
    "_rebuild_meta_tensor_no_storage", "_rebuild_sparse_tensor", "_rebuild_nested_tensor",
    "_rebuild_wrapper_subclass", "_rebuild_device_tensor_from_numpy"))   # one call per tensor object
# ...and the wrappers that rebuild a tensor around one of those calls.
_TENSOR_FUNCS = _BASE_TENSOR_FUNCS | {
    "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor", "torch._tensor._rebuild_from_type_v2"}


@functools.lru_cache(maxsize=1)
def _storage_names() -> dict:
    """"FloatStorage" -> torch.float32, for every typed storage class torch knows."""
    return {v: k for k, v in torch.storage._dtype_to_storage_type_map().items()}


def _storage_dtype(storage_type) -> str | None:
    """torch.FloatStorage -> "torch.float32", by name (no import, no getattr on the file's module)."""
    if not isinstance(storage_type, pw.Global):
        return None
    dtype = _storage_names().get(storage_type.short())
    return str(dtype) if dtype is not None else None


def _dtype_text(x) -> str | None:
    if isinstance(x, pw.Global) and x.module == "torch":
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
    if isinstance(x, pw.Call) and pw.func_name(x) == "torch.device":
        parts = [str(a) for a in x.args if isinstance(a, (str, int))]
        return ":".join(parts) if parts else None
    return None


def _ints(x) -> tuple[int, ...] | None:
    if isinstance(x, pw.Call) and pw.func_name(x) == "torch.Size" and x.args:
        x = x.args[0]
    if isinstance(x, tuple) and all(isinstance(i, int) and not isinstance(i, bool) for i in x):
        return x
    return None


def _short(v, limit=60, depth=0) -> str:
    """A one-line text for a placeholder, used for values and call arguments."""
    if depth > 3:
        text = "..."
    elif isinstance(v, (bool, int, float, complex, type(None), str, bytes, bytearray)):
        text = repr(v)
    elif isinstance(v, tuple):
        text = "(" + ", ".join(_short(i, 20, depth + 1) for i in v[:8]) + (", ..." if len(v) > 8 else "") \
            + ("," if len(v) == 1 else "") + ")"
    elif isinstance(v, pw.Global):
        text = v.name
    elif isinstance(v, pw.Call):
        text = f"{pw.func_name(v)}(...)"
    elif isinstance(v, pw.Dict):
        text = "{...}"
    elif isinstance(v, pw.List):
        text = "[...]"
    else:
        text = "..."
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Describer:
    def __init__(self, walk: pw.Walk, storages: dict):
        self.walk, self.storages = walk, storages
        self.shown: dict[int, tuple] = {}       # id(placeholder) -> path where it was first shown
        self.count = 0
        self.truncated = False

    def storage(self, pid) -> tuple[str | None, str | None, str | None, StorageInfo | None]:
        """(key, dtype, device, info) of the storage a persistent id names; Nones if it names none."""
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            return None, None, None, None
        key = str(pid[2])
        return key, _storage_dtype(pid[1]), str(pid[3]), self.storages.get(key)

    def tensor(self, call: pw.Call, path, type_name="Tensor") -> Entry:
        fname, a = pw.func_name(call), call.args
        info = {"kind": "tensor", "type_name": type_name, "global_name": fname, "safe": self.walk.is_safe(fname)}
        if fname in ("torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state") \
                and a and isinstance(a[0], pw.Call):
            inner = self.tensor(a[0], path, "Parameter")
            grad = a[1] if len(a) > 1 and isinstance(a[1], bool) else inner.requires_grad
            return replace(inner, requires_grad=grad, global_name=fname, safe=inner.safe and info["safe"])
        if fname == "torch._tensor._rebuild_from_type_v2" and len(a) >= 3 and isinstance(a[0], pw.Global):
            inner_call = pw.Call(a[0], a[2] if isinstance(a[2], tuple) else (), "REDUCE")
            inner = self.tensor(inner_call, path)
            cls = a[1].name if isinstance(a[1], pw.Global) else "a tensor subclass"
            return replace(inner, type_name=cls,
                           safe=inner.safe and isinstance(a[1], pw.Global) and self.walk.is_safe(a[1].name))
        shape = stride = dtype = device = key = grad = None
        if fname in ("torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2",
                     "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_qtensor") and len(a) >= 4:
            if isinstance(a[0], pw.PersId):
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
            if isinstance(a[0], pw.Call) and pw.func_name(a[0]) in _TENSOR_FUNCS:
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
                out.append(Entry((*path, "..."), "unknown", value=f"{len(pairs) - i} more not shown"))
                break
            seg = k if isinstance(k, str) else _short(k, 40)
            out.append(self.describe(v, (*path, seg), depth + 1))
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
        if isinstance(v, pw.Global):
            dtype = _dtype_text(v)
            if dtype:
                return Entry(path, "dtype", "dtype", dtype=dtype, value=dtype, global_name=v.name)
            return Entry(path, "global", v.short(), global_name=v.name, safe=self.walk.is_safe(v.name),
                         value=v.name)
        if isinstance(v, pw.PersId):
            key, dtype, device, info = self.storage(v.pid)
            return Entry(path, "storage", "storage", dtype=dtype, device=device, storage=key,
                         nbytes=info.nbytes if info else None)
        if isinstance(v, pw.Opaque):
            return Entry(path, "unknown", value=v.what)
        if id(v) in self.shown:                 # memo: the same object again (shared, or a cycle)
            where = ".".join(self.shown[id(v)]) or "(the whole file)"
            return Entry(path, "reference", value=f"same object as {where}")
        self.shown[id(v)] = path
        if isinstance(v, pw.Dict):
            return Entry(path, "dict", "dict", length=len(v.items), children=self.items(v.items, path, depth))
        if isinstance(v, pw.List):
            return Entry(path, "list", "list", length=len(v.items),
                         children=self.items(((str(i), x) for i, x in enumerate(v.items)), path, depth))
        if isinstance(v, pw.Set):
            kind = "frozenset" if v.frozen else "set"
            return Entry(path, "set", kind, length=len(v.items), value=_short(tuple(v.items)))
        if isinstance(v, pw.Call):
            return self.call(v, path, depth)
        return Entry(path, "unknown", value=type(v).__name__)

    def call(self, c: pw.Call, path, depth) -> Entry:
        fname = pw.func_name(c)
        safe = isinstance(c.func, pw.Global) and self.walk.is_safe(fname)
        a = c.args
        if fname in _TENSOR_FUNCS:
            return self.tensor(c, path)
        if fname in ("collections.OrderedDict", "collections.Counter"):
            # (an OrderedDict's BUILD state is its _metadata attribute: version numbers, not shown)
            return Entry(path, "dict", fname.split(".")[1], global_name=fname, length=len(c.items),
                         children=self.items(c.items, path, depth))
        if fname in ("builtins.set", "builtins.frozenset") and a and isinstance(a[0], pw.List):
            return Entry(path, "set", fname.split(".")[1], global_name=fname, length=len(a[0].items),
                         value=_short(tuple(a[0].items)))
        if fname == "_codecs.encode" and a and isinstance(a[0], str):
            return Entry(path, "bytes", "bytes", global_name=fname, value=_short(a[0].encode("latin-1",
                                                                                      "replace")))
        if fname == "builtins.bytearray":
            return Entry(path, "bytes", "bytearray", global_name=fname, value=_short(a[0] if a else b""))
        if fname == "builtins.complex" and all(isinstance(x, (int, float)) for x in a):
            return Entry(path, "complex", "complex", global_name=fname, value=repr(complex(*a[:2])))
        if fname == "torch.Size" and (sizes := _ints(c)) is not None:
            return Entry(path, "tuple", "torch.Size", global_name=fname, length=len(sizes), value=_short(sizes))
        if fname == "torch.device":
            return Entry(path, "device", "torch.device", global_name=fname, device=_device_text(c),
                         value=_device_text(c))
        # Any other call: an object of some class (NEWOBJ), or whatever a function returns (REDUCE).
        shown_args = ", ".join(_short(x, 40) for x in a)
        name = c.func.short() if isinstance(c.func, pw.Global) else "?"
        is_call = c.how in ("REDUCE", "INST", "OBJ")
        value = f"{fname}({shown_args})" if is_call else None
        kids: list = []
        state = c.state
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], (pw.Dict, type(None))):
            state = state[0]                    # (dict, slotstate): attributes first
        if isinstance(state, pw.Dict):
            kids.extend(self.items(state.items, path, depth))
        elif state is not None:
            kids.append(self.describe(state, (*path, "(state)"), depth + 1))
        kids.extend(self.items(c.items, path, depth))
        kids.extend(self.items(((str(i), x) for i, x in enumerate(c.listitems)), path, depth))
        for i, x in enumerate(a):
            if isinstance(x, (pw.Call, pw.Dict, pw.List, pw.PersId)):
                kids.append(self.describe(x, (*path, f"(arg {i})"), depth + 1))
        return Entry(path, "object", name, global_name=fname, safe=safe, value=value, children=tuple(kids),
                     built_by="call" if is_call else "instance")


# ---- storages: what each persistent id declares ----

def _storage_info(pid) -> "StorageInfo | None":
    """What a persistent id ('storage', type, key, location, numel[, view]) declares."""
    if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
        return None
    _, stype, key, location, numel = pid[:5]
    if not isinstance(numel, int) or isinstance(numel, bool):
        return None
    dtype = _storage_dtype(stype)
    untyped = isinstance(stype, pw.Global) and stype.short() == "UntypedStorage"
    size = _itemsize(dtype)
    if untyped:
        return StorageInfo(str(key), "untyped", str(location), numel, numel, None)
    if dtype is None or size is None:  # a dtype unknown has no size either
        return None
    return StorageInfo(str(key), dtype, str(location), numel, numel * size, None)


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


def _declared_storages(walk: pw.Walk) -> dict[str, StorageInfo]:
    """Every storage the file's persistent ids declare, by key (the first declaration of a key wins)."""
    storages: dict[str, StorageInfo] = {}
    for pid in walk.persistent_ids:
        info = _storage_info(pid)
        if info is not None and info.key not in storages:
            storages[info.key] = info
    return storages


def _walk_file(path: Path, walk: pw.Walk):
    """(the placeholder the file's object would be, zip record sizes or None, format, error or None).
    A file that is not a pickle, truncated or corrupt gives an error, with what was learnt before it."""
    records, fmt = None, "unknown"
    try:
        with open(path, "rb") as f:
            head = f.read(4)
        if head == b"PK\x03\x04":                  # torch's own test for the zip format
            data, records, fmt = _read_zip(path)
            return walk.run(io.BytesIO(data)), records, fmt, None
        with open(path, "rb") as stream:            # genops reads as it goes: no need to read it all
            root = walk.run(stream)
            if not (isinstance(root, int) and root == LEGACY_MAGIC):
                return root, None, "pickle", None
            fmt = "legacy"
            walk.run(stream)                        # protocol version
            walk.run(stream)                        # sys_info
            return walk.run(stream), None, fmt, None   # the saved object (raw storage bytes follow it)
    except Exception as exc:
        return None, records, fmt, f"{type(exc).__name__}: {exc}"


def _refusal_reasons(fmt: str, walk: pw.Walk, unsafe, error) -> list[str]:
    """Why torch.load(weights_only=True) would refuse the file; empty if it would load it."""
    reasons = []
    if fmt == "pickle":
        reasons.append("a bare pickle, not a torch.save file: torch.load takes its first "
                       "object for a magic number and fails (with weights_only=False it "
                       "unpickles the whole object, running anything it names, before failing)")
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
    return reasons


def _size_problems(storages, records) -> list[str]:
    """Storages whose declared bytes the archive cannot back up (records: None when not a zip)."""
    problems = []
    for s in storages:
        if s.record_bytes is not None and s.record_bytes < s.nbytes:
            problems.append(f"storage {s.key} claims {s.nbytes:,} bytes but the file holds only "
                            f"{s.record_bytes:,}")
        if records is not None and s.record_bytes is None:
            problems.append(f"storage {s.key} has no record in the archive")
    return problems


def inspect_checkpoint(path) -> CheckpointReport:
    """Read a checkpoint's structure and needs without executing it. Raises only if there is no file.

    Works on torch.save files (zip, any pickle protocol), legacy torch files and bare pickles."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no file at {path}")
    walk = pw.Walk(allowed_globals(), blocked_modules())
    root_sym, records, fmt, error = _walk_file(path, walk)
    declared = _declared_storages(walk)
    describer = _Describer(walk, declared)
    root = None
    if error is None:
        try:
            root = describer.describe(root_sym)
        except RecursionError:                      # a pathological nesting the limits did not catch
            error = "RecursionError: the object is nested too deeply to describe"
    globals_ = tuple(GlobalRef(n, walk.is_safe(n), c) for n, c in walk.globals.items())
    unsafe = tuple(g.name for g in globals_ if not g.safe)
    storages = tuple(replace(s, record_bytes=None if records is None else records.get(s.key))
                     for s in declared.values())
    return CheckpointReport(
        path=str(path), name=path.name, file_bytes=path.stat().st_size, format=fmt, protocol=walk.protocol,
        root=root, storages=storages, globals=globals_, unsafe_globals=unsafe,
        unsupported_opcodes=tuple(walk.unsupported), reasons=tuple(_refusal_reasons(fmt, walk, unsafe, error)),
        problems=tuple(_size_problems(storages, records)), error=error, truncated=describer.truncated,
        tensor_count=sum(walk.reduced.get(name, 0) for name in _BASE_TENSOR_FUNCS),
        total_bytes=sum(s.nbytes for s in storages))


__all__ = [
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "WEIGHTS_ONLY_OPCODES",
    "CheckpointReport",
    "Entry",
    "GlobalRef",
    "StorageInfo",
    "allowed_globals",
    "blocked_modules",
    "inspect_checkpoint",
]
