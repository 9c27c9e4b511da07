"""The named misconceptions of the curriculum map, and the pitfall check that names one.

A hidden pitfall test builds an input on which the misconception gives itself away, then
calls pitfall_if(...). The message names the misconception and says why it is wrong,
without handing over the fix in code."""
from dataclasses import dataclass

from .checks import GradingError
from .trace import record


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
    Misconception(
        "recording-by-value", "recording decided by values rather than by requires_grad",
        "autograd records an operation exactly when one of its inputs requires grad and recording "
        "is on: the numbers never matter, so a product with zero is recorded, while a detached "
        "tensor, or a result made under no_grad, records nothing."),
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
    # Unit 06: modules, parameters, buffers.
    Misconception(
        "bare-tensor-attribute", "a bare tensor attribute",
        "a tensor stored as a plain attribute is neither a parameter nor a buffer: .to() "
        "leaves it behind and state_dict() does not save it. Register it as a buffer."),
    Misconception(
        "python-list-of-layers", "a Python list of layers",
        "modules kept in a plain list are invisible to the parent: their parameters are not "
        "in .parameters() (so no optimiser trains them), not moved by .to() and not saved. "
        "Use nn.ModuleList or nn.Sequential."),
    Misconception(
        "statistics-as-parameter", "statistics stored as a Parameter",
        "an nn.Parameter is something the optimiser updates by gradient descent; running "
        "statistics are computed, not learned, so they belong in buffers."),
    Misconception(
        "buffer-updated-in-eval", "a buffer updated in eval mode",
        "in eval mode a module must use its running statistics, not change them; otherwise "
        "every evaluation shifts the model it evaluates."),
    # Unit 07: checkpoints and safe loading.
    Misconception(
        "saved-model-object", "saving the model object",
        "pickling the whole module stores the path of its class, so the file loads only where "
        "that exact code exists and is refused under weights_only. Save the state_dict."),
    Misconception(
        "optimizer-state-dropped", "optimiser state dropped",
        "momentum and Adam's moment estimates live in the optimiser's state_dict; resuming "
        "without it restarts them from zero and the run diverges from the uninterrupted one."),
    Misconception(
        "optimizer-on-old-parameters", "an optimiser built on the old model's parameters",
        "an optimiser holds the parameter objects it was given; after the model is rebuilt or "
        "moved to another device those objects can be stale, and stepping them trains nothing "
        "the model uses. Build the optimiser from the final model."),
    Misconception(
        "unsafe-load", "weights_only=False on an untrusted file",
        "unpickling runs whatever the file tells it to: a checkpoint from elsewhere is a "
        "program from elsewhere. weights_only=True refuses anything but tensors and plain "
        "containers."),
    Misconception(
        "config-not-plain", "a config that cannot load under weights_only",
        "a dataclass or argparse Namespace is a custom class to the unpickler, refused under "
        "weights_only=True. Save the config as plain types (a dict of numbers and strings)."),
]}


# Where each misconception is taught: (lesson notebook, heading of its section, without the
# section's number), for the instructor's class report (classgrader/commands/report.py).
LESSON_SECTIONS: dict[str, tuple[str, str]] = {
    "len-as-numel": ("01_tensors_lesson.ipynb", "How many elements?"),
    "size-not-called": ("01_tensors_lesson.ipynb", "Shape"),
    "integer-truncation": ("01_tensors_lesson.ipynb", "Integer tensors truncate, silently"),
    "precision-as-bug": ("01_tensors_lesson.ipynb", "Rounding is not a bug"),
    "to-not-assigned": ("02_devices_lesson.ipynb", "A tensor: `.to()` returns a new tensor"),
    "batch-not-moved": ("02_devices_lesson.ipynb", "Moving a whole batch"),
    "created-on-default-device": ("02_devices_lesson.ipynb", "Tensors made inside `forward` follow the input"),
    "moved-leaf-no-grad": ("02_devices_lesson.ipynb", "A weight to train: create it on its device"),
    "column-vs-flat-loss": ("03_broadcasting_views_lesson.ipynb", "The loss that trains to nothing"),
    "mutates-through-view": ("03_broadcasting_views_lesson.ipynb",
                             "In-place changes through a view change the original"),
    "reshape-always-copies": ("03_broadcasting_views_lesson.ipynb", "`reshape` may or may not copy"),
    "accidental-broadcast": ("03_broadcasting_views_lesson.ipynb", "Optional: right shape, wrong numbers"),
    "non-leaf-grad": ("04_autograd_lesson.ipynb", "`.grad` of a non-leaf is `None`"),
    "grad-accumulates": ("04_autograd_lesson.ipynb", "`.grad` accumulates until you zero it"),
    "static-graph": ("04_autograd_lesson.ipynb", "A new graph on every forward pass"),
    "recording-by-value": ("04_autograd_lesson.ipynb", "Which operations are recorded"),
    "missing-no-grad": ("05_no_grad_lesson.ipynb", "The evaluation loop that keeps every graph"),
    "eval-as-no-grad": ("05_no_grad_lesson.ipynb", "`model.eval()` is a different switch"),
    "running-loss-tensor": ("05_no_grad_lesson.ipynb", "`running += loss` in a training loop"),
    "mode-not-restored": ("05_no_grad_lesson.ipynb", "The mode is state on the model"),
    "bare-tensor-attribute": ("06_modules_lesson.ipynb", "A bare tensor attribute is neither moved nor saved"),
    "python-list-of-layers": ("06_modules_lesson.ipynb", "`nn.ModuleList`, not a Python list"),
    "statistics-as-parameter": ("06_modules_lesson.ipynb",
                                "Optional: statistics as a Parameter, changed by the optimiser"),
    "buffer-updated-in-eval": ("06_modules_lesson.ipynb", "`train()` and `eval()`"),
    "saved-model-object": ("07_checkpoints_lesson.ipynb", "Save the `state_dict`, not the object"),
    "optimizer-state-dropped": ("07_checkpoints_lesson.ipynb", "Resuming with and without the optimiser's state"),
    "optimizer-on-old-parameters": ("07_checkpoints_lesson.ipynb", "Rebuild, load, then build the optimiser"),
    "unsafe-load": ("07_checkpoints_lesson.ipynb", "A checkpoint from elsewhere is a program from elsewhere"),
    "config-not-plain": ("07_checkpoints_lesson.ipynb", "Save the epoch and the configuration, as plain types"),
}


class PitfallError(GradingError):
    """A check failed in the way a named misconception predicts; `key` names it (its
    message names it too, in words: misconception_of reads the key back from a message)."""

    def __init__(self, message: str = "", key: str | None = None):
        super().__init__(message)
        self.key = key

    def __reduce__(self):  # pickled with its key, as an exception's args alone would lose it
        return type(self), (str(self), self.key)


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
        raise PitfallError(pitfall_message(key, detail), key)
    record("pitfall", key)


def misconception_of(message: str) -> str | None:
    """The key of the misconception a pitfall message names (as pitfall_message words it), or None."""
    if not message.startswith("Pitfall: "):
        return None
    named = message[len("Pitfall: "):]
    found = [m.key for m in CATALOGUE.values() if named.startswith(m.name + ".")]
    return max(found, key=lambda k: len(CATALOGUE[k].name)) if found else None
