"""Code as Python reads it, not as it was typed: parsed and written back by `ast.unparse`, so
comments, blank lines, spacing, quotes, line breaks and redundant parentheses are gone, and so are
docstrings (mostly the release's own). Runs of simple statements that do not depend on one another
are put in one canonical order, so reordering them changes nothing. Two answers that differ only
in these become one text. Code that does not parse is kept as it is: its tokens still count."""
import ast
import keyword
import re

_WITH_DOCSTRING = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _drop_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, _WITH_DOCSTRING) and body and _is_docstring(body[0]):
            node.body = body[1:] or [ast.Pass()]


def _root(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _writes(stmt) -> set[str]:
    """Names a statement may change: those it assigns, those whose attributes or items it assigns, an
    object whose method a statement of its own calls (t.append(x), optimizer.step()), and one whose
    in-place method it calls anywhere (t.add_(1))."""
    names: set[str | None] = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names |= {_root(n) for n in ast.walk(stmt) if isinstance(n, (ast.Attribute, ast.Subscript))
              and isinstance(n.ctx, ast.Store)}
    names |= {_root(n.func) for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and (n.func.attr.endswith("_") or (isinstance(stmt, ast.Expr) and n is stmt.value))}
    return {name for name in names if name is not None}


def _reads(stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_WORD = re.compile(r"(?<![.\w])[A-Za-z_]\w*")  # a word not after a dot: a name, not an attribute


def _shape(stmt) -> str:
    """The statement with every name V (attributes and keywords kept): the same whatever the student
    named things."""
    return _WORD.sub(lambda m: m.group() if keyword.iskeyword(m.group()) else "V", ast.unparse(stmt))


def _canonical(run: list[ast.stmt]) -> list[ast.stmt]:
    """The statements in the order of their shapes, each kept after every statement it depends on."""
    writes, reads, shapes = [_writes(s) for s in run], [_reads(s) for s in run], [_shape(s) for s in run]
    after = [{i for i in range(j) if writes[i] & (reads[j] | writes[j]) or writes[j] & reads[i]}
             for j in range(len(run))]
    placed: set[int] = set()
    order: list[ast.stmt] = []
    while len(order) < len(run):
        ready = [j for j in range(len(run)) if j not in placed and after[j] <= placed]
        pick = min(ready, key=lambda j: (shapes[j], j))
        placed.add(pick)
        order.append(run[pick])
    return order


def _order_runs(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        for attr in ("body", "orelse", "finalbody"):
            body = getattr(node, attr, None)
            if not isinstance(body, list):
                continue
            out: list[ast.stmt] = []
            run: list[ast.stmt] = []
            for stmt in [*body, None]:
                if isinstance(stmt, _SIMPLE) and not _is_docstring(stmt):
                    run.append(stmt)
                    continue
                out.extend(_canonical(run) if len(run) > 1 else run)
                run = []
                if stmt is not None:
                    out.append(stmt)
            setattr(node, attr, out)


def normalise(code: str) -> str:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    _drop_docstrings(tree)
    _order_runs(tree)
    return ast.unparse(tree)
