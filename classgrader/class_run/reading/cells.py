"""A cell's source as IPython runs it, parsed: magics and shell escapes as the calls they make,
IPython's automagic (a one-line cell starting with a magic's name), and the trees of a notebook's
cells in order, with what an earlier cell binds."""
import ast
import builtins
import contextlib
import functools
import importlib
import importlib.util
import re
from collections.abc import Set as AbstractSet
from keyword import iskeyword


def python_of(source: str, shadowed: AbstractSet[str] = frozenset()) -> str:
    """A cell's source as IPython runs it: magics and shell escapes as the calls they make, and
    a cell of one line that starts with a magic's name as that magic (IPython's automagic:
    `env NAME=1`, `run x.py`, and any name where the line is not Python), unless `shadowed`
    holds that name (a variable of the notebook's) and the line is Python."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        cell = TransformerManager().transform_cell(source)
    except Exception:  # not valid even to IPython: the cell fails when it runs
        return source
    return _automagic(cell, shadowed) or cell


@functools.cache
def _line_magics() -> frozenset:
    """The names IPython runs as line magics without their %: its own magics, its aliases of
    shell commands (ls, rm, cp...) and of magics (hist, ed, rep), the kernel's (less, clear...)
    and those of the extension its kernels load by default (store, which unpickles)."""
    from IPython.core import alias, magics
    from IPython.core.magic import Magics
    names = {"hist", "ed", "rep"}
    kinds = [getattr(magics, name) for name in dir(magics)]
    for module, kind in (("ipykernel.zmqshell", "KernelMagics"), ("IPython.extensions.storemagic", "StoreMagics")):
        with contextlib.suppress(Exception):  # not installed here: its magics are the shell's, as above
            kinds.append(getattr(importlib.import_module(module), kind))
    for kind in kinds:
        if isinstance(kind, type) and issubclass(kind, Magics):
            names |= set(getattr(kind, "magics", {}).get("line", {}))
    return frozenset(names | {name for name, _ in alias.default_aliases()})


def _automagic(cell: str, shadowed: AbstractSet[str]) -> str | None:
    """What IPython's prefilter makes of a cell of one line that starts with a magic's name
    (automagic, on by default): the magic's call, as IPython writes it. A name the notebook's
    variables, the builtins or the keywords shadow stays Python, and so does an assignment
    (`ls = [1, 2]`); None where the cell is Python as it stands."""
    if len(cell.splitlines()) != 1:
        return None
    from IPython.core.splitinput import LineInfo
    line = LineInfo(cell.splitlines()[0])
    if line.esc or line.the_rest[:1] in ("=", ",") or line.ifun in dir(builtins) or iskeyword(line.ifun):
        return None
    # A kernel may have magics the grader does not list (an extension's): a line that is not
    # Python and starts with a name runs as the magic of that name wherever there is one, and
    # fails where there is none, so it is read as that magic.
    if line.ifun not in _line_magics() and (not line.ifun.isidentifier() or _is_python(cell)):
        return None
    # A variable's binding may fail when its cell runs (run = 1/0), leaving the magic live. So a
    # shadowed name keeps the line Python only where it is Python: anything else is the magic or
    # a SyntaxError, never code of the student's. An option spelled as a magic takes it (-r, no
    # space: store -r unpickles) is read as the magic even so: Python spaces a difference.
    if line.ifun in shadowed and _is_python(cell) and not re.match(r"-[A-Za-z]", line.the_rest):
        return None
    return f"get_ipython().run_line_magic({line.ifun!r}, {line.the_rest!r})\n"


def _is_python(line: str) -> bool:
    try:
        ast.parse(line)
    except (SyntaxError, ValueError):
        return False
    return True


UNREADABLE = "unread"  # a cell too deep or too large for the grader to parse: itself a finding


def cell_trees(sources: list[str], deleted: AbstractSet[str] | None = None) -> list:
    trees: list[ast.Module | str | None] = []
    shadowed: set[str] = set()  # variables an earlier cell binds by a statement of its own
    for source in sources:
        try:
            trees.append(ast.parse(python_of(source, shadowed - set(deleted or ()))))
        except SyntaxError:
            trees.append(None)  # it fails when it runs; nothing of it can run
        except (RecursionError, MemoryError, ValueError):
            trees.append(UNREADABLE)
        if isinstance(trees[-1], ast.Module):
            shadowed |= top_level_names(trees[-1])
    if deleted is None:  # a name deleted anywhere may be unbound when a later cell runs: no shadow
        gone = {target.id for tree in trees if isinstance(tree, ast.Module) for node in ast.walk(tree)
                if isinstance(node, ast.Delete) for target in node.targets if isinstance(target, ast.Name)}
        if gone & shadowed:
            return cell_trees(sources, gone)
    return trees


def top_level_names(tree: ast.Module) -> set[str]:
    """The names a cell binds by a statement of its own at its top (x = ..., import, def, class),
    not inside a block that may not run: variables that shadow a magic's name in later cells."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)}
    return names
