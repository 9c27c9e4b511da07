"""Inspect a module: what it owns, what it merely holds, and what .to(), .train() and state_dict see.

An nn.Module only knows about what it *registered*: child modules and nn.Parameters assigned as
attributes (Module.__setattr__ files them in `_modules` and `_parameters`), and buffers made with
register_buffer (`_buffers`). Everything else is an ordinary Python attribute: a bare tensor, or a
Python list / dict / tuple of layers. `.parameters()`, `.to()`, `.train()`/`.eval()` and
`state_dict()` walk the registered tree only, so those attributes are silently left out.

Two layers, so the facts can be tested without a browser:

    report = inspect_module(model)       # pure: the tree, every tensor with its kind, totals, notes
    report_html(report)                  # pure: that report as HTML (tree, table, notes)
    ModuleInspector(model)               # ipywidgets wiring: .train()/.eval() and .to(device)
                                         # applied to the model itself, then inspected again

Every fact comes from the module itself: its registries (`_modules`, `_parameters`, `_buffers`),
its `__dict__` for what it holds without registering, and `state_dict()` for what is saved.

DOM hooks for browser tests: the root is `div.module-inspector[data-class][data-training][data-devices]`;
the totals `p.module-inspector-totals[data-trainable][data-frozen][data-buffer-elements]
[data-unregistered-elements][data-state-dict-keys]`; the tree `ul.module-tree` of
`li.module-node[data-module][data-class][data-depth][data-training]` and
`li.plain-container[data-container][data-type]`; the table `table.module-tensors` of
`tr[data-name][data-kind][data-saved][data-trainable][data-device][data-dtype][data-shape]`;
notes `li.module-note[data-note][data-name]`. Nothing loads from a CDN."""
import html
from dataclasses import dataclass

import ipywidgets as widgets
import torch
from torch import nn
from torch.nn.parameter import is_lazy

from utils.formatting import ALARM, attr, data_table, dtype_name, flag, format_shape, shape_attr, td

KINDS = ("parameter", "buffer", "unregistered")
CONTAINER_TYPES = (list, tuple, dict)
# What nn.Module.__init__ puts in every module's __dict__: its registries and hook tables, never user data.
_MODULE_INTERNALS = frozenset(vars(nn.Module()))


@dataclass(frozen=True)
class ModuleNode:
    """One module in the tree."""
    name: str                    # qualified name: "" for the module inspected, "encoder.0" below it
    class_name: str              # "Linear"
    depth: int                   # 0 for the module inspected
    training: bool               # its own .training flag
    alias_of: str | None = None  # the same module object already appears under this name (shared)


@dataclass(frozen=True)
class TensorEntry:
    """One tensor the module owns (parameter, buffer) or merely holds (unregistered)."""
    name: str                    # qualified: "layer1.weight"; through a plain container "extras[0].weight"
    owner: str                   # qualified name of the module whose attribute it is ("" = the module inspected)
    kind: str                    # "parameter" | "buffer" | "unregistered"
    shape: tuple[int, ...] | None  # None for a lazy module's uninitialised parameter
    dtype: str                   # "float32"
    device: str                  # "cpu", "meta", "cuda:0"
    trainable: bool              # requires_grad
    saved: bool                  # its name is a key of state_dict()
    numel: int
    container: str | None = None  # the plain list/dict/tuple attribute it sits in, if any: "extras"
    alias_of: str | None = None   # the same tensor object already appears under this name (tied weights)


@dataclass(frozen=True)
class PlainContainer:
    """A Python list, tuple or dict attribute holding modules or tensors the module never registered."""
    name: str                    # qualified attribute: "extras", "block.heads"
    owner: str                   # qualified name of the module holding the attribute
    type_name: str               # "list" | "tuple" | "dict"
    depth: int                   # the depth of the modules in it: its owner's depth + 1
    modules: tuple[ModuleNode, ...]  # the modules in it and their submodules: "extras[0]", "extras[0].act"
    tensors: int                 # bare tensors directly in it
    parameter_elements: int      # elements of the parameters of its modules: never seen by .parameters()


@dataclass(frozen=True)
class Note:
    """One problem found, in a sentence."""
    kind: str                    # "plain-container" | "bare-tensor" | "devices"
    name: str                    # the attribute it is about ("extras", "scale"); for "devices", "cpu,meta"
    text: str


