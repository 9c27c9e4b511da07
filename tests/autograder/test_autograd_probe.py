"""Tests for autograder/autograd_probe.py: saved-tensor counts under grad, no_grad and
inference_mode; the leak probe on a correct loop and on the `total += loss` loop."""
import contextlib

import pytest
import torch
import torch.nn.functional as F

from autograder.autograd_probe import GraphLeakProbe, SavedTensorCount
from autograder.errors import GradingError


def test_counts_saved_tensors_only_when_recording(covered):
    w = torch.randn(4, 3, requires_grad=True)
    x = torch.randn(2, 4)
    with SavedTensorCount() as saved:
        torch.tanh(x @ w).sum()
    assert saved.count == 2  # mm saves x (for w's gradient) and tanh its result
    with SavedTensorCount() as saved, torch.no_grad():
        torch.tanh(x @ w).sum()
    assert saved.count == 0
    with SavedTensorCount() as saved, torch.inference_mode():
        torch.tanh(x @ w).sum()
    assert saved.count == 0
    covered("SavedTensorCount: >0 when recording, 0 under no_grad and inference_mode")


def run_epoch(keep_tensor_total: bool):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    probe = GraphLeakProbe(F.mse_loss)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(6)]
    total = 0
    for x, y in probe.batches(data):
        optimizer.zero_grad()
        loss = probe(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss if keep_tensor_total else loss.item()
    return probe, total


def test_leak_probe_tells_the_two_loops_apart(covered):
    good, total = run_epoch(keep_tensor_total=False)
    assert good.most_alive == 0 and isinstance(total, float)
    bad, total = run_epoch(keep_tensor_total=True)
    assert bad.most_alive == 5  # every batch but the last is still held by `total`
    covered("GraphLeakProbe: 0 stale graphs for .item(), 5 of 6 for total += loss")


def test_a_batch_whose_loss_is_computed_again_to_log_it_keeps_no_old_graph(covered):
    """Two losses a batch (one to step, one under no_grad to log): what counts is the batch whose
    graph is alive, not the loss; the second loss never made the first one's graph old."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(6)]
    for keep in (False, True):
        probe, kept = GraphLeakProbe(F.mse_loss), []
        for x, y in probe.batches(data):
            optimizer.zero_grad()
            loss = probe(model(x), y)
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                logged = probe(model(x), y).item()
            if keep:
                kept.append(loss)
        assert isinstance(logged, float)
        assert probe.most_alive == (5 if keep else 0)
    covered("GraphLeakProbe: a batch's loss computed again under no_grad to log it keeps no old graph; "
            "the step's losses kept in a list still show 5 stale graphs")


def test_a_loss_computed_by_another_function_than_the_probe_fails_closed(covered):
    # F.mse_loss named in the loop instead of the loss it was handed: the probe sees no graph,
    # so it vouches for none, and every graph kept alive would go unseen.
    model = torch.nn.Linear(3, 1)
    probe = GraphLeakProbe(F.mse_loss)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(6)]
    total = 0
    for x, y in probe.batches(data):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        total += loss
    with pytest.raises(GradingError) as info:
        _ = probe.most_alive
    assert str(info.value) == (
        "the loss function handed in computed 0 losses for 6 batches: each batch's loss must be computed by "
        "the loss function given (loss_fn(model(x), y)), never by another one named in the code.")
    # One loss through it, the rest past it, is no better.
    probe = GraphLeakProbe(F.mse_loss)
    for index, (x, y) in enumerate(probe.batches(data)):
        (probe if index == 0 else F.mse_loss)(model(x), y).backward()
    with pytest.raises(GradingError, match="computed 1 losses for 6 batches"):
        _ = probe.most_alive
    covered("GraphLeakProbe: losses computed past it (0 or 1 of 6 through it) fail closed")


def test_batches_counted_in_a_pass_of_their_own_need_no_loss():
    # The loop counts the examples first (a pass with no loss), then trains: one loss a batch.
    good, _ = run_epoch(keep_tensor_total=False)
    probe = GraphLeakProbe(F.mse_loss)
    model = torch.nn.Linear(3, 1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(6)]
    batches = probe.batches(data)
    count = sum(len(x) for x, _ in batches)
    for x, y in batches:
        probe(model(x), y).item()
    assert count == 24 and probe.most_alive == 0 and good.most_alive == 0
    assert GraphLeakProbe(F.mse_loss).most_alive == 0  # never handed out a batch: nothing to vouch for


def test_probe_keeps_the_loss_value():
    probe = GraphLeakProbe(F.mse_loss)
    pred, target = torch.randn(5), torch.randn(5)
    assert torch.equal(probe(pred, target).detach(), F.mse_loss(pred, target))


def test_checked_batches_can_be_iterated_again_and_have_a_length():
    probe = GraphLeakProbe(F.mse_loss)
    data = [(torch.ones(2), torch.ones(2))] * 3
    batches = probe.batches(data)
    assert len(batches) == 3 and len(list(batches)) == 3 and len(list(batches)) == 3


def test_counting_keeps_no_graph_alive():
    """The probe must not make recorded graphs immortal (ops that save their output, like exp)."""
    import gc
    import weakref
    w = torch.randn(3, requires_grad=True)
    with SavedTensorCount() as saved:
        e = torch.exp(w * 2)
        out = e.sum()
    alive = weakref.ref(e)
    assert saved.count >= 1
    out.backward()  # the graph still works with the detached copies
    assert torch.allclose(w.grad, 2 * torch.exp(w.detach() * 2))
    del e, out
    gc.collect()
    assert alive() is None


def deep_model():
    return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def checkpointed_evaluation(model, x, y):
    """Plain PyTorch, nothing patched: the loss of one batch, evaluated under torch.utils.checkpoint."""
    from torch.utils.checkpoint import checkpoint
    return checkpoint(lambda: F.cross_entropy(model(x), y), use_reentrant=False).item()


def test_evaluation_under_checkpoint_records_though_no_tensor_is_saved(covered):
    """The route: checkpoint's own saved-tensor hooks hide every saved tensor from an outer
    counter, though a graph is recorded. The module boundary sees it record."""
    model, x, y = deep_model(), torch.randn(8, 4), torch.randint(0, 3, (8,))
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        checkpointed_evaluation(model, x, y)
    assert packed == []  # what a count of saved tensors alone would read
    with SavedTensorCount() as saved:
        checkpointed_evaluation(model, x, y)
    assert saved.count == saved.recorded_modules == 4  # the Sequential and its three layers
    with SavedTensorCount() as saved, torch.no_grad():
        model(x)
    assert saved.count == 0
    covered("SavedTensorCount: an evaluation under torch.utils.checkpoint saves 0 tensors to an outer "
            "counter, and records 4 module calls at the module boundary")


def test_torch_rebound_by_name_does_not_blind_the_probe():
    """The route: functools.update_wrapper(torch.autograd, namespace) writes the namespace's
    names into torch.autograd, so torch.autograd.graph, looked up when a probe starts, is the
    writer's. The probe bound what it uses when it was imported."""
    import functools
    import types

    class NoHooks:
        def __init__(self, pack, unpack):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    real = torch.autograd.graph
    try:
        functools.update_wrapper(torch.autograd, types.SimpleNamespace(graph=types.SimpleNamespace(
            saved_tensors_hooks=NoHooks)))
        assert torch.autograd.graph.saved_tensors_hooks is NoHooks  # the route works
        w = torch.randn(4, 3, requires_grad=True)
        with SavedTensorCount() as saved:
            torch.tanh(torch.randn(2, 4) @ w)
        assert saved.count == 2
    finally:
        torch.autograd.graph = real
        for name in ("__wrapped__",):
            vars(torch.autograd).pop(name, None)


def test_clearing_what_the_probe_was_handed_hides_no_stale_graph(covered):
    """The route: a loop that keeps every graph (total += loss) and clears, through the loss
    function and the batches it was handed, every list or table they hold, and zeroes what it
    can. The probe's evidence is not in them: it still sees every stale graph."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    probe = GraphLeakProbe(F.mse_loss)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(6)]
    batches = probe.batches(data)
    total = 0
    for x, y in batches:
        loss = probe(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total = total + loss
        for handed in (probe, batches):
            for value in vars(handed).values():
                if isinstance(value, (list, dict, set)) and value is not data:  # the data: the epoch would end
                    value.clear()
            for name in ("most_alive", "markers"):
                with contextlib.suppress(AttributeError):
                    setattr(handed, name, 0)
    assert probe.most_alive == 5 and probe.stale_graphs() == 5
    covered("GraphLeakProbe: a loop that clears every list the probe and its batches hold still shows 5 stale graphs")


def test_a_pickled_probe_keeps_working_with_a_record_of_its_own():
    """The grader hands a test's probe and its batches to the student's kernel in one pickle:
    there they still mark and check, against a record of their own."""
    import io
    probe = GraphLeakProbe(F.mse_loss)
    batches = probe.batches([(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)])
    buffer = io.BytesIO()
    torch.save([probe, batches], buffer)
    buffer.seek(0)
    copy, copied_batches = torch.load(buffer, weights_only=False)
    assert copied_batches.probe is copy
    total = 0
    for x, y in copied_batches:
        total = total + copy(x @ torch.randn(3, 1, requires_grad=True), y)
    assert copy.most_alive == 3 and probe.most_alive == 0
