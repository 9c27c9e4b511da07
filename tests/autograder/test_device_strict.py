"""Tests for autograder/device_strict.py: under strict_devices() every op family fails when
its tensor inputs mix cpu and meta, with a message naming the op and the devices, and passes
on one device; what PyTorch allows across devices (numbers, 0-dim CPU tensors, copies,
factories, CPU indices) still works; the mode nests, restores, and works with autograd.
Plain meta misses some mixes, and a test below shows which, so a new torch that starts
catching them is noticed."""
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

from autograder.device_strict import DeviceMismatchError, StrictDevices, mismatch_message, strict_devices

MM_MESSAGE = ("Device mismatch in aten.mm: its tensor inputs are on cpu and meta. Every tensor "
              "an operation reads must be on one device: move them with .to(device).")
CPU_AND_META = re.escape("its tensor inputs are on cpu and meta.")


def randn(*shape, device):
    return torch.randn(*shape, device=device)


def labels(n, device):
    return torch.randint(0, 3, (n,), device=device)


def index(*values, device):
    return torch.tensor(values, device=device)


# Each case takes two devices: the tensors it builds on `a` and on `b` meet in the op named.
MIXES = {
    # elementwise
    "add": lambda a, b: randn(3, device=a) + randn(3, device=b),
    "mul": lambda a, b: torch.mul(randn(2, 3, device=a), randn(3, device=b)),
    "sub": lambda a, b: randn(3, device=a) - randn(3, device=b),
    "where": lambda a, b: torch.where(randn(3, device=a) > 0, randn(3, device=a), randn(3, device=b)),
    "comparison": lambda a, b: randn(3, device=a) > randn(3, device=b),
    # the matmul family (plain meta lets several of these through)
    "mm": lambda a, b: torch.mm(randn(3, 4, device=a), randn(4, 5, device=b)),
    "@": lambda a, b: randn(3, 4, device=a) @ randn(4, 5, device=b),
    "bmm": lambda a, b: torch.bmm(randn(2, 3, 4, device=a), randn(2, 4, 5, device=b)),
    "matmul": lambda a, b: torch.matmul(randn(2, 3, 4, device=a), randn(4, 5, device=b)),
    "linear without bias": lambda a, b: F.linear(randn(2, 4, device=b), randn(3, 4, device=a)),
    "linear with bias": lambda a, b: F.linear(randn(2, 4, device=b), randn(3, 4, device=a),
                                              randn(3, device=a)),
    "linear, only the bias elsewhere": lambda a, b: F.linear(randn(2, 4, device=a), randn(3, 4, device=a),
                                                             randn(3, device=b)),
    "addmm": lambda a, b: torch.addmm(randn(3, 5, device=a), randn(3, 4, device=a), randn(4, 5, device=b)),
    "einsum": lambda a, b: torch.einsum("ij,jk->ik", randn(3, 4, device=a), randn(4, 5, device=b)),
    "baddbmm": lambda a, b: torch.baddbmm(randn(2, 3, 5, device=a), randn(2, 3, 4, device=a),
                                          randn(2, 4, 5, device=b)),
    # joining
    "cat": lambda a, b: torch.cat([randn(2, 3, device=a), randn(2, 3, device=b)]),
    "stack": lambda a, b: torch.stack([randn(3, device=a), randn(3, device=b)]),
    # index arguments other than x[idx] must sit with the tensor, as on CUDA
    "gather": lambda a, b: torch.gather(randn(3, 4, device=a), 1, index([0], [2], [1], device=b)),
    "index_select": lambda a, b: randn(3, 4, device=a).index_select(0, index(0, 2, device=b)),
    "scatter": lambda a, b: randn(3, 4, device=a).scatter(0, index([0, 1, 2, 0], device=a),
                                                          randn(1, 4, device=b)),
    "index_put values": lambda a, b: randn(3, 4, device=a).index_put_((index(0, 2, device=a),),
                                                                      randn(2, 4, device=b)),
    "masked_fill mask": lambda a, b: randn(3, device=a).masked_fill(randn(3, device=b) > 0, 0.0),
    # losses
    "mse_loss": lambda a, b: F.mse_loss(randn(4, device=b), randn(4, device=a)),
    "cross_entropy": lambda a, b: F.cross_entropy(randn(4, 3, device=b), labels(4, device=a)),
    # in place
    "add_": lambda a, b: randn(3, device=a).add_(randn(3, device=b)),
    "mul_": lambda a, b: randn(2, 3, device=a).mul_(randn(3, device=b)),
    # a one-element tensor is not a 0-dim one: only 0-dim CPU tensors may travel
    "one-element cpu tensor": lambda a, b: randn(3, device=b) * randn(1, device=a),
}

