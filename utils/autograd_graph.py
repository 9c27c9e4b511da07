"""Read the graph autograd recorded behind a tensor, and lay it out in rows: pure functions, no display.

    g = extract_graph(loss, names={"w": w, "b": b})   # the nodes and edges behind `loss`
    g.counts()                    # {"op": 3, "accumulate": 2, "leaf": 2, "saved": 1}
    g.saved_bytes                 # bytes of the saved tensors, each storage counted once
    positions = layout(g)         # {node id: (x, y)}: output at the top, leaves at the bottom

What a graph holds (four kinds of node, all read from the tensor itself):

- "op": one per backward node (`tensor.grad_fn` and everything reachable through
  `next_functions`), labelled with its class name, e.g. "MulBackward0";
- "accumulate": an `AccumulateGrad` node, where backward() writes a gradient into a leaf's `.grad`;
- "leaf": the tensor an AccumulateGrad writes to (`node.variable`): a tensor that requires grad
  and was not made by a recorded op;
- "saved": a tensor an op kept for its backward formula (PyTorch exposes them as attributes named
  `_saved_self`, `_saved_other`, `_saved_result`, ...; a custom autograd.Function's as
  `saved_tensors`), with its shape and bytes (numel * element_size).

Edges point the way backward() walks: from an op to each op in its `next_functions`, from an
AccumulateGrad to its leaf, and from an op to each tensor it saved. The layout follows them
downward, so the output is the top row and every edge goes down. Rows come from
networkx.topological_generations (a node sits one row below the lowest node that points to it);
a few barycentric sweeps order each row to reduce crossings, and each row is then placed as
close as it can get to its neighbours (an exact 1-D least-squares fit), so a chain stays
straight. No Graphviz, no system binaries."""
import itertools
from collections import deque
from dataclasses import dataclass, field

import networkx as nx
import torch

from utils.formatting import dtype_name, format_bytes, format_shape

KINDS = ("op", "accumulate", "leaf", "saved")
MAX_NODES = 5000          # extract_graph stops here and says the graph was cut short
SAVED_PREFIX = "_saved_"  # how torch names the saved values on a backward node

# Layout units: SVG pixels. A node is a box CHAR_W per character wide; rows are ROW_H apart.
CHAR_W, PAD_W, MIN_W, NODE_H, SAVED_H = 7.2, 18, 56, 26, 22
ROW_H, GAP, DUMMY_W = 64, 16, 6


@dataclass(frozen=True)
class Node:
    id: str        # "n0", "n1", ...: n0 is the output's grad_fn (or the leaf itself)
    kind: str      # one of KINDS
    label: str     # the op's class name, "AccumulateGrad", a leaf's "name (shape)", a saved tensor's "self (shape)"
    details: dict  # plain JSON-able facts: shapes as lists, dtypes as text, bytes as ints


@dataclass(frozen=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, str], ...]  # (from, to), pointing the way backward() walks
    root: str | None                    # id of the output's node; None if nothing was recorded
    saved_bytes: int = 0                # saved tensors' bytes, each storage counted once (at the size of
                                        # the largest saved tensor reading it)
    saved_bytes_all: int = 0            # the plain sum, counting shared storage again each time
    truncated: bool = False             # stopped at max_nodes
    note: str = ""                      # one sentence on what was (or was not) recorded
    _index: dict[str, Node] = field(init=False, repr=False, compare=False)  # id: node, made from nodes

    def __post_init__(self):
        object.__setattr__(self, "_index", {n.id: n for n in self.nodes})

    def node(self, node_id: str) -> Node:
        return self._index[node_id]

    def __contains__(self, node_id) -> bool:
        return node_id in self._index

    def __len__(self) -> int:
        return len(self.nodes)

    def of_kind(self, kind: str) -> list[Node]:
        return [n for n in self.nodes if n.kind == kind]

    def labels(self, kind: str | None = None) -> list[str]:
        return [n.label for n in self.nodes if kind is None or n.kind == kind]

    def counts(self) -> dict[str, int]:
        return {k: sum(n.kind == k for n in self.nodes) for k in KINDS}

    def children(self, node_id: str) -> list[str]:
        return [b for a, b in self.edges if a == node_id]

    def to_networkx(self) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_nodes_from(n.id for n in self.nodes)
        g.add_edges_from(self.edges)
        return g

    def to_dict(self) -> dict:
        """The graph as plain JSON-able data (what a widget could sync)."""
        return {"nodes": [{"id": n.id, "kind": n.kind, "label": n.label, "details": n.details}
                          for n in self.nodes],
                "edges": [list(e) for e in self.edges], "root": self.root,
                "saved_bytes": self.saved_bytes, "truncated": self.truncated, "note": self.note}


