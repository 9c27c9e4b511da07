"""The graph explorer: the static SVG and details panel (pure), then the widget through its traitlets.

Covers to_svg (valid XML; one g.node[data-node-id][data-kind] per node and one path.edge per edge,
every box inside the picture, labels escaped, the empty graph), details_html / node_details (what a
click shows for each kind: op name, next_functions, saved tensors with shapes and bytes, freed saved
tensors, leaf shape/requires_grad/.grad), summary_html, GraphView (setting `selected` recomputes
`details` and `details_html`), and GraphExplorer (a requires-grad checkbox re-runs the forward and
the subgraph vanishes; the branch buttons rebuild the graph; the saved-tensor box; a forward that
raises; from_tensor; the caller's tensors untouched; the DOM hooks; a front end with no CDN)."""
import xml.etree.ElementTree as ET

import pytest
import torch

from utils.autograd_graph import extract_graph, layout_full, node_size
from utils.graph_explorer import (
    _ESM,
    GraphExplorer,
    GraphView,
    details_html,
    graph_svg,
    node_details,
    summary_html,
    to_svg,
)

SVG = "{http://www.w3.org/2000/svg}"


def _xwb():
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return x, w, b


def _nodes(svg: str):
    root = ET.fromstring(svg)
    return root, [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]


def test_svg_has_one_hooked_element_per_node_and_edge():
    x, w, b = _xwb()
    g = extract_graph((x * w + b).sum(), names={"x": x, "w": w, "b": b})
    plan = layout_full(g)
    svg = to_svg(g, plan.positions, plan.bends)
    root, nodes = _nodes(svg)
    assert root.get("class") == "autograd-graph" and root.get("data-nodes") == str(len(g))
    assert [(e.get("data-node-id"), e.get("data-kind"), e.get("data-label")) for e in nodes] == [
        (n.id, n.kind, n.label) for n in g.nodes]
    edges = [(p.get("data-from"), p.get("data-to")) for p in root.iter(f"{SVG}path") if p.get("class") == "edge"]
    assert edges == list(g.edges)
    assert root.get("data-saved-bytes") == "48"
    assert svg == to_svg(g)  # positions default to layout_full's
    # every box lies inside the picture
    width, height = float(root.get("width")), float(root.get("height"))
    for e in nodes:
        tx, ty = map(float, e.get("transform")[len("translate("):-1].split(","))
        w_, h_ = node_size(g.node(e.get("data-node-id")))
        assert tx - w_ / 2 >= 0 and tx + w_ / 2 <= width and ty - h_ / 2 >= 0 and ty + h_ / 2 <= height


def test_svg_escapes_labels_and_draws_an_empty_graph():
    weird = torch.ones(2, requires_grad=True)
    svg = graph_svg(weird * 2, names={'<w> & "v"': weird})
    _, nodes = _nodes(svg)
    assert '<w> & "v" (2,)' in [e.get("data-label") for e in nodes]
    root, nodes = _nodes(graph_svg(torch.ones(3) + 1))
    assert nodes == [] and root.get("data-nodes") == "0" and "does not require grad" in "".join(root.itertext())
    _, nodes = _nodes(graph_svg(weird * weird, show_saved=False))
    assert {e.get("data-kind") for e in nodes} == {"op", "accumulate", "leaf"}


