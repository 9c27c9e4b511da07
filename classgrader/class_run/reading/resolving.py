"""Dotted names and what they stand for: `g.x` after `import torch.autograd.graph as g`, the chain
an expression hangs from, and the object an allowed module's name is in the grader's own
process; the names of the methods and classes torch and the course's helpers define."""
import ast
import functools
import importlib
import importlib.util
import sys
import types
from pathlib import Path

from classgrader.class_run.reading.rules import (
    MODULES,
)


@functools.cache
def method_names() -> frozenset:
    """Names of the methods torch's tensors, modules and optimisers have, of the functions of
    torch, and of every function, class and method the check library and the helpers define (read
    from their source, so nothing of them is imported for it): assigned as code on anything but
    a constructor's self, they replace code."""
    import torch
    names = set()
    for kind in (torch.Tensor, torch.nn.Module, torch.optim.Optimizer):
        names |= {n for n in dir(kind) if callable(getattr(kind, n, None)) and not n.startswith("__")}
    for module in (torch, torch.nn.functional, torch.cuda, torch.backends.mps, torch.backends.cuda):
        names |= {n for n, v in vars(module).items() if callable(v) and not n.startswith("__")}
    course = Path(__file__).resolve().parents[3]  # the checkout: reading/ -> class_run/ -> classgrader/
    for path in [*(course / "autograder").rglob("*.py"), *(course / "utils").rglob("*.py")]:
        defined = ast.walk(ast.parse(path.read_text()))
        names |= {node.name for node in defined if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.ClassDef)) and not node.name.startswith("__")}
    return frozenset(names)


@functools.cache
def class_names() -> frozenset:
    """The attribute names of the classes whose objects an answer is handed or makes (tensors,
    modules, optimisers) and of the methods and classes of torch and the checks (method_names)."""
    import torch
    kinds = (torch.Tensor, torch.nn.Module, torch.optim.Optimizer)
    return frozenset({name for kind in kinds for name in dir(kind)} | method_names())


def within(name: str, parts) -> bool:
    return any(name == part or name.startswith(part + ".") for part in parts)


def full_name(dotted: str, imported: dict[str, str]) -> str:
    """torch.autograd.graph.x for g.x after `import torch.autograd.graph as g`."""
    head, _, rest = dotted.partition(".")
    return ".".join(filter(None, [imported.get(head, head), rest]))


def named_read(node) -> tuple | None:
    """(x, "name") for getattr(x, "name") or getattr(x, "name", default), a public name given as
    a constant: an attribute read spelled as a call, read as one wherever it stands."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and \
            len(node.args) in (2, 3) and not node.keywords and isinstance(node.args[1], ast.Constant) and \
            isinstance(node.args[1].value, str) and not node.args[1].value.startswith("_"):
        return node.args[0], node.args[1].value
    return None


def dotted_name(node) -> str | None:
    """"torch.nn.Module" for the expression torch.nn.Module (or getattr(torch.nn, "Module"));
    None for anything but names and dots."""
    parts = []
    while (step := (node.value, node.attr) if isinstance(node, ast.Attribute) else named_read(node)) is not None:
        node, attr = step
        parts.append(attr)
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def root_of(node):
    """The expression a chain of attributes and subscripts hangs from (a call ends the chain:
    what it returns is a new object, unless it is one of the calls reaches_namespace names, or getattr
    by a constant name, an attribute read)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)) or (read := named_read(node)):
        node = read[0] if isinstance(node, ast.Call) else node.value
    return node


def reaches_namespace(node) -> bool:
    """A call whose result is a class or a namespace of someone else's: type(x), vars(x),
    getattr(x, computed name)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    name, args = node.func.id, node.args
    return name in ("type", "vars", "globals", "locals") or (name == "getattr" and len(args) >= 2 and not (
        isinstance(args[1], ast.Constant) and isinstance(args[1].value, str) and not args[1].value.startswith("_")))


def module_exists(module: str) -> bool:
    """Whether a top-level module can be imported here (found, not run)."""
    try:
        return module in sys.modules or importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def resolve(dotted: str):
    """The object a dotted name of an allowed module stands for, looked up in the grader's own
    modules (the allowed module itself imported if need be; nothing of the student's is imported
    or run for it); None if unknown."""
    head, *rest = dotted.split(".")
    if head not in MODULES:
        return None
    if head not in sys.modules:  # a library the course allows, never a student's file
        try:
            importlib.import_module(head)
        except Exception:
            return None
    value = sys.modules.get(head)
    for index, piece in enumerate(rest):
        if value is None:
            return None
        found = getattr(value, piece, None) if not isinstance(value, types.ModuleType) or \
            piece in vars(value) else sys.modules.get(".".join([head, *rest[:index + 1]]))
        if found is None and isinstance(value, types.ModuleType):
            found = sys.modules.get(f"{value.__name__}.{piece}")
        value = found
    return value
