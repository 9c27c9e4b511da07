"""The list of what a student's answer may use (allowed.toml), as questions code_scan asks.

The data lives in allowed.toml, beside this module, so that a reviewer reads the list itself
and not code; this module only answers: may this builtin be named, this module imported, this
dotted name of a module used, this attribute read, this keyword passed?"""
import builtins
import functools
import importlib
import sys
import tomllib
import types
from pathlib import Path

from classgrader.class_run.reading.check_library import attribute_names

DATA = Path(__file__).with_name("allowed.toml")


@functools.cache
def data() -> dict:
    with open(DATA, "rb") as handle:
        return tomllib.load(handle)


def builtin_allowed(name: str) -> bool:
    return name in data()["python"]["builtins"]


def _module(name: str):
    """The real module `name`, imported in the grader if need be (a library the list names,
    never a student's file); None if it cannot be."""
    if name not in sys.modules:
        try:
            importlib.import_module(name)
        except Exception:
            return None
    return sys.modules.get(name)


@functools.cache
def _tensor_functions() -> frozenset:
    import torch
    return frozenset(name for name in dir(torch) if not name.startswith("_") and hasattr(torch.Tensor, name))


def modules(course: dict | None = None) -> dict[str, list]:
    """Every module the list allows, with its names; `course`: module -> names the course's own
    cells import from it, allowed by those names."""
    allowed = {name: list(names) for name, names in data()["modules"].items()}
    allowed["torch"] = sorted({*data()["torch"]["names"], *_tensor_functions()})
    for module, names in (course or {}).items():
        allowed.setdefault(module, [])
        allowed[module] = sorted({*allowed[module], *names})
    return allowed


def dotted_allowed(dotted: str, allowed: dict[str, list]) -> tuple[bool, str]:
    """A dotted name that starts at a module (torch.nn.functional.relu, os.environ): whether the
    list allows it, and the part of it that is a module's name (what the rest is read on, as
    attributes: torch.float32.itemsize -> "torch.float32"). The longest listed module prefix
    decides: the next name must be one it allows, and not a module unlisted (allowed: modules())."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module not in allowed:
            continue
        if cut == len(parts):
            return True, module
        name = parts[cut]
        names = allowed[module]
        real = _module(module)
        value = getattr(real, name, None) if real is not None else None
        if isinstance(value, types.ModuleType):  # a submodule: allowed only by an entry of its own
            return False, f"{module}.{name}"
        if f"{module}.{name}" in data()["refused"]["names"]:
            return False, f"{module}.{name}"
        if name in names or ("*" in names and not name.startswith("_") and value is not None and
                             not _borrowed(module, real, name, value)):
            return True, f"{module}.{name}"
        return False, f"{module}.{name}"
    return False, parts[0]


def _borrowed(listed: str, module, name: str, value) -> bool:
    """A function or class a module only imports from another (torch.optim.lr_scheduler's wraps is
    functools'): not the module's own, unless it exports it (__all__). Its C half (_heapq for
    heapq) and, for an alias module, its real name (os.path is posixpath) count as its own."""
    home = getattr(value, "__module__", None)
    if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)) or not isinstance(home, str) \
            or name in getattr(module, "__all__", ()):
        return False
    own = {listed.split(".")[0], module.__name__.split(".")[0]}
    return home.lstrip("_").split(".")[0] not in own


def _listed_classes() -> list[type]:
    listed = data()["attributes"]
    kinds = []
    for path in listed["classes"]:
        module, _, name = path.rpartition(".")
        kind = getattr(builtins, name) if module == "builtins" else getattr(_module(module), name, None)
        if kind is not None:
            kinds.append(kind)
    return kinds


def _held_names(kind: type) -> set[str]:
    """What a class defines, and what its objects hold (declared: training, _forward_hooks)."""
    return set(dir(kind)) | {n for base in kind.__mro__ for n in vars(base).get("__annotations__", {})}


@functools.cache
def _attributes() -> frozenset:
    listed = data()["attributes"]
    names = set(listed["names"])
    for kind in _listed_classes():
        names |= {n for n in _held_names(kind) if not n.startswith("_")}
    return frozenset(names - set(listed["never"]))


@functools.cache
def private_hooks() -> frozenset:
    """The private tables of hooks the listed classes' objects run (a module's _forward_hooks, a
    tensor's _backward_hooks, an optimiser's _optimizer_step_pre_hooks), and their methods."""
    return frozenset(n for kind in _listed_classes() for n in _held_names(kind)
                     if n.startswith("_") and not n.endswith("__") and "hook" in n.lower())


@functools.cache
def refused_attributes() -> frozenset:
    """Attribute names no answer reads, even where the notebook gives its own objects one: the
    list's `never`, and the private tables of hooks torch's objects run (a class of the notebook's
    holding its own _forward_hooks would make model._forward_hooks[0] = f readable on a module
    the tests hand in)."""
    return frozenset(data()["attributes"]["never"]) | private_hooks() | (attribute_names() - _attributes())


def attribute_allowed(name: str) -> bool:
    """An attribute read on an object that is not a module."""
    return name in _attributes()


def keyword_rules(dotted: str) -> dict | None:
    """What a call to `dotted` may pass: {"constant": {keyword: value}, "never": [keywords]}."""
    return data()["calls"].get(dotted)
