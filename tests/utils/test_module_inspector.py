"""The module inspector: exact reports on small known modules, agreement with PyTorch's own walks, then the widget.

Covers inspect_module (the registered tree and training flags; parameters, frozen parameters, persistent and
non-persistent buffers, BatchNorm1d's buffers with num_batches_tracked; bare tensor attributes; Python lists, tuples
and dicts of modules or tensors; nn.ModuleList; tied weights and shared modules; lazy parameters; what .to("meta")
moves and what it leaves behind; that second references to registered tensors are not flagged), agreement with
named_parameters / named_buffers / state_dict on stock modules, report_html (the data- hooks), and ModuleInspector
(setting mode_picker and device_picker changes the module itself and redraws view.value; refresh())."""
import pytest
import torch
from torch import nn

from utils.module_inspector import (
    KINDS,
    ModuleInspector,
    ModuleNode,
    ModuleReport,
    Note,
    PlainContainer,
    TensorEntry,
    default_devices,
    inspect_module,
    meaning,
    module_device,
    module_html,
    report_html,
)


def E(name, kind, shape, *, owner="", trainable=None, saved=None, dtype="float32", device="cpu",
      container=None, alias_of=None):
    """An expected TensorEntry; trainable and saved default to what the kind usually means."""
    numel = 1
    for n in shape:
        numel *= n
    return TensorEntry(name=name, owner=owner, kind=kind, shape=shape, dtype=dtype, device=device,
                       trainable=(kind == "parameter") if trainable is None else trainable,
                       saved=(kind != "unregistered") if saved is None else saved, numel=numel,
                       container=container, alias_of=alias_of)


class Small(nn.Module):
    """One of each case the lesson teaches."""

    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(2, 3)
        self.scale = nn.Parameter(torch.ones(3), requires_grad=False)           # frozen parameter
        self.register_buffer("mean", torch.zeros(3))                             # persistent buffer
        self.register_buffer("cache", torch.zeros(2, 2), persistent=False)       # not saved
        self.offset = torch.ones(3)                                              # bare tensor: unregistered
        self.heads = [nn.Linear(3, 1), nn.Linear(3, 1)]                          # plain list: invisible

    def forward(self, x):
        h = self.layer1(x) * self.scale + self.offset - self.mean
        return torch.cat([head(h) for head in self.heads], dim=-1)


HEADS_NOTE = ("heads is a plain Python list holding 2 modules (Linear, Linear): their 8 parameter elements are "
              "invisible to .parameters() (so to the optimiser), .to(), .train()/.eval() and state_dict(). "
              "Use nn.ModuleList.")
OFFSET_NOTE = ("offset is a bare tensor attribute: .to() leaves it on cpu and state_dict() does not save it. "
               "Register it with register_buffer (or make it an nn.Parameter if it should be trained).")


def small_report(device="cpu", training=True) -> ModuleReport:
    """The exact report of Small() after .to(device) and .train(training)."""
    hidden = {"container": "heads", "saved": False, "trainable": True}  # the plain list stays on cpu, in training
    notes = (Note("plain-container", "heads", HEADS_NOTE), Note("bare-tensor", "offset", OFFSET_NOTE))
    if device != "cpu":
        notes += (Note("devices", f"{device},cpu", f"The tensors sit on more than one device ({device}, cpu): "
                       "an operation that mixes them raises a device error."),)
    return ModuleReport(
        class_name="Small",
        nodes=(ModuleNode("", "Small", 0, training), ModuleNode("layer1", "Linear", 1, training)),
        tensors=(E("scale", "parameter", (3,), trainable=False, device=device),
                 E("mean", "buffer", (3,), device=device),
                 E("cache", "buffer", (2, 2), saved=False, device=device),
                 E("layer1.weight", "parameter", (3, 2), owner="layer1", device=device),
                 E("layer1.bias", "parameter", (3,), owner="layer1", device=device),
                 E("offset", "unregistered", (3,)),
                 E("heads[0].weight", "unregistered", (1, 3), owner="heads[0]", **hidden),
                 E("heads[0].bias", "unregistered", (1,), owner="heads[0]", **hidden),
                 E("heads[1].weight", "unregistered", (1, 3), owner="heads[1]", **hidden),
                 E("heads[1].bias", "unregistered", (1,), owner="heads[1]", **hidden)),
        containers=(PlainContainer("heads", "", "list", 1, (ModuleNode("heads[0]", "Linear", 1, True),
                                                            ModuleNode("heads[1]", "Linear", 1, True)), 0, 8),),
        trainable_parameters=9, frozen_parameters=3, buffer_elements=7, unregistered_elements=11,
        state_dict_keys=("scale", "mean", "layer1.weight", "layer1.bias"), notes=notes[:2] + notes[2:])