# Ops on one device, checked only to pass: reductions and the like.
ONE_DEVICE = {
    "sum": lambda d: randn(3, 4, device=d).sum(dim=1),
    "mean": lambda d: randn(3, 4, device=d).mean(),
    "max": lambda d: randn(3, 4, device=d).max(dim=0),
    "argmax": lambda d: randn(3, 4, device=d).argmax(dim=1),
    "softmax": lambda d: randn(3, 4, device=d).softmax(dim=-1),
    "norm": lambda d: torch.linalg.vector_norm(randn(3, 4, device=d), dim=1),
    "x[idx] on its own device": lambda d: randn(3, 4, device=d)[index(0, 2, device=d)],
}


@pytest.mark.parametrize("op", MIXES, ids=list(MIXES))
@pytest.mark.parametrize(("a", "b"), [("cpu", "meta"), ("meta", "cpu")])
def test_mixed_devices_raise(op, a, b):
    with strict_devices(), pytest.raises(DeviceMismatchError, match=CPU_AND_META):
        MIXES[op](a, b)


@pytest.mark.parametrize("op", MIXES, ids=list(MIXES))
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_same_op_on_one_device_passes(op, device):
    with strict_devices():
        MIXES[op](device, device)


@pytest.mark.parametrize("op", ONE_DEVICE, ids=list(ONE_DEVICE))
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_reductions_on_one_device_pass(op, device):
    with strict_devices():
        ONE_DEVICE[op](device)


def test_exact_message_names_op_and_devices():
    with strict_devices(), pytest.raises(DeviceMismatchError) as raised:
        torch.mm(randn(3, 4, device="cpu"), randn(4, 5, device="meta"))
    assert str(raised.value) == MM_MESSAGE


def test_devices_are_listed_in_sorted_order_whichever_comes_first():
    with strict_devices(), pytest.raises(DeviceMismatchError) as raised:
        torch.mm(randn(3, 4, device="meta"), randn(4, 5, device="cpu"))
    assert str(raised.value) == MM_MESSAGE
    # Three devices (built without an accelerator: only the message is made).
    three = {torch.device("meta"), torch.device("cuda", 0), torch.device("cpu")}
    assert mismatch_message(torch.ops.aten.cat.default, three) == (
        "Device mismatch in aten.cat: its tensor inputs are on cpu, cuda:0 and meta. Every tensor "
        "an operation reads must be on one device: move them with .to(device).")


def test_error_is_a_runtime_error_like_pytorchs_own():
    assert issubclass(DeviceMismatchError, RuntimeError)
    assert isinstance(strict_devices(), StrictDevices)
    assert issubclass(StrictDevices, TorchDispatchMode)


PLAIN_META_MISSES = {
    "mm": lambda: torch.mm(randn(3, 4, device="cpu"), randn(4, 5, device="meta")),
    "@": lambda: randn(3, 4, device="cpu") @ randn(4, 5, device="meta"),
    "bmm": lambda: torch.bmm(randn(2, 3, 4, device="cpu"), randn(2, 4, 5, device="meta")),
    "linear without bias": lambda: F.linear(randn(2, 4, device="meta"), randn(3, 4, device="cpu")),
    "add_ into a cpu tensor": lambda: randn(3, device="cpu").add_(randn(3, device="meta")),
}


@pytest.mark.parametrize("op", PLAIN_META_MISSES, ids=list(PLAIN_META_MISSES))
def test_plain_meta_misses_these_so_the_mode_is_needed(op, covered):
    # EXPECTED ON TORCH 2.13: these mixes return quietly without the mode. If this test
    # starts failing, a newer torch catches them on its own (good news): the mode stays
    # correct; update this test and engineering-notes.md "Devices without a GPU".
    PLAIN_META_MISSES[op]()
    with strict_devices(), pytest.raises(DeviceMismatchError, match=CPU_AND_META):
        PLAIN_META_MISSES[op]()
    if op == "mm":
        covered("plain meta lets mm/@/bmm/linear-without-bias/add_ mix cpu and meta on torch 2.13; "
                "strict_devices() rejects each")


def test_linear_with_weight_on_cpu_fed_a_meta_input():
    for bias in (True, False):  # with a bias addmm runs, without one mm (which plain meta misses)
        layer = nn.Linear(4, 3, bias=bias)
        with strict_devices(), pytest.raises(DeviceMismatchError, match=CPU_AND_META):
            layer(randn(2, 4, device="meta"))
        with strict_devices():
            assert layer.to("meta")(randn(2, 4, device="meta")).shape == (2, 3)


