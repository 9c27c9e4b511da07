"""Which device graded code runs on: the best accelerator present, else the CPU."""
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
