"""Facts of the whole notebook the reading of each cell needs: what it binds and imports, which
names stand for something not the student's own, the attributes it gives its objects or writes
anywhere, the calls it makes and the names it aliases."""
import ast
import builtins
from collections import Counter
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from classgrader.class_run import allow_list, own_reads
from classgrader.class_run.reading.resolving import (
    dotted_name,
    full_name,
    method_names,
    named_read,
    reaches_namespace,
    resolve,
    root_of,
)
from classgrader.class_run.reading.rules import MODULE_NAMES, REGISTERS


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


def class_bases(trees) -> dict[str, list[str]]:
    """Each class the notebook defines -> the dotted names of its bases (those written as names)."""
    return {node.name: [name for name in map(dotted_name, node.bases) if name]
            for tree in filter(None, trees) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def class_defines(trees) -> dict[str, frozenset[str]]:
    """Each class the notebook defines -> the names its body defines (class_members)."""
    return {node.name: frozenset(class_members(node.body))
            for tree in filter(None, trees) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def made_by_type(trees) -> frozenset[str]:
    """Names assigned the class type() gives (cls = type(a)): a class, to be called like one."""
    return frozenset(target.id for tree in filter(None, trees) for node in ast.walk(tree)
                     if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and
                     isinstance(node.value.func, ast.Name) and node.value.func.id == "type"
                     for target in node.targets if isinstance(target, ast.Name))


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


@dataclass(frozen=True)
class Notebook:
    """What the reading of each cell knows of the whole notebook, found once (notebook_facts)."""
    bound: frozenset[str]  # the names it binds anywhere, the builtins and display
    foreign: frozenset[str]  # names that stand for something not the student's own (notebook_names)
    imported: dict[str, str]  # each imported name, or alias of a module's, -> what it is
    defined: frozenset[str]  # the functions and classes it defines (a lambda bound to a name too)
    protected: frozenset[str]  # the builtins, and the names the course's own cells define or import
    course_imports: frozenset[str]  # of the course's names, those its cells bind by importing
    course_defined: frozenset[str]  # ...and those they define
    allowed: dict[str, list]  # module -> the names an answer may use (allow_list.modules)
    methods: frozenset[str]  # the methods of torch and the course's helpers (method_names)
    own: frozenset[str]  # every name it binds or gives an attribute: its own, readable
    # The attribute names it gives its objects (attributes_given): readable on any object. A name
    # it merely binds (a parameter, a variable) is not: `def f(_ctypes): ...` makes no attribute.
    own_attributes: frozenset[str]
    written: frozenset[str]  # attribute names it writes on anything (attributes_written)
    texts: dict[str, list[str]]  # names bound to constant strings alone (constant_strings)
    field_types: bool  # whether it calls dataclasses.fields, whose fields' .type are annotations
    aliases: dict[str, str]  # names assigned a dotted name (name_aliases)
    bindings: Counter  # how many times it binds each name (binding_counts)
    templates: set[tuple]  # see own_reads
    plain_imports: set[str]
    trusting: set[str]  # methods that read their own object by a computed name: never named
    class_bases: dict[str, list[str]]  # each class it defines -> its bases' dotted names (class_bases)
    made_by_type: frozenset[str]  # names assigned the class type() gives (made_by_type)
    class_defines: dict[str, frozenset[str]]  # each class it defines -> its body's names (class_defines)


def notebook_facts(trees, course_callables: AbstractSet[str] = frozenset(),
                   course_imports: AbstractSet[str] = frozenset(), course_modules: dict | None = None) -> Notebook:
    """The facts of a notebook's parsed cells (None for one that does not parse); the course's
    own functions and classes, the names its cells import and module -> the names they import
    from it (allowed to answers too, beside allowed.toml)."""
    bound, foreign, imported = notebook_names(trees)
    own_attributes = frozenset(attributes_given(trees) - MODULE_NAMES)
    own = frozenset(bound | own_attributes)
    aliases = name_aliases(trees)
    imported |= module_aliases(aliases, imported)
    defined = {node.name for tree in filter(None, trees) for node in ast.walk(tree)
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    defined |= {target.id for tree in filter(None, trees) for node in ast.walk(tree)  # f = lambda ...: ...
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda)
                for target in node.targets if isinstance(target, ast.Name)}
    templates = own_reads.templates_given(filter(None, trees))
    trusting = {name for name in own_reads.trusting_methods(filter(None, trees), templates, own)
                if not (name.startswith("__") and name.endswith("__"))}  # dunders: their own rules
    bindings = binding_counts(trees)
    return Notebook(
        bound=frozenset(bound | set(dir(builtins)) | {"display"}), foreign=frozenset(foreign), imported=imported,
        defined=frozenset(defined),
        protected=frozenset(set(dir(builtins)) | set(course_callables) | set(course_imports)),
        course_imports=frozenset(course_imports), course_defined=frozenset(course_callables),
        allowed=allow_list.modules(course_modules), methods=method_names(), own=own, own_attributes=own_attributes,
        written=attributes_written(trees), texts=constant_strings(trees, bindings),
        field_types="dataclasses.fields" in calls_made(trees, imported), aliases=aliases, bindings=bindings,
        templates=templates, plain_imports=own_reads.plain_imports(filter(None, trees)), trusting=trusting,
        class_bases=class_bases(trees), made_by_type=made_by_type(trees),
        class_defines=class_defines(trees))