def test_details_of_each_kind():
    x, w, b = _xwb()
    loss = (x * w + b).sum()
    g = extract_graph(loss, names={"x": x, "w": w, "b": b, "loss": loss})
    by_label = {n.label: n.id for n in g.nodes}
    mul = node_details(g, by_label["MulBackward0"])
    assert (mul["kind"], mul["op"]) == ("op", "MulBackward0")
    assert dict(map(tuple, mul["rows"]))["saved self"] == "(4, 3) float32, 48 bytes"
    assert dict(map(tuple, mul["rows"]))["next_functions"].startswith("-- (needs no grad); AccumulateGrad")
    root = dict(map(tuple, node_details(g, "n0")["rows"]))
    assert root["result named"] == "loss" and root["output"] == "() float32, requires_grad=True"
    leaf = dict(map(tuple, node_details(g, by_label["w (3,)"])["rows"]))
    assert (leaf["shape"], leaf["requires_grad"], leaf[".grad"]) == ("(3,)", "True", "None")
    saved = dict(map(tuple, node_details(g, by_label["self=x (4, 3) 48 B"])["rows"]))
    assert saved["bytes"] == "48 (48 B)" and saved["is"] == "x" and saved["saved by"].startswith("MulBackward0")
    acc = dict(map(tuple, node_details(g, g.node(by_label["MulBackward0"]).details["inputs"][1])["rows"]))
    assert acc["writes into"] == "w (3,).grad"
    assert node_details(g, "") == {} and node_details(g, "n999") == {}

    html = details_html(g, by_label["MulBackward0"])
    assert html.startswith(f'<div class="graph-details" data-node-id="{by_label["MulBackward0"]}" data-kind="op">')
    assert details_html(g).startswith('<div class="graph-details" data-node-id="" data-kind="">')

    loss.backward()
    g = extract_graph(loss, names={"w": w})
    freed = dict(map(tuple, node_details(g, next(n.id for n in g.nodes if n.label == "MulBackward0"))["rows"]))
    assert freed["saved tensors"].startswith("freed by backward()")
    assert dict(map(tuple, node_details(g, next(n.id for n in g.of_kind("leaf") if n.details["name"] == "w"))
                    ["rows"]))[".grad"] == "a tensor of shape (3,)"


def test_summary_line():
    x, w, _b = _xwb()
    h = (x * w).exp()
    g = extract_graph((h * h).sum())
    text = summary_html(g)
    assert f'data-saved-bytes="{g.saved_bytes}"' in text and "each storage counted once" in text
    assert 'data-error="ValueError: no"' in summary_html(g, "ValueError: no")


def test_view_selection_drives_details(covered):
    x, w, b = _xwb()
    view = GraphView(extract_graph((x * w + b).sum()))
    assert view.selected == "" and view.details == {} and 'data-node-id=""' in view.details_html
    assert view.svg.count('class="node"') == len(view.graph)
    view.selected = "n2"              # what a click on MulBackward0 does
    assert view.details["label"] == "MulBackward0" and view.details["saved"][0]["bytes"] == 48
    assert 'data-node-id="n2"' in view.details_html
    view.selected = "no-such-node"
    assert view.details == {}
    view.selected = "n2"
    view.show(extract_graph(w * 2))   # a new drawing drops the selection: ids are per drawing
    assert view.selected == "" and view.details == {}
    assert {"svg", "selected", "details_html"} <= set(view.keys) and "details" not in view.keys
    covered("graph explorer: SVG hooks per node/edge, details per kind, selected -> details traitlets")


def _explorer(**kw):
    x, w, b = _xwb()

    def forward(x, w, b, branch="relu"):
        h = x * w + b
        return (torch.relu(h) if branch == "relu" else torch.tanh(h) * 2).sum()

    return GraphExplorer(forward=forward, inputs={"x": x, "w": w, "b": b}, **kw), (x, w, b)


def test_each_requires_grad_box_sits_against_its_own_label():
    """The gap after a label is wider than the gap before the next box, so a box is read with the label it precedes."""
    ex, _ = _explorer()
    for box in ex.grad_boxes.values():
        _top, right, _bottom, left = box.layout.margin.split()
        assert not box.indent and float(right.removesuffix("em")) >= 1 and float(left.removesuffix("em") or 0) == 0


def test_unticking_requires_grad_removes_that_subgraph(covered):
    ex, (x, w, b) = _explorer()
    assert ex.requires_grad() == {"x": False, "w": True, "b": True}
    assert sorted(ex.graph.labels("leaf")) == ["b (3,)", "w (3,)"]
    assert ex.graph.labels("op") == ["SumBackward0", "ReluBackward0", "AddBackward0", "MulBackward0"]
    svg_before = ex.view.svg
    ex.grad_boxes["w"].value = False
    assert ex.graph.labels("leaf") == ["b (3,)"]
    assert "MulBackward0" not in ex.graph.labels("op")     # x * w needs no grad now: not recorded
    assert ex.view.svg != svg_before and 'data-nodes="' in ex.summary.value
    ex.grad_boxes["b"].value = False
    assert len(ex.graph) == 0 and "does not require grad" in ex.summary.value
    ex.grad_boxes["x"].value = True
    assert ex.graph.labels("leaf") == ["x (4, 3)"]
    # the caller's tensors were never touched
    assert (x.requires_grad, w.requires_grad, b.requires_grad) == (False, True, True)
    assert w.grad is None and x.grad_fn is None
    covered("graph explorer widget: requires-grad checkboxes, branch buttons, saved box, from_tensor")


