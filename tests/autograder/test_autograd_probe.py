"""Tests for autograder/autograd_probe.py: saved-tensor counts under grad, no_grad and
inference_mode; the leak probe on a correct loop and on the `total += loss` loop."""
import torch
import torch.nn.functional as F

from autograder.autograd_probe import GraphLeakProbe, SavedTensorCount


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
