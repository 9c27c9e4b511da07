"""Which device graded code runs on: the best accelerator present, else the CPU."""
import contextlib

import torch


def grading_device() -> torch.device:
    """CUDA if present, then Apple's MPS, else the CPU (the order the course teaches)."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def describe_device(device: torch.device) -> str:
    """A one-line, student-facing name for the device, as printed in feedback."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    if device.type == "mps":
        return "mps (Apple GPU)"
    return str(device)


@contextlib.contextmanager
def pretend_accelerators(cuda: bool = False, mps: bool = False):
    """For grading device pickers on any machine: make torch report CUDA and/or MPS as
    present (or absent) through every public question a picker may ask: torch.cuda
    (is_available, device_count, current_device), torch.backends.cuda.is_built,
    torch.backends.mps (is_available, is_built), torch.mps.device_count, torch.xpu (absent)
    and torch.accelerator (is_available, current_accelerator, device_count,
    current_device_index). Only the answers are faked; nothing is allocated anywhere."""
    first = torch.device("cuda") if cuda else torch.device("mps") if mps else None
    patches = [
        (torch.cuda, "is_available", lambda: cuda),
        (torch.cuda, "device_count", lambda: int(cuda)),
        (torch.backends.cuda, "is_built", lambda: cuda),
        (torch.backends.mps, "is_available", lambda: mps),
        (torch.backends.mps, "is_built", lambda: mps),
        (torch.accelerator, "is_available", lambda: first is not None),
        (torch.accelerator, "current_accelerator", lambda *args, **kwargs: first),
        (torch.accelerator, "device_count", lambda: int(first is not None)),
    ]
    if cuda:  # asked only once a picker knows CUDA is there; on a CPU build the real one raises
        patches.append((torch.cuda, "current_device", lambda: 0))
    if first is not None:
        patches.append((torch.accelerator, "current_device_index", lambda: 0))
    if hasattr(torch, "mps") and hasattr(torch.mps, "device_count"):
        patches.append((torch.mps, "device_count", lambda: int(mps)))
    if hasattr(torch, "xpu"):  # the machines pretended here have no other accelerator
        patches += [(torch.xpu, "is_available", lambda: False), (torch.xpu, "device_count", lambda: 0)]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, fake in patches:
            setattr(owner, name, fake)
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
