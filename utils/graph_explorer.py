"""The graph explorer: draw the graph autograd recorded behind a tensor, click a node for its details.

Three layers, so the facts can be tested without a browser:

    g = extract_graph(loss, names)       # pure (utils.autograd_graph): nodes, edges, saved bytes
    svg = to_svg(g, layout(g))           # pure: a static SVG, for viewers without widgets
    details_html(g, "n2")                # pure: the details panel for one node
    GraphExplorer.from_tensor(loss)      # widget: the drawing; click a node to see its details
    GraphExplorer(forward=lambda x, w, b: ((x * w + b) ** 2).sum(),
                  inputs={"x": x, "w": w, "b": b}, branches=None)
                                         # widget: tick which inputs require grad, pick a branch,
                                         # and the forward runs again and the graph is rebuilt

The drawing puts the output at the top and the leaves at the bottom of their branches; arrows point
the way backward() walks (`next_functions`). Colours: op (blue), AccumulateGrad (grey), leaf
(green), saved tensor (orange, dashed link to the op that saved it).

DOM hooks for browser tests: the explorer's root has class `graph-explorer`; the drawing is
`.graph-view` holding one `svg.autograd-graph` whose nodes are `g.node[data-node-id][data-kind]`
and edges `path.edge[data-from][data-to]`; the details panel is `.graph-details[data-node-id]`
(empty data-node-id when nothing is selected). Clicking a node sets the synced traitlet
`GraphView.selected`; the kernel answers with `details` and `details_html`.
The front end is a few lines of inline JavaScript (anywidget); nothing loads from a CDN."""
from collections.abc import Callable

import anywidget
import ipywidgets as widgets
import torch
import traitlets

from utils.autograd_graph import NODE_H, Graph, display_label, extract_graph, layout_full, node_size, without_saved
from utils.formatting import MUTED, attr, facts_table, format_bytes, format_shape

MARGIN = 24
STYLE = {  # kind: (fill, stroke, dash)
    "op": ("#dbe8fb", "#3b6db3", ""),
    "accumulate": ("#eeeeee", "#777777", ""),
    "leaf": ("#dcf2dc", "#2f8a3a", ""),
    "saved": ("#fff0d9", "#c7781a", "4 2"),
}
KIND_WORDS = {"op": "op", "accumulate": "AccumulateGrad", "leaf": "leaf", "saved": "saved tensor"}


# ---- static SVG ----

def _dash(dash: str) -> str:
    return f' stroke-dasharray="{dash}"' if dash else ""


LEGEND_NOTE = "output at top; arrows follow next_functions"
LEGEND_W = MARGIN + sum(30 + 7.2 * len(w) for w in KIND_WORDS.values()) + 7.2 * len(LEGEND_NOTE) + MARGIN


def _legend(y: float) -> str:
    parts: list[str] = []
    x: float = MARGIN
    for kind, (fill, stroke, dash) in STYLE.items():
        parts.append(f'<rect x="{x}" y="{y - 10}" width="14" height="12" rx="3" fill="{fill}" stroke="{stroke}"'
                     f'{_dash(dash)}/>'
                     f'<text x="{x + 19}" y="{y}">{KIND_WORDS[kind]}</text>')
        x += 30 + 7.2 * len(KIND_WORDS[kind])
    parts.append(f'<text x="{x}" y="{y}" fill="#666">{LEGEND_NOTE}</text>')
    return f'<g class="legend" font-size="11">{"".join(parts)}</g>'


