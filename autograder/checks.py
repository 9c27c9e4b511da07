"""Student-facing checks. Each raises GradingError with a message that names the property
that is wrong (type, shape, dtype, device, requires_grad/graph, then values) and shows
expected against got for properties, but never the expected values themselves.

A check given `wrong_kinds` diagnoses a failure: {misconception key: the value that mistake
gives on the same inputs, or a function computing it}, computed by the hidden test. When the
student's value is what one of them gives (and the right value is not), the message names that
misconception and its lesson section instead of the generic verdict (see diagnose)."""
import math
import numbers
import sys
import traceback

import numpy as np
import torch

from utils.formatting import format_shape  # the course's one notation, shared with the widgets

from .errors import GradingError
from .misconceptions import CATALOGUE, IN_OPTIONAL_PARTS, LESSON_SECTIONS, PitfallError, pitfall_message
from .trace import record

# A node of autograd's graph defined by Python code (torch.autograd.Function's), bound when the
# library is imported.
_PYTHON_NODE = torch.autograd.function.BackwardCFunction


def _type_name(value) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _not_called_hint(value) -> str:
    # `t.size` instead of `t.size()` hands back a bound method: say so, it is a classic.
    return " It is a function or method: did you forget to call it with ()?" if callable(value) else ""


def _same_device(a: torch.device, b: torch.device) -> bool:
    # cuda and cuda:0 are the same place.
    return a.type == b.type and (a.index or 0) == (b.index or 0)


