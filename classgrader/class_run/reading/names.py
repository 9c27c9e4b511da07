"""The reader's rules for what a name reaches: imports; names and attributes read (the course's
list; a module or a class handed on where the reading does not follow it; a switch taken as a
value); format strings, which read attributes by name; texts naming the process's own files;
code that singles out the meta device; class patterns, which read attributes too."""
import ast
import builtins
import string
import types

from classgrader.class_run import allow_list
from classgrader.class_run.reading.resolving import (
    class_names,
    dotted_name,
    module_exists,
    resolve,
)
from classgrader.class_run.reading.rules import (
    CLASS_WRITERS,
    FORMATTING,
    IMMUTABLE,
    INTERNALS,
    MATRIX_BUILDERS,
    PLAIN_DUNDERS,
    PROCESS_FILE_PARTS,
    PROCESS_FILES,
    REFLECTION,
    SESSION_SWITCHES,
)
from classgrader.class_run.reading.walk import Walk


class NameReading(Walk):
    """Walk, and what each name, attribute and import reaches."""

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

    @staticmethod
    def _is_array_class(value) -> bool:
        return isinstance(value, type) and issubclass(value, resolve("numpy.ndarray"))

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

    def visit_Constant(self, node):
        """A text naming the process's own files: open("/proc/self/environ") reads what os.environ
        is refused for, and a path joined from parts ("proc", "environ") names the same file."""
        text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        if isinstance(text, str) and (text.strip().startswith(PROCESS_FILES) or
                                      text.strip().strip("/") in PROCESS_FILE_PARTS):
            self.note(node, f"names {text.strip()[:40]!r}, the process's own files")

    def _singles_out_meta(self, node, values) -> None:
        """The grader runs answers on meta where it has no accelerator: code that asks whether a
        device is meta can behave one way there and another on a real one."""
        for value in values:
            parts = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
            if any(isinstance(part, ast.Constant) and part.value == "meta" for part in parts):
                self.note(node, "singles out the meta device, on which the grader stands in for an accelerator")
                return

    def visit_Compare(self, node):
        self._singles_out_meta(node, [node.left, *node.comparators])
        self.generic_visit(node)

    def visit_MatchValue(self, node):
        self._singles_out_meta(node, [node.value])
        self.generic_visit(node)

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
