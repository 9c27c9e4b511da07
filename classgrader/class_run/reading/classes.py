"""The reader's rules for the notebook's own classes: a subclass of torch's tensor, a metaclass,
a dunder of its own, and a module or optimiser that defines, or assigns as code, what the tests
read to see what it holds (parameters, state_dict, training), or a train or eval that never
calls torch's, and a subclass of one of torch's layers that redefines what the layer computes or
a name the layer holds."""
import ast
import functools
import inspect
import textwrap

from classgrader.class_run.reading.calls import CallReading
from classgrader.class_run.reading.facts import class_members
from classgrader.class_run.reading.resolving import (
    dotted_name,
    full_name,
    resolve,
)
from classgrader.class_run.reading.rules import (
    LAYER_COMPUTES,
    LAYER_SETUP,
    METACLASSES,
    MODE_SWITCHES,
    OWN_METHODS,
    REPORTING_CLASSES,
    SELF_REPORTS,
    TENSOR_CLASSES,
)
from classgrader.class_run.reading.walk import is_self


class ClassReading(CallReading):
    """CallReading, and what each class of the notebook's defines."""

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
        layer = self._layer_class(node.name)
        redefined = LAYER_COMPUTES | _layer_holds(resolve(self.full(layer))) if layer else frozenset()
        for base in self._own_bases(node.name) if layer else ():  # class Dense(Bias, nn.Linear)
            for name in sorted(self.notebook.class_defines.get(base, frozenset()) & redefined):
                self.note(node, f"gives {node.name}, a subclass of {layer}, {base}'s own {name}, "
                                + _layer_taken(layer, name))
        for item in node.body:
            for name in class_members([item]):
                if layer and name in redefined:
                    self.note(item, f"gives {node.name}, a subclass of {layer}, its own {name}, "
                                    + _layer_taken(layer, name))
                elif name.startswith("__") and name.endswith("__") and name not in OWN_METHODS:
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

    def _base_name(self, base) -> str:
        """A base class's dotted name, through aliases (Base = torch.Tensor)."""
        name = dotted_name(base) or ""
        for _ in range(3):  # aliases of aliases
            head, _, rest = name.partition(".")
            if head not in self.notebook.aliases or self.notebook.aliases[head] == head:
                break
            name = ".".join(filter(None, [self.notebook.aliases[head], rest]))
        return name

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

    def _layer_class(self, name: str, seen: frozenset = frozenset()) -> str | None:
        """The layer of torch's (a module class of torch.nn with a forward of its own, not a
        container) that the notebook's class `name` derives from, directly or through classes of
        the notebook's own; None if none."""
        for base in self.notebook.class_bases.get(name, []):
            base = full_name(base, self.notebook.aliases)
            if base in self.notebook.class_bases and base not in self.notebook.imported and base not in seen:
                found = self._layer_class(base, seen | {name})
            else:
                found = base if _is_layer(resolve(self.full(base))) else None
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
        the object's own attribute stands in for the method the tests call to list what it holds;
        self.forward = ... in a subclass of a layer of torch's, for what the layer computes."""
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                target.value.id in self.notebook.class_bases and target.value.id not in self.notebook.imported:
            self._member_written(target)
        if not (isinstance(target, ast.Attribute) and target.attr in SELF_REPORTS | LAYER_COMPUTES and
                self._in_constructor() and is_self(target.value, self) and self._is_code(value)):
            return
        owner = next((scope for scope in reversed(self.scopes) if isinstance(scope, ast.ClassDef)), None)
        if owner is None:
            return
        if target.attr in LAYER_COMPUTES:
            layer = self._layer_class(owner.name)
            if layer:
                self.note(target, f"assigns {ast.unparse(target)} as code in {owner.name}, a subclass of {layer}, "
                                  + _layer_taken(layer))
            return
        reporting = self._reporting_class(owner.name)
        if reporting:
            self.note(target, f"assigns {ast.unparse(target)} as code, where the tests call it to see what a "
                              f"{reporting} holds")

    def _member_written(self, target: ast.Attribute) -> None:
        """Dense.bias = property(...) after the class's body: a member as the body would define it,
        held to the same rules (whatever the value: a property is no code the reading can see)."""
        owner = target.value.id  # type: ignore[attr-defined]
        layer = self._layer_class(owner)
        if layer and target.attr in LAYER_COMPUTES | _layer_holds(resolve(self.full(layer))):
            self.note(target, f"assigns {owner}.{target.attr}, a member of {owner}, a subclass of {layer}, "
                              + _layer_taken(layer, target.attr))
            return
        reporting = self._reporting_class(owner)
        if reporting and target.attr in SELF_REPORTS:
            self.note(target, f"assigns {owner}.{target.attr}, which the tests read to see what a {reporting} holds")


def _calls_super(item, name: str) -> bool:
    """A method `name` that calls super().name(...): it adds to torch's, which still sets the mode."""
    return isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == name and
        isinstance(call.func.value, ast.Call) and dotted_name(call.func.value.func) == "super"
        for call in ast.walk(item))


def _is_layer(value) -> bool:
    """A module class of torch.nn that computes something of its own (nn.Linear, nn.ReLU), not
    nn.Module itself nor a container (nn.Sequential, nn.ModuleList)."""
    import torch.nn as nn
    return (isinstance(value, type) and issubclass(value, nn.Module) and value.__module__.startswith("torch.nn.")
            and value.forward is not nn.Module.forward and not value.__module__.endswith(".container"))


@functools.cache
def _layer_holds(layer) -> frozenset[str]:
    """The names a layer of torch's defines below nn.Module, or its constructors set on the
    instance (self.weight = ..., register_buffer("running_mean", ...)), but those that only set
    it up (LAYER_SETUP) and dunders: the names its forward reads, which a member of a subclass
    (a property `bias`) would answer in its place."""
    import torch.nn as nn
    names: set[str] = set()
    for klass in layer.__mro__ if isinstance(layer, type) else ():
        if klass in (nn.Module, object):
            break
        names |= set(vars(klass)) | set(getattr(klass, "__annotations__", {}))
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        names |= _set_on_self(tree)
    return frozenset(name for name in names - LAYER_SETUP if not name.startswith("__"))


def _set_on_self(tree: ast.AST) -> set[str]:
    """Names a class's code sets on `self`: assigned, or registered by a constant name."""
    names = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
                and node.value.id == "self"):
            names.add(node.attr)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("register_buffer", "register_parameter", "register_module", "add_module")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return names


def _layer_taken(layer: str, name: str = "forward") -> str:
    what = "what they expect with it" if name in LAYER_COMPUTES else f"what they expect from its {name}"
    return f"where the tests take a {layer} they find in a model for torch's own and compute {what}"
