"""Extraction and layout of autograd graphs, without a browser.

Covers extract_graph on small graphs whose shape is known exactly (node kinds, labels, edges, which
inputs are absent because they need no grad), saved tensors (which ones, exact bytes for several dtypes,
storage shared between saved tensors counted once, freed after backward, tuples of tensors, custom
autograd.Functions), names, empty and leaf-only graphs, truncation; and layout/layout_full invariants
(every edge goes down to a later row, one bend per skipped row, no two boxes overlapping in a row, a
chain drawn straight), on the small graphs, on seeded random computations and on a 300-node graph."""
import itertools
import random

import networkx as nx
import pytest
import torch

from utils.autograd_graph import (
    KINDS,
    ROW_H,
    Graph,
    extract_graph,
    layers,
    layout,
    layout_full,
    node_size,
    saved_values,
    without_saved,
)


def _xwb(x_grad=False):
    torch.manual_seed(0)
    x = torch.randn(4, 3, requires_grad=x_grad)
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return x, w, b, (x * w + b).sum()


def _shape_of(g: Graph):
    """The graph as (kind, label) per node and edges between labels: what a reader sees."""
    return ([(n.kind, n.label) for n in g.nodes],
            sorted((g.node(a).label, g.node(b).label) for a, b in g.edges))


def test_x_times_w_plus_b():
    x, w, b, loss = _xwb()
    g = extract_graph(loss, names={"x": x, "w": w, "b": b})
    nodes, edges = _shape_of(g)
    assert nodes == [("op", "SumBackward0"), ("op", "AddBackward0"), ("op", "MulBackward0"),
                     ("accumulate", "AccumulateGrad"), ("saved", "self=x (4, 3) 48 B"),
                     ("accumulate", "AccumulateGrad"), ("leaf", "b (3,)"), ("leaf", "w (3,)")]
    assert edges == sorted([("SumBackward0", "AddBackward0"), ("AddBackward0", "MulBackward0"),
                            ("AddBackward0", "AccumulateGrad"), ("MulBackward0", "AccumulateGrad"),
                            ("MulBackward0", "self=x (4, 3) 48 B"), ("AccumulateGrad", "b (3,)"),
                            ("AccumulateGrad", "w (3,)")])
    # SumBackward0 -> AddBackward0 -> MulBackward0 -> AccumulateGrad(w); AddBackward0 -> AccumulateGrad(b)
    assert g.root == "n0" and g.children("n0") == ["n1"]
    add = g.node("n1")
    assert [g.node(i).label for i in add.details["inputs"]] == ["MulBackward0", "AccumulateGrad"]
    mul = g.node("n2")
    assert mul.details["inputs"][0] is None                       # x needs no grad: next_functions has None
    acc_w = g.node(mul.details["inputs"][1])
    assert (acc_w.kind, acc_w.details["leaf_name"]) == ("accumulate", "w")
    assert g.node(acc_w.details["leaf"]).label == "w (3,)"
    assert [g.node(i).details["name"] for i in add.details["inputs"][1:]
            for i in [g.node(i).details["leaf"]]] == ["b"]
    assert g.counts() == {"op": 3, "accumulate": 2, "leaf": 2, "saved": 1}
    assert "x (4, 3)" not in g.labels("leaf")                     # x is not a leaf of this graph
    assert g.node("n0").details["output"] == {"name": None, "shape": [], "dtype": "float32", "device": "cpu",
                                              "bytes": 4}
    assert g.saved_bytes == g.saved_bytes_all == 48


def test_x_joins_the_graph_when_it_requires_grad():
    x, w, b, loss = _xwb(x_grad=True)
    g = extract_graph(loss, names={"x": x, "w": w, "b": b})
    assert sorted(g.labels("leaf")) == ["b (3,)", "w (3,)", "x (4, 3)"]
    mul = next(n for n in g.of_kind("op") if n.label == "MulBackward0")
    assert None not in mul.details["inputs"]
    # each input's gradient needs the other input, so both are saved now
    assert sorted((s["attr"], s["bytes"]) for s in mul.details["saved"]) == [("other", 12), ("self", 48)]
    assert sorted(g.labels("saved")) == ["other=w (3,) 12 B", "self=x (4, 3) 48 B"]


