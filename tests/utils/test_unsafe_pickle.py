"""utils.unsafe_pickle: the course's one harmless payload. Building a payload file never runs it;
only an unsafe load does, and then it only raises FLAG. (Inspecting the files it writes:
test_checkpoint_reader.py; the graders' payload file built on it: tests/autograder/test_checkpoints.py.)"""
import io
import pickle

import pytest
import torch

from utils import unsafe_pickle

pytestmark = pytest.mark.usefixtures("fresh_flag")   # tests/utils/conftest.py


def test_payload_module_refuses_unknown_variants():
    with pytest.raises(ValueError, match="via must be one of"):
        unsafe_pickle.payload("system")
    buf = io.BytesIO()
    torch.save({"x": unsafe_pickle.payload("print")}, buf)      # building never runs the payload
    assert unsafe_pickle.FLAG["ran"] is False


def test_a_state_of_your_own_travels_with_the_payload(tmp_path, capsys):
    path = unsafe_pickle.write_payload_checkpoint(tmp_path / "p.pt", state={"w": torch.arange(3.0)})
    assert unsafe_pickle.FLAG == {"ran": False, "calls": 0, "message": None}
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path)
    loaded = torch.load(path, weights_only=False)
    assert set(loaded) == {"w", "note"} and torch.equal(loaded["w"], torch.arange(3.0))
    assert unsafe_pickle.FLAG == {"ran": True, "calls": 1, "message": "payload ran"}
    assert capsys.readouterr().out == "payload ran\n"
