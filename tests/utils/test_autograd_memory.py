"""The autograd memory measurements: exact bytes and node counts on small graphs whose contents are known.

Covers storage_key, graph_stats (known graphs, shared storages counted once, nested structures,
generators, custom Functions, in-place-modified saves, other pack hooks, meta tensors),
SavedTensorTracker (bytes as packed, dropping after backward and when the graph's last holder goes,
no reference cycle for saved outputs, re-entry), RecordingCounter, live_graph_stats, and the loop
meters (measure_loop, measure_steps, LoopMeter with a stand-in allocator and in its own thread,
steady_growth, BatchProbe): the leaky evaluation loop grows by a constant number of bytes and nodes,
the fixed ones stay flat, and a training loop with backward leaks nodes, not bytes."""
import gc
import weakref
from dataclasses import dataclass

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from utils.autograd_memory import (
    BatchProbe,
    GraphStats,
    LoopMeter,
    RecordingCounter,
    SavedTensorTracker,
    accelerator_allocated,
    graph_stats,
    live_graph_stats,
    measure_loop,
    measure_steps,
    steady_growth,
    storage_key,
)
from utils.example_loops import batches, item_eval, leaky_eval, mlp, no_grad_eval, train

F32 = 4  # bytes per float32


@pytest.fixture
def no_gc():
    """Refcounting only: what the tests see freed is freed at once, not by a later collection."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def linear43():
    torch.manual_seed(0)
    return nn.Linear(4, 3)


# ---- known graphs ----

def test_linear_on_a_batch_of_two_saves_its_input(no_gc):
    lin, x = linear43(), torch.randn(2, 4)
    with SavedTensorTracker() as tracker:
        y = lin(x)
    # addmm saves its input (2 x 4 floats) to compute weight's gradient; the weight itself is not
    # saved, because the input does not require grad.
    assert (tracker.bytes_alive, tracker.tensors_alive, tracker.packed) == (2 * 4 * F32, 1, 1)
    stats = graph_stats(y)
    assert stats == GraphStats(nodes=4, saved_tensors=1, saved_bytes=32, tensors=1)
    assert stats.node_types == {"AddmmBackward0": 1, "TBackward0": 1, "AccumulateGrad": 2}
    assert stats.has_graph


def test_an_input_that_requires_grad_makes_the_weight_saved_too(no_gc):
    lin, x = linear43(), torch.randn(2, 4, requires_grad=True)
    with SavedTensorTracker() as tracker:
        y = lin(x)
    # now also weight.t(), a view: it counts the weight's whole storage, 3 x 4 floats
    assert tracker.bytes_alive == graph_stats(y).saved_bytes == 2 * 4 * F32 + 3 * 4 * F32
    assert graph_stats(y).nodes == 5   # and an AccumulateGrad for x


def test_a_storage_saved_twice_counts_once(no_gc):
    torch.manual_seed(0)
    first, second = nn.Linear(4, 5), nn.Linear(5, 1)
    x = torch.randn(3, 4)
    with SavedTensorTracker() as tracker:
        out = second(torch.relu(first(x)))
    # saved: x (3x4), relu's output (3x5) by relu AND by second's addmm, second.weight (5 floats)
    expected = (3 * 4 + 3 * 5 + 5) * F32
    assert (tracker.bytes_alive, tracker.tensors_alive, tracker.storages_alive) == (expected, 4, 3)
    assert graph_stats(out).saved_bytes == expected and graph_stats(out).saved_tensors == 4
    assert tracker.packed_bytes == expected + 3 * 5 * F32   # counted at each save


def test_bytes_drop_after_backward_and_when_the_graph_goes(no_gc):
    lin = linear43()
    x = torch.randn(2, 4, requires_grad=True)
    with SavedTensorTracker() as tracker:
        y = lin(x).sum()
    assert tracker.bytes_alive == 80 and tracker.peak_bytes == 80
    y.backward()
    assert (tracker.bytes_alive, tracker.tensors_alive) == (0, 0)     # backward freed them
    after = graph_stats(y)
    assert (after.nodes, after.saved_bytes, after.saved_tensors) == (6, 0, 0)   # nodes stay, empty
    with tracker:                                                      # a tracker can be re-entered
        z = lin(x)
    assert tracker.bytes_alive == 80 and tracker.packed == 4
    del z                                                              # the graph's last holder
    assert tracker.bytes_alive == 0 and tracker.peak_bytes == 80
    with pytest.raises(RuntimeError, match="already active"), tracker, tracker:
        pass
    with pytest.raises(RuntimeError, match="without being entered"):
        tracker.__exit__(None, None, None)  # left once more: it has no hooks to take off


def test_saved_outputs_make_no_reference_cycle(no_gc):
    a = torch.randn(1000, requires_grad=True)
    with SavedTensorTracker() as tracker:
        y = a.exp()                      # exp saves its own output
    assert tracker.bytes_alive == 4000
    alive = weakref.ref(y)
    del y
    assert alive() is None and tracker.bytes_alive == 0     # freed at once, no collector needed


def test_no_grad_and_inference_mode_save_and_record_nothing(no_gc):
    lin, x = linear43(), torch.randn(2, 4)
    for mode in (torch.no_grad, torch.inference_mode):
        with SavedTensorTracker() as tracker, RecordingCounter() as rec, mode():
            y = lin(x).relu().sum()
        assert (tracker.packed, rec.recorded, rec.calls > 0) == (0, 0, True)
        assert graph_stats(y) == GraphStats(tensors=1) and not graph_stats(y).has_graph


def test_recording_counter_names_what_was_recorded():
    lin, x = linear43(), torch.randn(2, 4)
    with RecordingCounter() as rec:
        loss = lin(x).relu().sum()
        loss.item()
        lin.weight.detach()
    assert rec.recorded == 3 and rec.names == ["linear", "relu", "sum"]
    with RecordingCounter() as rec:
        loss.contiguous()                # hands back loss itself: nothing new recorded
    assert rec.recorded == 0


def test_eval_mode_alone_still_records(no_gc):
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1)).eval()
    with SavedTensorTracker() as tracker:
        out = model(torch.randn(2, 4))
    assert tracker.packed > 0 and graph_stats(out).nodes > 0


# ---- graph_stats walks what the user holds ----

def test_graph_stats_walks_nested_structures_and_counts_shared_graphs_once(no_gc):
    lin = linear43()
    y1, y2 = lin(torch.randn(2, 4)), lin(torch.randn(2, 4))
    one = graph_stats(y1)
    both = graph_stats({"losses": [y1, (y2, 1.5)], "n": 3, "name": "run"})
    # two graphs share the parameters' AccumulateGrad nodes: 4 + 4 - 2
    assert (both.nodes, both.saved_bytes, both.tensors) == (6, 64, 2)
    assert graph_stats(y1, y1, [y1]) == one
    assert graph_stats(1.5, None, "text", [2, 3.0]) == GraphStats()
    assert graph_stats(lin) == GraphStats(tensors=2)            # parameters are leaves: no graph
    assert graph_stats(y1.detach()) == GraphStats(tensors=1)
    assert graph_stats(y1.grad_fn).nodes == 4                   # a node on its own is a root too


def test_graph_stats_finds_graphs_in_objects_modules_and_generators(no_gc):
    lin = linear43()

    @dataclass
    class Log:
        running: object

    class Slotted:
        __slots__ = ("kept",)

        def __init__(self, kept):
            self.kept = kept

    class Caching(nn.Module):   # the bug of caching an activation on the module
        def __init__(self):
            super().__init__()
            self.lin = lin
            self.last = None

        def forward(self, x):
            self.last = self.lin(x)
            return self.last.detach()

    class Proxy:                # an object that refuses to be looked into
        def __getattribute__(self, name):
            raise KeyError(name)

    assert graph_stats(Log(lin(torch.randn(2, 4)))).nodes == 4
    assert graph_stats([Proxy(), lin(torch.randn(2, 4))]).nodes == 4
    assert graph_stats(Slotted(lin(torch.randn(2, 4)))).saved_bytes == 32
    cache = Caching()
    cache(torch.randn(2, 4))
    assert graph_stats(cache).nodes == 4

    def loop():
        total = 0.0
        for _ in range(3):
            total += lin(torch.randn(2, 4)).sum()
            yield
    gen = loop()
    next(gen)
    next(gen)
    assert graph_stats(gen).saved_bytes == 2 * 32           # the suspended frame's `total`
    gen.close()
    assert graph_stats(gen) == GraphStats()                 # a finished generator holds nothing


def test_custom_functions_other_pack_hooks_and_inplace_changes(no_gc):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            (_x,) = ctx.saved_tensors
            return grad * 2

    class Stash(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.kept = x * 3           # not saved through save_for_backward: kept by the node itself
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    a = torch.randn(10, requires_grad=True)
    y = Double.apply(a)
    assert graph_stats(y).saved_bytes == 40
    y.sum().backward()
    assert graph_stats(y).saved_bytes == 0
    with SavedTensorTracker() as tracker:
        s = Stash.apply(a)
    assert graph_stats(s).saved_bytes == 40 and tracker.packed == 0
    s.sum().backward()
    assert graph_stats(s).saved_bytes == 40       # backward does not free ctx attributes

    with torch.autograd.graph.saved_tensors_hooks(lambda t: ("mine", t.detach()), lambda p: p[1]):
        z = a * a                      # another hook's packed object: the tensor is found inside
    assert graph_stats(z).saved_bytes == 40

    b = a.clone()
    c = b * b
    with torch.no_grad():
        b.add_(1)                      # c's saved b is now stale: unpacking it would raise
    assert graph_stats(c).saved_bytes == 40


def test_storage_key_and_meta_tensors():
    t = torch.arange(12.0).reshape(3, 4)
    assert storage_key(t) == storage_key(t.T) == storage_key(t[1:]) == storage_key(t.detach())
    assert storage_key(t)[1] == 48 and storage_key(t.clone())[0] != storage_key(t)[0]
    assert storage_key(torch.empty(0)) == (None, 0)
    assert storage_key(torch.ones(3, device="meta")) == (None, 0)
    w = torch.ones(3, 3, device="meta", requires_grad=True)
    out = torch.ones(2, 3, device="meta", requires_grad=True) @ w
    assert graph_stats(out).nodes == 3 and graph_stats(out).saved_bytes == 0


def test_live_graph_stats_sees_graphs_held_anywhere(no_gc):
    before = live_graph_stats()
    held = {"deep": [linear43()(torch.randn(2, 4))]}
    during = live_graph_stats()
    assert during.nodes >= before.nodes + 2 and during.saved_bytes >= before.saved_bytes + 32
    del held
    assert live_graph_stats().saved_bytes == before.saved_bytes


# ---- loops ----

# one batch's graph: x (256x32), the hidden activation (256x128), the prediction and the target (256x1)
PER_BATCH = (256 * 32 + 256 * 128 + 256 + 256) * F32


def test_leaky_eval_grows_by_one_graph_per_iteration_and_the_fixes_stay_flat(no_gc, covered):
    assert PER_BATCH == 165_888
    leaky = measure_loop(leaky_eval(mlp(), batches()), allocated=None)
    assert leaky["iteration"] == list(range(1, 11)) and set(leaky) == {
        "iteration", "saved_bytes", "saved_tensors", "nodes"}           # no allocator figures on CPU
    assert steady_growth(leaky["saved_bytes"], skip=0) == PER_BATCH
    assert leaky["saved_bytes"][0] == PER_BATCH + 128 * F32             # + the last layer's weight, once
    assert steady_growth(leaky["nodes"], skip=0) == 7                   # add, mse, 2 addmm, relu, 2 t
    assert leaky["nodes"][0] == 11 and steady_growth(leaky["saved_tensors"], skip=0) == 6

    fixed = measure_loop(item_eval(mlp(), batches()), allocated=None)
    assert set(fixed["saved_bytes"]) == {PER_BATCH + 128 * F32} and set(fixed["nodes"]) == {10}
    none = measure_loop(no_grad_eval(mlp(), batches()), allocated=None)
    assert set(none["saved_bytes"]) == set(none["nodes"]) == {0}
    covered(f"leaky eval: +{PER_BATCH:,} saved bytes and +7 nodes per iteration; .item() flat; no_grad 0")


def test_leaky_training_keeps_nodes_not_bytes(no_gc):
    leaky = measure_loop(train(mlp(), batches(), leaky=True), allocated=None)
    assert set(leaky["saved_bytes"]) == {0}                             # backward freed every save
    assert steady_growth(leaky["nodes"]) == 7
    fixed = measure_loop(train(mlp(), batches(), leaky=False), allocated=None)
    assert set(fixed["saved_bytes"]) == {0} and set(fixed["nodes"]) == {10}


def test_measure_loop_stops_early_and_frees_at_the_end(no_gc):
    meter = LoopMeter(lambda: leaky_eval(mlp(), batches(5)), allocated=None)
    for _ in range(3):
        meter.step()
    assert meter.tracker.bytes_alive == 3 * PER_BATCH + 512
    assert meter.close() == 0 and meter.step() is None and meter.done
    short = measure_loop(leaky_eval(mlp(), batches(4)), 100, allocated=None)
    assert short["iteration"] == [1, 2, 3, 4]
    assert measure_loop(leaky_eval(mlp(), batches(9)), 2, allocated=None)["iteration"] == [1, 2]
    assert measure_loop([1, 2, 3], allocated=None)["nodes"] == [0, 0, 0]   # any iterable
    with pytest.raises(TypeError, match="generator"):
        measure_loop(42)


def test_grad_mode_is_restored_after_a_loop_that_yields_inside_no_grad(no_gc):
    for own_thread in (False, True):
        meter = LoopMeter(no_grad_eval(mlp(), batches(5)), allocated=None, own_thread=own_thread)
        meter.step()
        # in the caller's thread the generator's no_grad is still on between iterations;
        # in a thread of its own it never reaches the caller
        assert torch.is_grad_enabled() is own_thread
        meter.close()
        assert torch.is_grad_enabled()
    assert measure_loop(no_grad_eval(mlp(), batches(3)), allocated=None)["nodes"] == [0, 0, 0]
    assert torch.is_grad_enabled()


def test_measure_steps_walks_the_return_value_and_the_kept_state(no_gc):
    lin, state = linear43(), {"losses": []}

    def step(i):
        loss = lin(torch.randn(2, 4)).sum()
        state["losses"].append(loss)       # the bug, through a list
        return i

    h = measure_steps(step, 4, keep=state, allocated=None)
    assert h["saved_bytes"] == [32, 64, 96, 128] and h["nodes"] == [5, 8, 11, 14]
    assert measure_steps(lambda i: lin(torch.randn(2, 4)), 3, allocated=None)["nodes"] == [4, 4, 4]


def test_allocator_figures_are_net_bytes_of_each_loops_own_iterations():
    counter = {"bytes": 1000}

    def loop():
        for _ in range(3):
            counter["bytes"] += 256        # what this loop's iteration allocates and keeps
            yield

    h = measure_loop(loop(), allocated=lambda: counter["bytes"])
    assert h["accelerator_bytes"] == [256, 512, 768]
    if not torch.accelerator.is_available():
        assert accelerator_allocated() is None
        assert "accelerator_bytes" not in measure_loop(loop())


def test_steady_growth():
    assert steady_growth([5, 10, 12, 14]) == 2
    assert steady_growth([3, 3, 3], skip=0) == 0
    with pytest.raises(ValueError, match=r"steps are \[1, 2\]"):
        steady_growth([0, 1, 3, 4])
    with pytest.raises(ValueError, match="at least"):
        steady_growth([1, 2])


# ---- BatchProbe: measuring a function that consumes a loader (how a grader can watch train_epoch) ----

def train_epoch_like(model, loader, opt, leaky):
    running = 0.0
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss if leaky else loss.item()
    return running


def evaluate_like(model, loader, leaky):
    total = 0.0
    for _, (x, y) in enumerate(loader):       # the probe sees the caller through enumerate too
        if leaky:
            total = total + F.mse_loss(model(x), y)
        else:
            with torch.no_grad():
                total += F.mse_loss(model(x), y).item()
    return total


def test_batch_probe_watches_the_function_consuming_the_loader(no_gc, covered):
    data = list(batches(5))
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for leaky, nodes in ((True, [11, 18, 25, 32, 39]), (False, [10] * 5)):
        probe = BatchProbe(data)
        with SavedTensorTracker() as probe.tracker:
            train_epoch_like(model, probe, opt, leaky)
        assert probe.history == {"iteration": [1, 2, 3, 4, 5], "nodes": nodes, "saved_bytes": [0] * 5}

    probe = BatchProbe(data, tracker=SavedTensorTracker())
    with probe.tracker:
        kept = evaluate_like(model, probe, leaky=True)
    assert steady_growth(probe.history["saved_bytes"], skip=0) == PER_BATCH
    assert steady_growth(probe.history["nodes"], skip=0) == 7
    del kept
    assert probe.tracker.bytes_alive == 0
    probe = BatchProbe(data)                  # no tracker: nodes only
    evaluate_like(model, probe, leaky=False)
    assert probe.history["nodes"] == [0] * 5 and probe.history["saved_bytes"] == [0] * 5
    evaluate_like(model, probe, leaky=False)  # iterable again: the history goes on
    assert probe.history["iteration"] == list(range(1, 11))
    assert BatchProbe([]).history["iteration"] == [] and list(BatchProbe([])) == []
    covered("BatchProbe: running += loss in a train_epoch-like function grows 7 nodes per batch; .item() flat")