def test_nothing_recorded_and_a_lone_leaf():
    g = extract_graph(torch.ones(3) * 2)
    assert (g.nodes, g.edges, g.root) == ((), (), None) and "does not require grad" in g.note
    w = torch.ones(3, requires_grad=True)
    g = extract_graph(w, names={"w": w})
    assert [(n.id, n.kind, n.label) for n in g.nodes] == [("n0", "leaf", "w (3,)")] and g.edges == ()
    assert g.node("n0").details["requires_grad"] is True and g.node("n0").details["grad"] is None
    with pytest.raises(TypeError, match="takes a tensor"):
        extract_graph([1.0, 2.0])
    with pytest.raises(TypeError, match="'w' maps to list"):
        extract_graph(w * 2, names={"w": [1.0]})


@pytest.mark.parametrize(("dtype", "size"), [(torch.float32, 4), (torch.float64, 8), (torch.float16, 2),
                                         (torch.bfloat16, 2)])
def test_saved_bytes_are_numel_times_element_size(dtype, size):
    x = torch.randn(32, 64).to(dtype)
    w = torch.randn(64, 16).to(dtype).requires_grad_()
    out = torch.relu(x @ w).sum()
    g = extract_graph(out, names={"x": x, "w": w})
    saved = {n.label.split(" ")[0]: n.details["bytes"] for n in g.of_kind("saved")}
    # mm saves x (to compute w's gradient) but not w (x needs no gradient); relu saves its result
    assert saved == {"self=x": 32 * 64 * size, "result": 32 * 16 * size}
    assert g.saved_bytes == g.saved_bytes_all == (32 * 64 + 32 * 16) * size


def test_shared_storage_is_counted_once():
    a = torch.randn(10, 5, dtype=torch.float64, requires_grad=True)
    h = a.exp()
    out = (h * h).sum()
    g = extract_graph(out, names={"a": a, "h": h})
    saved = g.of_kind("saved")
    assert sorted(n.label for n in saved) == ["other=h (10, 5) 400 B", "result=h (10, 5) 400 B",
                                              "self=h (10, 5) 400 B"]
    assert g.saved_bytes_all == 1200 and g.saved_bytes == 400   # exp's result and both of mul's inputs: one h
    ids = {n.id for n in saved}
    for n in saved:
        assert set(n.details["shares_storage_with"]) == ids - {n.id}
    assert next(n for n in g.of_kind("op") if n.label == "ExpBackward0").details["names"] == ["h"]


def test_a_view_shares_its_bases_storage():
    x = torch.randn(5, 6)
    w, v = torch.randn(6, 4, requires_grad=True), torch.randn(5, 2, requires_grad=True)
    out = (x @ w).sum() + (x.t() @ v).sum()    # each mm saves its left input: x, then the view x.t()
    g = extract_graph(out, names={"x": x})
    assert sorted(n.label for n in g.of_kind("saved")) == ["self (6, 5) 120 B", "self=x (5, 6) 120 B"]
    a, b = g.of_kind("saved")
    assert a.details["shares_storage_with"] == [b.id] and b.details["shares_storage_with"] == [a.id]
    assert (g.saved_bytes, g.saved_bytes_all) == (120, 240)


def test_saved_tensors_after_backward_are_freed():
    _, w, b, loss = _xwb()
    loss.backward()
    g = extract_graph(loss, names={"w": w, "b": b})
    assert g.counts() == {"op": 3, "accumulate": 2, "leaf": 2, "saved": 0}
    mul = next(n for n in g.of_kind("op") if n.label == "MulBackward0")
    assert mul.details["saved_freed"] is True and mul.details["saved"] == []
    assert next(n for n in g.of_kind("leaf") if n.details["name"] == "w").details["grad"] == [3]
    _, w, b, loss = _xwb()
    loss.backward(retain_graph=True)
    assert extract_graph(loss).counts()["saved"] == 1              # kept: retain_graph=True


