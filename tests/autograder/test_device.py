"""Tests for autograder/device.py: grading_device() picks CUDA, then MPS, else the CPU
(the CPU on this accelerator-less machine, and each branch with the accelerators faked),
and describe_device's student-facing names."""
import pytest
import torch

from autograder.device import describe_device, grading_device

HAS_ACCELERATOR = torch.cuda.is_available() or (
    getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available())


@pytest.fixture
def accelerators(monkeypatch):
    """Set which accelerators torch reports: accelerators(cuda=..., mps=...)."""
    def set_(cuda=False, mps=False):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    return set_


@pytest.mark.skipif(HAS_ACCELERATOR, reason="this machine has an accelerator")
def test_grading_device_is_cpu_without_accelerator():
    device = grading_device()
    assert device == torch.device("cpu")
    assert describe_device(device) == "cpu"


def test_cpu_when_neither_is_present(accelerators):
    accelerators(cuda=False, mps=False)
    assert grading_device() == torch.device("cpu")


def test_cpu_when_torch_has_no_mps_backend(accelerators, monkeypatch):
    accelerators(cuda=False)
    monkeypatch.delattr(torch.backends, "mps")
    assert grading_device() == torch.device("cpu")


def test_cuda_first(accelerators):
    accelerators(cuda=True, mps=True)
    assert grading_device() == torch.device("cuda")


def test_mps_without_cuda(accelerators):
    accelerators(cuda=False, mps=True)
    assert grading_device() == torch.device("mps")


def test_describe_cpu():
    # Just the device: start_grading adds "(no accelerator found)" when it grades on the CPU.
    assert describe_device(torch.device("cpu")) == "cpu"


def test_describe_meta():
    assert describe_device(torch.device("meta")) == "meta"


def test_describe_mps():
    assert describe_device(torch.device("mps")) == "mps (Apple GPU)"


def test_describe_cuda_names_the_card(monkeypatch):
    seen = []

    def name(device):
        seen.append(device)
        return "NVIDIA H200"
    monkeypatch.setattr(torch.cuda, "get_device_name", name)
    assert describe_device(torch.device("cuda")) == "cuda (NVIDIA H200)"
    assert seen == [torch.device("cuda")]


def test_pretend_accelerators_fakes_every_api_and_restores_it():
    """pretend_accelerators: torch.cuda, torch.backends.mps and torch.accelerator agree, then come back."""
    from autograder import pretend_accelerators
    originals = (torch.cuda.is_available, torch.backends.mps.is_available,
                 torch.accelerator.is_available, torch.accelerator.current_accelerator)
    with pretend_accelerators(cuda=True):
        assert torch.cuda.is_available() and not torch.backends.mps.is_available()
        assert torch.accelerator.current_accelerator() == torch.device("cuda")
        assert grading_device() == torch.device("cuda")
    with pretend_accelerators(mps=True):
        assert not torch.cuda.is_available() and torch.backends.mps.is_available()
        assert torch.accelerator.current_accelerator() == torch.device("mps")
        assert grading_device() == torch.device("mps")
    with pretend_accelerators():
        assert not torch.accelerator.is_available()
        assert torch.accelerator.current_accelerator() is None
        assert not torch.backends.cuda.is_built() and not torch.backends.mps.is_built()
    with pretend_accelerators(built=True):  # support compiled in, no device present
        assert torch.backends.cuda.is_built() and torch.backends.mps.is_built()
        assert not torch.cuda.is_available() and not torch.backends.mps.is_available()
        assert grading_device() == torch.device("cpu")
    assert (torch.cuda.is_available, torch.backends.mps.is_available,
            torch.accelerator.is_available, torch.accelerator.current_accelerator) == originals


PICKERS = {
    "is_available": lambda: torch.device("cuda" if torch.cuda.is_available() else
                                         "mps" if torch.backends.mps.is_available() else "cpu"),
    "device counts": lambda: torch.device("cuda" if torch.cuda.device_count() > 0 else
                                          "mps" if torch.backends.mps.is_built() and torch.backends.mps.is_available()
                                          else "cpu"),
    "cuda index": lambda: torch.device("cuda", torch.cuda.current_device()).type if torch.cuda.device_count()
    else ("mps" if torch.mps.device_count() else "cpu"),
    "torch.accelerator": lambda: (torch.accelerator.current_accelerator() if torch.accelerator.device_count()
                                  else torch.device("cpu")),
    "built and available": lambda: ("cuda" if torch.backends.cuda.is_built() and torch.cuda.is_available()
                                    else "mps" if torch.backends.mps.is_available() else "cpu"),
}


@pytest.mark.parametrize("picker", PICKERS, ids=list(PICKERS))
@pytest.mark.parametrize(("present", "expected"), [({"cuda": True}, "cuda"), ({"mps": True}, "mps"),
                                                   ({"cuda": True, "mps": True}, "cuda"), ({}, "cpu")])
def test_every_public_question_a_picker_asks_sees_the_pretended_machine(picker, present, expected):
    from autograder import pretend_accelerators
    with pretend_accelerators(**present):
        got = PICKERS[picker]()
    assert torch.device(got).type == expected


def test_pretend_accelerators_restores_counts_and_built_flags():
    from autograder import pretend_accelerators
    originals = (torch.cuda.device_count, torch.backends.mps.is_built, torch.backends.cuda.is_built,
                 torch.accelerator.device_count, torch.cuda.current_device)
    with pretend_accelerators(cuda=True):
        assert torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
    assert (torch.cuda.device_count, torch.backends.mps.is_built, torch.backends.cuda.is_built,
            torch.accelerator.device_count, torch.cuda.current_device) == originals


def test_a_picker_that_kept_the_functions_earlier_sees_the_pretended_machine_too():
    """A picker cannot tell a pretended machine by comparing functions it kept before with
    torch's (real = torch.cuda.is_available ... if torch.cuda.is_available is real): each is
    the same function, answering as the pretended machine while it lasts."""
    from autograder import pretend_accelerators
    kept = [torch.cuda.is_available, torch.backends.mps.is_available, torch.accelerator.current_accelerator]
    before = [kept[0](), kept[1](), kept[2]()]
    with pretend_accelerators(mps=True):
        assert [torch.cuda.is_available, torch.backends.mps.is_available,
                torch.accelerator.current_accelerator] == kept
        assert [kept[0](), kept[1](), kept[2]()] == [False, True, torch.device("mps")]
    with pretend_accelerators(cuda=True):
        assert [kept[0](), kept[1](), kept[2]()] == [True, False, torch.device("cuda")]
    assert [kept[0](), kept[1](), kept[2]()] == before
