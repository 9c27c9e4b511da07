"""The reader's rules for calls: the keywords a call may be given (torch.load's weights_only),
magics called by name, attributes named by keywords or a mapping, a backend or a file position it
computes, arrays made over another's memory, attributes copied onto what is not the notebook's
own, and grad modes switched for the rest of the session."""
import ast
import builtins

from classgrader.class_run import allow_list, own_reads
from classgrader.class_run.reading.cells import python_of
from classgrader.class_run.reading.names import NameReading
from classgrader.class_run.reading.resolving import (
    dotted_name,
    full_name,
    named_read,
    reaches_namespace,
    resolve,
    root_of,
)
from classgrader.class_run.reading.rules import (
    ATTRIBUTE_MAKERS,
    CLASS_WRITERS,
    MUTATORS,
    PLAIN_MAGICS,
    SESSION_SWITCHES,
)
from classgrader.class_run.reading.walk import is_self


class CallReading(NameReading):
    """NameReading, and what each call is given and does."""

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
                not (args and is_self(args[0], self) and self._in_constructor()):
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

    def _reads_own(self, node) -> bool:
        """getattr by a computed name that reads only the student's own object (own_reads)."""
        scope = self.scopes[-1] if self.scopes else None
        in_class = bool(self.functions) and self.functions[-1][1]
        return own_reads.own_layer(node, scope, in_class, self.notebook.templates, self.notebook.own) or \
            own_reads.dataclass_field(node, scope, self.full, self.notebook.plain_imports)

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

    def _switch(self, node) -> None:
        """A grad mode or a default switched anywhere but for a block (a with, a decorator): for
        the rest of the session, the tests' code included."""
        if self.full(dotted_name(node.func) or "").split(".")[-1] in SESSION_SWITCHES and id(node) not in self.blocks:
            self.note(node, f"switches {self.full(dotted_name(node.func) or '')} for the rest of the session")
