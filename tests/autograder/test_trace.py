"""trace: check records as data only, written only inside a grading kernel."""
import json

import numpy as np
import pytest
import torch

from autograder import trace


def test_values_become_data():
    t = torch.ones(2, requires_grad=True)
    record = trace.portable(t)
    assert record["shape"] == [2] and record["dtype"] == "torch.float32" and record["requires_grad"]
    assert torch.equal(record["tensor"], torch.ones(2)) and not record["tensor"].requires_grad
    assert trace.portable(torch.zeros(3, device="meta"))["tensor"] is None  # meta has no values
    assert trace.portable((1, "a", None)) == {"tuple": [{"plain": 1}, {"plain": "a"}, {"plain": None}]}
    assert trace.portable(torch.float16) == {"dtype": "torch.float16"}
    assert trace.portable(np.bool_(True)) == {"numpy": "bool", "plain": True}


def test_objects_stay_names_and_tensor_subclasses_are_not_tensors():
    class Sneaky(torch.Tensor):
        pass
    assert trace.portable(object())["object"] == "builtins.object"
    assert "object" in trace.portable(torch.ones(1).as_subclass(Sneaky))


def test_nothing_is_written_outside_a_grading_kernel(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_TRACE_DIR", raising=False)
    trace.record("value", "n", 1, 1)
    trace.flush()
    monkeypatch.setenv("COURSE_TRACE_DIR", str(tmp_path))
    trace.record("value", "n", 1, 1)
    trace.record("value", "m", 2, 2)
    assert list(tmp_path.iterdir()) == []  # kept until the cell ends
    trace.flush()
    [written] = tmp_path.iterdir()
    assert [e["name"] for e in json.loads(written.read_text())] == ["n", "m"]  # no tensors: JSON


def test_materialize_rebuilds_what_portable_recorded():
    leaf = torch.ones(2, requires_grad=True)
    values = {"t": leaf, "nonleaf": leaf * 2, "p": torch.nn.Parameter(torch.zeros(1)),
              "meta": torch.empty(3, 4, device="meta"),
              "plain": (1, 2.5, "a", None, True), "dtype": torch.int8, "device": torch.device("meta"),
              "size": torch.Size([2, 3]), "np": np.float32(1.5)}
    back = trace.materialize(trace.portable(values))
    assert torch.equal(back["t"], leaf) and back["t"].is_leaf and back["t"].requires_grad
    assert not back["nonleaf"].is_leaf and back["nonleaf"].requires_grad
    assert type(back["p"]) is torch.nn.Parameter
    assert back["meta"].device.type == "meta" and back["meta"].shape == (3, 4)
    assert back["plain"] == (1, 2.5, "a", None, True) and back["dtype"] is torch.int8
    assert back["size"] == torch.Size([2, 3]) and type(back["np"]) is np.float32


def test_an_object_comes_back_as_a_stand_in_with_its_type_name_and_callability():
    method = trace.materialize(trace.portable(torch.zeros(2).size))
    assert callable(method) and type(method).__qualname__ == "builtin_function_or_method"
    thing = trace.materialize(trace.portable(object()))
    assert not callable(thing) and f"{type(thing).__module__}.{type(thing).__qualname__}" == "builtins.object"


def test_a_forged_record_is_refused_before_anything_is_made_of_it():
    claim = {"tensor": None, "shape": [10**6, 10**6], "dtype": "torch.float32", "device": "cpu",
             "requires_grad": False, "is_leaf": True}
    for forged in (claim, {"dtype": "load"}, {"numpy": "load", "plain": "x"}, {"unknown": 1}):
        try:
            trace.materialize(forged)
        except ValueError:
            continue
        raise AssertionError(f"accepted {forged}")


def test_materialize_takes_another_way_to_rebuild_tensors_and_objects():
    """What verify.rebuild asks of it: each tensor left as its record, an object refused."""
    class Refused(Exception):
        pass

    def refuse(record):
        raise Refused(record["object"])
    data = trace.portable({"w": torch.ones(2), "n": [1, 2.5]})
    kept = trace.materialize(data, tensor=lambda record: record, opaque=refuse)
    assert kept["n"] == [1, 2.5] and kept["w"]["shape"] == [2] and torch.equal(kept["w"]["tensor"], torch.ones(2))
    with pytest.raises(Refused, match=r"builtins\.object"):
        trace.materialize(trace.portable([object()]), opaque=refuse)