@dataclass(frozen=True)
class ModuleReport:
    """Everything inspect_module found, in the order state_dict() would list it."""
    class_name: str
    nodes: tuple[ModuleNode, ...]          # the registered tree, as named_modules(remove_duplicate=False)
    tensors: tuple[TensorEntry, ...]       # parameters and buffers in state_dict() order, then the unregistered
    containers: tuple[PlainContainer, ...]
    trainable_parameters: int              # elements, each parameter once (as .parameters() counts them)
    frozen_parameters: int                 # elements of parameters with requires_grad=False
    buffer_elements: int                   # elements of all buffers, persistent or not
    unregistered_elements: int             # elements of the tensors the module cannot see
    state_dict_keys: tuple[str, ...]
    notes: tuple[Note, ...]                # one per problem found

    @property
    def parameters(self) -> int:
        return self.trainable_parameters + self.frozen_parameters

    def entry(self, name: str) -> TensorEntry:
        """The tensor entry with this qualified name."""
        for e in self.tensors:
            if e.name == name:
                return e
        raise KeyError(name)

    def names(self, kind: str) -> tuple[str, ...]:
        """Qualified names of the entries of one kind, in order."""
        if kind not in KINDS:
            raise ValueError(f"kind is one of {KINDS}, not {kind!r}")
        return tuple(e.name for e in self.tensors if e.kind == kind)

    @property
    def devices(self) -> tuple[str, ...]:
        """The devices the module's tensors sit on, registered or not, in order of appearance."""
        return tuple(dict.fromkeys(e.device for e in self.tensors))


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _numel(t: torch.Tensor) -> int:
    return 0 if is_lazy(t) else t.numel()


class _Walk:
    """One walk over a module: collects nodes, tensor entries and plain containers."""

    def __init__(self, root: nn.Module):
        self.saved = set(root.state_dict(keep_vars=True))
        self.registered_modules = {id(m) for m in root.modules()}
        self.registered_tensors = {id(t) for t in root.parameters()} | {id(b) for b in root.buffers()}
        self.nodes: list[ModuleNode] = []
        self.tensors: list[TensorEntry] = []
        self.containers: list[PlainContainer] = []
        self.seen_modules: dict[int, str] = {}
        self.seen_tensors: dict[int, str] = {}

    def entry(self, t: torch.Tensor, name: str, owner: str, kind: str, container: str | None):
        self.tensors.append(TensorEntry(
            name=name, owner=owner, kind=kind, shape=None if is_lazy(t) else tuple(t.shape),
            dtype=dtype_name(t.dtype), device=str(t.device), trainable=t.requires_grad,
            saved=name in self.saved and kind != "unregistered", numel=_numel(t),
            container=container, alias_of=self.seen_tensors.get(id(t))))
        self.seen_tensors.setdefault(id(t), name)

    def module(self, mod: nn.Module, name: str, depth: int, nodes: list, container: str | None = None):
        """Visit mod (reached as `name`) and, like state_dict(), every child it registered."""
        nodes.append(ModuleNode(name, type(mod).__name__, depth, mod.training, self.seen_modules.get(id(mod))))
        self.seen_modules.setdefault(id(mod), name)
        hidden = container is not None  # reached through a plain container: nothing in it is registered
        for kind, registry in (("parameter", mod._parameters), ("buffer", mod._buffers)):
            for key, t in registry.items():
                if t is not None:       # register_parameter("bias", None): nothing to show or save
                    self.entry(t, _join(name, key), name, "unregistered" if hidden else kind, container)
        for key, value in vars(mod).items():
            if key in _MODULE_INTERNALS:
                continue
            if isinstance(value, torch.Tensor):
                if id(value) not in self.registered_tensors:  # a second reference to a parameter is harmless
                    self.entry(value, _join(name, key), name, "unregistered", container)
            elif isinstance(value, CONTAINER_TYPES):
                self.plain_container(value, _join(name, key), name, depth, container)
        for key, child in mod._modules.items():
            if child is not None:
                self.module(child, _join(name, key), depth + 1, nodes, container)

    def plain_container(self, value, name: str, owner: str, depth: int, outer: str | None):
        """Visit a list / tuple / dict attribute: the modules and tensors in it are invisible to `owner`."""
        within = outer or name  # deep inside a hidden module, entries keep the outermost container's name
        modules: list[ModuleNode] = []
        tensors, elements, seen = 0, 0, set()
        for key, item in (value.items() if isinstance(value, dict) else enumerate(value)):
            label = f"{name}[{key!r}]"
            if isinstance(item, nn.Module) and id(item) not in self.registered_modules:
                self.module(item, label, depth + 1, modules, within)
                for p in item.parameters():
                    if id(p) not in seen:
                        seen.add(id(p))
                        elements += _numel(p)
            elif isinstance(item, torch.Tensor) and id(item) not in self.registered_tensors:
                self.entry(item, label, owner, "unregistered", within)
                tensors += 1
        if modules or tensors:
            self.containers.append(PlainContainer(name, owner, type(value).__name__, depth + 1, tuple(modules),
                                                  tensors, elements))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _notes(tensors, containers, devices) -> tuple[Note, ...]:
    notes = []
    for c in containers:
        if c.modules:
            tops = [m for m in c.modules if m.depth == c.depth]  # the items, not their children
            kinds = ", ".join(m.class_name for m in tops)
            fix = "nn.ModuleDict" if c.type_name == "dict" else "nn.ModuleList"
            notes.append(Note("plain-container", c.name, (
                f"{c.name} is a plain Python {c.type_name} holding {_count(len(tops), 'module')} ({kinds}): "
                f"their {c.parameter_elements} parameter elements are invisible to .parameters() "
                f"(so to the optimiser), .to(), .train()/.eval() and state_dict(). Use {fix}.")))
        if c.tensors:
            notes.append(Note("plain-container", c.name, (
                f"{c.name} is a plain Python {c.type_name} holding {_count(c.tensors, 'tensor')}: "
                f"not moved by .to(), not saved. Use nn.ParameterList / nn.ParameterDict for trained "
                f"tensors, or one register_buffer each.")))
    notes.extend(Note("bare-tensor", e.name,
                      f"{e.name} is a bare tensor attribute: .to() leaves it on {e.device} and state_dict() "
                      f"does not save it. Register it with register_buffer (or make it an nn.Parameter "
                      f"if it should be trained).")
                 for e in tensors if e.kind == "unregistered" and e.container is None)
    if len(devices) > 1:
        notes.append(Note("devices", ",".join(devices),
                          f"The tensors sit on more than one device ({', '.join(devices)}): an operation that "
                          f"mixes them raises a device error."))
    return tuple(notes)