class Mixer(nn.Module):
    """A module whose `mix` is a plain attribute unless registered: .to() leaves it behind."""

    def __init__(self, register: bool):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        if register:
            self.register_buffer("mix", torch.eye(4))
        else:
            self.mix = torch.eye(4)

    def forward(self, x):
        return self.layer(x) @ self.mix


def test_module_holding_an_unregistered_cpu_tensor_raises():
    model = Mixer(register=False).to("meta")
    with strict_devices(), pytest.raises(DeviceMismatchError, match=CPU_AND_META):
        model(randn(2, 4, device="meta"))
    with strict_devices():  # the fix: a buffer moves with the module
        assert Mixer(register=True).to("meta")(randn(2, 4, device="meta")).device.type == "meta"


def test_tensor_created_inside_forward_on_the_default_device_raises():
    def forward(x):
        weights = torch.zeros(x.shape[1], 2)  # the bug: on the default device, not x's
        return x @ weights

    def fixed(x):
        return x @ torch.zeros(x.shape[1], 2, device=x.device)

    x = randn(3, 4, device="meta")
    forward(x)  # plain meta lets it through (mm)
    with strict_devices():
        with pytest.raises(DeviceMismatchError, match=CPU_AND_META):
            forward(x)
        with pytest.raises(DeviceMismatchError, match=CPU_AND_META):
            x + torch.zeros(4)
        assert fixed(x).device.type == "meta"


ALLOWED = {
    "python scalars": lambda m, c: (m * 2, m + 1.5, 3 - c, torch.add(m, 3, alpha=2), m.clamp(min=0)),
    "0-dim cpu tensor * meta": lambda m, c: (torch.tensor(2.0) * m, m * c.sum(),
                                             torch.where(m > 0, m, torch.tensor(0.0))),
    ".to('meta')": lambda m, c: c.to("meta"),
    ".to(other.device) and .cpu()": lambda m, c: (c.to(m.device), c.cpu(), c.to(c)),
    "copy_ across devices": lambda m, c: (m.copy_(c), c.copy_(c)),
    "dst[...] = src across devices": lambda m, c: (m.__setitem__(..., c), m.__setitem__(0, c[0])),
    "factory functions": lambda m, c: (torch.zeros(3), torch.ones(2, device="meta"), torch.arange(4),
                                       torch.full((2,), 7.0, device="meta"), torch.empty_like(m),
                                       torch.zeros_like(c), torch.eye(3, device=m.device)),
    "torch.tensor(...)": lambda m, c: (torch.tensor([1.0, 2.0]), torch.tensor([1, 2], device="meta"),
                                       torch.as_tensor([3.0])),
    "module.to('meta')": lambda m, c: nn.Linear(3, 3).to("meta"),
}


@pytest.mark.parametrize("case", ALLOWED, ids=list(ALLOWED))
def test_what_pytorch_allows_still_works(case):
    with strict_devices():
        ALLOWED[case](randn(3, 3, device="meta"), randn(3, 3, device="cpu"))


def test_indexing_with_cpu_indices_is_allowed_as_on_cuda(covered):
    # Decision: x_cuda[cpu_idx], x_cuda[cpu_mask] and x_cuda[cpu_idx] = v run on a real GPU,
    # so CPU indices in x[...] are allowed; indices on another device, values on another
    # device, and gather/index_select/scatter with a CPU index are not (CUDA refuses them too).
    m = randn(3, 4, device="meta")
    with strict_devices():
        assert m[index(0, 2, device="cpu")].shape == (2, 4)
        assert m[:, index(1, device="cpu")].shape == (3, 1)
        m[index(True, False, True, device="cpu")] = 1.0
        m[index(0, 2, device="cpu")] = randn(2, 4, device="meta")
        m.index_put_((index(1, device="cpu"),), torch.tensor(0.0))
        with pytest.raises(DeviceMismatchError, match=r"aten\.index: .*cpu and meta"):
            randn(3, 4, device="cpu")[index(0, 2, device="meta")]  # plain torch returns garbage here
        with pytest.raises(DeviceMismatchError, match=r"aten\.index_put_: .*cpu and meta"):
            m[index(0, 2, device="cpu")] = randn(2, 4, device="cpu")
    covered("x[cpu_idx] and x[cpu_idx] = v allowed on meta (as on CUDA); other index ops strict")


def test_same_device_model_trains_on_cpu_and_on_meta():
    for device in ("cpu", "meta"):
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
        optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
        with strict_devices():
            loss = F.cross_entropy(model(randn(5, 4, device=device)), labels(5, device=device))
            loss.backward()
            optimiser.step()
        assert model[0].weight.grad.device.type == device


