"""Tensors a test computed with autograd, sent to the student's kernel with their graph. While a
test that looks at graphs runs in the grader (recording), each torch operation whose result has
a grad_fn is noted: the function and its inputs. A tensor sent pickled (remote._pickled) goes as
that operation, so the kernel computes it again from the same inputs, recursively down to the
leaves, and the student's function meets the same graph: the same nodes, shared subexpressions
shared, leaves that require grad. Data alone would have reached it as a leaf.

Only what replays exactly is sent this way: never an operation that draws random numbers, never
a tensor changed in place since (version counters), never a function pickle cannot name.

All of this runs in the grader; the kernel's side is answer_server.replay, which the pickle names."""
import contextlib
import pickle
import weakref

import torch
from torch.overrides import TorchFunctionMode

from classgrader.in_kernel.autograd_bridge import tensors_in

# Operations whose result depends on the random state: run again, they would give other values.
RANDOM_WORDS = ("rand", "dropout", "bernoulli", "multinomial", "normal", "uniform", "exponential",
                "geometric", "cauchy", "log_normal", "random", "poisson")

_recipes: dict | None = None  # id(tensor) -> (weakref, version, func, args, kwargs, [(input, version)]) while recording
_nameable: dict = {}   # func -> how the kernel finds it (_replays)


class _Recording(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if type(out) is torch.Tensor and out.grad_fn is not None and _recipes is not None:
            named = _replays(func)
            inputs = list(tensors_in((args, kwargs)))
            if named is not None and not any(t is out for t in inputs):  # an in-place one has no recipe of its own
                _recipes[id(out)] = (weakref.ref(out), out._version, named, args, kwargs,
                                     [(t, t._version) for t in inputs])
        return out


def _replays(func):
    """How the kernel finds `func`: itself (pickle names it), the name of a torch.Tensor method
    (a Python-level operator such as Tensor.__pow__), or None (it cannot, or it is random)."""
    name = getattr(func, "__name__", "")
    if any(word in name for word in RANDOM_WORDS):
        return None
    if func not in _nameable:
        try:
            _nameable[func] = func if pickle.loads(pickle.dumps(func)) is func else None
        except Exception:
            _nameable[func] = next((attribute for attribute in dir(torch.Tensor)
                                    if getattr(torch.Tensor, attribute, None) is func), None)
    return _nameable[func]


@contextlib.contextmanager
def recording():
    """Note, while the block runs, how each tensor with a grad_fn was computed."""
    global _recipes
    _recipes = {}
    try:
        with _Recording():
            yield
    finally:
        _recipes = None


def recipe(tensor):
    """(func, args, kwargs) that compute `tensor` again with its graph, or None: not recorded,
    or it or one of its inputs changed in place since. The pickle sends it as replay(*recipe)."""
    if _recipes is None or type(tensor) is not torch.Tensor:
        return None
    noted = _recipes.get(id(tensor))
    if noted is None:
        return None
    ref, version, func, args, kwargs, inputs = noted
    if ref() is not tensor or tensor._version != version or any(t._version != v for t, v in inputs):
        return None
    return func, args, kwargs


def has_recipe(values) -> bool:
    return any(recipe(value) is not None for value in values)