def test_exact_report_of_a_module_with_every_case(covered):
    model = Small()
    r = inspect_module(model)
    assert r == small_report()
    assert r.parameters == 12 == sum(p.numel() for p in model.parameters())
    assert r.state_dict_keys == tuple(model.state_dict())
    assert r.names("parameter") == ("scale", "layer1.weight", "layer1.bias")
    assert r.names("buffer") == ("mean", "cache") == tuple(n for n, _ in model.named_buffers())
    assert r.entry("cache").saved is False and r.entry("scale").trainable is False
    assert len(list(model.parameters())) == 3          # the two heads' 4 tensors are missing
    with pytest.raises(KeyError):
        r.entry("heads.0.weight")
    with pytest.raises(ValueError, match="kind is one of"):
        r.names("param")
    covered("exact report: frozen parameter, (non-)persistent buffers, bare tensor, Python list of Linear")


def test_to_meta_moves_what_is_registered_and_leaves_the_rest(covered):
    model = Small()
    model.to("meta")
    assert inspect_module(model) == small_report(device="meta")
    assert (model.layer1.weight.device.type, model.offset.device.type, model.heads[0].weight.device.type) == (
        "meta", "cpu", "cpu")   # (the lesson shows forward failing on the tensor left behind)
    covered("to('meta'): parameters and buffers move; the bare tensor and the plain list stay on cpu")


def test_eval_reaches_registered_children_only():
    model = Small()
    model.eval()
    r = inspect_module(model)
    assert r == small_report(training=False)
    assert [m.training for m in r.containers[0].modules] == [True, True]   # the plain list never heard of it
    model.train()
    assert inspect_module(model) == small_report()


def test_module_list_registers_and_names_with_dots():
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(2, 2, bias=False), nn.ReLU(), nn.Linear(2, 2, bias=False)])

    model = Stack()
    r = inspect_module(model)
    assert r.nodes == (ModuleNode("", "Stack", 0, True), ModuleNode("blocks", "ModuleList", 1, True),
                       ModuleNode("blocks.0", "Linear", 2, True), ModuleNode("blocks.1", "ReLU", 2, True),
                       ModuleNode("blocks.2", "Linear", 2, True))
    assert r.tensors == (E("blocks.0.weight", "parameter", (2, 2), owner="blocks.0"),
                         E("blocks.2.weight", "parameter", (2, 2), owner="blocks.2"))
    assert (r.containers, r.notes, r.unregistered_elements) == ((), (), 0)
    assert r.state_dict_keys == ("blocks.0.weight", "blocks.2.weight")   # bias=False registers None: not shown


def test_batchnorm_buffers_include_num_batches_tracked():
    r = inspect_module(nn.BatchNorm1d(3))
    assert r.tensors == (E("weight", "parameter", (3,)), E("bias", "parameter", (3,)),
                         E("running_mean", "buffer", (3,)), E("running_var", "buffer", (3,)),
                         E("num_batches_tracked", "buffer", (), dtype="int64"))
    assert (r.trainable_parameters, r.frozen_parameters, r.buffer_elements) == (6, 0, 7)
    assert r.state_dict_keys == ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
    r = inspect_module(nn.BatchNorm1d(3, affine=False, track_running_stats=False))
    assert (r.tensors, r.state_dict_keys) == ((), ())