def inspect_module(module: nn.Module) -> ModuleReport:
    """Describe `module`: its registered tree, each parameter / buffer / unregistered tensor, and totals."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"inspect_module takes an nn.Module, not {type(module).__name__}")
    walk = _Walk(module)
    walk.module(module, "", 0, walk.nodes)
    params = list(module.parameters())  # each parameter once, as an optimiser would get them
    # registered first, in state_dict() order (non-persistent buffers in their place); then the rest
    tensors = tuple(sorted(walk.tensors, key=lambda e: e.kind == "unregistered"))
    devices = tuple(dict.fromkeys(e.device for e in tensors))
    return ModuleReport(
        class_name=type(module).__name__, nodes=tuple(walk.nodes), tensors=tensors,
        containers=tuple(walk.containers),
        trainable_parameters=sum(_numel(p) for p in params if p.requires_grad),
        frozen_parameters=sum(_numel(p) for p in params if not p.requires_grad),
        buffer_elements=sum(_numel(b) for b in module.buffers()),
        unregistered_elements=sum(e.numel for e in tensors if e.kind == "unregistered" and e.alias_of is None),
        state_dict_keys=tuple(module.state_dict(keep_vars=True)),
        notes=_notes(tensors, walk.containers, devices))


# ---- HTML: the tree, then one table row per tensor, with data- hooks for browser tests ----

UNINITIALISED = "uninitialised"   # the shape of a lazy module's parameter before its first forward


def meaning(e: TensorEntry) -> str:
    """What the tensor's kind means for training, .to() and saving, in a few words."""
    if e.kind == "parameter":
        return ("trained by the optimiser, moved by .to(), saved" if e.trainable
                else "frozen (requires_grad=False): moved and saved, gets no gradient")
    if e.kind == "buffer":
        return "moved by .to(), saved, never trained" if e.saved else "moved by .to(), not saved (persistent=False)"
    if e.container is not None:
        return f"held through {e.container}, a plain container: unseen by .parameters(), not moved, not saved"
    return "a bare attribute: unseen by the module, not moved, not saved"


_KIND_STYLE = {"parameter": "background:#e7f5e7", "buffer": "background:#e8effa", "unregistered": ALARM}
COLUMNS = ("name", "kind", "shape", "dtype", "device", "trainable", "saved", "elements", "what it means")