def test_backward_inside_the_mode_gives_the_same_gradients():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 2, requires_grad=True)
    (x @ w).tanh().sum().backward()
    expected = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    with strict_devices():
        (x @ w).tanh().sum().backward()
    torch.testing.assert_close((x.grad, w.grad), expected)


def test_backward_across_devices_raises():
    a = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4, 5, device="meta", requires_grad=True)
    out = torch.mm(a, b)  # built outside the mode: plain meta lets it through
    with strict_devices(), pytest.raises(DeviceMismatchError, match=r"aten\.mm: .*cpu and meta"):
        out.sum().backward()


def test_printing_inside_the_mode():
    meta = randn(2, 2, device="meta")
    with strict_devices():
        assert repr(meta) == "tensor(..., device='meta', size=(2, 2))"
        assert "device='meta'" in repr(nn.Linear(2, 2, device="meta").weight)
        assert str(torch.tensor([1.0, 2.0])) == "tensor([1., 2.])"
        print(meta, f"{meta}")


def test_mode_restores_plain_behaviour_after_the_block():
    cpu, meta = randn(3, 4, device="cpu"), randn(4, 5, device="meta")
    with strict_devices():
        assert _get_current_dispatch_mode() is not None
    assert _get_current_dispatch_mode() is None
    torch.mm(cpu, meta)  # plain again: quiet on torch 2.13


def test_mode_restores_after_an_exception():
    cpu, meta = randn(3, 4, device="cpu"), randn(4, 5, device="meta")
    with pytest.raises(DeviceMismatchError), strict_devices():
        torch.mm(cpu, meta)
    assert _get_current_dispatch_mode() is None
    with pytest.raises(ValueError, match="not a device problem"), strict_devices():
        raise ValueError("not a device problem")
    assert _get_current_dispatch_mode() is None
    torch.mm(cpu, meta)


def test_modes_nest():
    cpu, meta = randn(3, 4, device="cpu"), randn(4, 5, device="meta")
    with strict_devices() as outer:
        with strict_devices():
            with pytest.raises(DeviceMismatchError):
                torch.mm(cpu, meta)
            assert torch.mm(meta.T, meta).shape == (5, 5)
        assert _get_current_dispatch_mode() is outer
        with pytest.raises(DeviceMismatchError):  # the outer mode still holds
            torch.mm(cpu, meta)
    assert _get_current_dispatch_mode() is None


READS = {
    "item": lambda t: t.item(),
    "float": lambda t: float(t),
    "detach().cpu().item()": lambda t: t.detach().cpu().item(),
    "bool of a comparison": lambda t: bool(t > 0),
    "copy_ into a cpu tensor": lambda t: torch.ones(()).copy_(t).item(),
    "to('cpu') then tolist": lambda t: t.to("cpu").tolist(),
}


@pytest.mark.parametrize("inference", [False, True], ids=["grad mode", "inference_mode"])
@pytest.mark.parametrize("read", READS, ids=list(READS))
def test_meta_values_reads_come_back_as_ones(read, inference):
    """Under inference_mode aten sees item, is_nonzero and to rather than their decompositions."""
    loss = torch.empty((), device="meta")
    with pytest.raises((RuntimeError, NotImplementedError)), strict_devices(), torch.inference_mode(inference):
        READS[read](loss + 1)
    with strict_devices(meta_values=True), torch.inference_mode(inference):
        assert READS[read](loss + 1) in (1, True)


def test_meta_values_keeps_strictness_and_a_whole_loop_runs_on_meta():
    model = nn.Linear(3, 1).to("meta")
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    total = 0.0
    with strict_devices(meta_values=True):
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.mse_loss(model(torch.empty(4, 3, device="meta")), torch.empty(4, 1, device="meta"))
            loss.backward()
            optimizer.step()
            total += loss.item()
            for state in optimizer.state.values():  # as a checkpoint loaded with map_location=meta has it:
                state["step"] = state["step"].to("meta")  # Adam divides by 1 - beta ** step.item()
    assert total == 2.0
    with pytest.raises(DeviceMismatchError, match=CPU_AND_META), strict_devices(meta_values=True):
        model(torch.randn(4, 3))
    with pytest.raises(RuntimeError):  # plain behaviour again after the block
        torch.empty((), device="meta").item()


def test_meta_values_leaves_real_values_alone():
    with strict_devices(meta_values=True):
        assert torch.tensor(2.5).item() == 2.5
        assert torch.ones(2).cpu().tolist() == [1.0, 1.0]