def default_tolerances(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) by dtype, as torch.testing uses them; exact for integers and bool."""
    if dtype in (torch.float16,):
        return 1e-3, 1e-5
    if dtype in (torch.bfloat16,):
        return 1.6e-2, 1e-5
    if dtype in (torch.float32, torch.complex64):
        return 1.3e-6, 1e-5
    if dtype in (torch.float64, torch.complex128):
        return 1e-7, 1e-7
    return 0.0, 0.0


def check_tensor(got, expected: torch.Tensor, *, name: str = "your result",
                 rtol: float | None = None, atol: float | None = None,
                 check_values: bool = True, wrong_kinds: dict | None = None) -> None:
    """Compare a student's tensor with the expected one, property by property, in the
    course's order: type, shape, dtype, device, requires_grad/graph, then values.
    Values are skipped on the meta device, which has none. `wrong_kinds`: see diagnose."""
    try:
        _compare_tensor(got, expected, name, rtol, atol, check_values)
    except GradingError as failure:
        diagnose(failure, wrong_kinds, lambda a, b: _compare_tensor(a, b, name, rtol, atol, check_values),
                 got, expected)
        raise
    record("tensor", name, got, expected, rtol=rtol, atol=atol, check_values=check_values)


def _compare_tensor(got, expected, name, rtol, atol, check_values) -> None:
    if not isinstance(got, torch.Tensor):
        raise GradingError(f"{name}: wrong type. Expected a torch.Tensor, got {_type_name(got)}."
                           + _not_called_hint(got))
    if tuple(got.shape) != tuple(expected.shape):
        raise GradingError(f"{name}: wrong shape. Expected {format_shape(expected.shape)}, "
                           f"got {format_shape(got.shape)}.")
    if got.dtype != expected.dtype:
        raise GradingError(f"{name}: wrong dtype. Expected {expected.dtype}, got {got.dtype}.")
    if not _same_device(got.device, expected.device):
        raise GradingError(f"{name}: wrong device. Expected {expected.device}, got {got.device}.")
    _check_graph(got, expected, name)
    if check_values and "meta" not in (got.device.type, expected.device.type):
        _check_values(got, expected, name, rtol, atol)


def _check_graph(got: torch.Tensor, expected: torch.Tensor, name: str) -> None:
    if got.requires_grad != expected.requires_grad:
        if got.requires_grad:
            why = (f" It is still attached to an autograd graph (grad_fn={type(got.grad_fn).__name__})."
                   if got.grad_fn is not None else "")
        else:
            why = " It is not connected to the autograd graph."
        raise GradingError(f"{name}: wrong requires_grad. Expected {expected.requires_grad}, "
                           f"got {got.requires_grad}.{why}")
    if expected.requires_grad and got.is_leaf != expected.is_leaf:
        def kind(t):
            return "a leaf" if t.is_leaf else "a non-leaf (the result of an operation)"
        raise GradingError(f"{name}: wrong place in the graph. Expected {kind(expected)}, "
                           f"got {kind(got)}.")
    if expected.requires_grad and not expected.is_leaf:
        _check_reach(got, expected, name)


# Past this many nodes a graph is not walked (its reach is not judged): the course's are far smaller.
_MOST_NODES = 100_000


def _leaves_reached(t: torch.Tensor) -> list | None:
    """The leaves `t`'s backward reaches (each once), as sorted (shape, dtype) pairs; None when
    the graph holds a node defined in Python (a node standing for a call in another process
    says nothing of what it reaches there) or is too large to walk."""
    leaves: dict[int, tuple] = {}
    seen: set = set()
    stack = [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        if isinstance(node, _PYTHON_NODE) or len(seen) >= _MOST_NODES:
            return None
        seen.add(node)
        leaf = getattr(node, "variable", None)
        if isinstance(leaf, torch.Tensor):
            leaves[id(leaf)] = (tuple(leaf.shape), str(leaf.dtype))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return sorted(leaves.values())


def _check_reach(got: torch.Tensor, expected: torch.Tensor, name: str) -> None:
    """A result computed by autograd reaches, through its graph, the tensors that require grad
    the expected one is computed from (as many, of the same shapes): a detach(), .data or
    no_grad() on the way leaves the tensors before it without a gradient, with the same values."""
    reached, wanted = _leaves_reached(got), _leaves_reached(expected)
    if reached is None or wanted is None or reached == wanted:
        return
    if len(reached) < len(wanted):
        why = (" The others get no gradient from it: something on the way cut them off (a detach(), .data "
               "or torch.no_grad()), or they were not used.")
    elif len(reached) > len(wanted):
        why = " It is computed from tensors that require grad which the expected result is not computed from."
    else:
        why = " Their shapes are not those of the tensors the expected result is computed from."
    raise GradingError(f"{name}: wrong graph. Its backward reaches {len(reached)} tensors that require grad "
                       f"(parameters or inputs); the expected result's reaches {len(wanted)}.{why}")


def _show(value: float, dtype: torch.dtype) -> str:
    """A number as its dtype holds it: float32 0.1 prints 0.1, not 0.10000000149011612."""
    digits = {torch.float16: 5, torch.bfloat16: 4, torch.float32: 8}.get(dtype)
    if not (digits and isinstance(value, float)):
        return repr(value)
    text = f"{value:.{digits}g}"
    # Keep a float looking like one: 2.0, not "2" (which reads as an int).
    return text if any(c in text for c in ".ena") else text + ".0"


def _check_values(got, expected, name, rtol, atol) -> None:
    mine = got.detach().cpu()
    want = expected.detach().cpu()
    if not isinstance(mine, torch.Tensor):
        raise GradingError(f"{name}: wrong type. Expected a torch.Tensor, got {_type_name(mine)}.")
    if tuple(mine.shape) != tuple(want.shape):
        # The values compared are exactly the shape checked: a tensor of another shape could
        # broadcast against the expected one so that no element differs (an empty one would).
        raise GradingError(f"{name}: wrong shape. Expected {format_shape(want.shape)}, "
                           f"got {format_shape(mine.shape)}.")
    inexact = want.dtype.is_floating_point or want.dtype.is_complex
    if inexact:
        default_rtol, default_atol = default_tolerances(expected.dtype)
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        close = torch.isclose(mine, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = mine == want  # integers and bools are exact: no tolerance applies
    wrong = (~close).nonzero()
    if len(wrong) == 0:
        return
    tolerance = f" (tolerance rtol={rtol:g}, atol={atol:g})" if inexact else ""
    if want.ndim == 0:
        raise GradingError(f"{name}: wrong value{tolerance}. You have {_show(mine.item(), mine.dtype)}.")
    first = tuple(int(i) for i in wrong[0])
    verb = "differs" if len(wrong) == 1 else "differ"
    raise GradingError(
        f"{name}: wrong values. {len(wrong)} of {want.numel()} elements {verb} from the "
        f"expected ones{tolerance}; the first is at index {first}, where you have "
        f"{_show(mine[first].item(), mine.dtype)}.")


def _same_element(got, expected) -> bool:
    """One element of a tuple: ints as ints (never bools), everything else by exact type."""
    if isinstance(expected, numbers.Integral) and not isinstance(expected, bool):
        return (isinstance(got, numbers.Integral) and not isinstance(got, (bool, torch.Tensor))
                and int(got) == int(expected))
    return type(got) is type(expected) and got == expected


def _plain(value) -> str:
    """How a value reads in a message: a device as 'meta', not device(type='meta')."""
    return repr(str(value)) if isinstance(value, torch.device) else repr(value)


def check_raises(call, expected, *, name: str = "your function") -> None:
    """`call()` must raise one of `expected` (an exception type or a tuple of them)."""
    wanted = expected if isinstance(expected, tuple) else (expected,)
    names = " or ".join(e.__name__ for e in wanted)
    try:
        result = call()
    except wanted:
        record("raises", name)
        return
    except Exception as error:
        raise GradingError(f"{name}: expected a {names}, got {type(error).__name__}: {error}") from None
    raise GradingError(f"{name}: expected a {names}, but it returned {result!r}.")


def check_keys(got, keys, *, name: str = "your result") -> None:
    """`got` is a dict holding at least `keys` (the names the task asked for)."""
    if not isinstance(got, dict):
        raise GradingError(f"{name}: wrong type. Expected a dict, got {_type_name(got)}."
                           + _not_called_hint(got))
    missing = [k for k in keys if k not in got]
    if missing:
        raise GradingError(f"{name}: the dict has no key {', '.join(map(repr, missing))}. "
                           f"Expected keys: {', '.join(map(repr, keys))}.")
    record("keys", name, list(got), list(keys))


def check_value(got, expected, *, name: str = "your answer", reveal: bool = False,
                rel_tol: float = 1e-9, abs_tol: float = 0.0, wrong_kinds: dict | None = None) -> None:
    """Compare a plain Python value (int, float, bool, str, tuple, torch.dtype,
    torch.device) with the expected one. The type must match first, so a tensor, or an
    object that claims to equal everything, cannot pass for a number. Floats compare with
    rel_tol (default 1e-9: rounding noise passes, real differences do not). With
    reveal=False the message shows what the student gave, not the expected value.
    `wrong_kinds`: see diagnose."""
    try:
        got = _compare_value(got, expected, name, reveal, rel_tol, abs_tol)
    except GradingError as failure:
        diagnose(failure, wrong_kinds, lambda a, b: _compare_value(a, b, name, reveal, rel_tol, abs_tol),
                 got, expected)
        raise
    record("value", name, got, expected, rel_tol=rel_tol, abs_tol=abs_tol)


def _compare_value(got, expected, name, reveal, rel_tol, abs_tol):
    """`got` as compared (a NumPy float as a float, ...), or GradingError."""
    if isinstance(expected, bool):
        allowed = isinstance(got, (bool, np.bool_))
        want_type = "a bool (True or False)"
    elif isinstance(expected, numbers.Integral):
        allowed = isinstance(got, numbers.Integral) and not isinstance(got, (bool, torch.Tensor))
        want_type = "a plain Python int"
    elif isinstance(expected, numbers.Real):
        allowed = isinstance(got, numbers.Real) and not isinstance(got, (bool, torch.Tensor))
        want_type = "a plain Python float"
    elif isinstance(expected, tuple):
        allowed = isinstance(got, tuple)
        want_type = "a tuple"
    else:
        allowed = type(got) is type(expected)
        want_type = f"a {_type_name(expected)}"
    if not allowed:
        hint = " A tensor holding one number becomes a Python number with .item()." \
            if isinstance(got, torch.Tensor) and isinstance(expected, numbers.Number) else ""
        raise GradingError(f"{name}: wrong type. Expected {want_type}, got {_type_name(got)}."
                           + hint + _not_called_hint(got))
    if isinstance(expected, numbers.Real) and not isinstance(expected, numbers.Integral):
        got = float(got)  # also turns a NumPy scalar into a plain float
        same = math.isclose(got, expected, rel_tol=rel_tol, abs_tol=abs_tol) or (
            math.isnan(got) and math.isnan(expected))
    elif isinstance(expected, tuple):
        got = tuple(got)
        same = len(got) == len(expected) and all(
            _same_element(g, e) for g, e in zip(got, expected))
    elif isinstance(expected, numbers.Integral) and not isinstance(expected, bool):
        got = int(got)
        same = got == expected
    elif isinstance(expected, torch.device):
        same = _same_device(got, expected)
    elif isinstance(expected, bool):
        got = bool(got)  # a NumPy bool becomes a plain one
        same = got is expected
    else:
        same = got == expected
    if same is not True:
        shown = f"Expected {_plain(expected)}, got {_plain(got)}." if reveal else f"You gave {_plain(got)}."
        raise GradingError(f"{name}: wrong value. {shown}")
    return got


def _matches(compare, got, candidate) -> bool:
    try:
        compare(got, candidate)
    except GradingError:
        return False
    return True


class OneOf(tuple):
    """The values one mistake may give, in a wrong_kinds entry (len(t) or the count of tensors,
    for the count of elements): any of them names it."""


def diagnose(failure: GradingError, wrong_kinds: dict | None, compare, got, expected) -> None:
    """Name the misconception behind a failed check, when the evidence says which.

    `wrong_kinds` maps a misconception key to what that mistake gives on the check's inputs:
    a value, or a function of no arguments computing it (called only when a check fails; one
    that raises stands for nothing). A kind is named when `got` passes the same comparison
    against its value and the right value does not (a kind the inputs cannot tell from the
    right answer proves nothing). Raises PitfallError naming the first kind that matches,
    with the check's own verdict and the lesson section; returns when none matches, so the
    caller raises the generic verdict."""
    if not wrong_kinds:
        return
    for key, candidate in wrong_kinds.items():
        if key not in CATALOGUE:
            raise KeyError(f"unknown misconception {key!r}")
        try:
            value = candidate() if callable(candidate) and not isinstance(candidate, torch.Tensor) else candidate
        except Exception:
            continue
        values = value if isinstance(value, OneOf) else (value,)
        if any(_matches(compare, got, v) and not _matches(compare, expected, v) for v in values):
            lesson, section = LESSON_SECTIONS.get(key, ("", ""))
            part = "The optional part of the lesson" if key in IN_OPTIONAL_PARTS else "The lesson"
            where = f" {part} notebooks/{lesson}, section \u201c{section}\u201d, shows why." if lesson else ""
            raise PitfallError(pitfall_message(key, f"{failure} That is exactly what this mistake gives on the "
                                                    f"same inputs.{where}"), key) from None


# A raw error from a student's code, explained by the tensor property it is about: (words the
# error's message holds, that property, what to look at). The first that matches is used.
_RAW_ERRORS = [
    (("not compiled with cuda", "no cuda gpus", "cuda driver", "found no nvidia"), "device",
     "your code asked for a CUDA device by name, which the grading machine does not have: take the "
     "device from the argument you are given or from the input tensor (x.device), never write 'cuda'"),
    (("cannot copy out of meta",), "device",
     "your code took values off the meta device the checks ran it on (.cpu(), .numpy(), .item(), .tolist(), "
     "or a copy into a tensor made on another device): keep every tensor on the input's device"),
    (("expected all tensors to be on the same device", "device mismatch", "devices", "device type",
      "meta device", "different device", "expected device", "tensor on device"), "device",
     "two tensors that meet in one operation are on different devices: every tensor an operation "
     "reads must be on the same device as the model and the input"),
    (("element 0 of tensors does not require grad", "backward through the graph a second time",
      "leaf variable that requires grad", "modified by an inplace operation", "requires grad",
      "inference tensors", "does not have a grad_fn", "grad can be implicitly created only"), "graph",
     "autograd's graph is not what that operation needs: check which tensors require grad, where "
     "no_grad or detach kept them out of the graph, what an in-place operation changed, and "
     "whether backward already used that graph"),
    (("expected scalar type", "dtype", "result type", "can't be cast", "not implemented for"), "dtype",
     "two tensors that meet in one operation have dtypes it does not mix, an in-place or out= "
     "result does not fit its tensor's dtype, or the operation does not exist for that dtype: "
     "check each tensor's .dtype"),
    # Before the shape entry: the shape asked for may be right, and the memory's order is what refuses it.
    (("view size is not compatible",), "shape for its memory layout",
     "view() reads a tensor's memory in order, and this tensor's elements are not laid out in the order "
     "the new shape reads them (a transpose, permute, expand or step slice came first): .reshape() copies "
     "when it must, .contiguous() makes an ordered copy"),
    (("shape", "size of tensor", "sizes of tensors", "cannot be multiplied", "must match the size",
      "dimension out of range", "invalid for input of size", "size mismatch"), "shape",
     "the shapes of the tensors in one operation do not fit together: print each tensor's .shape "
     "just before the line that fails"),
]


def explain_error(error: BaseException) -> str | None:
    """One sentence naming the tensor property (device, dtype, shape, graph) a raw error from
    a student's code is about, or None when it is about none of them."""
    if isinstance(error, GradingError):
        return None
    text = str(error).lower()
    for words, prop, advice in _RAW_ERRORS:
        if any(w in text for w in words):
            # ": wrong <property>", as the checks word it, so the class report files it under that property.
            named = "requires_grad or graph" if prop == "graph" else prop
            return f"Your code raised {type(error).__name__}: wrong {named}, {advice}."
    return None