def test_same_input_twice_is_one_edge_and_tuples_of_saved_tensors_are_read():
    x = torch.randn(5, 3, requires_grad=True)
    g = extract_graph((x * x).sum())
    mul = g.node("n1")
    assert mul.details["inputs"][0] == mul.details["inputs"][1]
    assert [e for e in g.edges if e[0] == "n1" and g.node(e[1]).kind != "saved"] == [("n1", mul.details["inputs"][0])]
    g = extract_graph(x[torch.tensor([0, 2])].sum())
    assert [n.label for n in g.of_kind("saved")] == ["indices[0] (2,) 16 B"]


def test_custom_function_saved_tensors_and_non_tensor_values():
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b, grad * a

    a = torch.randn(3, requires_grad=True)
    g = extract_graph(Scale.apply(a, torch.randn(3)).pow(2).sum())
    assert g.labels("op") == ["SumBackward0", "PowBackward0", "ScaleBackward"]
    assert sorted(n.label for n in g.of_kind("saved")) == ["saved_tensors[0] (3,) 12 B",
                                                           "saved_tensors[1] (3,) 12 B", "self (3,) 12 B"]
    assert g.node("n1").details["saved_values"] == {"exponent": "2"}
    tensors, others, freed = saved_values((torch.randn(2, requires_grad=True) ** 3).grad_fn)
    assert [n for n, _ in tensors] == ["self"] and others == {"exponent": "3"} and freed is False


def test_names_reach_leaves_saved_tensors_and_results():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    out = model(x)
    loss = out.pow(2).mean()
    g = extract_graph(loss, names={**dict(model.named_parameters()), "x": x, "out": out, "loss": loss})
    assert sorted(g.labels("leaf")) == ["bias (2,)", "weight (2, 3)"]
    assert "mat1=x (4, 3) 48 B" in g.labels("saved")
    assert g.node("n0").details["names"] == ["loss"] and g.node("n0").details["output"]["name"] == "loss"
    assert next(n for n in g.of_kind("op") if n.label == "AddmmBackward0").details["names"] == ["out"]


def test_extraction_is_deterministic_and_without_saved_drops_only_saved():
    *_, loss = _xwb()
    assert extract_graph(loss).to_dict() == extract_graph(loss).to_dict()
    g = extract_graph(loss)
    light = without_saved(g)
    assert light.counts() == {**g.counts(), "saved": 0} and light.saved_bytes == g.saved_bytes
    assert all(light.node(a).kind != "saved" and light.node(b).kind != "saved" for a, b in light.edges)


def test_truncation_says_so():
    h = torch.ones(2, requires_grad=True)
    for _ in range(200):
        h = h * 1.0001
    g = extract_graph(h.sum(), max_nodes=50)
    assert g.truncated and len(g) <= 52 and "cut short" in g.note
    ids = {n.id for n in g.nodes}
    assert all(a in ids and b in ids for a, b in g.edges)
    assert not extract_graph(h.sum()).truncated


# ---- layout ----

def _check_layout(g: Graph):
    plan = layout_full(g)
    pos = plan.positions
    assert set(pos) == {n.id for n in g.nodes}
    assert pos == layout(g)
    assert len(set(pos.values())) == len(pos), "two nodes at the same position"
    row_of = {v: round(y / ROW_H) for v, (x, y) in pos.items()}
    assert all(y == row_of[v] * ROW_H for v, (x, y) in pos.items())
    for a, b in g.edges:                                        # every edge goes down, output side first
        assert row_of[b] > row_of[a], (g.node(a).label, g.node(b).label)
        points = plan.bends.get((a, b), [])
        assert [y for _, y in points] == [r * ROW_H for r in range(row_of[a] + 1, row_of[b])] or not points
    if g.root is not None:
        assert row_of[g.root] == 0
    width = {n.id: node_size(n)[0] for n in g.nodes}
    for row in plan.rows:                                        # boxes in a row never overlap
        xs = [pos[v][0] for v in row]
        assert xs == sorted(xs)
        for u, v in itertools.pairwise(row):
            assert pos[v][0] - pos[u][0] >= (width[u] + width[v]) / 2 - 1e-6
    assert plan.rows == [sorted(r, key=lambda v: pos[v][0]) for r in plan.rows]
    assert [sorted(r) for r in plan.rows] == [sorted(r) for r in layers(g)]
    return plan