def _row_html(e: TensorEntry) -> str:
    alias = f" (same tensor as {e.alias_of})" if e.alias_of else ""
    shape = UNINITIALISED if e.shape is None else format_shape(e.shape)
    cells = (e.name + alias, e.kind, shape, e.dtype, e.device,
             "yes" if e.trainable else "no", "yes" if e.saved else "no", f"{e.numel:,}", meaning(e))
    return (f'<tr data-name="{attr(e.name)}" data-kind="{e.kind}" data-saved="{flag(e.saved)}" '
            f'data-trainable="{flag(e.trainable)}" data-device="{attr(e.device)}" data-dtype="{e.dtype}" '
            f'data-shape="{UNINITIALISED if e.shape is None else shape_attr(e.shape)}" '
            f'style="{_KIND_STYLE[e.kind]}">{"".join(td(c) for c in cells)}</tr>')


def _node_html(n: ModuleNode, hidden: bool = False) -> str:
    label = html.escape(n.name or "(the module)")
    alias = f" &mdash; the same module as {html.escape(n.alias_of)}" if n.alias_of else ""
    mode = "training" if n.training else "eval"
    cls, color = ("module-node hidden-module", "color:#b3261e;") if hidden else ("module-node", "")
    indent = 1.5 * (n.depth + hidden)  # a hidden module sits under the line of its container
    return (f'<li class="{cls}" data-module="{attr(n.name)}" data-class="{attr(n.class_name)}" '
            f'data-depth="{n.depth}" data-training="{flag(n.training)}" style="{color}margin-left:{indent}em">'
            f'<code>{label}</code>: {html.escape(n.class_name)} <span style="color:#777">({mode})</span>'
            f'{alias}</li>')


def _container_html(c: PlainContainer) -> str:
    items = [m for m in c.modules if m.depth == c.depth]
    what = " and ".join(x for x in (_count(len(items), "module") if items else "",
                                      _count(c.tensors, "tensor") if c.tensors else "") if x)
    return (f'<li class="plain-container" data-container="{attr(c.name)}" data-type="{c.type_name}" '
            f'data-parameter-elements="{c.parameter_elements}" style="color:#b3261e;margin-left:{1.5 * c.depth}em">'
            f'<code>{html.escape(c.name)}</code>: a plain Python {c.type_name} of {what}, not registered</li>')


def _tree_html(report: ModuleReport) -> str:
    """The registered tree; under its owner, each plain container and the modules hidden in it."""
    by_owner: dict[str, list[PlainContainer]] = {}
    for c in report.containers:
        by_owner.setdefault(c.owner, []).append(c)
    lines: list[str] = []

    def containers_of(owner: str):
        for c in by_owner.get(owner, ()):
            lines.append(_container_html(c))
            for m in c.modules:
                lines.append(_node_html(m, hidden=True))
                containers_of(m.name)

    for node in report.nodes:
        lines.append(_node_html(node))
        containers_of(node.name)
    return '<ul class="module-tree" style="list-style:none;padding-left:0;margin:4px 0">' + "".join(lines) + "</ul>"


def report_html(report: ModuleReport, action: str | None = None) -> str:
    """A report as HTML: what was just done (if anything), totals, notes, the tree and the tensor table."""
    root = report.nodes[0]
    top = (f'<div class="module-inspector" data-class="{attr(report.class_name)}" '
           f'data-training="{flag(root.training)}" data-devices="{attr(",".join(report.devices))}">')
    parts = [top]
    if action:
        parts.append(f'<p class="module-inspector-action"><b>{html.escape(action)}</b></p>')
    parts.append(
        f'<p class="module-inspector-totals" data-trainable="{report.trainable_parameters}" '
        f'data-frozen="{report.frozen_parameters}" data-buffer-elements="{report.buffer_elements}" '
        f'data-unregistered-elements="{report.unregistered_elements}" '
        f'data-state-dict-keys="{len(report.state_dict_keys)}">'
        f'<b>{report.parameters:,}</b> parameter elements ({report.trainable_parameters:,} trainable, '
        f'{report.frozen_parameters:,} frozen) &middot; <b>{report.buffer_elements:,}</b> buffer elements '
        f'&middot; <b>{len(report.state_dict_keys)}</b> state_dict keys &middot; '
        f'<b>{report.unregistered_elements:,}</b> elements the module cannot see</p>')
    if report.notes:
        parts.append('<ul class="module-inspector-notes">' + "".join(
            f'<li class="module-note" data-note="{n.kind}" data-name="{attr(n.name)}" style="color:#b3261e">'
            f'{html.escape(n.text)}</li>' for n in report.notes) + "</ul>")
    parts.append('<p style="margin:8px 0 2px"><b>Submodules</b>: the registered tree; in red, what the module '
                 'holds without registering</p>')
    parts.append(_tree_html(report))
    parts.append('<p style="margin:8px 0 2px"><b>Tensors</b>: parameters and buffers in the order '
                 'state_dict() lists them, then, in red, the tensors the module cannot see</p>')
    parts.append(data_table("module-tensors", COLUMNS, (_row_html(e) for e in report.tensors)) + "</div>")
    return "".join(parts)


