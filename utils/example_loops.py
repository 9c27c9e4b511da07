"""The loops unit 05 is about, written once: the memory monitor's demo, its tests and its
benchmark all measure these.

Each loop is a generator that yields once per iteration, which is how `measure_loop` and the
memory monitor step through a loop and look at what it keeps alive in between. The bug they
share: a loss kept as a tensor (`total += loss`) keeps its whole graph alive."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(features: int = 32, hidden: int = 128, outputs: int = 1) -> nn.Module:
    """A small, seeded MLP: the same weights every call."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, outputs))


def batches(n: int = 10, *, batch: int = 256, features: int = 32, classes: int | None = None, seed: int = 0,
            device: str | torch.device = "cpu"):
    """`n` fresh (x, y) batches, made one at a time as a DataLoader gives them, on `device`:
    regression targets (batch, 1), or class labels (batch,) when `classes` is given. The numbers
    are drawn on the CPU, so every device gets the same ones."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        x = torch.randn(batch, features, generator=g)
        y = torch.randn(batch, 1, generator=g) if classes is None else torch.randint(0, classes, (batch,), generator=g)
        yield x.to(device), y.to(device)


def leaky_eval(model, data, loss_fn=F.mse_loss):
    """The bug: the running total is a tensor, so every batch's graph stays alive."""
    total = 0.0
    for x, y in data:
        total += loss_fn(model(x), y)
        yield


def item_eval(model, data, loss_fn=F.mse_loss):
    """The fix: a float total (the last `loss` still holds one graph until the next batch)."""
    total = 0.0
    for x, y in data:
        loss = loss_fn(model(x), y)
        total += loss.item()
        yield


def float_eval(model, data, loss_fn=F.mse_loss):
    """The fix with no name left holding a loss: nothing outlives its iteration."""
    total = 0.0
    for x, y in data:
        total += loss_fn(model(x), y).item()
        yield


def no_grad_eval(model, data, loss_fn=F.mse_loss):
    """The whole fix: nothing is recorded at all."""
    total = 0.0
    with torch.no_grad():
        for x, y in data:
            total += loss_fn(model(x), y).item()
            yield


def train(model, data, leaky: bool, loss_fn=F.mse_loss, lr: float = 0.01):
    """A training loop whose running loss is a tensor (`leaky`) or a float."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    running = 0.0
    for x, y in data:
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss if leaky else loss.item()
        yield
