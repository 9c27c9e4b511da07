"""Follow a pickle's instructions without running any of them.

A pickle is a small program for a stack machine that rebuilds an object. Most of its instructions
push numbers and strings or build dicts and lists, but two matter for safety: GLOBAL names a
function or class by module and name, and REDUCE calls it. Unpickling runs that program;
this module only reads it. `pickletools.genops` decodes one opcode and its argument at a time and
executes nothing; each opcode then moves inert placeholders on a stack. A GLOBAL becomes a name
(nothing is imported or looked up), a REDUCE a record of "call this name with these arguments"
(nothing is called).

    walk = Walk(allowed_globals(), blocked_modules())
    root = walk.run(stream)     # the placeholder the program would build, up to its STOP
    walk.globals                # every "module.name" it names, in order, with how often
    walk.unsupported            # opcodes torch.load(weights_only=True) does not implement
    walk.refusals               # other reasons that reader would refuse the program
    walk.persistent_ids         # the persistent ids (in a torch file: tensor storages)
    walk.reduced                # how often REDUCE calls each named function

Each opcode is one small method, found by name in the table Walk.OPS; an opcode missing from the
table stops the walk with a ValueError rather than a guess. What the placeholders mean for a torch
checkpoint (tensors, storages, sizes) is utils.checkpoint_reader's business."""
import copyreg
import pickletools
from collections.abc import Callable
from typing import ClassVar

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

# weights_only lets SETITEM(S) fill these two classes' objects as well as dicts.
DICT_CLASSES = ("collections.OrderedDict", "collections.Counter")


# ---- the allowlist: the same names torch.load(weights_only=True) and get_unsafe_globals_... use ----

def allowed_globals() -> frozenset[str]:
    """Every "module.name" torch.load(weights_only=True) accepts right now: torch's built-in allowlist
    plus whatever add_safe_globals / the safe_globals context added (read fresh on every call)."""
    from torch import _weights_only_unpickler as wou  # private, but it is the allowlist torch uses;
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

class Sym:
    """Base of everything the walk builds instead of a real object."""


class Global(Sym):
    def __init__(self, name: str, module: str = ""):
        self.name, self.module = name, module   # name: "module.qualname"

    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


class Call(Sym):
    """The result of calling a global (REDUCE, NEWOBJ, INST, OBJ): never computed, only recorded."""

    def __init__(self, func, args, how: str):
        self.func, self.args, self.how = func, args, how
        self.state = None            # what BUILD would pass to __setstate__
        self.items: list = []        # what SETITEM(S) would store into it (OrderedDict, Counter)
        self.listitems: list = []    # what APPEND(S) would append to it


class Dict(Sym):
    def __init__(self, items=()):
        self.items = list(items)     # [(key, value)]: keys need not be hashable placeholders


class List(Sym):
    def __init__(self, items=()):
        self.items = list(items)


class Set(Sym):
    def __init__(self, items=(), frozen=False):
        self.items, self.frozen = list(items), frozen


class PersId(Sym):
    """A persistent id: in a torch file, a reference to a tensor storage stored outside the pickle."""

    def __init__(self, pid):
        self.pid = pid


class Opaque(Sym):
    def __init__(self, what: str):
        self.what = what


def func_name(call: Call) -> str:
    """The "module.name" a call would call, or "<computed>" when the program computed the function."""
    return call.func.name if isinstance(call.func, Global) else "<computed>"


_EMPTY = {"EMPTY_TUPLE": tuple, "EMPTY_LIST": List, "EMPTY_DICT": Dict, "EMPTY_SET": Set}


