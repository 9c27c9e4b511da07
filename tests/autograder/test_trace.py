"""trace: check records as data only, written only inside a grading kernel."""
import json

import numpy as np
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