class explained_errors:
    """Around a test cell's calls of student code: a raw error about a tensor's device, dtype, shape
    or graph becomes a GradingError that says so in one sentence, with the traceback below it;
    other errors, and the checks' own, pass through untouched. The traceback leaves out the
    frames of the test cell itself (the one that entered this block): they may be hidden tests."""

    def __enter__(self):
        self.cell = sys._getframe(1).f_code.co_filename
        return self

    def __exit__(self, kind, error, trace):
        if not isinstance(error, Exception):
            return False
        sentence = explain_error(error)
        if sentence is None:
            return False
        frames = [f for f in traceback.extract_tb(trace) if f.filename != self.cell]
        below = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(kind, error))
        raise GradingError(f"{sentence}\n\nWhere it was raised (most recent call last):\n{below.rstrip()}") from None


def watch_moves(tensors) -> list[int]:
    """Evidence of moves asked for: each of `tensors` records, in the returned list, its index
    whenever its .to(), .cuda() or .cpu() is called, whether or not the caller keeps the result.
    (An attribute of the tensor object shadows the method; the real method still does the move.)"""
    calls: list[int] = []
    for index, tensor in enumerate(tensors):
        for method in ("to", "cuda", "cpu"):
            real = getattr(tensor, method)

            def move(*args, _real=real, _index=index, **kwargs):
                calls.append(_index)
                return _real(*args, **kwargs)
            setattr(tensor, method, move)
    return calls


