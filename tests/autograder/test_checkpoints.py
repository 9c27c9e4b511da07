"""Tests for autograder/checkpoints.py: the payload runs on a plain unpickle and is refused
under weights_only; a retagged checkpoint needs map_location on a CPU-only machine."""
import pickle

import pytest
import torch
from torch.serialization import get_unsafe_globals_in_checkpoint

from autograder.checkpoints import PAYLOAD_RAN, retag_device, write_payload_checkpoint
from utils import unsafe_pickle


def test_payload_runs_only_on_an_unsafe_load(tmp_path, covered):
    path = tmp_path / "payload.pt"
    weights = {"w": torch.arange(3.0)}
    write_payload_checkpoint(path, weights)
    before = PAYLOAD_RAN["count"]
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path, weights_only=True)
    assert PAYLOAD_RAN["count"] == before
    loaded = torch.load(path, weights_only=False)
    assert PAYLOAD_RAN["count"] == before + 1 and dict(PAYLOAD_RAN) == {"count": before + 1}
    assert torch.equal(loaded["model"]["w"], weights["w"])
    covered("payload checkpoint: refused by weights_only without running, runs on a plain load")


def test_the_payload_is_the_lessons_one(tmp_path):
    # One payload maker: the file names utils.unsafe_pickle's harmless function, nothing else.
    write_payload_checkpoint(tmp_path / "payload.pt")
    assert get_unsafe_globals_in_checkpoint(tmp_path / "payload.pt") == [unsafe_pickle.PAYLOAD_GLOBALS["flag"]]
    with pytest.raises(KeyError):
        PAYLOAD_RAN["ran"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA machine can load the file as it is")
def test_retagged_checkpoint_needs_map_location(tmp_path, covered):
    state = {"w": torch.randn(2, 3), "step": 4}
    torch.save(state, tmp_path / "cpu.pt")
    retag_device(tmp_path / "cpu.pt", tmp_path / "cuda.pt")
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(tmp_path / "cuda.pt")
    loaded = torch.load(tmp_path / "cuda.pt", map_location="cpu")
    assert torch.equal(loaded["w"], state["w"]) and loaded["step"] == 4
    assert torch.load(tmp_path / "cuda.pt", map_location="meta")["w"].device.type == "meta"
    covered("retag_device: a 'cuda:0' checkpoint fails without map_location, loads with it")


def test_retag_refuses_a_file_without_cpu_storage(tmp_path):
    torch.save({"n": 1}, tmp_path / "plain.pt")
    with pytest.raises(ValueError, match="no CPU storage to retag"):
        retag_device(tmp_path / "plain.pt", tmp_path / "out.pt")
