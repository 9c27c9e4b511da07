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
    present (or absent), through every API a picker may ask: torch.cuda, torch.backends.mps
    and torch.accelerator. Only availability is faked; nothing is allocated there."""
    first = torch.device("cuda") if cuda else torch.device("mps") if mps else None
    patches = [
        (torch.cuda, "is_available", lambda: cuda),
        (torch.backends.mps, "is_available", lambda: mps),
        (torch.accelerator, "is_available", lambda: first is not None),
        (torch.accelerator, "current_accelerator", lambda *args, **kwargs: first),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, fake in patches:
            setattr(owner, name, fake)
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