def _as_args(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _pairs(items) -> list:
    return list(zip(items[::2], items[1::2]))


# ---- the walk: one method per opcode, dispatched through the table OPS ----

class Walk:
    """Follow a pickle's opcodes on placeholders. Nothing is imported, called or constructed."""

    def __init__(self, allowed: frozenset, blocked: frozenset):
        self.allowed, self.blocked = allowed, blocked
        self.globals: dict[str, int] = {}          # name -> how many times the file names it
        self.modules: dict[str, str] = {}           # name -> its module, as the file spells it
        self.unsupported: dict[str, int] = {}      # opcode name -> count (weights_only refuses them)
        self.refusals: list[str] = []               # structural reasons weights_only would refuse
        self.protocol = None
        self.persistent_ids: list = []              # every persistent id, in order
        self.reduced: dict[str, int] = {}           # function name -> times REDUCE calls it

    def is_safe(self, name: str) -> bool:
        # torch refuses a blocked module (sys, os, posix, nt) even when the name was allowlisted
        return name in self.allowed and self.modules.get(name) not in self.blocked

    def run(self, stream):
        """Walk one pickle (up to its STOP) from a binary stream; return the placeholder it builds."""
        self.stack, self.marks, self.memo = [], [], {}
        for op, arg, _pos in pickletools.genops(stream):
            name = op.name
            if name not in WEIGHTS_ONLY_OPCODES:
                self.unsupported[name] = self.unsupported.get(name, 0) + 1
            if name == "STOP":
                return self.stack.pop() if self.stack else None
            handler = self.OPS.get(name)
            if handler is None:                         # an opcode this walk does not know: say so
                raise ValueError(f"unknown pickle opcode {name}")
            handler(self, arg, name)
        raise ValueError("the pickle ended without STOP")

    # -- helpers the opcodes share --

    def _global(self, module, name) -> Global:
        if isinstance(module, str) and isinstance(name, str):
            full = _global_name(module, name)
            module = full[:len(full) - len(name) - 1] if full.endswith("." + name) else module
        else:                                   # STACK_GLOBAL on something that is not two strings
            full, module = "<not a name>", ""
        self.globals[full] = self.globals.get(full, 0) + 1
        self.modules.setdefault(full, module)
        return Global(full, module)

    def _refuse(self, text: str):
        if text not in self.refusals:
            self.refusals.append(text)

    def _pop_mark(self) -> list:
        """Everything pushed since the last MARK, and the stack as it was before it."""
        items, self.stack = self.stack, self.marks.pop()
        return items

    def _push(self, x):
        self.stack.append(x)

    # -- the stack, the marks and the memo --

    def _proto(self, arg, name):
        self.protocol = arg

    def _nothing(self, arg, name):              # FRAME only sizes what follows; READONLY_BUFFER keeps the top
        pass

    def _mark(self, arg, name):
        self.marks.append(self.stack)
        self.stack = []

    def _pop(self, arg, name):
        self.stack.pop()

    def _pop_to_mark(self, arg, name):
        self._pop_mark()

    def _dup(self, arg, name):
        self._push(self.stack[-1])

    def _put(self, arg, name):
        self.memo[len(self.memo) if name == "MEMOIZE" else arg] = self.stack[-1]

    def _get(self, arg, name):
        self._push(self.memo[arg])

    # -- values --

    def _literal(self, arg, name):              # genops already decoded the number, string or bytes
        self._push(arg)

    def _constant(self, arg, name):
        self._push({"NONE": None, "NEWTRUE": True, "NEWFALSE": False}[name])

    def _buffer(self, arg, name):
        self._push(Opaque("an out-of-band buffer"))

    # -- containers --

    def _empty(self, arg, name):                # a fresh (), list, dict or set
        self._push(_EMPTY[name]())

    def _small_tuple(self, arg, name):          # TUPLE1, TUPLE2, TUPLE3: the top n items
        n = int(name[-1])
        items = tuple(self.stack[-n:])
        del self.stack[-n:]
        self._push(items)

    def _tuple(self, arg, name):
        self._push(tuple(self._pop_mark()))

    def _list(self, arg, name):
        self._push(List(self._pop_mark()))

    def _dict(self, arg, name):
        self._push(Dict(_pairs(self._pop_mark())))

    def _frozenset(self, arg, name):
        self._push(Set(self._pop_mark(), frozen=True))

    def _additems(self, arg, name):
        items = self._pop_mark()
        if isinstance(self.stack[-1], Set):
            self.stack[-1].items.extend(items)

    def _append(self, arg, name):               # APPEND one item, APPENDS those since the mark
        items = [self.stack.pop()] if name == "APPEND" else self._pop_mark()
        target = self.stack[-1]
        if isinstance(target, List):
            target.items.extend(items)
            return
        self._refuse(f"{name} into something that is not a list")
        if isinstance(target, Call):
            target.listitems.extend(items)

    def _setitem(self, arg, name):              # SETITEM one pair, SETITEMS those since the mark
        if name == "SETITEM":
            value, key = self.stack.pop(), self.stack.pop()
            pairs = [(key, value)]
        else:
            pairs = _pairs(self._pop_mark())
        target = self.stack[-1]
        if isinstance(target, Dict):
            target.items.extend(pairs)
            return
        if not (isinstance(target, Call) and func_name(target) in DICT_CLASSES):
            self._refuse(f"{name} into something that is not a dict")
        if isinstance(target, Call):
            target.items.extend(pairs)

    # -- names, calls and objects: recorded, never run --

    def _global_op(self, arg, name):            # GLOBAL "module name": named in the opcode itself
        module, _, qualname = arg.partition(" ")
        self._push(self._global(module, qualname))

    def _stack_global(self, arg, name):
        qualname, module = self.stack.pop(), self.stack.pop()
        self._push(self._global(module, qualname))

    def _ext(self, arg, name):                  # EXT1/2/4: a lookup in copyreg's registry, nothing more
        module, qualname = copyreg._inverted_registry.get(arg, (f"<copyreg extension {arg}>", ""))
        self._push(self._global(module, qualname or "?"))

    def _inst(self, arg, name):
        module, _, qualname = arg.partition(" ")
        items = tuple(self._pop_mark())
        self._push(Call(self._global(module, qualname), items, "INST"))

    def _obj(self, arg, name):
        cls, *args = self._pop_mark()
        self._push(Call(cls, tuple(args), "OBJ"))

    def _reduce(self, arg, name):
        args, func = self.stack.pop(), self.stack.pop()
        if isinstance(func, Global):
            self.reduced[func.name] = self.reduced.get(func.name, 0) + 1
        self._push(Call(func, _as_args(args), "REDUCE"))

    def _newobj(self, arg, name):
        args, cls = self.stack.pop(), self.stack.pop()
        self._push(Call(cls, _as_args(args), "NEWOBJ"))

    def _newobj_ex(self, arg, name):
        kwargs, args, cls = self.stack.pop(), self.stack.pop(), self.stack.pop()
        call = Call(cls, _as_args(args), "NEWOBJ_EX")
        call.state = kwargs
        self._push(call)

    def _build(self, arg, name):
        state = self.stack.pop()
        if isinstance(self.stack[-1], Call):
            self.stack[-1].state = state
        else:
            self._refuse("BUILD on something that is not an object")

    def _persid(self, arg, name):               # PERSID carries the id; BINPERSID takes it off the stack
        pid = arg if name == "PERSID" else self.stack.pop()
        if name == "BINPERSID" and not (
                isinstance(pid, int) or (isinstance(pid, tuple) and pid and pid[0] == "storage")):
            self._refuse("a persistent id that is not a tensor storage")
        self.persistent_ids.append(pid)
        self._push(PersId(pid))

    OPS: ClassVar[dict[str, Callable]] = {
        "PROTO": _proto, "FRAME": _nothing, "READONLY_BUFFER": _nothing,
        "MARK": _mark, "POP": _pop, "POP_MARK": _pop_to_mark, "DUP": _dup,
        "PUT": _put, "BINPUT": _put, "LONG_BINPUT": _put, "MEMOIZE": _put,
        "GET": _get, "BINGET": _get, "LONG_BINGET": _get,
        "NONE": _constant, "NEWTRUE": _constant, "NEWFALSE": _constant,
        **dict.fromkeys(("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT",
                         "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE",
                         "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8"), _literal),
        "NEXT_BUFFER": _buffer,
        "EMPTY_TUPLE": _empty, "EMPTY_LIST": _empty, "EMPTY_DICT": _empty, "EMPTY_SET": _empty,
        "TUPLE1": _small_tuple, "TUPLE2": _small_tuple, "TUPLE3": _small_tuple, "TUPLE": _tuple,
        "LIST": _list, "DICT": _dict, "FROZENSET": _frozenset, "ADDITEMS": _additems,
        "APPEND": _append, "APPENDS": _append, "SETITEM": _setitem, "SETITEMS": _setitem,
        "GLOBAL": _global_op, "STACK_GLOBAL": _stack_global, "EXT1": _ext, "EXT2": _ext, "EXT4": _ext,
        "INST": _inst, "OBJ": _obj, "REDUCE": _reduce, "NEWOBJ": _newobj, "NEWOBJ_EX": _newobj_ex,
        "BUILD": _build, "PERSID": _persid, "BINPERSID": _persid,
    }