def _curve(points) -> str:
    """An SVG path through points, top to bottom, leaving and entering each point vertically."""
    (x0, y0), d = points[0], [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for x1, y1 in points[1:]:
        mid = (y0 + y1) / 2
        d.append(f"C{x0:.1f},{mid:.1f} {x1:.1f},{mid:.1f} {x1:.1f},{y1:.1f}")
        x0, y0 = x1, y1
    return " ".join(d)


def to_svg(graph: Graph, positions: dict | None = None, bends: dict | None = None) -> str:
    """The graph as a standalone SVG string: one `g.node` per node, one `path.edge` per edge.

    positions: {node id: (x, y)} centres, as layout() gives them; bends: {(from, to): [(x, y), ...]}
    for edges that skip rows, as layout_full() gives them. Both are computed if positions is omitted."""
    if positions is None:
        plan = layout_full(graph)
        positions, bends = plan.positions, plan.bends
    bends = bends or {}
    if not graph.nodes:
        msg = graph.note or "nothing was recorded"
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="autograd-graph" data-nodes="0" data-edges="0" '
                f'width="{max(240, 7 * len(msg) + 2 * MARGIN)}" height="48" font-family="sans-serif" '
                f'font-size="13"><text x="{MARGIN}" y="28" fill="#555">{attr(msg)}</text></svg>')
    size = {n.id: node_size(n) for n in graph.nodes}
    bend_xs = [x for pts in bends.values() for x, _ in pts]
    left = min([positions[i][0] - size[i][0] / 2 for i in positions] + bend_xs)
    right = max([positions[i][0] + size[i][0] / 2 for i in positions] + bend_xs)
    bottom = max(positions[i][1] + size[i][1] / 2 for i in positions)
    top_pad = MARGIN + 24  # room for the legend
    dx, dy = MARGIN - left, top_pad + NODE_H / 2
    width = max(right - left + 2 * MARGIN, LEGEND_W)
    height = bottom + dy + MARGIN
    kind = {n.id: n.kind for n in graph.nodes}

    edges = []
    for a, b in graph.edges:
        (x1, y1), (x2, y2) = positions[a], positions[b]
        saved = kind[b] == "saved"
        points = ([(x1 + dx, y1 + dy + size[a][1] / 2)] + [(x + dx, y + dy) for x, y in bends.get((a, b), ())]
                  + [(x2 + dx, y2 + dy - size[b][1] / 2 - (0 if saved else 2))])
        style = ('stroke="#c7781a" stroke-dasharray="4 3"' if saved
                 else 'stroke="#555" marker-end="url(#ag-arrow)"')
        edges.append(f'<path class="edge" data-from="{a}" data-to="{b}" fill="none" {style} d="{_curve(points)}"/>')
    nodes = []
    for n in graph.nodes:
        x, y = positions[n.id]
        w, h = size[n.id]
        fill, stroke, dash = STYLE[n.kind]
        text = display_label(n)
        nodes.append(
            f'<g class="node" data-node-id="{n.id}" data-kind="{n.kind}" data-label="{attr(n.label)}" '
            f'transform="translate({x + dx:.1f},{y + dy:.1f})" style="cursor:pointer">'
            f"<title>{attr(KIND_WORDS[n.kind])}: {attr(text)}</title>"
            f'<rect x="{-w / 2:.1f}" y="{-h / 2:.1f}" width="{w:.1f}" height="{h}" '
            f'rx="{h / 2 if n.kind == "leaf" else 5}" '
            f'fill="{fill}" stroke="{stroke}"{_dash(dash)}/>'
            f'<text text-anchor="middle" dy="4">{attr(text)}</text></g>')
    c = graph.counts()
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="autograd-graph" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12" '
            f'data-nodes="{len(graph.nodes)}" data-edges="{len(graph.edges)}" data-ops="{c["op"]}" '
            f'data-leaves="{c["leaf"]}" data-saved="{c["saved"]}" data-saved-bytes="{graph.saved_bytes}">'
            '<defs><marker id="ag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>'
            f"{_legend(MARGIN)}"
            f'<g class="edges">{"".join(edges)}</g><g class="nodes">{"".join(nodes)}</g></svg>')


def graph_svg(tensor: torch.Tensor, names: dict | None = None, show_saved: bool = True) -> str:
    """extract_graph, layout and to_svg in one call: the static drawing of `tensor`'s graph."""
    g = extract_graph(tensor, names)
    return to_svg(g if show_saved else without_saved(g))


# ---- details of one node ----

def _shape_dtype(d: dict) -> str:
    return f"{format_shape(d['shape'])} {d['dtype']}"


