"""The named misconceptions of the curriculum map, and the pitfall check that names one.

A hidden pitfall test builds an input on which the misconception gives itself away, then
calls pitfall_if(...). The message names the misconception and says why it is wrong,
without handing over the fix in code."""
from dataclasses import dataclass

from .errors import GradingError
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
        "The value of len(t) is the size of the first dimension only (a 0-dimensional tensor "
        "has no len at all); a tensor's element count is the product of every dimension."),
    Misconception(
        "size-not-called", "t.size without calling it",
        "The attribute t.size is a method: without () you get the method itself, not the shape."),
    Misconception(
        "integer-truncation", "integer tensors silently truncating",
        "An integer tensor cannot hold a fraction. Dividing with / gives a floating-point "
        "result, but // rounds down (-7 // 2 is -4), converting a result to an integer dtype "
        "cuts off its fraction, and writing a float into an integer tensor (t[i] = 2.7, "
        "t[mask] = 2.7, a slice, copy_, fill_) truncates it silently, while in-place arithmetic "
        "(add_, +=) and out= refuse a floating-point result with an error. Compute in a "
        "floating-point dtype."),
    Misconception(
        "precision-as-bug", "precision loss read as a bug in the model",
        "Every floating-point dtype rounds a value to the nearest number it can hold, and "
        "float16 and bfloat16 hold only a few significant digits, so a value that comes back "
        "slightly different can be plain rounding. Check what the dtype can represent before "
        "suspecting the code."),
    # Unit 02: devices.
    Misconception(
        "to-not-assigned", "t.to(device) without assigning the result",
        "Calling .to() on a tensor returns the moved tensor and leaves the original where it "
        "was (module.to() is the one that moves in place). Keep the result."),
    Misconception(
        "batch-not-moved", "model moved but batch not",
        "Every tensor an operation reads must be on one device (a 0-dimensional CPU tensor is "
        "the usual exception), so the inputs and targets of each batch must be moved to the "
        "model's device too, not only the model."),
    Misconception(
        "created-on-default-device", "a tensor created inside forward on the default device",
        "A tensor made with torch.zeros(n), torch.ones(n) and the like is allocated on the "
        "default device (the CPU unless you changed it), whatever device the input is on. "
        "Create new tensors on the input's device."),
    Misconception(
        "moved-leaf-no-grad", "torch.randn(3, requires_grad=True).to(dev) giving a non-leaf",
        "Moving a tensor that requires grad to another device records the move, so the result "
        "is a non-leaf whose .grad stays None after backward; the leaf that receives the "
        "gradient is the original on the CPU. Create the tensor on the device (device=...), "
        "then ask for gradients."),
    # Unit 03: broadcasting and views.
    Misconception(
        "column-vs-flat-loss", "an (N, 1) prediction against an (N,) target",
        "Broadcasting stretches (N, 1) against (N,) into an (N, N) table of every prediction "
        "against every target, and its mean trains each prediction towards the average target. "
        "Make the two shapes equal before subtracting."),
    Misconception(
        "mutates-through-view", "mutating a caller's tensor through a view",
        "A view (a slice, view, transpose, expand, or reshape when it can avoid a copy) shares "
        "storage with the tensor it came from, so an in-place change to it changes the caller's "
        "tensor too."),
    Misconception(
        "reshape-always-copies", "assuming reshape always copies",
        "The result of reshape is a view whenever the strides allow one, and a copy only when "
        "they do not, so whether it shares storage with its input depends on the input."),
    Misconception(
        "accidental-broadcast", "a result broadcast to the right shape by accident",
        "Broadcasting can make a wrong computation come out with a plausible shape. Check the "
        "exact shape of every intermediate, not only that the final one fits."),
    # Unit 04: autograd records the graph.
    Misconception(
        "non-leaf-grad", "expecting .grad on a non-leaf",
        "The backward pass fills .grad only for leaf tensors that require grad (the ones you "
        "created with requires_grad=True, parameters among them); an intermediate result's "
        ".grad stays None unless you ask for it."),
    Misconception(
        "grad-accumulates", "gradients silently doubled by accumulation",
        "Each backward() adds into .grad rather than replacing it, so each step's gradient "
        "piles on the previous ones until you zero it."),
    Misconception(
        "static-graph", "believing the graph is static",
        "Autograd records a new graph every time the forward computation runs. A loss computed "
        "once, before the loop, keeps describing the parameters as they were then, and what "
        "its graph saved is freed by its first backward()."),
    Misconception(
        "recording-by-value", "recording decided by values rather than by requires_grad",
        "Autograd records an operation when recording is on (not under no_grad or "
        "inference_mode), one of its inputs requires grad, and its result can carry a "
        "gradient; the values never matter, so a product with zero is recorded. An operation "
        "whose result cannot carry a gradient (a comparison such as u > 0, argmax, anything "
        "with an integer or bool result) records nothing, and neither does an operation on a "
        "detached tensor alone or one run under no_grad."),
    # Unit 05: no_grad and detach.
    Misconception(
        "missing-no-grad", "missing no_grad",
        "Outside no_grad (or inference_mode), operations on a tensor that requires grad, such "
        "as a parameter, are recorded, and the tensors they save for backward stay alive as "
        "long as their results do, for a backward pass that never comes. An evaluation, or an "
        "update of parameters or buffers by hand, must record nothing."),
    Misconception(
        "eval-as-no-grad", "model.eval() used as if it were no_grad",
        "Calling model.eval() switches layers such as dropout and batch norm to their "
        "evaluation behaviour; it does not stop autograd from recording. Evaluation needs both."),
    Misconception(
        "running-loss-tensor", "running loss kept as a tensor",
        "Adding the loss tensor itself to a running total links every batch's graph to that "
        "total, so none of those graphs, and nothing they still hold, can be freed while the "
        "total lives. Log a plain number."),
    Misconception(
        "mode-not-restored", "train mode not restored after evaluation",
        "Evaluation mode stays on until something switches it off, so training after an "
        "evaluation that does not put the model back runs without dropout and with batch norm "
        "using, and no longer updating, its running statistics."),
    # Unit 06: modules, parameters, buffers.
    Misconception(
        "bare-tensor-attribute", "a bare tensor attribute",
        "A tensor stored as a plain attribute is neither a parameter nor a buffer: .to() leaves "
        "it behind and state_dict() does not save it. Register it as a buffer."),
    Misconception(
        "python-list-of-layers", "a Python list of layers",
        "Modules kept in a plain Python list are invisible to the parent: their parameters are "
        "not in .parameters() (so no optimiser built on them trains them), and .to(), "
        "state_dict() and train()/eval() do not reach them. Use nn.ModuleList or nn.Sequential."),
    Misconception(
        "statistics-as-parameter", "statistics stored as a Parameter",
        "An nn.Parameter is listed by parameters(), so an optimiser built on them changes it "
        "whenever it has a gradient; running statistics are computed from the data, not "
        "learned, so they belong in buffers."),
    Misconception(
        "buffer-updated-in-eval", "a buffer updated in eval mode",
        "In eval mode a module must use its running statistics, not change them; otherwise "
        "every evaluation shifts the model it evaluates."),
    # Unit 07: checkpoints and safe loading.
    Misconception(
        "saved-model-object", "saving the model object",
        "Pickling the whole module stores its class by import path, without the class's code, "
        "so the file loads only where that class can be imported again, and weights_only=True "
        "refuses it. Save the state_dict."),
    Misconception(
        "optimizer-state-dropped", "optimiser state dropped",
        "Momentum buffers and Adam's moment estimates live in the optimiser's state_dict; "
        "resuming without it starts them afresh, so the resumed run differs from the "
        "uninterrupted one."),
    Misconception(
        "optimizer-on-old-parameters", "an optimiser built on the old model's parameters",
        "An optimiser holds the parameter objects it was given. After the model is rebuilt, or "
        "moved in a way that replaces its parameters, those objects are stale, and stepping "
        "them trains nothing the model uses. Build the optimiser from the final model."),
    Misconception(
        "unsafe-load", "weights_only=False on an untrusted file",
        "Unpickling with weights_only=False runs whatever code the file names, so a checkpoint "
        "from elsewhere is a program from elsewhere. With weights_only=True the loader rebuilds "
        "only tensors, containers and plain values (numbers, strings, None, torch.Size, dtypes, "
        "devices) and refuses, without calling it, any other class or function the file names "
        "unless you allowlist it."),
    Misconception(
        "config-not-plain", "a config that cannot load under weights_only",
        "The weights_only=True loader rebuilds only tensors and plain types (numbers, strings, "
        "lists, dicts and a few more); an object of any other class, a dataclass or an "
        "argparse Namespace among them, is refused unless it is allowlisted. Save the config as "
        "plain types (a dict of numbers and strings)."),
    # Found by the hidden tests' diagnoses: mistakes the lessons warn about in passing.
    Misconception(
        "requires-grad-as-no-grad", "model.requires_grad_(False) used as if it were no_grad",
        "Calling requires_grad_(False) on a model turns gradients off for its parameters "
        "themselves, and they stay off after your function returns: the caller's next "
        "backward() finds no graph and raises, and an optimiser trains nothing. A torch.no_grad() "
        "block stops recording only inside it and leaves the model as it was."),
    Misconception(
        "state-dict-as-parameters", "parameters paired through state_dict()",
        "A model's state_dict() holds its buffers as well as its parameters (batch norm's "
        "running statistics, for one), so pairing its values with another model's parameters "
        "shifts every pair after the first buffer. Pair parameters() with parameters(), or "
        "match them by name."),
    Misconception(
        "batch-statistics-under-no-grad", "batch statistics computed under no_grad",
        "In training mode the output depends on the batch's own mean and variance, which "
        "depend on every input; computed under no_grad they are constants to autograd, so "
        "the gradient leaves out their share. Only the update of the running buffers belongs "
        "under no_grad."),
    Misconception(
        "swapped-loss-arguments", "loss arguments swapped",
        "A loss function takes the prediction first and the target second. For a symmetric "
        "loss such as mse_loss the order does not show, but for cross-entropy, a loss "
        "weighted by the target or any other asymmetric one, loss_fn(target, prediction) is a "
        "different number with a different gradient."),
    Misconception(
        "non-strict-load", "load_state_dict(strict=False) on a checkpoint that does not match",
        "With strict=False, load_state_dict skips every name the model and the file do not "
        "share and reports them only in its return value, so a renamed or missing layer keeps "
        "its fresh random weights and the run silently starts from them. The default, "
        "strict=True, raises on any mismatch."),
    Misconception(
        "tolerance-as-rounding", "a difference within a tolerance read as rounding",
        "Storing a value in a dtype gives back one number, the one nearest to it that the dtype "
        "holds. The representable numbers a step away on either side are other values, and so "
        "is any number the dtype cannot hold, however close; a tolerance of a few eps, relative "
        "or absolute, accepts them all. Ask what storing the value gives back; a tolerance is "
        "for results computed in several steps, each of which rounds again."),
    Misconception(
        "view-start-as-storage", "sharing judged by where a tensor starts",
        "A view reads the storage of the tensor it came from wherever in that storage it "
        "starts: t[1:], a column or a single element begins further into the same memory, so "
        "the address of its first element (data_ptr()) differs from t's although every element "
        "it reads is t's. Two tensors share memory when they read one storage, not when their "
        "first elements sit at one address."),
    Misconception(
        "allowlisted-untrusted", "a class allowlisted for a file from elsewhere",
        "Allowlisting a class for a weights_only load (safe_globals, add_safe_globals) lets the "
        "file call that class with arguments of the file's choosing, and whatever its "
        "constructor does with them runs. A file you cannot trust earns no such trust: that it "
        "needs a class beyond plain data, whichever class, is the reason to refuse it."),
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
    "accidental-broadcast": ("03_broadcasting_views_lesson.ipynb", "Right shape, wrong numbers"),
    "non-leaf-grad": ("04_autograd_lesson.ipynb", "`.grad` of a non-leaf is `None`"),
    "grad-accumulates": ("04_autograd_lesson.ipynb", "`.grad` accumulates until you zero it"),
    "static-graph": ("04_autograd_lesson.ipynb", "A new graph on every forward pass"),
    "recording-by-value": ("04_autograd_lesson.ipynb", "Which operations are recorded"),
    "missing-no-grad": ("05_no_grad_lesson.ipynb", "The evaluation loop that keeps every graph"),
    "eval-as-no-grad": ("05_no_grad_lesson.ipynb", "`model.eval()` is a different switch"),
    "running-loss-tensor": ("05_no_grad_lesson.ipynb", "`running += loss` in a training loop"),
    "mode-not-restored": ("05_no_grad_lesson.ipynb", "`model.eval()` is a different switch"),
    "bare-tensor-attribute": ("06_modules_lesson.ipynb", "A bare tensor attribute is neither moved nor saved"),
    "python-list-of-layers": ("06_modules_lesson.ipynb", "`nn.ModuleList`, not a Python list"),
    "statistics-as-parameter": ("06_modules_lesson.ipynb",
                                "Buffers: state that travels with the model but is never trained"),
    "buffer-updated-in-eval": ("06_modules_lesson.ipynb", "`train()` and `eval()`"),
    "saved-model-object": ("07_checkpoints_lesson.ipynb", "Save the `state_dict`, not the object"),
    "optimizer-state-dropped": ("07_checkpoints_lesson.ipynb", "Resuming with and without the optimiser's state"),
    "optimizer-on-old-parameters": ("07_checkpoints_lesson.ipynb", "Rebuild, load, then build the optimiser"),
    "unsafe-load": ("07_checkpoints_lesson.ipynb", "A checkpoint from elsewhere is a program from elsewhere"),
    "config-not-plain": ("07_checkpoints_lesson.ipynb", "Save the epoch and the configuration, as plain types"),
    "requires-grad-as-no-grad": ("06_modules_lesson.ipynb", "Parameters, trained or frozen"),
    "state-dict-as-parameters": ("06_modules_lesson.ipynb",
                                 "Three lists: `named_parameters`, `named_buffers`, `state_dict`"),
    "batch-statistics-under-no-grad": ("06_modules_lesson.ipynb", "`train()` and `eval()`"),
    "swapped-loss-arguments": ("02_devices_lesson.ipynb", "A training step for any device"),
    "non-strict-load": ("07_checkpoints_lesson.ipynb", "A renamed attribute breaks a `state_dict` loudly"),
    "tolerance-as-rounding": ("01_tensors_lesson.ipynb", "Rounding is not a bug"),
    "view-start-as-storage": ("03_broadcasting_views_lesson.ipynb", "Views share storage"),
    "allowlisted-untrusted": ("07_checkpoints_lesson.ipynb",
                              "Allowing a class: the file then chooses how it is called"),
}
# The misconceptions whose section lies in its lesson's optional part, after the main path: the
# feedback then says so, so a student does not look for it on the main path
# (tests/test_lessons.py holds this set to the lessons).
IN_OPTIONAL_PARTS = frozenset({"accidental-broadcast", "allowlisted-untrusted", "non-strict-load",
                               "requires-grad-as-no-grad"})


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
