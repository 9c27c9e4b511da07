"""Which device graded code runs on: the best accelerator present, else the CPU."""
import contextlib
import types

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
def pretend_accelerators(cuda: bool = False, mps: bool = False, built: bool = False):
    """For grading device pickers on any machine: make torch report CUDA and/or MPS as
    present (or absent) through every public question a picker may ask: torch.cuda
    (is_available, device_count, current_device), torch.backends.cuda.is_built,
    torch.backends.mps (is_available, is_built), torch.mps.device_count, torch.xpu (absent)
    and torch.accelerator (is_available, current_accelerator, device_count,
    current_device_index). Only the answers are faked; nothing is allocated anywhere.
    built=True: the build has CUDA and MPS support compiled in whatever is present, so
    is_built() answers True on a machine without the device (a CUDA wheel on a laptop with
    no NVIDIA GPU)."""
    first = torch.device("cuda") if cuda else torch.device("mps") if mps else None
    patches = [
        (torch.cuda, "is_available", lambda: cuda),
        (torch.cuda, "device_count", lambda: int(cuda)),
        (torch.backends.cuda, "is_built", lambda: cuda or built),
        (torch.backends.mps, "is_available", lambda: mps),
        (torch.backends.mps, "is_built", lambda: mps or built),
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
    with contextlib.ExitStack() as stack:
        for owner, name, fake in patches:
            stack.enter_context(_answering(owner, name, fake))
        yield


def _fake_answer(*args, _course_answer=None, **kwargs):
    return _course_answer


@contextlib.contextmanager
def _answering(owner, name, fake):
    """owner.name answers as `fake` does while this runs. A Python function (or one behind
    functools.lru_cache) keeps its identity: its code is swapped, so a picker that kept the
    function earlier (real = torch.cuda.is_available) gets the same answers and cannot tell the
    pretended machine by comparing functions. Anything else is replaced for the while."""
    original = getattr(owner, name)
    function = getattr(original, "__wrapped__", original) if hasattr(original, "cache_clear") else original
    if not isinstance(function, types.FunctionType) or function.__closure__:
        setattr(owner, name, fake)
        try:
            yield
        finally:
            setattr(owner, name, original)
        return
    saved = function.__code__, function.__defaults__, function.__kwdefaults__
    function.__code__, function.__defaults__ = _fake_answer.__code__, None
    function.__kwdefaults__ = {"_course_answer": fake()}
    if function is not original:
        original.cache_clear()
    try:
        yield
    finally:
        function.__code__, function.__defaults__, function.__kwdefaults__ = saved
        if function is not original:
            original.cache_clear()
