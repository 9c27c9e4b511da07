"""identity, both sides: what the student's function hands back that it was given comes back as
the test's own object (its leaves included, see test_graph_replay.py), so `is` means what it
means in one process; a number or a place the call never sent is refused."""
import pytest
import torch

from answering import Student, error_of
from classgrader.judging import identity


def test_a_function_that_returns_what_it_was_given_returns_the_tests_own_tensor():
    student = Student("def first(pair):\n    return pair[0]\n")
    test = """
from torch import nn
a, layer = torch.ones(2), nn.Linear(2, 2)   # the module makes the call pickled
check_value(first([a, layer]) is a, True, name="the same tensor", reveal=True)
"""
    assert error_of(student.judged(test, {"first"})) is None


def test_any_object_the_function_hands_back_untouched_is_the_tests_own_and_a_copy_is_not():
    student = Student("import copy\ndef keep(batch):\n    return [batch[0], copy.copy(batch[1]), batch]\n")
    test = """
marker = object()
for batch in ([marker, [2.5], torch.ones(2)],          # an object that is not data: sent pickled
              ["name.png", ["label"], torch.ones(2)]):  # data only: sent as data
    kept, copied, whole = keep(batch)
    check_value((kept is batch[0], copied is batch[1], whole is batch), (True, False, True),
                name="identities", reveal=True)
"""
    assert error_of(student.judged(test, {"keep"})) is None
    assert sum("pickled" in request for request in student.requests) == 1


def test_a_given_the_call_never_sent_is_refused():
    sent, args, kwargs = [torch.ones(1)], ([1, [2]],), {"k": "v"}
    assert identity.resolve({"given": 0}, sent, args, kwargs) is sent[0]
    assert identity.resolve({"given_path": [0, 0, 1]}, sent, args, kwargs) is args[0][1]
    assert identity.resolve({"given_path": [1, "k"]}, sent, args, kwargs) == "v"
    for forged in ({"given": 1}, {"given": -1}, {"given": True}, {"given": "0"},
                   {"given_path": [0, 5]}, {"given_path": [1, "nope"]}, {"given_path": [0, 0, 0, 0]},
                   {"given_path": [0, 0, "1"]}, {"given_path": 3}):
        with pytest.raises(ValueError, match=r"no (tensor|object) was sent"):
            identity.resolve(forged, sent, args, kwargs)
