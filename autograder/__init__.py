"""The course's grading helpers, imported by every test cell.

    from autograder import check_tensor, check_value, pitfall_if, seed_everything
"""
from . import memory_probe  # noqa: F401 (for its effect: large blocks mapped fresh before tests allocate any)
from .checks import GradingError, check_keys, check_raises, check_tensor, check_value, format_shape
from .device import describe_device, grading_device, pretend_accelerators
from .device_strict import DeviceMismatchError, strict_devices
from .misconceptions import CATALOGUE, PitfallError, pitfall_if
from .quiz import check_answer, check_choice
from .seeding import seed_everything


def start_grading(seed: int = 0):
    """Seed everything, print the grading device (it appears in feedback) and return it."""
    seed_everything(seed)
    device = grading_device()
    found = "" if device.type != "cpu" else " (no accelerator found)"
    print(f"Graded on: {describe_device(device)}{found}")
    return device


__all__ = [
    "CATALOGUE",
    "DeviceMismatchError",
    "GradingError",
    "PitfallError",
    "check_answer",
    "check_choice",
    "check_keys",
    "check_raises",
    "check_tensor",
    "check_value",
    "describe_device",
    "format_shape",
    "grading_device",
    "pitfall_if",
    "pretend_accelerators",
    "seed_everything",
    "start_grading",
    "strict_devices",
]