def test_branch_buttons_rebuild_the_graph():
    ex, _ = _explorer(branches=["relu", "tanh"])
    assert "ReluBackward0" in ex.graph.labels("op")
    ex.select("n1")
    ex.branch_picker.value = "tanh"
    assert "TanhBackward0" in ex.graph.labels("op") and "ReluBackward0" not in ex.graph.labels("op")
    assert ex.view.selected == ""
    assert ex.graph.labels("op")[:3] == ["SumBackward0", "MulBackward0", "TanhBackward0"]
    ex2, _ = _explorer(branches=["relu", "tanh"], branch="tanh")
    assert ex2.branch_picker.value == "tanh" and "TanhBackward0" in ex2.graph.labels("op")


def test_saved_box_and_select():
    ex, _ = _explorer()
    assert ex.graph.counts()["saved"] == 2                  # x (by mul) and relu's result
    details = ex.select(next(n.id for n in ex.graph.of_kind("saved") if n.details["attr"] == "result"))
    assert details["kind"] == "saved" and details["bytes"] == 48 and details["op"] == "ReluBackward0"
    ex.saved_box.value = False
    assert ex.graph.counts()["saved"] == 0 and ex.full_graph.counts()["saved"] == 2
    assert ex.view.selected == ""


def test_a_forward_that_raises_or_returns_junk_is_reported():
    x, w, _b = _xwb()
    ex = GraphExplorer(forward=lambda x, w: x @ w.unsqueeze(0), inputs={"x": x, "w": w})
    assert ex.error.startswith("RuntimeError") and len(ex.graph) == 0 and "data-error" in ex.summary.value
    ex = GraphExplorer(forward=lambda w: (w.sum(), w), inputs={"w": w})   # a tuple: its first element
    assert ex.graph.labels("op") == ["SumBackward0"]
    ex = GraphExplorer(forward=lambda w: 3.0, inputs={"w": w})
    assert ex.error == "TypeError: forward returned float, not a tensor"


def test_integer_inputs_cannot_require_grad_and_bad_arguments_are_refused():
    idx = torch.tensor([0, 2])
    w = torch.randn(3, requires_grad=True)
    ex = GraphExplorer(forward=lambda w, idx: w[idx].sum(), inputs={"w": w, "idx": idx})
    assert ex.grad_boxes["idx"].disabled and not ex.grad_boxes["idx"].value
    assert ex.graph.labels("op") == ["SumBackward0", "IndexBackward0"]
    with pytest.raises(ValueError, match="either forward"):
        GraphExplorer()
    with pytest.raises(TypeError, match="'w' is a list"):
        GraphExplorer(forward=lambda w: w, inputs={"w": [1.0]})
    with pytest.raises(TypeError, match="from_tensor takes a tensor"):
        GraphExplorer.from_tensor(3.0)


def test_from_tensor_and_the_dom_hooks():
    x, w, b = _xwb()
    loss = (x * w + b).sum()
    ex = GraphExplorer.from_tensor(loss, names={"w": w, "b": b})
    assert ex.grad_boxes == {} and ex.branch_picker is None and ex.output is loss
    assert sorted(ex.graph.labels("leaf")) == ["b (3,)", "w (3,)"]
    assert "graph-explorer" in ex._dom_classes
    assert ex.view in ex.children
    _, nodes = _nodes(ex.view.svg)
    assert all(e.get("data-node-id") and e.get("data-kind") for e in nodes)
    ex.rebuild()                                          # no forward: the same tensor, drawn again
    assert sorted(ex.graph.labels("leaf")) == ["b (3,)", "w (3,)"]


def test_front_end_is_inline_and_loads_nothing():
    assert "export default" in _ESM and "import " not in _ESM and "http" not in _ESM
    for hook in ("graph-view", "g.node", "selected", "save_changes", "details_html"):
        assert hook in _ESM
    assert len(_ESM.strip().splitlines()) < 50