# ---- small facts about one tensor ----

def tensor_bytes(t: torch.Tensor) -> int:
    """The bytes of t's own elements: numel * element_size (not the whole storage a view sits in)."""
    return t.numel() * t.element_size()


def _storage_key(t: torch.Tensor):
    """Tensors with equal keys read one block of memory (a view and its base, a tensor and its detach())."""
    try:
        ptr = t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # tensors without a plain storage
        ptr = 0
    return (str(t.device), ptr) if ptr else ("object", id(t))


def _window_key(t: torch.Tensor):
    """Same storage, same window onto it: the same tensor's data, whatever the Python object."""
    return (_storage_key(t), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype)


# ---- reading what a backward node saved ----

def saved_values(fn) -> tuple[list[tuple[str, torch.Tensor]], dict[str, str], bool]:
    """What `fn` saved for backward: ([(name, tensor)], {name: repr of a non-tensor value}, freed).

    Names drop the `_saved_` prefix ("self", "other", "result", "mat1"); a tuple of tensors gives
    "indices[0]", ... `freed` is True when backward() has already released them (reading a saved
    tensor then raises "Trying to backward through the graph a second time ...")."""
    tensors, others, freed = [], {}, False

    def add(name, value):
        if isinstance(value, torch.Tensor):
            tensors.append((name, value))
        elif isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in value):
            for i, v in enumerate(value):
                if isinstance(v, torch.Tensor):
                    tensors.append((f"{name}[{i}]", v))
        elif value is not None:
            others[name] = repr(value)

    if isinstance(fn, torch.autograd.function.BackwardCFunction):  # a custom autograd.Function
        try:
            add("saved_tensors", tuple(fn.saved_tensors))
        except RuntimeError:
            freed = True
        return tensors, others, freed
    for attr in dir(fn):
        if not attr.startswith(SAVED_PREFIX):
            continue
        try:
            value = getattr(fn, attr)
        except RuntimeError:  # freed by backward()
            freed = True
            continue
        add(attr.removeprefix(SAVED_PREFIX), value)
    return tensors, others, freed


# ---- extraction ----

class _Names:
    """Find the name a caller gave a tensor: by identity, else by the same window on the same storage."""

    def __init__(self, names: dict | None):
        self.names = dict(names or {})
        for name, t in self.names.items():
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"names maps a name to a tensor; {name!r} maps to {type(t).__name__}")
        self.by_id = {id(t): name for name, t in self.names.items()}
        self.by_window: dict[tuple, str] = {}  # _window_key: the first name given that window
        self.by_grad_fn: dict[int, list[str]] = {}  # id of a grad_fn: the names of the tensors it made
        self.grad_fns = []  # keeps the node objects alive, so their id() stays theirs
        for name, t in self.names.items():
            self.by_window.setdefault(_window_key(t), name)
            if t.grad_fn is not None:
                self.grad_fns.append(t.grad_fn)
                self.by_grad_fn.setdefault(id(self.grad_fns[-1]), []).append(name)

    def of(self, t: torch.Tensor) -> str | None:
        return self.by_id.get(id(t)) or self.by_window.get(_window_key(t))


def _tensor_facts(t: torch.Tensor) -> dict:
    return {"shape": list(t.shape), "dtype": dtype_name(t.dtype), "device": str(t.device), "bytes": tensor_bytes(t)}