def _rows_for(graph: Graph, node) -> list[tuple[str, str]]:
    d = node.details
    label = lambda i: "-- (needs no grad)" if i is None else f"{display_label(graph.node(i))} [{i}]"  # noqa: E731
    if node.kind == "op":
        rows = [("op", d["op"])]
        if d.get("names"):
            rows.append(("result named", ", ".join(d["names"])))
        if "output" in d:
            o = d["output"]
            rows.append(("output", f"{_shape_dtype(o)}, requires_grad=True"))
        rows.append(("next_functions", "; ".join(label(i) for i in d["inputs"]) or "none"))
        if d["saved_freed"]:
            rows.append(("saved tensors", "freed by backward() (run the forward again, or use retain_graph=True)"))
        elif d["saved"]:
            rows += [(f"saved {s['attr']}", f"{_shape_dtype(s)}, {s['bytes']:,} bytes") for s in d["saved"]]
        else:
            rows.append(("saved tensors", "none"))
        rows += [(f"saved {k}", v) for k, v in d["saved_values"].items()]
        return rows
    if node.kind == "accumulate":
        leaf = graph.node(d["leaf"]) if d["leaf"] in graph else None
        return [("op", "AccumulateGrad"),
                ("writes into", f"{leaf.label if leaf else format_shape(d['leaf_shape'])}.grad"),
                ("what it does", "adds the incoming gradient to the leaf's .grad (accumulates until zeroed)")]
    if node.kind == "leaf":
        return [("name", d["name"] or "(unnamed)"), ("shape", format_shape(d["shape"])), ("dtype", d["dtype"]),
                ("device", d["device"]), ("requires_grad", str(d["requires_grad"])), ("is_leaf", str(d["is_leaf"])),
                (".grad", "None" if d["grad"] is None else f"a tensor of shape {format_shape(d['grad'])}"),
                ("bytes", f"{d['bytes']:,}")]
    rows = [("saved by", f"{d['op']} [{d['op_id']}] as {d['attr']}"), ("shape", format_shape(d["shape"])),
            ("dtype", d["dtype"]), ("bytes", f"{d['bytes']:,} ({format_bytes(d['bytes'])})")]
    if d["name"]:
        rows.append(("is", d["name"]))
    if d["shares_storage_with"]:
        rows.append(("shares memory with", ", ".join(d["shares_storage_with"]) + " (counted once in the total)"))
    return rows


def node_details(graph: Graph, node_id: str) -> dict:
    """{"id", "kind", "label", "rows": [[name, value], ...], **details}: everything the panel shows."""
    if not node_id or node_id not in graph:
        return {}
    node = graph.node(node_id)
    return {**node.details, "id": node.id, "kind": node.kind, "label": node.label,
            "rows": [list(r) for r in _rows_for(graph, node)]}


def details_html(graph: Graph, node_id: str = "") -> str:
    """The details panel: `.graph-details[data-node-id]`, a table of facts about one node."""
    d = node_details(graph, node_id)
    if not d:
        return ('<div class="graph-details" data-node-id="" data-kind="">'
                "<p><i>Click a node to see what it is and what it keeps.</i></p></div>")
    return (f'<div class="graph-details" data-node-id="{attr(d["id"])}" data-kind="{d["kind"]}">'
            f'<p><b>{attr(KIND_WORDS[d["kind"]])}</b> <code>{attr(d["label"])}</code> '
            f'<span style="{MUTED}">[{attr(d["id"])}]</span></p>{facts_table(d["rows"])}</div>')


def summary_html(graph: Graph, error: str = "") -> str:
    """One line under the controls: what the graph holds, or the error the forward raised."""
    if error:
        return f'<p class="graph-summary" data-error="{attr(error)}">The forward raised <code>{attr(error)}</code></p>'
    c = graph.counts()
    if not graph.nodes:
        text = attr(graph.note)
    else:
        leaves = "1 leaf" if c["leaf"] == 1 else f"{c['leaf']} leaves"
        text = (f"{len(graph.nodes)} nodes: {c['op']} ops, {c['accumulate']} AccumulateGrad, {leaves}; "
                f"saved tensors hold {graph.saved_bytes:,} bytes ({format_bytes(graph.saved_bytes)})"
                + (", each storage counted once" if graph.saved_bytes != graph.saved_bytes_all else "")
                + (". Cut short: the graph is bigger than this." if graph.truncated else ""))
    return (f'<p class="graph-summary" data-nodes="{len(graph.nodes)}" data-saved-bytes="{graph.saved_bytes}">'
            f"{text}</p>")


