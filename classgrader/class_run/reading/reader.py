"""One cell's tree walked against the rules (rules.py, allowed.toml): each finding a line and what
it reaches, rewrites or pretends, in the words the flag shows an instructor."""
import ast
import builtins
import string
import types

from classgrader.class_run import allow_list, own_reads
from classgrader.class_run.reading import in_place
from classgrader.class_run.reading.cells import python_of
from classgrader.class_run.reading.facts import Notebook, class_members
from classgrader.class_run.reading.resolving import (
    class_names,
    dotted_name,
    full_name,
    module_exists,
    named_read,
    reaches_namespace,
    resolve,
    root_of,
    within,
)
from classgrader.class_run.reading.rules import (
    ATTRIBUTE_MAKERS,
    CLASS_WRITERS,
    CONTEXT_MANAGERS,
    FORMATTING,
    HELD_HARMLESSLY,
    IMMUTABLE,
    INTERNALS,
    MATRIX_BUILDERS,
    METACLASSES,
    MODE_SWITCHES,
    MODULES,
    MUTATORS,
    OWN_METHODS,
    PASS_THROUGH,
    PLAIN_DUNDERS,
    PLAIN_MAGICS,
    PROCESS_FILE_PARTS,
    PROCESS_FILES,
    REACHES_PROCESS,
    REFLECTION,
    REPORTING_CLASSES,
    SELF_REPORTS,
    SESSION_SWITCHES,
    SETTINGS,
    SHOWN,
    TABLES,
    TENSOR_CLASSES,
    UNKNOWN,
    WRAPPERS,
)


