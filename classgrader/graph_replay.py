"""Tensors a test computed with autograd, sent to the student's kernel with their graph. While a
test that looks at graphs runs in the grader (recording), each torch operation whose result has
a grad_fn is noted: the function and its inputs. A tensor sent pickled (remote._pickled) goes as
that operation, so the kernel computes it again from the same inputs, recursively down to the
leaves, and the student's function meets the same graph: the same nodes, shared subexpressions
shared, leaves that require grad. Data alone would have reached it as a leaf.

Only what replays exactly is sent this way: never an operation that draws random numbers, never
a tensor changed in place since (version counters), never a function pickle cannot name.

And what the kernel hands back that it was given is the test's own object again (Given), so a
test's `is` means there what it means in one process."""
import contextlib
import pickle
import weakref

import torch
from torch.overrides import TorchFunctionMode

# Operations whose result depends on the random state: run again, they would give other values.
RANDOM_WORDS = ("rand", "dropout", "bernoulli", "multinomial", "normal", "uniform", "exponential",
                "geometric", "cauchy", "log_normal", "random", "poisson")

_recipes = None  # id(tensor) -> (weakref, version, func, args, kwargs, [(input, version)]) while recording
_nameable = {}   # func -> how the kernel finds it (_replays)


class _Recording(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if type(out) is torch.Tensor and out.grad_fn is not None and _recipes is not None:
            named = _replays(func)
            inputs = [t for t in _tensors((args, kwargs))]
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


def _tensors(value, depth=0):
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 10 and isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item, depth + 1)
    elif depth < 10 and isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item, depth + 1)


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
    or it or one of its inputs changed in place since."""
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


def replay(func, args, kwargs):
    """The kernel's side: the operation again (a torch.Tensor method when named by a string),
    recording its graph here."""
    if isinstance(func, str):
        func = getattr(torch.Tensor, func)
    with torch.enable_grad():
        return func(*args, **kwargs)


# -- the same objects on both sides ------------------------------------------------------------
# A result the function was given comes back as the test's own object, not a copy: a tensor a
# pickled call sent under a number (tagged; a graph's leaves included), or any object found in
# the call's arguments (nested lists, tuples and dicts), by its path there. So a function that
# returns the leaves it was given, or hands back a value untouched, returns the test's own.
MET = {}  # the kernel's side: number -> the tensor this call's pickle rebuilt under it


class Given:
    """Stands, in a reply, for an object the grader sent: the tensor it numbered, or the object
    at `path` in (args, kwargs)."""
    __slots__ = ("number", "path")

    def __init__(self, number: int | None = None, path: list | None = None):
        self.number, self.path = number, path


def tagged(number: int, alias, requires_grad: bool):
    """The kernel's side of a tensor sent pickled (an alias of it: the same storage)."""
    if requires_grad:
        alias.requires_grad_(True)
    MET[number] = alias
    return alias


MAX_OBJECTS = 100_000  # what one call's arguments are searched for


def given_objects(args, kwargs) -> dict:
    """The kernel's side, before a call: id -> (Given, the object, kept alive so its id stays its
    own) for the tensors this call's pickle numbered and every object in its arguments."""
    found = {id(tensor): (Given(number=number), tensor) for number, tensor in MET.items()}
    stack = [([], [args, kwargs])]
    while stack and len(found) < MAX_OBJECTS:
        path, value = stack.pop()
        if path and value is not None and type(value) is not bool:
            found.setdefault(id(value), (Given(path=path), value))
        if len(path) < 20 and type(value) in (list, tuple):
            stack.extend((path + [index], item) for index, item in enumerate(value))
        elif len(path) < 20 and type(value) is dict:
            stack.extend((path + [key], item) for key, item in value.items())
    return found


def as_given(value, found: dict, depth=0):
    """`value` with each object it holds (itself, or in nested lists, tuples and dicts) that the
    call was given replaced by its Given (`found`: given_objects)."""
    if id(value) in found and found[id(value)][1] is value:
        return found[id(value)][0]
    if depth < 20 and type(value) in (list, tuple):
        return type(value)(as_given(item, found, depth + 1) for item in value)
    if depth < 20 and type(value) is dict:
        return {key: as_given(item, found, depth + 1) for key, item in value.items()}
    return value


def resolve(record: dict, sent: list, args, kwargs):
    """The grader's side: the object a reply's Given stands for; ValueError if there is none."""
    if "given" in record:
        number = record["given"]
        if type(number) is not int or not 0 <= number < len(sent):
            raise ValueError(f"no tensor was sent as {number!r}")
        return sent[number]
    node = (args, kwargs)
    try:
        for key in record["given_path"]:
            if type(node) not in (list, tuple, dict):
                raise TypeError
            node = node[key]
    except (TypeError, KeyError, IndexError):
        raise ValueError("no object was sent at that place") from None
    return node