def test_tuples_dicts_and_lists_of_tensors():
    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.pair = (nn.Dropout(), nn.Linear(1, 1))
            self.by_name = {"a'b": nn.Linear(2, 1, bias=False)}
            self.weights = [nn.Parameter(torch.ones(2)), torch.zeros(3)]
            self.words = ["not", "modules"]                     # a list of anything else is ignored

    r = inspect_module(Holder())
    assert [(c.name, c.type_name, [m.name for m in c.modules], c.tensors, c.parameter_elements)
            for c in r.containers] == [("pair", "tuple", ["pair[0]", "pair[1]"], 0, 2),
                                       ("by_name", "dict", ['by_name["a\'b"]'], 0, 2),
                                       ("weights", "list", [], 2, 0)]
    assert r.tensors == (E("pair[1].weight", "unregistered", (1, 1), owner="pair[1]", container="pair",
                           trainable=True),
                         E("pair[1].bias", "unregistered", (1,), owner="pair[1]", container="pair", trainable=True),
                         E('by_name["a\'b"].weight', "unregistered", (1, 2), owner='by_name["a\'b"]',
                           container="by_name", trainable=True),
                         E("weights[0]", "unregistered", (2,), container="weights", trainable=True),
                         E("weights[1]", "unregistered", (3,), container="weights"))
    assert [n.kind for n in r.notes] == ["plain-container"] * 3
    assert "Use nn.ModuleList." in r.notes[0].text and "Use nn.ModuleDict." in r.notes[1].text
    assert "holding 2 tensors" in r.notes[2].text and "nn.ParameterList" in r.notes[2].text
    assert (r.parameters, r.unregistered_elements, r.state_dict_keys) == (0, 9, ())


def test_a_hidden_module_is_walked_with_its_own_hidden_attributes():
    inner = nn.Sequential(nn.Linear(1, 1))
    inner.extra = torch.ones(2)                                  # bare, inside a hidden module
    inner.more = [nn.ReLU()]
    holder = nn.Module()
    holder.stuff = [inner]
    r = inspect_module(holder)
    assert [e.name for e in r.tensors] == ["stuff[0].extra", "stuff[0].0.weight", "stuff[0].0.bias"]
    assert {e.container for e in r.tensors} == {"stuff"}
    assert [(c.name, c.owner, c.depth, [m.name for m in c.modules]) for c in r.containers] == [
        ("stuff[0].more", "stuff[0]", 2, ["stuff[0].more[0]"]),
        ("stuff", "", 1, ["stuff[0]", "stuff[0].0"])]
    page = report_html(r)
    order = [page.index(f'data-{what}="{name}"') for what, name in
             (("container", "stuff"), ("module", "stuff[0]"), ("container", "stuff[0].more"),
              ("module", "stuff[0].more[0]"), ("module", "stuff[0].0"))]
    assert order == sorted(order)   # each plain container sits under the module that holds it


def test_second_references_to_registered_things_are_not_flagged():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    holder = nn.Module()
    holder.seq = seq
    holder.layers = list(seq)                  # the same, registered modules: harmless
    holder.w = seq[0].weight.data              # a plain tensor, but not the registered object: flagged
    holder.alias = [seq[0].bias]               # the registered object itself: not flagged
    r = inspect_module(holder)
    assert r.containers == () and r.names("unregistered") == ("w",)
    gru = inspect_module(nn.GRU(2, 3))        # keeps its weights in a list, _flat_weights, too
    assert gru.containers == () and gru.names("unregistered") == () and gru.notes == ()


def test_tied_weights_and_shared_modules_are_counted_once():
    emb = nn.Embedding(5, 3)
    out = nn.Linear(3, 5, bias=False)
    out.weight = emb.weight                     # tied: one Parameter, two names
    shared = nn.ReLU()
    model = nn.ModuleDict({"emb": emb, "out": out, "act1": shared, "act2": shared})
    r = inspect_module(model)
    assert r.tensors == (E("emb.weight", "parameter", (5, 3), owner="emb"),
                         E("out.weight", "parameter", (5, 3), owner="out", alias_of="emb.weight"))
    assert r.trainable_parameters == 15 == sum(p.numel() for p in model.parameters())
    assert r.state_dict_keys == ("emb.weight", "out.weight")         # state_dict saves both names
    assert [(n.name, n.alias_of) for n in r.nodes][-2:] == [("act1", None), ("act2", "act1")]
    assert "(same tensor as emb.weight)" in report_html(r)


