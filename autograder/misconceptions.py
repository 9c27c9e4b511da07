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
    # Unit 02: devices.
    Misconception(
        "to-not-assigned", "t.to(device) without assigning the result",
        "tensor.to() returns a new tensor and leaves the original where it was; only "
        "module.to() moves in place. Keep the result."),
    Misconception(
        "batch-not-moved", "model moved but batch not",
        "every tensor an operation reads must be on the model's device: the inputs and "
        "targets of each batch too, not only the model."),
    Misconception(
        "created-on-default-device", "a tensor created inside forward on the default device",
        "torch.zeros(n) and friends allocate on the CPU unless told otherwise, whatever "
        "device the input is on. Create new tensors on the input's device."),
    Misconception(
        "moved-leaf-no-grad", "torch.randn(3, requires_grad=True).to(dev) giving a non-leaf",
        "moving a tensor that requires grad records the move, so the result is a non-leaf "
        "whose .grad stays None on an accelerator; the leaf is the CPU original. Create the "
        "tensor on the device (device=...), then ask for gradients."),
    # Unit 03: broadcasting and views.
    Misconception(
        "column-vs-flat-loss", "an (N, 1) prediction against an (N,) target",
        "broadcasting stretches (N, 1) against (N,) into an (N, N) table of every "
        "prediction against every target; its mean trains the model towards the average "
        "target. Make the two shapes equal before subtracting."),
    Misconception(
        "mutates-through-view", "mutating a caller's tensor through a view",
        "a view (slicing, view, transpose, expand, and reshape when it can) shares storage "
        "with the tensor it came from, so an in-place change to it changes the caller's "
        "tensor too."),
    Misconception(
        "reshape-always-copies", "assuming reshape always copies",
        "reshape returns a view whenever the strides allow one and copies only when they "
        "do not; whether the result shares storage depends on the input."),
    Misconception(
        "accidental-broadcast", "a result broadcast to the right shape by accident",
        "broadcasting can make a wrong computation come out with a plausible shape; check "
        "the exact shape of every intermediate, not only that the final one fits."),
    # Unit 04: autograd records the graph.
    Misconception(
        "non-leaf-grad", "expecting .grad on a non-leaf",
        "backward fills .grad only for leaves (tensors you created with requires_grad); an "
        "intermediate result's .grad stays None unless you ask for it."),
    Misconception(
        "grad-accumulates", "gradients silently doubled by accumulation",
        "backward adds into .grad rather than replacing it, so each step's gradient piles on "
        "the previous ones until you zero it."),
    Misconception(
        "static-graph", "believing the graph is static",
        "autograd records a new graph on every forward pass; a loss computed once, before the "
        "loop, keeps describing the parameters as they were then."),
    # Unit 05: no_grad and detach.
    Misconception(
        "missing-no-grad", "missing no_grad",
        "without no_grad (or inference_mode), every operation on parameters that require "
        "grad is recorded and its intermediates are kept for a backward pass that never comes."),
    Misconception(
        "eval-as-no-grad", "model.eval() used as if it were no_grad",
        "eval() switches layers such as dropout and batch norm to their evaluation behaviour; "
        "it does not stop autograd from recording. Evaluation needs both."),
    Misconception(
        "running-loss-tensor", "running loss kept as a tensor",
        "adding the loss tensor itself to a running total links every batch's graph to it, so "
        "none of them can be freed. Log a plain number."),
    Misconception(
        "mode-not-restored", "train mode not restored after evaluation",
        "eval() stays switched on until someone switches it off, so training after an "
        "evaluation that does not put the model back runs without dropout and with frozen "
        "batch-norm statistics."),
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
