"""Facts of the whole notebook the reading of each cell needs: what it binds and imports, which
names stand for something not the student's own, the attributes it gives its objects or writes
anywhere, the calls it makes and the names it aliases."""
import ast
import builtins
from collections import Counter

from classgrader.class_run.reading.resolving import (
    dotted_name,
    full_name,
    named_read,
    reaches_namespace,
    resolve,
    root_of,
)
from classgrader.class_run.reading.rules import (
    REGISTERS,
)


def notebook_names(trees) -> tuple[set[str], set[str], dict[str, str]]:
    """The names the notebook binds anywhere; those that stand for something not the student's
    own (a module, a builtin not rebound, a name taken from one without a call, or through
    type(), vars() or a computed getattr); and what each imported name is (F: torch.nn.functional)."""
    bound, foreign, imported = set(), set(), {}
    for tree in filter(None, trees):
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    bound.add(name)
                    full = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                    imported[name] = full if alias.asname or isinstance(node, ast.ImportFrom) else name
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                bound.add(node.rest)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                bound.update(node.names)
    foreign = set(imported) | (set(dir(builtins)) - bound)
    for _ in range(3):  # aliases of aliases
        for tree in filter(None, trees):
            for node in ast.walk(tree):
                if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)):
                    values, targets = node.iter.elts, [node.target]  # for T in [torch.Tensor]: ...
                elif isinstance(node, (ast.Assign, ast.NamedExpr, ast.AnnAssign)) and node.value is not None:
                    values = [node.value]
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                else:
                    continue
                for value in values:
                    root = root_of(value)
                    held = isinstance(value, (ast.Attribute, ast.Name, ast.Subscript)) or named_read(value)
                    if reaches_namespace(root) or (held and isinstance(root, ast.Name) and root.id in foreign):
                        foreign.update(t.id for t in targets if isinstance(t, ast.Name))
    return bound, foreign, imported


def binding_counts(trees) -> Counter:
    """How many times the notebook binds each name: imports, assignments and deletions, loop and
    `with` targets, functions, classes, parameters, caught exceptions, a match's captures."""
    counts: Counter = Counter()
    for node in (node for tree in filter(None, trees) for node in ast.walk(tree)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            counts.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
        elif isinstance(node, ast.arg):
            counts[node.arg] += 1
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            counts[node.name] += 1
        elif isinstance(node, ast.MatchMapping) and node.rest:
            counts[node.rest] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            counts.update(node.names)
    return counts


def constant_strings(trees, bindings: Counter) -> dict[str, list[str]]:
    """Names every binding of which assigns a constant string (fmt = "{:.2f}"): name -> those strings."""
    found: dict[str, list[str]] = {}
    for node in (node for tree in filter(None, trees) for node in ast.walk(tree)):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, str):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value.value)
    return {name: texts for name, texts in found.items() if len(texts) == bindings[name]}


def attributes_given(trees) -> set[str]:
    """Attribute names the notebook gives its objects: assigned (self.fc = ...), a class's members
    (its methods, class attributes and annotated fields) or registered by a constant name
    (self.register_buffer("scale", ...))."""
    names = set()
    for node in (node for tree in filter(None, trees) for node in ast.walk(tree)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            names |= set(class_members(node.body))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REGISTERS \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            names.add(node.args[0].value)
    return names


def attributes_written(trees) -> frozenset[str]:
    """Attribute names the notebook writes on some object, whichever: assigned, augmented or
    deleted (x.a = ...), by setattr or delattr with a constant name, or as a keyword of a maker of
    attributes (SimpleNamespace(a=...), whose object functools.wraps can copy onto another)."""
    names = set()
    for node in (node for tree in filter(None, trees) for node in ast.walk(tree)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.attr)
        elif isinstance(node, ast.Call) and (dotted_name(node.func) or "").split(".")[-1] in ("setattr", "delattr") \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
            names.add(str(node.args[1].value))
        elif isinstance(node, ast.Call) and (dotted_name(node.func) or "").split(".")[-1] == "SimpleNamespace":
            names |= {keyword.arg for keyword in node.keywords if keyword.arg}
    return frozenset(names)


def calls_made(trees, imported: dict[str, str]) -> set[str]:
    """The dotted names the notebook calls, as imported (fields(c) after `from dataclasses import
    fields` is dataclasses.fields)."""
    called = set()
    for node in (node for tree in filter(None, trees) for node in ast.walk(tree)):
        if isinstance(node, ast.Call) and (dotted := dotted_name(node.func)):
            called.add(full_name(dotted, imported))
    return called


def class_members(body: list) -> list[str]:
    """The names a class body's statements define: methods, class attributes, annotated fields."""
    names = []
    for item in body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(item.name)
        elif isinstance(item, ast.Assign):
            names += [t.id for t in item.targets if isinstance(t, ast.Name)]
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.append(item.target.id)
    return names


def name_aliases(trees) -> dict[str, str]:
    """Names assigned a dotted name, annotated or not (Base = torch.Tensor, T = type, or
    getattr(torch.backends, "mps", None)): name -> that dotted name."""
    found: dict[str, str] = {}
    for node in (node for tree in filter(None, trees) for node in ast.walk(tree)):
        if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0], node.value
        else:
            continue
        dotted = dotted_name(value)
        if dotted and dotted != target.id:
            found[target.id] = dotted
    return found


def module_aliases(aliases: dict[str, str], imported: dict[str, str]) -> dict[str, str]:
    """Of `aliases`, those of an imported module or anything reached from one (t = torch, mps =
    torch.backends.mps, L = torch.load), aliases of aliases too: read as that dotted name, so
    the alias meets every rule the name itself does."""
    found: dict[str, str] = {}
    for _ in range(3):  # aliases of aliases
        for name, dotted in aliases.items():
            head, _, rest = dotted.partition(".")
            known = found.get(head) or imported.get(head)
            if known and name not in found:
                full = ".".join(filter(None, [known, rest]))
                if resolve(full) is not None:
                    found[name] = full
    return found
