"""show_error(): shows a real error in a lesson and checks that it still happens.

Covers: the printed `Type: message` line and the returned message; multi-line messages (first line
printed, whole message returned); the optional `contains` check; ClaimFailed when nothing raises,
when the message lacks the fragment, and when a claim inside fn fails."""
import pytest
import torch

from utils.claims import ClaimFailed, claim
from utils.errors import show_error


def test_prints_type_and_message_and_returns_the_message(capsys):
    msg = show_error(lambda: torch.ones(3) + torch.ones(4))
    assert msg == ("The size of tensor a (3) must match the size of tensor b (4) "
                   "at non-singleton dimension 0")
    assert capsys.readouterr().out == f"RuntimeError: {msg}\n"


def test_multiline_message_prints_first_line_returns_all(capsys):
    def boom():
        raise ValueError("first line\nsecond line")
    assert show_error(boom) == "first line\nsecond line"
    assert capsys.readouterr().out == "ValueError: first line [...]\n"


def test_contains_passes_when_the_fragment_is_there():
    msg = show_error(lambda: torch.tensor([3, 4, 5]).mean(), contains="could not infer output dtype")
    assert "Long" in msg


def test_no_error_is_a_failed_claim():
    with pytest.raises(ClaimFailed, match="expected this code to raise"):
        show_error(lambda: torch.ones(3) + torch.ones(3))


def test_wrong_error_is_a_failed_claim(capsys):
    with pytest.raises(ClaimFailed, match="containing 'device'"):
        show_error(lambda: torch.ones(3) + torch.ones(4), contains="device")


def test_a_failing_claim_inside_is_not_swallowed(covered):
    with pytest.raises(ClaimFailed, match="claims 1"):
        show_error(lambda: claim(2, 1))
    covered("show_error: prints and returns the message; ClaimFailed if no error, wrong error, or a claim inside fails")