def test_layout_of_the_small_graph():
    *_, loss = _xwb()
    g = extract_graph(loss)
    plan = _check_layout(g)
    assert [[g.node(v).label for v in sorted(r)] for r in layers(g)] == [
        ["SumBackward0"], ["AddBackward0"], ["MulBackward0", "AccumulateGrad"],
        ["self (4, 3) 48 B", "AccumulateGrad", "leaf (3,)"], ["leaf (3,)"]]
    assert plan.bends == {}
    assert layout(extract_graph(torch.ones(2))) == {}


def test_layers_are_networkx_generations():
    *_, loss = _xwb(x_grad=True)
    g = extract_graph(loss)
    assert [set(r) for r in layers(g)] == [set(r) for r in nx.topological_generations(g.to_networkx())]


def test_a_chain_is_drawn_straight():
    h = torch.ones(3, requires_grad=True)
    for _ in range(10):
        h = h + 1
    g = extract_graph(h.sum())
    assert g.counts() == {"op": 11, "accumulate": 1, "leaf": 1, "saved": 0}
    xs = {x for x, _ in _check_layout(g).positions.values()}
    assert xs == {0.0}


def test_an_edge_that_skips_rows_is_routed_through_them():
    x = torch.randn(3, requires_grad=True)
    h = x
    for _ in range(2):
        h = h + torch.sin(torch.exp(h) * 2)   # the residual edge skips the sin/mul/exp rows
    plan = _check_layout(extract_graph(h.sum()))
    assert len(plan.bends) == 2 and all(len(points) == 3 for points in plan.bends.values())
    assert layout_full(extract_graph(h.sum()), max_bends=0).bends == {}


_RANDOM_OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sin": lambda a, _: a.sin(),
               "exp": lambda a, _: (a * 0.1).exp(), "sub": lambda a, b: a - b, "relu": lambda a, _: torch.relu(a),
               "view": lambda a, _: a.view(3, 1).squeeze(1)}


def _random_computation(rng: random.Random) -> torch.Tensor:
    leaves = [torch.randn(3, requires_grad=rng.random() < 0.7) for _ in range(4)] + [torch.randn(3)]
    pool = list(leaves)
    for _ in range(rng.randint(5, 25)):
        a, b = rng.choice(pool), rng.choice(pool)
        op = rng.choice(["add", "mul", "sin", "exp", "sub", "relu", "view"])
        pool.append(_RANDOM_OPS[op](a, b))
    return sum(pool[-3:]).sum() + leaves[0].sum()


@pytest.mark.parametrize("seed", range(12))
def test_layout_invariants_on_random_computations(seed):
    g = extract_graph(_random_computation(random.Random(seed)))
    assert set(g.counts()) == set(KINDS)
    _check_layout(g)
    _check_layout(without_saved(g))


def test_a_300_node_graph_extracts_and_lays_out(covered):
    torch.manual_seed(0)
    h = torch.randn(4, 8)
    layers_ = [torch.nn.Linear(8, 8) for _ in range(30)]
    for layer in layers_:
        h = torch.tanh(layer(h))
    g = extract_graph(h.pow(2).mean())
    assert 300 <= len(g) <= 320
    assert g.counts() == {"op": 92, "accumulate": 60, "leaf": 60, "saved": 90}
    # each addmm saves its input (mat1, 4x8 floats) and, from the second layer on (the first input needs
    # no grad), the weight's transpose (mat2, 8x8, a view of the weight); each tanh saves its output, which
    # is also the next layer's mat1 (one storage); pow saves the last output
    assert g.saved_bytes_all == 30 * 128 + 29 * 256 + 30 * 128 + 128
    assert g.saved_bytes == 128 + 30 * 128 + 29 * 256
    plan = _check_layout(g)
    assert len(plan.rows) == 2 * 30 + 5     # tanh and addmm per layer; mean, pow, T, AccumulateGrad, leaf
    covered(f"autograd graph: exact small graphs, saved bytes in 4 dtypes, layout invariants on 12 random "
            f"graphs and a {len(g)}-node MLP")