# ---- the widget ----

_ESM = """
function render({ model, el }) {
  el.classList.add("graph-view");
  el.innerHTML = `<div class="graph-toolbar"><button data-zoom="out">&minus;</button>
    <button data-zoom="in">+</button><button data-zoom="fit">fit</button>
    <span>click a node for its details</span></div>
    <div class="graph-canvas"></div><div class="graph-panel"></div>`;
  const canvas = el.querySelector(".graph-canvas"), panel = el.querySelector(".graph-panel");
  let scale = 1;
  const zoom = () => {
    const svg = canvas.querySelector("svg");
    if (svg) svg.style.width = svg.getAttribute("width") * scale + "px";
  };
  const mark = () => {
    canvas.querySelectorAll("g.node").forEach(g =>
      g.classList.toggle("selected", g.dataset.nodeId === model.get("selected")));
    panel.innerHTML = model.get("details_html");
  };
  const draw = () => { canvas.innerHTML = model.get("svg"); zoom(); mark(); };
  canvas.addEventListener("click", e => {
    const node = e.target.closest("g.node");
    model.set("selected", node ? node.dataset.nodeId : "");
    model.save_changes();
  });
  el.querySelector(".graph-toolbar").addEventListener("click", e => {
    const how = e.target.dataset.zoom, svg = canvas.querySelector("svg");
    if (!how || !svg) return;
    scale = how === "in" ? scale * 1.25 : how === "out" ? scale / 1.25
          : Math.min(1, (canvas.clientWidth - 4) / svg.getAttribute("width"));
    zoom();
  });
  model.on("change:svg", draw);
  model.on("change:selected", mark);
  model.on("change:details_html", mark);
  draw();
  return () => { model.off("change:svg", draw); model.off("change:selected", mark);
                 model.off("change:details_html", mark); };
}
export default { render };
"""

_CSS = """
.graph-view .graph-canvas { overflow: auto; max-height: 560px; border: 1px solid #ddd; background: #fff; }
.graph-view .graph-canvas svg { height: auto; display: block; }
.graph-view g.node.selected rect { stroke-width: 3; stroke: #d62728; }
.graph-view .graph-toolbar { margin: 4px 0; font-size: 12px; color: #666; }
.graph-view .graph-toolbar button { min-width: 2.2em; margin-right: 2px; }
.graph-view .graph-panel { margin-top: 6px; font-size: 13px; }
"""


class GraphView(anywidget.AnyWidget):
    """The drawing and the details panel. Set `selected` (a node id) and `details` follows."""
    _esm = _ESM
    _css = _CSS
    svg = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    details_html = traitlets.Unicode("").tag(sync=True)
    details = traitlets.Dict()  # node_details(graph, selected), kept in the kernel

    def __init__(self, graph: Graph | None = None, **kwargs):
        super().__init__(**kwargs)
        self.graph = Graph((), (), None)
        self.show(graph if graph is not None else self.graph)

    def show(self, graph: Graph):
        """Draw a new graph; the old selection is dropped (ids are per drawing)."""
        self.graph = graph
        self.selected = ""
        self.svg = to_svg(graph)
        self._update_details()

    @traitlets.observe("selected")
    def _update_details(self, change=None):
        self.details = node_details(self.graph, self.selected)
        self.details_html = details_html(self.graph, self.selected)


GRAD_BOX_MARGIN = "0 1.5em 0 0"   # top right bottom left


