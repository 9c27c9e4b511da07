"""Device-strict grading: any operation that reads tensors on two devices fails.

Hidden tests run graded code on the `meta` device so that a CPU-only grader still catches
device mix-ups. Plain `meta` catches many of them but not all: on torch 2.13 `torch.mm(cpu,
meta)`, `cpu @ meta`, `bmm`, `addmm`, `baddbmm`, `einsum`, `F.linear` without bias, gather and
index_select with an index elsewhere, `cpu_t[meta_idx]` and even `cpu_t.add_(meta_t)` return
quietly (a result of uninitialised memory on the CPU, one on meta, or cpu_t left unchanged). Inside

    with strict_devices():
        got = student_forward(x_on_meta)

every aten operation is checked before it runs (beneath autograd and nn.functional, so a
module, a loss or a backward pass is checked op by op), and one whose tensor inputs sit on
more than one device raises DeviceMismatchError. What PyTorch itself allows still works:
Python numbers, 0-dim CPU tensors, copies between devices (`.to`, `.cpu()`, `dst[...] = src`),
factory functions, and CPU index tensors in `x[idx]` / `x[idx] = v`.

A meta tensor has no values, so code that logs a loss (`loss.item()`, `float(loss)`,
`loss.detach().cpu().item()`, `bool(loss > 0)`) cannot finish on plain `meta`. With
`strict_devices(meta_values=True)` every value read out of a meta tensor comes back as ones
(a Python 1 of the tensor's kind, or a tensor of ones where a copy leaves meta), so a whole
training or evaluation loop runs to its end on meta and every op in it is checked. Ones, not
zeros: code divides by what it reads (Adam divides by 1 - beta ** step, step read with .item()).
"""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

__all__ = ["DeviceMismatchError", "StrictDevices", "strict_devices"]

aten = torch.ops.aten

# Copies are how a tensor moves to another device, so they read two devices by design:
# `.to(device)` and `.cpu()` reach aten as _to_copy (one input), `dst[...] = src` and
# load_state_dict as copy_(dst, src); other backends copy through _copy_from.
COPIES = {aten.copy_, aten.copy, aten._copy_from, aten._copy_from_and_resize}

# PyTorch lets an accelerator tensor be indexed with CPU index tensors: x_cuda[cpu_idx],
# x_cuda[cpu_mask] and x_cuda[cpu_idx] = v work on a GPU (index() moves them for you; it
# wants indices on the CPU or on self's device). Failing them on meta would fail code that
# runs on a real GPU, so in these ops, all shaped (self, indices, ...), CPU indices are not
# counted. The rest stays strict, as on CUDA: the values written, and the index argument of
# index_select, gather, scatter and take and the mask of masked_fill, must be on self's device.
CPU_INDICES_OK = {aten.index, aten.index_put, aten.index_put_, aten._index_put_impl_,
                  aten._unsafe_index, aten._unsafe_index_put}


class DeviceMismatchError(RuntimeError):
    """An operation read tensors on different devices. A RuntimeError, like PyTorch's own
    device errors, so code that handles those handles this one the same way."""


def _tensors(tree):
    return [leaf for leaf in tree_leaves(tree) if isinstance(leaf, torch.Tensor)]


def devices_read(func, args, kwargs) -> set[torch.device]:
    """The devices of the tensors `func` reads, leaving out those PyTorch lets meet any
    device: a 0-dim CPU tensor (it acts like a Python number) and, for indexing, CPU
    index tensors."""
    packet = func.overloadpacket
    if packet in COPIES:
        return set()
    reads: tuple[object, ...] = (args, kwargs)
    indices: object = ()
    if packet in CPU_INDICES_OK and len(args) > 1:
        reads, indices = (args[:1], args[2:], kwargs), args[1]
    devices = {t.device for t in _tensors(reads) if not (t.device.type == "cpu" and t.dim() == 0)}
    devices |= {t.device for t in _tensors(indices) if t.device.type != "cpu"}
    return devices


def mismatch_message(func, devices) -> str:
    """The student-facing message: the op and the devices, sorted so it never varies."""
    names = sorted(str(device) for device in devices)
    listed = ", ".join(names[:-1]) + " and " + names[-1]
    return (f"Device mismatch in {func.overloadpacket}: its tensor inputs are on {listed}. "
            "Every tensor an operation reads must be on one device: move them with .to(device).")


def _is_meta(value) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "meta"


def _one_scalar(dtype: torch.dtype):
    """What .item() of a tensor of ones of `dtype` gives: True, 1, 1.0 or 1+0j."""
    if dtype == torch.bool:
        return True
    if dtype.is_complex:
        return 1 + 0j
    return 1.0 if dtype.is_floating_point else 1


def read_meta_values(func, args, kwargs):
    """The ones standing in for a value read out of a meta tensor, or NotImplemented when
    `func` reads no values out of meta: .item() and friends (_local_scalar_dense), a copy
    from meta to a real device (`.cpu()`, `.to("cpu")`) and `dst.copy_(meta_src)`."""
    packet = func.overloadpacket
    if packet in (aten._local_scalar_dense, aten.item) and _is_meta(args[0]):  # item: under inference_mode
        return _one_scalar(args[0].dtype)
    if packet is aten.is_nonzero and _is_meta(args[0]):  # bool(t), under inference_mode
        return True
    if packet in (aten._to_copy, aten.to) and _is_meta(args[0]):  # aten.to: under inference_mode
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
        for arg in args[1:]:  # to.device(self, device, dtype, ...), to.other(self, other, ...)
            if isinstance(arg, torch.Tensor):
                device, dtype = arg.device, arg.dtype
            elif isinstance(arg, (torch.device, str)):
                device = arg
            elif isinstance(arg, torch.dtype):
                dtype = arg
        if device is not None and torch.device(device).type != "meta":
            return torch.ones(args[0].shape, dtype=dtype or args[0].dtype, device=device)
    if packet in (aten.copy_, aten.copy) and len(args) > 1 and _is_meta(args[1]) and not _is_meta(args[0]):
        target = args[0] if packet is aten.copy_ else args[0].clone()
        return target.fill_(1)
    return NotImplemented


class StrictDevices(TorchDispatchMode):
    """A dispatch mode that raises DeviceMismatchError before any aten op whose tensor
    inputs sit on more than one device. Use it through strict_devices().
    meta_values=True: values read out of meta tensors come back as ones."""

    def __init__(self, meta_values: bool = False):
        super().__init__()
        self.meta_values = meta_values

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.meta_values:
            ones = read_meta_values(func, args, kwargs)
            if ones is not NotImplemented:
                return ones
        devices = devices_read(func, args, kwargs)
        if len(devices) > 1:
            raise DeviceMismatchError(mismatch_message(func, devices))
        # The mode is switched off while this runs, so func's own inner ops are not re-checked.
        return func(*args, **kwargs)


def strict_devices(meta_values: bool = False) -> StrictDevices:
    """`with strict_devices(): ...` runs its body in device-strict mode. A fresh mode each
    call, so uses nest; leaving the block (even by an exception) restores plain behaviour.
    meta_values=True lets code read values out of meta tensors, as ones (see above)."""
    return StrictDevices(meta_values)