def watch_loss_order(model, loss_fn):
    """(a loss that calls `loss_fn` and notes its argument order, the notes): each call appends
    True when the target argument comes from `model` and the prediction does not, the order of
    a loss called as loss_fn(target, prediction). A tensor comes from the model when it is one
    of its outputs, a view of one (view_as, reshape, squeeze), or computed by autograd from
    anything that requires grad (its parameters): the data of a batch is none of these. Holds
    the model's outputs: for small checks."""
    outputs, swapped = [], []
    model.register_forward_hook(lambda module, args, output: outputs.append(output))

    def from_model(value) -> bool:
        if not isinstance(value, torch.Tensor):
            return False
        if value.grad_fn is not None or any(value is o for o in outputs):
            return True
        if value.device.type == "meta":  # no storage to compare
            return False
        place = value.untyped_storage().data_ptr()
        return any(isinstance(o, torch.Tensor) and o.device == value.device and o.device.type != "meta"
                   and o.untyped_storage().data_ptr() == place for o in outputs)

    def loss(input, target, *args, **kwargs):
        swapped.append(from_model(target) and not from_model(input))
        return loss_fn(input, target, *args, **kwargs)
    return loss, swapped


def broadcasts_asked(call, shapes) -> list[str]:
    """What `call()` asked PyTorch while it ran (its result or error is dropped): each call of
    torch.broadcast_shapes, however it was named (torch.broadcast_shapes and torch.functional's
    both end in torch._refs._broadcast_shapes), and each operation on tensors, on any device,
    that read or made a tensor of one of `shapes`: broadcasting tensors made to those shapes.
    For an exercise that asks for the rules worked out by hand; numpy is not watched."""
    import torch._refs
    from torch.utils._python_dispatch import TorchDispatchMode

    wanted = {tuple(shape) for shape in shapes}
    asked: list[str] = []

    def of_a_shape(values) -> bool:
        return any(isinstance(v, torch.Tensor) and tuple(v.shape) in wanted
                   for v in torch.utils._pytree.tree_leaves(values))

    class Noting(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            if of_a_shape((args, kwargs)) or of_a_shape(result):
                asked.append(f"torch's {func.overloadpacket.__name__} on tensors of those shapes")
            return result

    real = torch._refs._broadcast_shapes

    def noted(*given):
        asked.append("torch.broadcast_shapes")
        return real(*given)
    torch._refs._broadcast_shapes = noted
    try:
        with Noting():
            call()
    except Exception:  # what it returned or raised is for the checks; here only what it asked
        pass
    finally:
        torch._refs._broadcast_shapes = real
    return list(dict.fromkeys(asked))