class GraphExplorer(widgets.VBox):
    """Run a forward function, draw the graph it records; toggle requires_grad and the branch, and it runs again.

    forward: called as forward(**inputs) (plus branch=... when branches are given); returns the tensor
             to draw (a tuple or list: its first element).
    inputs:  {name: tensor}; each floating-point input gets a checkbox "requires grad", starting
             from the tensor's own requires_grad. The forward receives fresh detached tensors with
             the ticked flags, so your own tensors are never changed.
    branches: optional list of values for forward's `branch` argument, one toggle button each.
    names:   optional {name: tensor} for other tensors the forward uses (a module's parameters)."""

    def __init__(self, forward: Callable | None = None, inputs: dict | None = None, *, branches=None,
                 branch=None, names: dict | None = None, show_saved: bool = True,
                 tensor: torch.Tensor | None = None):
        if (forward is None) == (tensor is None):
            raise ValueError("give either forward= (with inputs=) or a tensor (GraphExplorer.from_tensor)")
        self.forward, self.names, self.fixed = forward, dict(names or {}), tensor
        self.inputs = dict(inputs or {})
        for k, v in self.inputs.items():
            if not isinstance(v, torch.Tensor):
                raise TypeError(f"inputs maps names to tensors; {k!r} is a {type(v).__name__}")
        self.output, self.full_graph, self.error = tensor, Graph((), (), None), ""
        # A wide gap after each label and none before each box, so a box reads as its own label's, not the last one's.
        self.grad_boxes = {k: widgets.Checkbox(value=bool(v.requires_grad), description=k, indent=False,
                                               disabled=not (v.is_floating_point() or v.is_complex()),
                                               layout=widgets.Layout(width="auto", margin=GRAD_BOX_MARGIN))
                           for k, v in self.inputs.items()}
        self.branch_picker = None
        if branches is not None:
            branches = list(branches)
            self.branch_picker = widgets.ToggleButtons(options=branches, description="branch",
                                                       value=branches[0] if branch is None else branch)
        self.saved_box = widgets.Checkbox(value=show_saved, description="show saved tensors", indent=False,
                                          layout=widgets.Layout(width="auto"))
        self.summary = widgets.HTML()
        self.view = GraphView()
        controls = []
        if self.grad_boxes:
            controls.append(widgets.HBox([widgets.HTML("<b>requires grad:</b>&nbsp;"), *self.grad_boxes.values()],
                                         layout=widgets.Layout(flex_flow="row wrap")))  # wraps in half a lab
        if self.branch_picker is not None:
            controls.append(self.branch_picker)
        controls.append(self.saved_box)
        super().__init__([*controls, self.summary, self.view])
        self.add_class("graph-explorer")
        for box in self.grad_boxes.values():
            box.observe(self.rebuild, names="value")
        if self.branch_picker is not None:
            self.branch_picker.observe(self.rebuild, names="value")
        self.saved_box.observe(self.redraw, names="value")
        self.rebuild()

    @classmethod
    def from_tensor(cls, tensor: torch.Tensor, names: dict | None = None, show_saved: bool = True) -> "GraphExplorer":
        """Draw the graph behind an existing tensor (no forward to run again)."""
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"from_tensor takes a tensor, got {type(tensor).__name__}")
        return cls(tensor=tensor, names=names, show_saved=show_saved)

    @property
    def graph(self) -> Graph:
        """The graph as drawn (without saved tensors when that box is unticked)."""
        return self.view.graph

    def requires_grad(self) -> dict[str, bool]:
        return {k: box.value for k, box in self.grad_boxes.items()}

    def rebuild(self, change=None):
        """Run the forward again with the ticked flags and branch, and draw what it recorded."""
        names = dict(self.names)
        self.error = ""
        if self.forward is not None:
            args = {k: v.detach().requires_grad_(self.grad_boxes[k].value) if not self.grad_boxes[k].disabled
                    else v.detach() for k, v in self.inputs.items()}
            names.update(args)
            if self.branch_picker is not None:
                args["branch"] = self.branch_picker.value
            try:
                out = self.forward(**args)
                out = out[0] if isinstance(out, (tuple, list)) else out
                if not isinstance(out, torch.Tensor):
                    raise TypeError(f"forward returned {type(out).__name__}, not a tensor")
                self.output = out
            except Exception as exc:  # a broken forward: say so in the summary, keep the widget alive
                self.output, self.error = None, f"{type(exc).__name__}: {exc}"
        self.full_graph = Graph((), (), None) if self.output is None else extract_graph(self.output, names)
        self.redraw()

    def redraw(self, change=None):
        g = self.full_graph if self.saved_box.value else without_saved(self.full_graph)
        self.summary.value = summary_html(self.full_graph, self.error)
        self.view.show(g)

    def select(self, node_id: str) -> dict:
        """What a click on node `node_id` does; returns its details."""
        self.view.selected = node_id
        return self.view.details
