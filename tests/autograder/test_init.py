"""Tests for autograder/__init__.py: start_grading seeds every generator, prints the
grading device as feedback shows it and returns that device; the package exports what
its __all__ lists."""
import random

import numpy as np
import pytest
import torch

import autograder
from autograder import seed_everything, start_grading


@pytest.fixture
def no_accelerator(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


def test_start_grading_prints_and_returns_the_device(no_accelerator, capsys):
    device = start_grading()
    assert device == torch.device("cpu")
    assert capsys.readouterr().out == "Graded on: cpu (no accelerator found)\n"


def test_start_grading_names_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "NVIDIA H200")
    assert start_grading() == torch.device("cuda")
    assert capsys.readouterr().out == "Graded on: cuda (NVIDIA H200)\n"


def test_start_grading_names_mps_without_the_cpu_note(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert start_grading() == torch.device("mps")
    assert capsys.readouterr().out == "Graded on: mps (Apple GPU)\n"


@pytest.mark.parametrize("seed", [0, 7])
def test_start_grading_seeds_like_seed_everything(no_accelerator, seed):
    if seed == 0:
        start_grading()  # the default seed
    else:
        start_grading(seed)
    got = (random.random(), np.random.rand(), torch.rand(3).tolist())
    seed_everything(seed)
    assert got == (random.random(), np.random.rand(), torch.rand(3).tolist())


def test_start_grading_default_seed_is_not_seven(no_accelerator):
    start_grading()
    default = torch.rand(3)
    start_grading(7)
    assert not torch.equal(default, torch.rand(3))


def test_all_names_are_exported():
    for name in autograder.__all__:
        assert hasattr(autograder, name), name
    assert {"check_tensor", "check_value", "pitfall_if", "seed_everything", "start_grading",
            "check_choice", "check_answer", "GradingError", "PitfallError"} <= set(autograder.__all__)