def extract_graph(tensor: torch.Tensor, names: dict | None = None, *, max_nodes: int = MAX_NODES) -> Graph:
    """The graph autograd recorded behind `tensor`, read from `tensor.grad_fn` and `next_functions`.

    names: optional {name: tensor}; a leaf, saved tensor or intermediate result that is one of
    these tensors is shown under that name (e.g. `names=dict(model.named_parameters())`).
    Node ids are given in breadth-first order from the output, so the same code gives the same ids.
    A tensor that records nothing gives an empty graph whose `note` says why."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"extract_graph takes a tensor, got {type(tensor).__name__}")
    known = _Names(names)
    nodes: dict[str, Node] = {}
    edges: list[tuple[str, str]] = []
    issued = [0]

    def new_id():
        issued[0] += 1
        return f"n{issued[0] - 1}"

    def leaf_node(t, node_id):
        name = known.of(t)
        grad = None if t.grad is None else list(t.grad.shape)
        details = {"kind": "leaf", "name": name, **_tensor_facts(t), "requires_grad": t.requires_grad,
                   "is_leaf": t.is_leaf, "grad": grad}
        nodes[node_id] = Node(node_id, "leaf", f"{name or 'leaf'} {format_shape(t.shape)}", details)

    if tensor.grad_fn is None:
        if not tensor.requires_grad:
            return Graph((), (), None, note="nothing was recorded: this tensor does not require grad, "
                                            "so no op that made it was recorded")
        leaf_node(tensor, "n0")
        return Graph((nodes["n0"],), (), "n0", note="a leaf: it requires grad, but no op made it, "
                                                    "so there is nothing behind it to record")

    fn_ids: dict[int, str] = {}
    keep_alive: list[object] = []  # the objects whose id() we use as keys, alive until we are done
    saved_storage: dict = {}  # storage key -> (bytes, [saved node ids])
    saved_all = 0
    truncated = False
    root = tensor.grad_fn
    fn_ids[id(root)] = new_id()
    keep_alive.append(root)
    queue = deque([root])

    while queue:
        fn = queue.popleft()
        node_id = fn_ids[id(fn)]
        cls = type(fn).__name__
        if hasattr(fn, "variable"):  # AccumulateGrad: the end of a path, writes into a leaf's .grad
            leaf = fn.variable
            leaf_id = new_id()
            leaf_node(leaf, leaf_id)
            nodes[node_id] = Node(node_id, "accumulate", "AccumulateGrad",
                                  {"kind": "accumulate", "op": cls, "leaf": leaf_id, "leaf_name": known.of(leaf),
                                   "leaf_shape": list(leaf.shape)})
            edges.append((node_id, leaf_id))
            continue
        tensors, others, freed = saved_values(fn)
        saved = []
        for attr, t in tensors:
            keep_alive.append(t)  # an empty tensor's storage key is its id(): keep it unique
            sid = new_id()
            nbytes = tensor_bytes(t)
            saved_all += nbytes
            key = _storage_key(t)
            size, sharers = saved_storage.get(key, (0, []))
            saved_storage[key] = (max(size, nbytes), [*sharers, sid])
            facts, name = _tensor_facts(t), known.of(t)
            shown = f"{attr}={name}" if name else attr
            nodes[sid] = Node(sid, "saved", f"{shown} {format_shape(t.shape)} {format_bytes(nbytes)}",
                              {"kind": "saved", "attr": attr, "op": cls, "op_id": node_id, "name": name,
                               **facts, "storage": key})
            saved.append({"id": sid, "attr": attr, **facts})
            edges.append((node_id, sid))
        inputs: list[str | None] = []  # each input's node id, None where no gradient goes
        linked: set[str] = set()
        for child, _ in fn.next_functions:
            if child is None:       # that input did not require grad: nothing to send a gradient to
                inputs.append(None)
                continue
            if id(child) not in fn_ids:
                if issued[0] >= max_nodes:
                    truncated = True
                    inputs.append(None)
                    continue
                fn_ids[id(child)] = new_id()
                keep_alive.append(child)
                queue.append(child)
            child_id = fn_ids[id(child)]
            inputs.append(child_id)
            if child_id not in linked:  # x * x: two inputs, one edge
                linked.add(child_id)
                edges.append((node_id, child_id))
        its_names = known.by_grad_fn.get(id(fn), [])  # the names of the tensors this op made
        details = {"kind": "op", "op": cls, "inputs": inputs, "saved": saved, "saved_values": others,
                   "saved_freed": freed, "sequence_nr": fn._sequence_nr() if hasattr(fn, "_sequence_nr") else None,
                   "names": its_names}
        if fn is root:
            output_name = known.of(tensor)
            details["output"] = {"name": output_name, **_tensor_facts(tensor)}
            if output_name and output_name not in its_names:
                details["names"] = [output_name, *its_names]
        nodes[node_id] = Node(node_id, "op", cls, details)

    # a saved tensor learns which other saved nodes share its memory, then drops the raw key
    for _, sharers in saved_storage.values():
        for sid in sharers:
            n = nodes[sid]
            d = {k: v for k, v in n.details.items() if k != "storage"}
            d["shares_storage_with"] = [s for s in sharers if s != sid]
            nodes[sid] = Node(sid, n.kind, n.label, d)
    ordered = tuple(sorted(nodes.values(), key=lambda n: int(n.id[1:])))
    c = {k: sum(n.kind == k for n in ordered) for k in KINDS}
    note = (f"{c['op']} ops, {c['accumulate']} AccumulateGrad, {c['leaf']} leaves, "
            f"{c['saved']} saved tensors")
    if truncated:
        note += f" (cut short at about {max_nodes} nodes)"
    return Graph(ordered, tuple(edges), "n0", saved_bytes=sum(b for b, _ in saved_storage.values()),
                 saved_bytes_all=saved_all, truncated=truncated, note=note)


def without_saved(graph: Graph) -> Graph:
    """The same graph with the saved-tensor nodes left out (a lighter picture of a big graph)."""
    keep = tuple(n for n in graph.nodes if n.kind != "saved")
    ids = {n.id for n in keep}
    return Graph(keep, tuple(e for e in graph.edges if e[0] in ids and e[1] in ids), graph.root,
                 graph.saved_bytes, graph.saved_bytes_all, graph.truncated, graph.note)


# ---- layout ----

def display_label(node: Node) -> str:
    """The text drawn in a node's box: the label, plus the name of a named result ("SumBackward0 (loss)")."""
    names = node.details.get("names") if node.kind == "op" else None
    return f"{node.label} ({', '.join(names)})" if names else node.label


