"""The names the check library's objects hold, which no notebook's own attribute makes readable.

The reading lets an answer read an attribute the notebook gives its own objects (self.history),
on any object, since it cannot tell which object a variable holds. The tests hand the student's
functions objects of the check library's (a GraphLeakProbe as the loss, its checked batches as
the loader): a notebook that names one of its own attributes `loader` would make
`loader.loader`, the batches the probe never sees, readable on the checked loader. So the names
the probes' classes define or assign on their objects stay refused, given or not, but for
those the list allows on the course's own objects (a list's count, a module's training)."""
import ast
import functools
from pathlib import Path

LIBRARY = Path(__file__).resolve().parents[3] / "autograder"
# The modules whose objects the tests hand to a student's function (the probes: a loss, a loader).
HANDED = ("autograd_probe.py",)


def _names_in(tree) -> set[str]:
    """What the classes of one module define in their bodies or assign on their objects (self.x)."""
    names = set()
    for kind in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        for item in kind.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(item.name)
            elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        for node in ast.walk(kind):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                    isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return names


@functools.cache
def attribute_names() -> frozenset:
    """Every name the classes of HANDED define or give their objects, dunders left out."""
    names = set()
    for path in (LIBRARY / name for name in HANDED):
        names |= _names_in(ast.parse(path.read_text(encoding="utf-8")))
    return frozenset(n for n in names if not (n.startswith("__") and n.endswith("__")))
