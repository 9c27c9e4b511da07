"""The grader's half of in_kernel/identity.py: the object an answer's Given stands for, found
among what the call sent, so that what the student's function hands back that it was given is
the test's own object. A number or a place the call never sent is refused."""
from typing import Any


def resolve(record: dict, sent: list, args: tuple, kwargs: dict) -> Any:
    """The object a reply's Given stands for: the tensor sent under its number ("given"), or
    the object at its place in (args, kwargs) ("given_path"); ValueError if there is none."""
    if "given" in record:
        number = record["given"]
        if type(number) is not int or not 0 <= number < len(sent):
            raise ValueError(f"no tensor was sent as {number!r}")
        return sent[number]
    node: Any = (args, kwargs)
    try:
        for key in record["given_path"]:
            if type(node) not in (list, tuple, dict):
                raise TypeError
            node = node[key]
    except (TypeError, KeyError, IndexError):
        raise ValueError("no object was sent at that place") from None
    return node
