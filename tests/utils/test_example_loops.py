"""example_loops: the unit's loops, measured: the leaky ones keep a graph per iteration, the
fixes do not, and the batches are the same for the same seed."""
import torch
import torch.nn.functional as F

from utils.autograd_memory import measure_loop, steady_growth
from utils.example_loops import batches, float_eval, item_eval, leaky_eval, mlp, no_grad_eval, train


def test_batches_are_seeded_and_shaped_for_regression_or_classes():
    (x, y), = batches(1)
    (x2, _y2), = batches(1)
    assert torch.equal(x, x2) and x.shape == (256, 32) and y.shape == (256, 1)
    (_, labels), = batches(1, features=64, classes=10)
    assert labels.dtype == torch.int64 and labels.shape == (256,) and int(labels.max()) < 10
    (x_meta, y_meta), = batches(1, device="meta")
    assert x_meta.device.type == y_meta.device.type == "meta" and x_meta.shape == x.shape


def test_leaky_loops_grow_and_the_fixes_stay_flat():
    assert steady_growth(measure_loop(leaky_eval(mlp(), batches(6)), allocated=None)["nodes"], skip=0) > 0
    assert steady_growth(measure_loop(train(mlp(), batches(6), leaky=True), allocated=None)["nodes"], skip=0) > 0
    for fixed in (item_eval, float_eval, no_grad_eval):
        nodes = measure_loop(fixed(mlp(), batches(6)), allocated=None)["nodes"]
        assert len(set(nodes)) == 1, fixed.__name__        # flat: nothing accumulates
    assert set(measure_loop(float_eval(mlp(), batches(3)), allocated=None)["nodes"]) == {0}


def test_train_changes_the_weights_and_takes_another_loss():
    model = mlp(features=64, hidden=256, outputs=10)
    before = model[0].weight.detach().clone()
    for _ in train(model, batches(2, features=64, classes=10), leaky=False, loss_fn=F.cross_entropy):
        pass
    assert not torch.equal(before, model[0].weight)
