"""The same objects on both sides of a call made in the student's kernel: what the student's
function hands back that it was given comes back as the test's own object, not a copy, so a
test's `is` means there what it means in one process. A tensor a pickled call sent goes under a
number (tagged; a graph's leaves included, see graph_replay.py); any other object is found by its
place in the call's arguments (nested lists, tuples and dicts). A function that returns the
leaves it was given, or hands back a value untouched, returns the test's own.

This is the kernel's side (MET, tagged, given_objects, as_given); the grader's, which finds the
object a Given stands for, is judging/identity.py."""
from classgrader.in_kernel import walk

MET: dict = {}  # the kernel's side: number -> the tensor this call's pickle rebuilt under it


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
    for path, value in walk.nodes([args, kwargs]):
        if len(found) >= MAX_OBJECTS:
            break
        if path and value is not None and type(value) is not bool:
            found.setdefault(id(value), (Given(path=path), value))
    return found


def as_given(value, found: dict):
    """`value` with each object it holds (itself, or in nested lists, tuples and dicts) that the
    call was given replaced by its Given (`found`: given_objects)."""
    def given(node):
        return found[id(node)][0] if id(node) in found and found[id(node)][1] is node else walk.INTO
    return walk.rebuilt(value, given)