def test_lazy_parameters_have_no_shape_yet():
    r = inspect_module(nn.LazyLinear(4))
    assert [(e.name, e.shape, e.numel) for e in r.tensors] == [("weight", None, 0), ("bias", None, 0)]
    assert 'data-shape="uninitialised"' in report_html(r)


STOCK = {
    "Sequential": lambda: nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(), nn.Linear(8, 2)),
    "Conv2d+BatchNorm2d": lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)),
    "LSTM": lambda: nn.LSTM(3, 4, num_layers=2),
    "TransformerEncoderLayer": lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16),
    "Embedding+LayerNorm": lambda: nn.ModuleDict({"emb": nn.Embedding(10, 4), "norm": nn.LayerNorm(4)}),
}


@pytest.mark.parametrize("name", list(STOCK))
def test_agrees_with_pytorchs_own_walks(name, covered):
    model = STOCK[name]()
    model.get_submodule("0").requires_grad_(False) if name == "Sequential" else None
    r = inspect_module(model)
    params = dict(model.named_parameters(remove_duplicate=False))
    buffers = dict(model.named_buffers(remove_duplicate=False))
    assert r.names("parameter") == tuple(params) and r.names("buffer") == tuple(buffers)
    assert r.names("unregistered") == () and r.containers == () and r.notes == ()
    assert r.state_dict_keys == tuple(model.state_dict())
    assert {e.name for e in r.tensors if e.saved} == set(model.state_dict())
    assert [n.name for n in r.nodes] == [n for n, _ in model.named_modules()]
    for e in r.tensors:
        t = params.get(e.name, buffers.get(e.name))
        assert (e.shape, e.dtype, e.device, e.trainable, e.numel) == (
            tuple(t.shape), str(t.dtype)[6:], str(t.device), t.requires_grad, t.numel())
    assert r.trainable_parameters == sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert r.frozen_parameters == sum(p.numel() for p in model.parameters() if not p.requires_grad)
    assert r.buffer_elements == sum(b.numel() for b in model.buffers())
    if name == "TransformerEncoderLayer":
        covered(f"{len(STOCK)} stock modules agree with named_parameters/named_buffers/state_dict/named_modules")


def test_meaning_of_each_kind():
    r = inspect_module(Small())
    assert meaning(r.entry("layer1.weight")) == "trained by the optimiser, moved by .to(), saved"
    assert meaning(r.entry("scale")).startswith("frozen")
    assert meaning(r.entry("mean")) == "moved by .to(), saved, never trained"
    assert meaning(r.entry("cache")) == "moved by .to(), not saved (persistent=False)"
    assert meaning(r.entry("offset")) == "a bare attribute: unseen by the module, not moved, not saved"
    assert meaning(r.entry("heads[0].bias")).startswith("held through heads, a plain container")


def test_html_has_stable_hooks(covered):
    model = Small().to("meta")
    page = report_html(inspect_module(model), action="ran module.to('meta')")
    assert page.startswith('<div class="module-inspector" data-class="Small" data-training="true" '
                           'data-devices="meta,cpu">')
    assert '<p class="module-inspector-action"><b>ran module.to(&#x27;meta&#x27;)</b></p>' in page
    assert ('<tr data-name="layer1.weight" data-kind="parameter" data-saved="true" data-trainable="true" '
            'data-device="meta" data-dtype="float32" data-shape="3, 2"') in page
    assert ('<tr data-name="scale" data-kind="parameter" data-saved="true" data-trainable="false" '
            'data-device="meta"') in page
    assert '<tr data-name="cache" data-kind="buffer" data-saved="false" data-trainable="false"' in page
    assert ('<tr data-name="offset" data-kind="unregistered" data-saved="false" data-trainable="false" '
            'data-device="cpu"') in page
    assert '<tr data-name="heads[0].weight" data-kind="unregistered" data-saved="false"' in page
    assert page.count("<tr data-name=") == 10
    assert ('<p class="module-inspector-totals" data-trainable="9" data-frozen="3" data-buffer-elements="7" '
            'data-unregistered-elements="11" data-state-dict-keys="4">') in page
    assert '<li class="module-node" data-module="layer1" data-class="Linear" data-depth="1" data-training="true"' \
        in page
    assert '<li class="plain-container" data-container="heads" data-type="list" data-parameter-elements="8"' in page
    assert '<li class="module-node hidden-module" data-module="heads[1]" data-class="Linear"' in page
    notes = [chunk.split('"')[0] for chunk in page.split('<li class="module-note" data-note="')[1:]]
    assert notes == ["plain-container", "bare-tensor", "devices"]
    assert 'data-note="devices" data-name="meta,cpu"' in page
    assert "<script" not in page and "http" not in page
    dict_page = module_html(nn.ModuleDict({"x": nn.Module()}))
    assert "module-inspector-notes" not in dict_page and "module-inspector-action" not in dict_page
    holder = nn.Module()
    holder.by_name = {'<b>"': nn.Linear(1, 1)}
    assert "<b>\"" not in module_html(holder) and "&lt;b&gt;" in module_html(holder)   # names are escaped
    covered("report_html: row hooks data-name/kind/saved/trainable/device, tree, totals, notes")


