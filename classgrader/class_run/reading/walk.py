"""What every part of the reader shares: the walk's state (where it is, what it has found), a
finding noted once, and the rules the other parts apply: a name on the course's list, what an
import reaches, whether the reading follows a value where it stands, whether a value is code, and
a name the tests call bound again."""
import ast
import types

from classgrader.class_run import allow_list
from classgrader.class_run.reading.facts import Notebook
from classgrader.class_run.reading.resolving import (
    dotted_name,
    full_name,
    module_exists,
    resolve,
    within,
)
from classgrader.class_run.reading.rules import (
    MODULES,
    PASS_THROUGH,
    PLAIN_DUNDERS,
    REACHES_PROCESS,
    SHOWN,
    TABLES,
    UNKNOWN,
    WRAPPERS,
)


class Walk(ast.NodeVisitor):
    """The walk of one cell: where it is (functions, scopes), what it has found, and the rules the
    layers above share."""

    def __init__(self, notebook: Notebook, tree: ast.AST):
        self.notebook = notebook  # what the whole notebook binds, imports, writes (facts.py)
        self.noted: set[int] = set()  # the nodes already found: one finding each
        self.blocks: set[int] = set()  # calls that open a block (a with's items, decorators): not switches
        self.declared: list[set[str]] = [set()]  # the names each function around the visit declares global
        self.found: list[tuple[int, str]] = []  # (line, what) of each finding
        self.functions: list[tuple[str, bool, str | None]] = []  # the functions the visit is inside, innermost last
        self.scopes: list[ast.AST] = []  # their nodes (a class's too), innermost last
        self.called: set[int] = set()  # functions of the calls visited: an __init__ taken is one not called
        self.parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def note(self, node, what: str):
        self.noted.add(id(node))
        self.found.append((getattr(node, "lineno", 1), what))

    def off_list(self, node, what: str) -> None:
        """Something the course's list (allowed.toml) does not hold, unless found already."""
        if id(node) not in self.noted:
            self.note(node, f"{what}, which is not on the course's list of what an answer uses")

    def full(self, dotted: str) -> str:
        return full_name(dotted, self.notebook.imported)

    def _listed_chain(self, node, dotted: str) -> None:
        """A dotted name that starts at a module: its module part on the list, the rest (read
        on an object: torch.float32.itemsize) attributes an answer may read."""
        allowed, prefix = allow_list.dotted_allowed(dotted, self.notebook.allowed)
        if not allowed:
            self.off_list(node, f"uses {prefix}")
            return
        for attr in dotted[len(prefix):].split(".")[1:]:
            self._attribute(node, attr)

    def _attribute(self, node, attr: str) -> None:
        if attr.startswith("__") and attr.endswith("__"):
            return  # dunders: visit_Attribute's own rule
        if attr in allow_list.refused_attributes() or (attr not in self.notebook.own_attributes and
                                                        not allow_list.attribute_allowed(attr)):
            self.off_list(node, f"reads .{attr}")  # a name the list refuses stays so, given or not

    def _reach(self, node, name: str, verb: str) -> None:
        """A dotted name of an import: is what it reaches the process's, or not an allowed part?"""
        top, *rest = name.split(".")
        allowed = MODULES.get(top, set())
        if top not in MODULES and not module_exists(top):
            return  # the kernel, on the same environment without its work folder, cannot import it either
        if top not in MODULES or (allowed is not None and rest and rest[0] not in allowed):
            self.note(node, f"{verb} {name}")
            return
        if within(name, REACHES_PROCESS):
            self.note(node, f"{verb} {name}")
            return
        for index in range(1, len(rest) + 1):  # a module reached through another (torch.sys): as itself
            prefix = ".".join([top, *rest[:index]])
            step = resolve(prefix)
            named = index == 1 and allowed is not None  # os.path: a part the table names, as it is
            if isinstance(step, types.ModuleType) and step.__name__ != prefix and not named:
                self._reach(node, ".".join([step.__name__, *rest[index:]]), verb)
                return
        value = resolve(name)
        table_method = isinstance(getattr(value, "__self__", None), TABLES)
        plain_function = isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) and not table_method
        if any(piece.startswith("_") for piece in rest) and not plain_function:
            self.note(node, f"{verb} {name}")
        elif (isinstance(value, TABLES) or table_method) and rest:
            self.note(node, f"{verb} {name}, a table of {top}")

    def _dunder_variable(self, node, name: str, binds: bool) -> None:
        """A dunder as a variable (read, assigned, a parameter, an import's or a def's name): the
        interpreter's own names (__builtins__; a class body's __annotations__, whose keys dataclass
        runs as code; a method's __class__). A class body's members are visit_ClassDef's to judge."""
        if not (name.startswith("__") and name.endswith("__")) or name in PLAIN_DUNDERS or id(node) in self.noted:
            return
        if binds and self.scopes and isinstance(self.scopes[-1], ast.ClassDef):
            return
        self.note(node, f"{'binds' if binds else 'reaches'} {name}, a name of the interpreter's")

    def _followed(self, node) -> bool:
        """Whether the reading follows what `node` stands for where it stands: read on, called,
        compared, asked about (isinstance, a class pattern, getattr by a constant name), caught, derived from,
        named by an alias or a loop over a literal (both tracked), shown (print, str, an f-string),
        or in an annotation."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.FormattedValue) or (isinstance(parent, ast.Call) and node in parent.args and
                                                      dotted_name(parent.func) in SHOWN - self.notebook.own):
            return True  # print(type(x)), f"{type(x)}": a text made of it, never it
        if isinstance(parent, ast.Tuple) and isinstance(self.parents.get(id(parent)), (ast.Compare, ast.ExceptHandler)):
            return True  # type(x) in (A, B); except (A, B)
        if isinstance(parent, ast.Tuple) and isinstance(self.parents.get(id(parent)), ast.Call):
            parent, node = self.parents[id(parent)], parent  # isinstance(x, (A, B))
        if isinstance(parent, (ast.Compare, ast.ExceptHandler, ast.ClassDef, ast.MatchClass)) or \
                (isinstance(parent, ast.Attribute) and parent.value is node):
            return True
        if isinstance(parent, ast.Call):
            asks = dotted_name(parent.func) in ("isinstance", "issubclass", "getattr", "hasattr")
            return parent.func is node or (asks and node in parent.args)
        if isinstance(parent, ast.AnnAssign) and parent.annotation is node:
            return self._in_annotation(node)
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            in_class = isinstance(self.parents.get(id(parent)), ast.ClassDef)  # a class attribute: A.t
            return len(targets) == 1 and isinstance(targets[0], ast.Name) and not in_class
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in parent.decorator_list:
            return True
        loop = self.parents.get(id(parent))
        if isinstance(parent, (ast.List, ast.Tuple, ast.Set)) and isinstance(loop, ast.For):
            return loop.iter is parent
        return self._in_annotation(node)

    def _in_annotation(self, node) -> bool:
        """In an annotation, which holds a class where nothing takes it back, except a class body's
        in a notebook that calls dataclasses.fields: a field's .type hands the class on."""
        child, parent = node, self.parents.get(id(node))
        while isinstance(parent, (ast.Subscript, ast.Tuple, ast.List, ast.BinOp, ast.Attribute)):
            child, parent = parent, self.parents.get(id(parent))
        in_class = isinstance(self.parents.get(id(parent)), ast.ClassDef)
        return (isinstance(parent, ast.arg) and parent.annotation is child) or \
            (isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is child) or \
            (isinstance(parent, ast.AnnAssign) and parent.annotation is child and
             not (in_class and self.notebook.field_types))

    def _names_trusting(self, node, name: str) -> None:
        self.note(node, f"names {name}, a method that reads its own object by a computed name: run any way but "
                        "by calling that object, it could read another")

    def _parameters(self) -> set[str]:
        """The parameters of the function the visit is inside."""
        scope = next((s for s in reversed(self.scopes) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                          ast.Lambda))), None)
        if scope is None:
            return set()
        arguments = scope.args
        return {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                *filter(None, [arguments.vararg, arguments.kwarg])]}

    def _in_constructor(self) -> bool:
        return bool(self.functions) and self.functions[-1][0] == "__init__" and self.functions[-1][1]

    def _is_code(self, value) -> bool:
        """A value that is code: a lambda, a function the notebook defines, a method taken from
        somewhere, a wrapper of one."""
        if value is None:  # a deletion: what was there is gone
            return True
        if value is UNKNOWN:  # a part of something unpacked: a value, most likely
            return False
        if isinstance(value, ast.Name):  # a student's variable holds a value; a function or a builtin is code
            return value.id in self.notebook.defined or value.id in self.notebook.foreign
        if isinstance(value, ast.Call):  # a new object, unless it wraps code or the notebook's function makes it
            called = dotted_name(value.func) or ""
            return called.split(".")[-1] in WRAPPERS | PASS_THROUGH or called in self.notebook.defined
        # Constants, arithmetic, comparisons, f-strings, comprehensions and literals make values;
        # anything else (a lambda, an attribute or item taken from elsewhere, a conditional) may be code.
        return not isinstance(value, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.JoinedStr,
                                      ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                                      ast.List, ast.Tuple, ast.Dict, ast.Set))

    def _rebinds(self, node, name: str, value) -> None:
        """A builtin, or a name the course's own cells define (a helper the tests call), made code
        of the student's at the top of a cell: the tests would call it instead."""
        at_top = not self.functions or name in self.declared[-1]  # or `global name` in a function
        if not at_top or name not in self.notebook.protected:
            return
        made = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
            value.func.id in self.notebook.defined
        if self._is_code(value) or made:  # an object of a class of the student's may be called too
            self.note(node, f"redefines {name}, which the tests call, as code of its own")
        elif name in self.notebook.course_imports and not isinstance(node, (ast.Import, ast.ImportFrom)):
            self.note(node, f"rebinds {name}, which the course's own cells import")


def is_self(node, reader: Walk) -> bool:
    """The first parameter of the method the visit is inside (a constructor's: the object being made)."""
    return isinstance(node, ast.Name) and bool(reader.functions) and reader.functions[-1][1] and \
        node.id == reader.functions[-1][2]