def module_html(module: nn.Module) -> str:
    """inspect_module(module) as HTML."""
    return report_html(inspect_module(module))


# ---- the widget: .train()/.eval() and .to(device) applied to the module, then inspected again ----

def default_devices() -> tuple[str, ...]:
    """cpu, this machine's accelerator if it has one, and meta (shapes and dtypes, no data)."""
    devices = ["cpu"]
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and accelerator.is_available():
        devices.append(accelerator.current_accelerator().type)
    return (*devices, "meta")


def _registered(module: nn.Module):
    yield from module.named_parameters(remove_duplicate=False)
    yield from module.named_buffers(remove_duplicate=False)


def module_device(module: nn.Module) -> str | None:
    """The device of the module's first parameter or buffer (None if it has neither)."""
    for _, t in _registered(module):
        return str(t.device)
    return None


class ModuleInspector(widgets.VBox):
    """Show a module's tree and tensors; switch it between .train() and .eval(), move it with .to().

    The controls act on the module itself (like calling the methods in a cell), then inspect it again.
    Moving to meta keeps a copy of the registered values, so that moving back restores them: a meta tensor
    has no data, and PyTorch refuses .to() out of meta (the note shown says so)."""

    def __init__(self, module: nn.Module, devices: tuple[str, ...] | None = None):
        if not isinstance(module, nn.Module):
            raise TypeError(f"ModuleInspector takes an nn.Module, not {type(module).__name__}")
        self.module = module
        options = list(default_devices() if devices is None else devices)
        current = module_device(module) or options[0]
        here = torch.device(current)
        match = next((d for d in options if torch.device(d) == here
                      or (torch.device(d).index is None and torch.device(d).type == here.type)), None)
        if match is None:
            options.append(match := current)
        self._kept: dict[str, torch.Tensor] | None = None  # values kept while the module is on meta
        self.action: str | None = None
        self.report: ModuleReport | None = None
        self.mode_picker = widgets.Dropdown(options=[(".train()", "train"), (".eval()", "eval")],
                                            value="train" if module.training else "eval", description="mode")
        self.device_picker = widgets.Dropdown(options=[(f".to({d!r})", d) for d in options], value=match,
                                              description="device")
        self.view = widgets.HTML()
        super().__init__([widgets.HBox([self.mode_picker, self.device_picker]), self.view])
        self.mode_picker.observe(self._set_mode, names="value")
        self.device_picker.observe(self._move, names="value")
        self.refresh()

    def _set_mode(self, change):
        self.module.train(change["new"] == "train")
        self.action = f"ran module.{change['new']}()"
        self.refresh()

    def _move(self, change):
        target = torch.device(change["new"])
        if target.type == "meta":  # keep the values, so that moving back can restore them
            self._kept = {name: t.detach().clone() for name, t in _registered(self.module)
                          if t.device.type != "meta"} or self._kept
        try:
            self.module.to(target)
            self.action = f"ran module.to({change['new']!r})"
        except NotImplementedError as exc:  # "Cannot copy out of meta tensor; no data! ..."
            self.module.to_empty(device=target)
            restored = self._restore()
            first = str(exc).split("!")[0] + "!"
            self.action = (f"module.to({change['new']!r}) raised NotImplementedError: {first} So the inspector ran "
                           f"module.to_empty(device={change['new']!r})"
                           + (" and copied back the values it kept before the move to meta." if restored
                              else ": the values are uninitialised memory."))
        except Exception as exc:  # a device this machine cannot use: say so, and show the module as it is
            first = (str(exc).splitlines() or [""])[0]
            self.action = f"module.to({change['new']!r}) raised {type(exc).__name__}: {first}"
        self.refresh()

    def _restore(self) -> bool:
        if not self._kept:
            return False
        with torch.no_grad():
            for name, t in _registered(self.module):
                if name in self._kept:
                    t.copy_(self._kept[name])
        self._kept = None
        return True

    def refresh(self, change=None):
        """Inspect the module again (after you changed it in a cell) and redraw."""
        self.report = inspect_module(self.module)
        self.view.value = report_html(self.report, self.action)