def test_refuses_what_is_not_a_module():
    with pytest.raises(TypeError):
        inspect_module(torch.ones(3))
    with pytest.raises(TypeError):
        ModuleInspector([nn.Linear(1, 1)])
    assert KINDS == ("parameter", "buffer", "unregistered")


def test_widget_changes_the_module_and_redraws(covered):
    model = Small()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    w = ModuleInspector(model)
    assert w.children[1] is w.view and w.report == small_report()
    assert w.mode_picker.value == "train" and w.device_picker.value == "cpu"
    assert list(w.device_picker.options) == [(f".to({d!r})", d) for d in default_devices()]
    assert 'data-training="true" data-devices="cpu"' in w.view.value and "module-inspector-action" not in w.view.value

    w.mode_picker.value = "eval"
    assert model.training is False and model.layer1.training is False and model.heads[0].training is True
    assert w.report == small_report(training=False)
    assert 'data-class="Small" data-training="false"' in w.view.value and "ran module.eval()" in w.view.value

    w.device_picker.value = "meta"
    assert model.layer1.weight.device.type == "meta" and model.offset.device.type == "cpu"
    assert w.report == small_report(device="meta", training=False)
    assert 'data-devices="meta,cpu"' in w.view.value
    assert '<tr data-name="mean" data-kind="buffer" data-saved="true" data-trainable="false" data-device="meta"' \
        in w.view.value

    w.device_picker.value = "cpu"   # out of meta: .to() refuses, the widget rebuilds and restores the values
    assert w.report == small_report(training=False)
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    assert "NotImplementedError: Cannot copy out of meta tensor; no data!" in w.action
    assert "copied back the values" in w.action and "to_empty" in w.view.value

    w.mode_picker.value = "train"
    assert model.training and w.report == small_report()

    model.register_buffer("late", torch.zeros(2))   # changed in a cell: refresh() shows it
    assert 'data-name="late"' not in w.view.value
    w.refresh()
    assert '<tr data-name="late" data-kind="buffer" data-saved="true"' in w.view.value
    covered("ModuleInspector: mode_picker runs train()/eval(), device_picker runs .to(), meta and back, refresh()")


def test_widget_starts_from_the_modules_state():
    model = nn.Sequential(nn.Linear(1, 1)).to("meta").eval()
    w = ModuleInspector(model, devices=("cpu", "meta"))
    assert (w.mode_picker.value, w.device_picker.value) == ("eval", "meta")
    w.device_picker.value = "cpu"                         # nothing was kept: the values are uninitialised
    assert module_device(model) == "cpu" and "uninitialised" in w.action
    w = ModuleInspector(nn.Module(), devices=("meta",))   # no tensors at all
    assert w.device_picker.value == "meta" and module_device(w.module) is None
    w = ModuleInspector(nn.Linear(1, 1), devices=("meta",))
    assert [v for _, v in w.device_picker.options] == ["meta", "cpu"] and w.device_picker.value == "cpu"
    if not torch.cuda.is_available():               # a device this machine lacks: the error is shown, not raised
        w = ModuleInspector(nn.Linear(1, 1), devices=("cpu", "cuda"))
        w.device_picker.value = "cuda"
        assert w.action.startswith("module.to('cuda') raised") and 'data-devices="cpu"' in w.view.value