def node_size(node: Node) -> tuple[float, float]:
    """(width, height) of a node's box in SVG pixels."""
    return (max(MIN_W, CHAR_W * len(display_label(node)) + PAD_W),
            SAVED_H if node.kind == "saved" else NODE_H)


def layers(graph: Graph) -> list[list[str]]:
    """Rows of node ids, output first: each node one row below the lowest node pointing to it."""
    return [sorted(gen, key=lambda i: int(i[1:])) for gen in nx.topological_generations(graph.to_networkx())]


def _order_rows(rows, preds, succs, sweeps):
    """Barycentric crossing reduction: sort each row by the mean position of its neighbours."""
    pos = {}

    def number(row):
        mid = (len(row) - 1) / 2
        for i, v in enumerate(row):
            pos[v] = i - mid  # centred, so rows of different widths line up on their middles

    for row in rows:
        number(row)
    for sweep in range(sweeps):
        down = sweep % 2 == 0
        for row in (rows[1:] if down else rows[-2::-1]):
            near = preds if down else succs
            key = {v: (sum(pos[u] for u in near[v]) / len(near[v]) if near[v] else pos[v]) for v in row}
            row.sort(key=lambda v: key[v])  # stable: ties keep their order
            number(row)
    return rows


def _fit_row(row, want, width, weight=None):
    """x for each node of a row, in order, as close as possible to `want`, boxes not overlapping.

    Minimises sum weight_v * (x_v - want_v)**2, so a heavy node keeps its place and light ones make
    room. With offsets o_i (the least room nodes 0..i need), x_i = z_i + o_i with z non-decreasing: a
    weighted isotonic regression of want_i - o_i, solved exactly by pooling adjacent violators."""
    offsets, o = [], 0.0
    for i, v in enumerate(row):
        if i:
            o += (width[row[i - 1]] + width[v]) / 2 + GAP
        offsets.append(o)
    blocks = []  # [weighted mean, total weight, count]
    for v, off in zip(row, offsets):
        blocks.append([want[v] - off, 1.0 if weight is None else weight[v], 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, c2 = blocks.pop()
            m1, w1, c1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    z = [m for m, _, c in blocks for _ in range(c)]
    return {v: zi + off for v, zi, off in zip(row, z, offsets)}


@dataclass(frozen=True)
class Layout:
    positions: dict[str, tuple[float, float]]              # node id -> centre of its box
    bends: dict[tuple[str, str], list[tuple[float, float]]]  # an edge that skips rows -> the points it passes
    rows: list[list[str]]                                   # node ids per row, output's row first, left to right


def layout_full(graph: Graph, *, sweeps: int = 4, max_bends: int | None = None) -> Layout:
    """layout() plus the route of every edge that skips rows, so it can be drawn around the boxes between.

    An edge from row r to row r + k (k > 1) gets k - 1 invisible points, one per row it crosses;
    they take part in the ordering and placement like narrow nodes (the usual Sugiyama trick).
    max_bends caps how many such points are made (default: 4 per node, longest edges last),
    so a graph with many long edges (a weight shared by every step of a long loop) stays fast."""
    if not graph.nodes:
        return Layout({}, {}, [])
    rows = layers(graph)
    rank = {v: r for r, row in enumerate(rows) for v in row}
    width = {n.id: node_size(n)[0] for n in graph.nodes}
    kind = {n.id: n.kind for n in graph.nodes}
    preds: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
    succs: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
    budget = 4 * len(graph.nodes) if max_bends is None else max_bends
    chains = {}
    for a, b in sorted(graph.edges, key=lambda e: rank[e[1]] - rank[e[0]]):
        span = rank[b] - rank[a]
        path = [a]
        if 1 < span <= budget + 1:
            budget -= span - 1
            for r in range(rank[a] + 1, rank[b]):
                d = f"~{a}>{b}#{r}"
                rows[r].append(d)
                width[d], kind[d], preds[d], succs[d] = DUMMY_W, "bend", [], []
                path.append(d)
            chains[(a, b)] = path[1:]
        path.append(b)
        for u, v in itertools.pairwise(path):
            succs[u].append(v)
            preds[v].append(u)
    rows = _order_rows(rows, preds, succs, sweeps)
    # weight: 1 + how many rows hang below a node, so the long path to the leaves keeps straight
    # and short side branches (AccumulateGrad, saved tensors) move aside
    weight: dict[str, int] = {}
    for row in reversed(rows):
        for v in row:
            weight[v] = 1 + max((weight[u] for u in succs[v]), default=0)
    x = {}
    for row in rows:  # first placement: each row packed around 0
        x.update(_fit_row(row, dict.fromkeys(row, 0.0), width))
    # below an op, the path to the leaves pulls; the tensors it saved only hang beside it
    spine = {v: [u for u in succs[v] if kind[u] != "saved"] or succs[v] for v in succs}

    def pull(v, near):
        if not near:
            return x[v]
        return sum(x[u] * weight[u] for u in near) / sum(weight[u] for u in near)

    for down in (True, False, True):  # pull each node towards its neighbours, row by row
        for row in (rows[1:] if down else rows[-2::-1]):
            want = {v: pull(v, preds[v] if down else spine[v]) for v in row}
            x.update(_fit_row(row, want, width, weight))
    real = [v for v in x if kind[v] != "bend"]
    centre = (min(x[v] - width[v] / 2 for v in real) + max(x[v] + width[v] / 2 for v in real)) / 2
    at = {v: (round(x[v] - centre, 2), float(r * ROW_H)) for r, row in enumerate(rows) for v in row}
    return Layout({v: at[v] for v in real}, {e: [at[d] for d in path] for e, path in chains.items()},
                  [[v for v in row if kind[v] != "bend"] for row in rows])


def layout(graph: Graph, *, sweeps: int = 4) -> dict[str, tuple[float, float]]:
    """{node id: (x, y)}: the centre of each node's box, in SVG pixels.

    y grows downward: the output's row is y = 0, then one row every ROW_H pixels, so every edge
    goes from a smaller y to a larger one. Boxes in one row never overlap. x is centred on 0."""
    return layout_full(graph, sweeps=sweeps).positions