class Reader(ast.NodeVisitor):
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

    def full(self, dotted: str) -> str:
        return full_name(dotted, self.notebook.imported)

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

    # --- imports --------------------------------------------------------------------------
    def visit_Import(self, node):
        for alias in node.names:
            self._reach(node, alias.name, "imports")
            if alias.name not in self.notebook.allowed and module_exists(alias.name.split(".")[0]):
                self.off_list(node, f"imports {alias.name}")
            self._imports_over(node, alias.asname or alias.name.split(".")[0], bool(alias.asname))
            self._dunder_variable(node, alias.asname or alias.name.split(".")[0], True)

    def _imports_over(self, node, name: str, renamed: bool = False) -> None:
        """An import that binds a name the course's own cells define, not import (import ... as
        make_loader): what the same import of theirs binds is theirs too; one renamed to a
        builtin's name (from operator import ne as isinstance) puts other code in its place."""
        if name in self.notebook.course_defined:
            self._rebinds(node, name, None)
        elif renamed and name in dir(builtins):
            self.note(node, f"imports something else as {name}, a builtin the tests call")

    def visit_ImportFrom(self, node):
        if node.level:
            self.note(node, "imports relative to the kernel's folder")
            return
        for alias in node.names:
            if alias.name == "*":
                self.note(node, f"imports * from {node.module}")
            else:
                self._reach(node, f"{node.module}.{alias.name}", "imports")
                full = f"{node.module}.{alias.name}"
                listed, prefix = allow_list.dotted_allowed(full, self.notebook.allowed)
                if (node.module not in self.notebook.allowed or not listed or prefix != full) and \
                        module_exists(node.module.split(".")[0]):
                    self.off_list(node, f"imports {full}")
                self._imports_over(node, alias.asname or alias.name, bool(alias.asname) and alias.asname != alias.name)
                self._dunder_variable(node, alias.asname or alias.name, True)

    # --- names, attributes, calls -----------------------------------------------------------
    def visit_Name(self, node):
        imported = self.notebook.imported
        if isinstance(node.ctx, ast.Load) and node.id in imported and "." in imported[node.id]:
            self._taken_as_value(node, node.id)
        if isinstance(node.ctx, ast.Load) and node.id in self.notebook.imported:
            self._handed_on(node, node.id)
            self._builds_by_names(node, node.id)
        if isinstance(node.ctx, ast.Load):
            if node.id in self.notebook.trusting:
                self._names_trusting(node, node.id)
            elif node.id in REFLECTION:
                self.note(node, f"uses {node.id}")
            elif node.id == "type" and node.id not in self.notebook.own and id(node) not in self.called:
                self._class_handed_on(node, "takes type as a value, to be called out of sight")
            elif node.id not in self.notebook.bound:  # the session's history, a test's leftovers, the grader's names
                self.note(node, f"reads {node.id}, which this notebook never defines")
            elif node.id in dir(builtins) and node.id not in self.notebook.own and \
                    not allow_list.builtin_allowed(node.id):
                self.off_list(node, f"uses the builtin {node.id}")
        self._dunder_variable(node, node.id, not isinstance(node.ctx, ast.Load))

    def _dunder_variable(self, node, name: str, binds: bool) -> None:
        """A dunder as a variable (read, assigned, a parameter, an import's or a def's name): the
        interpreter's own names (__builtins__; a class body's __annotations__, whose keys dataclass
        runs as code; a method's __class__). A class body's members are visit_ClassDef's to judge."""
        if not (name.startswith("__") and name.endswith("__")) or name in PLAIN_DUNDERS or id(node) in self.noted:
            return
        if binds and self.scopes and isinstance(self.scopes[-1], ast.ClassDef):
            return
        self.note(node, f"{'binds' if binds else 'reaches'} {name}, a name of the interpreter's")

    def _class_handed_on(self, node, what: str) -> None:
        """type(x), or type taken to be called elsewhere (map(type, ...)): the class of an object
        the grader may hand in (torch.Tensor, a probe), held where the reading does not follow it
        by a notebook that writes an attribute such a class has: T, = map(type, [x]);
        T.grad_fn = None makes every tensor say it recorded nothing."""
        if not (self.notebook.written & class_names()) or self._followed(node):
            return
        self.note(node, f"{what}, where the reading does not follow it")

    def _handed_on(self, node, dotted: str) -> None:
        """A module, or a class of someone else's whose attributes can be set (torch.Tensor, a
        probe), held where the reading does not follow it (in a container, passed to or returned
        from a function, a default) by a notebook that writes, on some object, an attribute that
        module or class has. What holds it then can write it: x = [torch.Tensor][0]; x.grad_fn =
        None would make every tensor say it recorded nothing. A notebook that writes none of its
        names (nn.ReLU as a default, a dict of optimizers) cannot change it so. A module can be
        read there too, by the names the notebook gives its own objects (a method `system` of
        its own class makes m.system readable): any of them the list refuses for that module counts."""
        full = self.full(dotted)
        value = resolve(full)
        if not (isinstance(value, types.ModuleType) or (isinstance(value, type) and not value.__flags__ & IMMUTABLE)):
            return
        touched = set(self.notebook.written)
        if isinstance(value, types.ModuleType):
            touched |= {name for name in self.notebook.own_attributes & set(dir(value))
                        if not allow_list.dotted_allowed(f"{full}.{name}", self.notebook.allowed)[0]}
        if touched.isdisjoint(dir(value)):
            return
        if not self._followed(node):
            self.note(node, f"hands {full} on as a value, where the reading does not follow it")

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

    def _builds_by_names(self, node, dotted: str) -> None:
        """numpy's r_ and c_ given a string build a matrix of the caller's variables it names
        (np.r_["In"]: the session's history, the grader's names): read only where indexed by
        slices, numbers or a tuple (np.r_[1:3, 5])."""
        if self.full(dotted) not in MATRIX_BUILDERS:
            return
        parent = self.parents.get(id(node))
        key = parent.slice if isinstance(parent, ast.Subscript) and parent.value is node else None
        if not (isinstance(key, (ast.Slice, ast.Tuple)) or (isinstance(key, ast.Constant) and
                                                            not isinstance(key.value, str))):
            self.note(node, f"takes {self.full(dotted)} but to index it by slices, numbers or a tuple: given a "
                            "string, it reads the caller's variables the string names")

    def _taken_as_value(self, node, dotted: str) -> None:
        """A grad-mode switch, or a call whose keywords the reading checks (torch.load), taken as a
        value (map(torch.set_grad_enabled, ...), partial(torch.load, ...)): what it is called with
        is out of sight."""
        full = self.full(dotted)
        if id(node) in self.called or id(node) in self.blocks or isinstance(getattr(node, "ctx", None),
                                                                             (ast.Store, ast.Del)):
            return
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.ClassDef) and node in parent.decorator_list:
            return  # @dataclass: what it writes onto is the class below it, the notebook's own
        if full.split(".")[-1] in SESSION_SWITCHES or allow_list.keyword_rules(full) is not None or \
                full in CLASS_WRITERS:
            self.note(node, f"takes {full} as a value, to be called out of sight")
        elif self._is_array_class(resolve(full)) and not self._followed(node):
            self.note(node, f"takes {full} as a value, to make an array over another's memory out of sight")

    def visit_Attribute(self, node):
        attr, dotted = node.attr, dotted_name(node)
        if dotted and dotted.split(".")[0] in self.notebook.imported:
            self._taken_as_value(node, dotted)
        if attr in self.notebook.trusting and isinstance(node.ctx, ast.Load):
            self._names_trusting(node, attr)
        if attr == "seek" and id(node) not in self.called:
            self.note(node, "takes .seek as a value, to move a file out of sight")
        if attr in FORMATTING and id(node) not in self.called:
            self._formats(node)  # '{0.x}'.format taken, to be called elsewhere
        if attr == "is_meta":
            self.note(node, "singles out the meta device, on which the grader stands in for an accelerator")
        if attr == "__init__" and isinstance(node.ctx, ast.Load):
            if id(node) not in self.called:  # taken to be called later, on anything
                self.note(node, "takes __init__ without calling it")
            self.generic_visit(node)  # a call of it is checked where it is called (visit_Call)
        elif (attr.startswith("__") and attr.endswith("__") and attr not in PLAIN_DUNDERS) or attr in INTERNALS or \
                (attr == "gen" and isinstance(node.value, ast.Call)):
            self.note(node, f"reaches .{attr}")
        elif isinstance(node.ctx, ast.Load) and dotted and dotted.split(".")[0] in self.notebook.imported:
            self._reach(node, self.full(dotted), "uses")
            self._listed_chain(node, self.full(dotted))
            self._handed_on(node, dotted)
            self._builds_by_names(node, dotted)
            return  # the whole chain at once
        elif isinstance(node.ctx, ast.Load):
            self._attribute(node, attr)
        self.generic_visit(node)

    def _magic(self, node) -> bool:
        """get_ipython().run_line_magic("timeit", "f(x)") and its cell form, for a plain magic:
        the code it runs read as the cell's own."""
        func, args = node.func, node.args
        if not (isinstance(func, ast.Attribute) and func.attr in ("run_line_magic", "run_cell_magic") and
                isinstance(func.value, ast.Call) and dotted_name(func.value.func) == "get_ipython" and
                len(args) >= 2 and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args)):
            return False
        if args[0].value not in PLAIN_MAGICS:
            return False
        for code in (a.value for a in args[1:]) if PLAIN_MAGICS[args[0].value] else ():
            try:
                tree = ast.parse(python_of(code))
            except SyntaxError:
                continue
            for inner in ast.walk(tree):
                if hasattr(inner, "lineno"):
                    inner.lineno = node.lineno
            self.visit(tree)
        return True

    # --- telling the grader's stand-in device apart ----------------------------------------
    def _singles_out_meta(self, node, values) -> None:
        """The grader runs answers on meta where it has no accelerator: code that asks whether a
        device is meta can behave one way there and another on a real one."""
        for value in values:
            parts = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
            if any(isinstance(part, ast.Constant) and part.value == "meta" for part in parts):
                self.note(node, "singles out the meta device, on which the grader stands in for an accelerator")
                return

    def visit_Constant(self, node):
        """A text naming the process's own files: open("/proc/self/environ") reads what os.environ
        is refused for, and a path joined from parts ("proc", "environ") names the same file."""
        text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        if isinstance(text, str) and (text.strip().startswith(PROCESS_FILES) or
                                      text.strip().strip("/") in PROCESS_FILE_PARTS):
            self.note(node, f"names {text.strip()[:40]!r}, the process's own files")

    def visit_Compare(self, node):
        self._singles_out_meta(node, [node.left, *node.comparators])
        self.generic_visit(node)

    def visit_MatchValue(self, node):
        self._singles_out_meta(node, [node.value])
        self.generic_visit(node)

    def visit_Call(self, node):
        func, args = node.func, node.args
        name = func.id if isinstance(func, ast.Name) else None
        if self._magic(node):
            return
        self._switch(node)
        self._library_setattr(node)
        self.called.add(id(func))
        if name == "getattr" and name not in self.notebook.own and self._reads_own(node):
            for part in args:
                self.visit(part)
            return
        constant = len(args) >= 2 and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)
        by_name = name in ("getattr", "hasattr") and name not in self.notebook.own and constant
        if by_name and args[1].value in self.notebook.trusting:
            self._names_trusting(node, args[1].value)
        if by_name and not args[1].value.startswith("_"):
            if args[1].value == "seek" and id(node) not in self.called:
                self.note(node, "takes .seek as a value, to move a file out of sight")
            # torch.backends, "mps"
            if dotted_name(args[0]) and dotted_name(args[0]).split(".")[0] in self.notebook.imported:
                self._taken_as_value(node, f"{dotted_name(args[0])}.{args[1].value}")
                self._handed_on(node, f"{dotted_name(args[0])}.{args[1].value}")
                self._reach(node, f"{self.full(dotted_name(args[0]))}.{args[1].value}", "uses")
                self._listed_chain(node, f"{self.full(dotted_name(args[0]))}.{args[1].value}")
            else:
                self._attribute(node, args[1].value)
            for part in [*args, *node.keywords]:
                self.visit(part)  # getattr(x, "weight", None): an attribute read, spelled out
            return
        if name == "hasattr" and name not in self.notebook.own:
            self.note(node, "uses hasattr with a name it computes")
        self._keywords(node)
        self._names_attributes(node)
        self._seeks(node)
        self._over_memory(node)
        self._formats(node)
        self._backend(node)
        if isinstance(func, ast.Attribute) and func.attr == "__init__" and \
                not (isinstance(func.value, ast.Call) and dotted_name(func.value.func) == "super") and \
                not (args and _is_self(args[0], self) and self._in_constructor()):
            self.note(node, "calls __init__ on something other than the object being made")
        if name == "type" and len(args) == 3:
            self.note(node, "makes a class with type()")
        if name == "type" and name not in self.notebook.own and len(args) == 1:
            self._class_handed_on(node, "hands the class type() gives on as a value")
            parent = self.parents.get(id(node))
            if isinstance(parent, (ast.Call, ast.keyword)) and not self._followed(node) and id(node) not in self.noted:
                # partial(type(a), shape, dtype, a, -56): a class called where the reading does not see it
                self.note(node, "hands the class type() gives to a call, where the reading does not follow it")
        if isinstance(func, ast.Attribute) and func.attr in MUTATORS:
            target = root_of(func.value)  # (a module's own tables are found by _reach)
            if reaches_namespace(target) or (isinstance(target, ast.Name) and target.id in self.notebook.foreign and
                                     target.id not in self.notebook.imported and target.id not in dir(builtins)):
                self.note(node, f"changes {dotted_name(func.value) or 'a namespace'} with .{func.attr}()")
        self.generic_visit(node)

    def _names_attributes(self, node) -> None:
        """Keywords that become attribute names: a dunder given as one (SimpleNamespace(
        __array_interface__=...) hands numpy a raw pointer to the process's memory), and a mapping
        spread into a maker of attributes, whose names are computed; a class made by enum's call
        (Enum("E", names)), whose members' names are."""
        for keyword in node.keywords:
            if keyword.arg and keyword.arg.startswith("__") and keyword.arg.endswith("__"):
                self.note(node, f"gives {keyword.arg} as a keyword, an attribute by that name")
        called = self.full(dotted_name(node.func) or "")
        if called in ATTRIBUTE_MAKERS and any(
                keyword.arg is None and not (isinstance(keyword.value, ast.Dict) and all(
                    isinstance(key, ast.Constant) and isinstance(key.value, str) and not key.value.startswith("_")
                    for key in keyword.value.keys)) for keyword in node.keywords):
            self.note(node, f"gives a {called} attributes named by a mapping (**), as setattr does")
        if called.startswith("enum.") and (len(node.args) > 1 or any(k.arg == "names" for k in node.keywords)):
            self.note(node, f"makes a class with {called}(), its members named by values, as type() does")

    def _backend(self, node) -> None:
        """matplotlib imports the module a backend names ("module://name"): a backend= keyword
        (savefig's) that is not a constant naming one of its own is an import by name."""
        for given in node.keywords:
            value = given.value
            if given.arg == "backend" and not (isinstance(value, ast.Constant) and isinstance(value.value, str)
                                                  and not value.value.startswith("module:")):
                self.note(node, "passes a backend it computes or one of 'module://', a module matplotlib imports "
                                "by name")

    def _seeks(self, node) -> None:
        """A file moved anywhere but its start: the process's memory is a file (/proc/self/mem),
        read and written at the address id() gives, and numpy's fromfile moves one by `offset`."""
        read = named_read(node.func)
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else read and read[1]
        if attr == "seek" and not (node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0):
            self.note(node, "moves a file to a position it computes, as a write into the process's memory does")

    def _over_memory(self, node) -> None:
        """numpy's array made over another object's memory (np.ndarray(shape, dtype, buffer,
        offset), recarray's buf) checks only that it ends inside it: a negative offset starts it
        before, anywhere in the process's memory, read and written. The offset must be a constant
        at least 0; what makes the array is numpy's class by name, a class the notebook derives
        from it, type() of something, or any call given a buffer by keyword."""
        by_keyword = any(keyword.arg in ("buffer", "buf") for keyword in node.keywords)
        unseen = any(isinstance(part, ast.Starred) for part in node.args) or \
            any(keyword.arg is None for keyword in node.keywords)  # np.ndarray(*parts)
        if not (by_keyword or ((len(node.args) >= 3 or unseen) and self._array_class(node.func))):
            return
        offsets = [keyword.value for keyword in node.keywords if keyword.arg == "offset"] + node.args[3:4]
        if any(not (isinstance(offset, ast.Constant) and type(offset.value) is int and offset.value >= 0)
               for offset in offsets) or any(isinstance(part, ast.Starred) for part in node.args) or \
                any(keyword.arg is None for keyword in node.keywords):
            self.note(node, "makes an array over another's memory at an offset that is not a constant of at least "
                            "0: a negative one reaches the process's memory before it, to read and write")

    def _array_class(self, func) -> bool:
        """Whether `func` may be numpy's array class or a subclass of it (one that takes a buffer)."""
        if isinstance(func, ast.Call):
            return dotted_name(func.func) == "type"  # type(a)(shape, dtype, buffer, offset)
        if isinstance(func, ast.Name) and func.id in self.notebook.made_by_type:
            return True  # cls = type(a); cls(shape, dtype, buffer, offset)
        return self._array_class_named(full_name(dotted_name(func) or "", self.notebook.aliases))

    def _array_class_named(self, dotted: str, seen: frozenset = frozenset()) -> bool:
        if dotted in self.notebook.class_bases:  # a class of the notebook's: its bases, each once
            return any(self._array_class_named(full_name(base, self.notebook.aliases), seen | {dotted})
                       for base in self.notebook.class_bases[dotted] if base not in seen | {dotted})
        return self._is_array_class(resolve(self.full(dotted)))

    @staticmethod
    def _is_array_class(value) -> bool:
        return isinstance(value, type) and issubclass(value, resolve("numpy.ndarray"))

    def _formats(self, node) -> None:
        """"{0.sys.modules}".format(torch): a format string's fields read attributes and items by
        name, wherever the string is used as one: the receiver of .format or .format_map, called or
        taken, and the first argument of a call of .format, .vformat or .format_map (str.format(text,
        ...), string.Formatter().format(text, ...)). A text it computes (fmt = "{0." + "sys}") is out
        of sight: one of them must be a constant, or a name the notebook binds to constants alone."""
        func = node.func if isinstance(node, ast.Call) else node
        if not (isinstance(func, ast.Attribute) and func.attr in FORMATTING):
            return
        texts = [func.value] if func.attr != "vformat" else []
        if isinstance(node, ast.Call) and node.args:
            texts.append(node.args[0])
        constants = [value for text in texts for value in self._constant_texts(text)]
        if not constants:
            self.note(node, "reads attributes or items by name through a format string it computes")
        for value in constants:
            try:
                fields = format_fields(value)
            except ValueError:
                continue  # it fails when it runs
            if any("." in field or "[" in field for field in fields):
                self.note(node, "reads attributes or items by name through a format string")
                return

    def _constant_texts(self, node) -> list[str]:
        """The strings `node` can be: a constant's, or those of a name bound to constants alone."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        return list(self.notebook.texts.get(node.id, [])) if isinstance(node, ast.Name) else []

    def _reads_own(self, node) -> bool:
        """getattr by a computed name that reads only the student's own object (own_reads)."""
        scope = self.scopes[-1] if self.scopes else None
        in_class = bool(self.functions) and self.functions[-1][1]
        return own_reads.own_layer(node, scope, in_class, self.notebook.templates, self.notebook.own) or \
            own_reads.dataclass_field(node, scope, self.full, self.notebook.plain_imports)

    def _names_trusting(self, node, name: str) -> None:
        self.note(node, f"names {name}, a method that reads its own object by a computed name: run any way but "
                        "by calling that object, it could read another")

    def _keywords(self, node) -> None:
        """A call the list allows only with some keywords (torch.load: weights_only left on, no
        pickle_module; the environment's say is not asked, see visit_Attribute's os.environ)."""
        dotted = self.full(dotted_name(node.func) or "")
        rules = allow_list.keyword_rules(dotted)
        if rules is None:
            return
        if len(node.args) > rules.get("positional", len(node.args)) or any(
                isinstance(a, ast.Starred) for a in node.args):
            self.note(node, f"passes {dotted} more than {rules['positional']} arguments by position")
        for keyword in node.keywords:
            if keyword.arg is None:
                self.note(node, f"passes {dotted} keywords the reading cannot see (**)")
            elif keyword.arg in rules.get("never", []):
                self.note(node, f"unpickles: passes {keyword.arg} to {dotted}, which runs code from the file")
            elif keyword.arg in rules.get("constant", {}) and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value == rules["constant"][keyword.arg]):
                what = rules.get("why", "unpickles with {call}, which runs code from the file")
                self.note(node, what.format(call=f"{dotted}({keyword.arg}={ast.unparse(keyword.value)})"))

    def visit_With(self, node):
        self.blocks.update(id(item.context_expr) for item in node.items)  # with torch.no_grad(): a block
        for item in node.items:  # with nullcontext(lambda a, b: True) as isinstance: ...
            if isinstance(item.optional_vars, ast.Name) and any(
                    isinstance(inner, ast.Lambda) or (isinstance(inner, ast.Name) and inner.id in self.notebook.defined)
                    for inner in ast.walk(item.context_expr)):
                self._rebinds(node, item.optional_vars.id, ast.Lambda())
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def _library_setattr(self, node) -> None:
        """Library calls that set attributes by name or change what isinstance answers: copying
        chosen attributes onto another object (functools.update_wrapper / wraps with `assigned`
        or `updated`), registering a class as a virtual subclass of an abstract one."""
        name = self.full(dotted_name(node.func) or "")
        last = name.split(".")[-1]
        plain_arguments = 2 if last == "update_wrapper" else 1  # (wrapper, wrapped), or (wrapped)
        if last in ("update_wrapper", "wraps") and (
                any(k.arg in ("assigned", "updated") for k in node.keywords) or len(node.args) > plain_arguments):
            self.note(node, f"copies chosen attributes with {name}")
        elif last == "register" and name.split(".")[0] in ("abc", "numbers", "collections", "typing"):
            self.note(node, f"makes a class pass isinstance() with {name}")  # typing.Sequence is collections.abc's
        outer = self.full(dotted_name(node.func.func) or "") if isinstance(node.func, ast.Call) else ""
        writer = name if name in CLASS_WRITERS else outer if outer in CLASS_WRITERS else None
        if writer and node.args and not self._own_definition(node.args[0]):
            self.note(node, f"changes {ast.unparse(node.args[0])} with {writer}, which writes methods or "
                            "attributes onto what it is given, not a class or function the notebook defines")

    def _own_definition(self, node) -> bool:
        """A name the notebook's own def or class binds, never an import's or an alias's."""
        return isinstance(node, ast.Name) and node.id in self.notebook.defined and \
            node.id not in self.notebook.foreign and node.id not in self.notebook.imported

    def _held_open(self, node) -> None:
        """A generator that yields inside a `with` keeps what the `with` entered while it is
        suspended: advanced once, a grad mode, a default device (`with torch.device("meta")`) or
        a context manager of the notebook's holding one stays on for the rest of the session. As
        a context manager (@contextmanager, by a name the notebook never rebinds) it is a block
        like any other; a context that only opens a file or a folder is held harmlessly."""
        if any(self._real_context_manager(d) for d in node.decorator_list):
            return
        for block in ast.walk(node):
            if not isinstance(block, (ast.With, ast.AsyncWith)) or \
                    not any(isinstance(inner, (ast.Yield, ast.YieldFrom)) for inner in ast.walk(block)):
                continue
            for item in block.items:
                expression = item.context_expr
                called = self.full(dotted_name(expression.func) or "") if isinstance(expression, ast.Call) else ""
                if called.split(".")[-1] in SESSION_SWITCHES and isinstance(expression, ast.Call):
                    self.note(block, f"keeps {dotted_name(expression.func)} on across a yield")
                    return
                if called not in HELD_HARMLESSLY or called in self.notebook.own:
                    shown = called or ast.unparse(expression)
                    self.note(block, f"keeps {shown} entered across a yield, where it may hold a grad mode "
                                     "or a default device")
                    return

    def _real_context_manager(self, decorator) -> bool:
        """@contextmanager (or @contextlib.contextmanager), by a name bound once in the notebook:
        its import, never rebound to something else."""
        dotted = dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""
        head = dotted.split(".")[0]
        heads = {head, self.notebook.aliases.get(head, "").split(".")[0]} - {""}
        return self.full(dotted) in CONTEXT_MANAGERS and all(self.notebook.bindings.get(name, 0) == 1 for name in heads)

    def _switch(self, node) -> None:
        """A grad mode or a default switched anywhere but for a block (a with, a decorator): for
        the rest of the session, the tests' code included."""
        if self.full(dotted_name(node.func) or "").split(".")[-1] in SESSION_SWITCHES and id(node) not in self.blocks:
            self.note(node, f"switches {self.full(dotted_name(node.func) or '')} for the rest of the session")

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

    def visit_NamedExpr(self, node):
        self._rebinds(node, node.target.id, node.value)
        self.generic_visit(node)

    def visit_For(self, node):
        if isinstance(node.target, ast.Name) and isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)):
            for element in node.iter.elts:  # for make_loader in [lambda: []]: ...
                self._rebinds(node, node.target.id, element)
        elif isinstance(node.target, ast.Name):  # for isinstance in [[lambda a, b: True]][0]: ...
            self._rebinds(node, node.target.id, node.iter)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    # --- changing what is not the student's -----------------------------------------------
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

    def _target(self, target, verb: str, value=None):
        if isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and \
                len(value.elts) == len(target.elts) else [UNKNOWN] * len(target.elts)
            for element, part in zip(target.elts, values):
                self._target(element, verb, part)
        elif isinstance(target, ast.Starred):
            self._target(target.value, verb)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            root = root_of(target)
            shown = dotted_name(target) or f"{dotted_name(target.value) or 'a namespace'}[...]"
            if reaches_namespace(root):
                self.note(target, f"{verb} {shown} through {root.func.id}()")
            elif isinstance(root, ast.Name) and root.id in self.notebook.foreign:
                if self.full(dotted_name(target) or "") not in SETTINGS:
                    self.note(target, f"{verb} {shown}, which belongs to {root.id}")
            elif isinstance(target, ast.Attribute) and not isinstance(root, ast.Name):
                # [torch.Tensor][0].is_cuda = True, f().x = ...: whose object it is, the reading cannot say
                self.note(target, f"{verb} .{target.attr} of an object it does not name")
            elif isinstance(target, ast.Attribute) and target.attr in self.notebook.methods and \
                    self._is_code(value) and not (self._in_constructor() and _is_self(target.value, self)):
                self.note(target, f"{verb} .{target.attr}, the name of a method of torch or of the checks, as code")
            elif isinstance(target, ast.Attribute) and target.attr in self.notebook.methods and \
                    isinstance(root, ast.Name) and root.id in self._parameters() and not _is_self(target.value, self):
                self.note(target, f"{verb} {shown}, the name of a method of torch or of the checks, "
                                  "on an object handed in")
            elif isinstance(root, ast.Name) and root.id in self.notebook.course_defined and self._is_code(value):
                self.note(target, f"{verb} {shown}, which the course's own cells define, as code")
            self._reports_written(target, value)
            if isinstance(target, ast.Attribute) and target.attr in allow_list.private_hooks():
                self.note(target, f"{verb} {shown}, a table of hooks torch's objects run")

    def visit_Assign(self, node):
        for target in node.targets:
            self._target(target, "assigns to", node.value if len(node.targets) == 1 else UNKNOWN)
            if isinstance(target, ast.Name):
                self._rebinds(node, target.id, node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._target(node.target, "assigns to", UNKNOWN)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._annotation(node.annotation)
        self._target(node.target, "assigns to", node.value if node.value is not None else UNKNOWN)
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            self._target(target, "deletes")
        self.generic_visit(node)

    def _annotation(self, annotation) -> None:
        """An annotation written as text is code to whatever evaluates it (typing.get_type_hints,
        torch's data pipes): the text is read as the expression it spells."""
        for inner in ast.walk(annotation) if annotation is not None else ():
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                try:
                    expression = ast.parse(inner.value.strip(), mode="eval")
                except (SyntaxError, ValueError):
                    continue  # it fails when it is evaluated
                for part in ast.walk(expression):
                    if hasattr(part, "lineno"):
                        part.lineno = inner.lineno
                self.visit(expression)

    def visit_arg(self, node):
        self._annotation(node.annotation)
        self._dunder_variable(node, node.arg, True)
        self.generic_visit(node)

    def _function(self, node):
        self._rebinds(node, node.name, None)
        self._dunder_variable(node, node.name, True)
        self._held_open(node)
        self._annotation(node.returns)
        self.blocks.update(id(decorator) for decorator in node.decorator_list)  # @torch.no_grad()
        first = (node.args.posonlyargs + node.args.args)[:1]
        in_class = bool(self.functions) and self.functions[-1][0] == "<class>"
        for write, name in in_place.writes(node, in_class, self.notebook.imported):
            self.note(write, f"writes in place into {name}, which {node.name}() was handed: a test that computes "
                             "what it expects from its input afterwards then agrees with what the function left there")
        self.functions.append((node.name, in_class, first[0].arg if first else None))
        self.scopes.append(node)
        self.declared.append({name for inner in ast.walk(node) if isinstance(inner, ast.Global)
                              for name in inner.names})
        self.generic_visit(node)
        self.declared.pop()
        self.functions.pop()
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    # --- classes that pretend -------------------------------------------------------------
    def _base_name(self, base) -> str:
        """A base class's dotted name, through aliases (Base = torch.Tensor)."""
        name = dotted_name(base) or ""
        for _ in range(3):  # aliases of aliases
            head, _, rest = name.partition(".")
            if head not in self.notebook.aliases or self.notebook.aliases[head] == head:
                break
            name = ".".join(filter(None, [self.notebook.aliases[head], rest]))
        return name

    def visit_ClassDef(self, node):
        self._rebinds(node, node.name, None)
        for base in node.bases:
            name = self._base_name(base)
            if name.split(".")[-1] in TENSOR_CLASSES:
                self.note(node, f"defines {node.name}, a subclass of {name}: a tensor that is not torch's")
            elif name.split(".")[-1] in METACLASSES:
                self.note(node, f"defines {node.name}, a metaclass")
        for keyword in node.keywords:
            if keyword.arg == "metaclass":
                self.note(node, f"gives {node.name} a metaclass")
        reporting = self._reporting_class(node.name)
        for base in self._own_bases(node.name) if reporting else ():  # class Norm(Lying, nn.Module)
            for name in sorted(self.notebook.class_defines.get(base, frozenset()) & SELF_REPORTS):
                self.note(node, f"gives {node.name} {base}'s own {name}, which the tests read to see what a "
                                f"{reporting} holds")
        for item in node.body:
            for name in class_members([item]):
                if name.startswith("__") and name.endswith("__") and name not in OWN_METHODS:
                    self.note(item, f"gives {node.name} its own {name}")
                elif reporting and name in SELF_REPORTS:
                    self.note(item, f"gives {node.name} its own {name}, which the tests read to see what a "
                                    f"{reporting} holds")
                elif reporting and name in MODE_SWITCHES and not _calls_super(item, name):
                    self.note(item, f"gives {node.name} its own {name}, which never calls torch's: the mode the "
                                    "tests read, and its layers', may stay as they were")
        self.functions.append(("<class>", False, None))
        self.scopes.append(node)
        # `global name` in a class body binds the module's name, as in a function.
        self.declared.append({name for item in node.body if isinstance(item, ast.Global) for name in item.names})
        self.generic_visit(node)
        self.declared.pop()
        self.functions.pop()
        self.scopes.pop()

    def _reporting_class(self, name: str, seen: frozenset = frozenset()) -> str | None:
        """The class of torch's (a module, an optimiser) that the notebook's class `name` derives
        from, directly or through classes of the notebook's own; None if none."""
        for base in self.notebook.class_bases.get(name, []):
            base = full_name(base, self.notebook.aliases)
            if base in self.notebook.class_bases and base not in self.notebook.imported and base not in seen:
                found = self._reporting_class(base, seen | {name})
            else:
                value = resolve(self.full(base))
                found = next((dotted for dotted in REPORTING_CLASSES if isinstance(value, type) and
                              issubclass(value, resolve(dotted))), None)
            if found:
                return found
        return None

    def _own_bases(self, name: str, seen: frozenset = frozenset()) -> set[str]:
        """The notebook's own classes `name` derives from, directly or not."""
        found = set()
        for base in self.notebook.class_bases.get(name, []):
            base = full_name(base, self.notebook.aliases)
            if base in self.notebook.class_bases and base not in self.notebook.imported and base not in seen | {name}:
                found |= {base} | self._own_bases(base, seen | {name})
        return found

    def _reports_written(self, target, value) -> None:
        """self.parameters = ... in the constructor of a module or optimiser of the notebook's:
        the object's own attribute stands in for the method the tests call to list what it holds."""
        if not (isinstance(target, ast.Attribute) and target.attr in SELF_REPORTS and self._in_constructor() and
                _is_self(target.value, self) and self._is_code(value)):
            return
        owner = next((scope for scope in reversed(self.scopes) if isinstance(scope, ast.ClassDef)), None)
        reporting = self._reporting_class(owner.name) if owner is not None else None
        if reporting:
            self.note(target, f"assigns {ast.unparse(target)} as code, where the tests call it to see what a "
                              f"{reporting} holds")

    def visit_MatchClass(self, node):
        """case object(sys=s): each keyword of a class pattern reads the attribute it names."""
        for attr in node.kwd_attrs:
            if (attr.startswith("__") and attr.endswith("__")) or attr in INTERNALS:
                self.note(node, f"reaches .{attr}")
            else:
                self._attribute(node, attr)
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        # case [isinstance]: a builtin bound to anything
        if node.name is not None and node.name in self.notebook.protected:
            self.note(node, f"binds {node.name}, which the tests call, to what the match takes apart")
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name is not None and node.name in self.notebook.protected:
            self.note(node, f"binds {node.name}, which the tests call, to what the match takes apart")
        self.generic_visit(node)


def format_fields(text: str) -> list[str]:
    """The field names of a format string, those in its format specs included ("{0:{1.x}}")."""
    fields = []
    for _, field, spec, _ in string.Formatter().parse(text):
        fields += [field or "", *(format_fields(spec) if spec else [])]
    return fields


def _is_self(node, reader: Reader) -> bool:
    """The first parameter of the method the visit is inside (a constructor's: the object being made)."""
    return isinstance(node, ast.Name) and bool(reader.functions) and reader.functions[-1][1] and \
        node.id == reader.functions[-1][2]


def _calls_super(item, name: str) -> bool:
    """A method `name` that calls super().name(...): it adds to torch's, which still sets the mode."""
    return isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == name and
        isinstance(call.func.value, ast.Call) and dotted_name(call.func.value.func) == "super"
        for call in ast.walk(item))


def _reaching_foreign(node, foreign: set[str]) -> bool:
    root = root_of(node)
    return reaches_namespace(root) or (isinstance(root, ast.Name) and root.id in foreign)
