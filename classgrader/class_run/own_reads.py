"""A getattr by a computed name that reads only the student's own object: the two shapes of it
that code_scan leaves unflagged, and why each cannot reach past that object.

A computed getattr is reflection: on a module (getattr(torch, "lo" + "ad")) it reaches any name
the list would refuse, so code_scan flags it. Two shapes read only what the student's code
already owns, and beginners write both:

- **Layers it named itself, read back by the same pattern.** `getattr(self, f"fc{i}")` where
  - `self` is the first parameter of a plain method (no decorator) of a class the notebook
    defines, never rebound in it;
  - the name is an f-string that starts with a letter (so it is never private nor a dunder)
    and whose placeholders are counters: names the method binds only as the index of a
    `for` over `range(...)` or `enumerate(...)` (so each is an integer);
  - the notebook gives its objects attributes by the same pattern (`self.add_module(f"fc{i}",
    ...)`, `register_module`, `register_buffer`, `register_parameter`);
  - the method is never named in the notebook (no `.forward`, `getattr(x, "forward")`, nor its
    bare name in the class body): only calling the object runs it (`model(x)` runs `forward`),
    so `self` is that object, never a module handed in as `Class.forward(torch, ...)`.
- **A dataclass's own fields.** `getattr(config, field.name)` where `config` is a parameter of
  the function, never rebound in it, and `field` is bound only as the target of a `for` over
  `dataclasses.fields(config)` (imported, never rebound): it reads exactly what
  `dataclasses.asdict(config)`, on the list, reads; `fields()` raises for anything but a
  dataclass.

Anything else stays a finding: a computed name on a module, an imported object, an alias, an
attribute chain (`self.net`), a parameter, a name not shaped so; and `setattr`, `vars` always.
"""
import ast
from collections.abc import Iterator

REGISTERS = {"add_module", "register_module", "register_buffer", "register_parameter"}
COUNTING = {"range", "enumerate"}
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def template(node) -> tuple | None:
    """The constant parts of an f-string, None for each plain placeholder: ("fc", None) for
    f"fc{i}"; None for anything else (a placeholder with a conversion or a format)."""
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(value.value)
        elif isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None:
            parts.append(None)
        else:
            return None
    return tuple(parts)


def templates_given(trees) -> set[tuple]:
    """The patterns by which the notebook names its objects' attributes: add_module(f"fc{i}", ...)."""
    found: set[tuple] = set()
    for node in (node for tree in trees for node in ast.walk(tree)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REGISTERS \
                and node.args and (shape := template(node.args[0])) is not None:
            found.add(shape)
    return found


def bindings(tree) -> Iterator[tuple[str, ast.AST]]:
    """Every (name, node) that binds a name anywhere in `tree`, nested scopes included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id, node
        elif isinstance(node, ast.arg):
            yield node.arg, node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                yield alias.asname or alias.name.split(".")[0], node
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            yield node.name, node
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node.rest, node
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                yield name, node


def plain_imports(trees) -> set[str]:
    """Names the notebook binds only by importing them."""
    kinds: dict[str, set[bool]] = {}
    for tree in trees:
        for name, node in bindings(tree):
            kinds.setdefault(name, set()).add(isinstance(node, (ast.Import, ast.ImportFrom)))
    return {name for name, kind in kinds.items() if kind == {True}}


def _loops(function) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(target, iterable) of every for and comprehension in `function`."""
    for node in ast.walk(function):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            yield node.target, node.iter


def _bound_only_by(function, name: str, allowed: set[int]) -> bool:
    """Whether every binding of `name` in `function` is one of the nodes `allowed` (and there is one)."""
    found = [node for bound, node in bindings(function) if bound == name]
    return bool(found) and all(id(node) in allowed for node in found)


def _counter(function, name: str, own: frozenset) -> bool:
    """A name `function` binds only as the index of a for over range() or enumerate() (builtins
    the notebook never rebinds): an integer wherever it is read."""
    counting = set()
    for target, iterable in _loops(function):
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and
                iterable.func.id in COUNTING and iterable.func.id not in own):
            continue
        index = target if iterable.func.id == "range" else (
            target.elts[0] if isinstance(target, ast.Tuple) and target.elts else None)
        if isinstance(index, ast.Name):
            counting.add(id(index))
    return _bound_only_by(function, name, counting)


def own_layer(call, method, in_class: bool, given: set[tuple], own: frozenset) -> bool:
    """getattr(self, f"fc{i}") in `method`, as the module docstring's first shape says."""
    if not (in_class and isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and not method.decorator_list
            and len(call.args) in (2, 3) and not call.keywords):
        return False
    first = (method.args.posonlyargs + method.args.args)[:1]
    receiver, name = call.args[0], call.args[1]
    if not (first and isinstance(receiver, ast.Name) and receiver.id == first[0].arg and
            _bound_only_by(method, receiver.id, {id(first[0])})):
        return False
    shape = template(name)
    if shape is None or shape not in given or not isinstance(shape[0], str) or \
            not shape[0][:1].isalpha() or not shape[0].isascii():
        return False
    placeholders = [value.value for value in name.values if isinstance(value, ast.FormattedValue)]
    return all(isinstance(p, ast.Name) and _counter(method, p.id, own) for p in placeholders)


def dataclass_field(call, function, full, plain: set[str]) -> bool:
    """getattr(config, field.name) for field in dataclasses.fields(config), as the module
    docstring's second shape says; full(dotted) is the imported name's full one."""
    if not (isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and
            len(call.args) in (2, 3) and not call.keywords):
        return False
    receiver, name = call.args[0], call.args[1]
    parameters = {arg.arg: arg for arg in [*function.args.posonlyargs, *function.args.args,
                                           *function.args.kwonlyargs]}
    if not (isinstance(receiver, ast.Name) and receiver.id in parameters and
            _bound_only_by(function, receiver.id, {id(parameters[receiver.id])})):
        return False
    if not (isinstance(name, ast.Attribute) and name.attr == "name" and isinstance(name.value, ast.Name)):
        return False
    over_fields = set()
    for target, iterable in _loops(function):
        if isinstance(target, ast.Name) and isinstance(iterable, ast.Call) and not iterable.keywords and \
                [ast.dump(a) for a in iterable.args] == [ast.dump(receiver)] and _fields(iterable.func, full, plain):
            over_fields.add(id(target))
    return _bound_only_by(function, name.value.id, over_fields)


def _fields(func, full, plain: set[str]) -> bool:
    """dataclasses.fields, by a name bound only by importing it."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in plain:
        return False
    return full(".".join([func.id, *reversed(parts)])) == "dataclasses.fields"


def trusting_methods(trees, given: set[tuple], own: frozenset) -> set[str]:
    """Names of the notebook's methods that read their object by a computed name (own_layer):
    naming them anywhere else would let them run on something other than their object."""
    names = set()
    for cls in (node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        for method in cls.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for call in _own_calls(method):
                if own_layer(call, method, True, given, own):
                    names.add(method.name)
    return names


def _own_calls(method) -> Iterator[ast.Call]:
    """getattr calls whose innermost def is `method` (lambdas and comprehensions inside count)."""
    waiting = list(ast.iter_child_nodes(method))
    while waiting:
        node = waiting.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            yield node
        waiting.extend(ast.iter_child_nodes(node))
