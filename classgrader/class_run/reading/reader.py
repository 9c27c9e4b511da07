"""One cell's tree walked against the rules (rules.py, allowed.toml): each finding a line and what
it reaches, rewrites or pretends, in the words the flag shows an instructor.

The Reader is built in layers, a file each, every one adding a family of rules to the one below:
walk.py (the state and the rules the others share), names.py, calls.py, classes.py; here, what
an assignment, a loop, a `with` or a definition binds or writes, and generators that hold a
context open across a yield."""
import ast

from classgrader.class_run import allow_list
from classgrader.class_run.reading import in_place
from classgrader.class_run.reading.classes import ClassReading
from classgrader.class_run.reading.resolving import (
    dotted_name,
    reaches_namespace,
    root_of,
)
from classgrader.class_run.reading.rules import (
    CONTEXT_MANAGERS,
    HELD_HARMLESSLY,
    SESSION_SWITCHES,
    SETTINGS,
    UNKNOWN,
)
from classgrader.class_run.reading.walk import is_self


class Reader(ClassReading):
    """Every rule: ClassReading, and what each binding and definition writes."""

    def visit_With(self, node):
        self.blocks.update(id(item.context_expr) for item in node.items)  # with torch.no_grad(): a block
        for item in node.items:  # with nullcontext(lambda a, b: True) as isinstance: ...
            if isinstance(item.optional_vars, ast.Name) and any(
                    isinstance(inner, ast.Lambda) or (isinstance(inner, ast.Name) and inner.id in self.notebook.defined)
                    for inner in ast.walk(item.context_expr)):
                self._rebinds(node, item.optional_vars.id, ast.Lambda())
        self.generic_visit(node)

    visit_AsyncWith = visit_With

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
                    self._is_code(value) and not (self._in_constructor() and is_self(target.value, self)):
                self.note(target, f"{verb} .{target.attr}, the name of a method of torch or of the checks, as code")
            elif isinstance(target, ast.Attribute) and target.attr in self.notebook.methods and \
                    isinstance(root, ast.Name) and root.id in self._parameters() and not is_self(target.value, self):
                self.note(target, f"{verb} {shown}, the name of a method of torch or of the checks, "
                                  "on an object handed in")
            elif isinstance(root, ast.Name) and root.id in self.notebook.course_defined and self._is_code(value):
                self.note(target, f"{verb} {shown}, which the course's own cells define, as code")
            self._reports_written(target, value)
            if isinstance(target, ast.Attribute) and target.attr in allow_list.private_hooks():
                self.note(target, f"{verb} {shown}, a table of hooks torch's objects run")

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
