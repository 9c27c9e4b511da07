"""The named misconceptions of the curriculum map, and the pitfall check that names one.

A hidden pitfall test builds an input on which the misconception gives itself away, then
calls pitfall_if(...). The message names the misconception and says why it is wrong,
without handing over the fix in code."""
from dataclasses import dataclass

from .checks import GradingError


@dataclass(frozen=True)
class Misconception:
    key: str
    name: str          # as ../shared/curriculum.md names it
    explanation: str   # why it is wrong, in the course's words: whole sentences, used as is


CATALOGUE: dict[str, Misconception] = {m.key: m for m in [
    # Unit 01: tensors, shape, dtype, device.
    Misconception(
        "len-as-numel", "len(t) taken for the number of elements",
        "len(t) is the size of the first dimension only; a tensor's element count is the "
        "product of every dimension."),
    Misconception(
        "size-not-called", "t.size without calling it",
        "t.size is a method; without () you get the method itself, not the shape."),
    Misconception(
        "integer-truncation", "integer tensors silently truncating",
        "An integer tensor cannot hold a fraction, so integer division, or writing a "
        "result into an integer tensor, quietly drops everything after the point. "
        "Compute in a floating-point dtype."),
    Misconception(
        "precision-as-bug", "precision loss read as a bug in the model",
        "Every floating-point dtype rounds to the nearest number it can hold; float16 and "
        "bfloat16 hold few digits, so a value that comes back slightly different can be "
        "plain rounding. Check what the dtype can represent before suspecting the code."),
]}


class PitfallError(GradingError):
    """A check failed in the way a named misconception predicts."""


def pitfall_message(key: str, detail: str = "") -> str:
    """The student-facing message for misconception `key`, plus what was seen."""
    m = CATALOGUE[key]
    return f"Pitfall: {m.name}. {m.explanation}" + (
        f" {detail}" if detail else "")


def pitfall_if(condition: bool, key: str, detail: str = "") -> None:
    """Raise PitfallError naming misconception `key` when `condition` holds."""
    if key not in CATALOGUE:
        raise KeyError(f"unknown misconception {key!r}")
    if condition:
        raise PitfallError(pitfall_message(key, detail))
