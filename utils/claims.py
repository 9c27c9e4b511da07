"""claim(): show a value in a lesson and check the lesson's words about it.

A lesson cell ending in claim(x.item(), 2048.0) displays 2048.0, like a bare x.item()
would, and raises ClaimFailed if PyTorch ever stops agreeing with the text. CI executes
every lesson, so a lesson cannot drift from the library it teaches."""
import math

import torch


class ClaimFailed(AssertionError):
    """The lesson says one thing and PyTorch now does another."""


def _matches(value, expected) -> bool:
    if isinstance(expected, torch.Tensor):
        return (isinstance(value, torch.Tensor) and value.shape == expected.shape
                and value.dtype == expected.dtype and bool((value == expected).all()))
    if isinstance(expected, float) and isinstance(value, (int, float)):
        return value == expected or (math.isnan(value) and math.isnan(expected))
    return type(value) is type(expected) and value == expected


def claim(value, expected):
    """Return `value` (so the cell displays it) after checking it equals `expected`."""
    if not _matches(value, expected):
        raise ClaimFailed(f"the lesson claims {expected!r}, but this PyTorch gives {value!r}")
    return value
