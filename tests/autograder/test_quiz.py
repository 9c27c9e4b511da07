"""Tests for autograder/quiz.py: check_choice accepts exactly one option letter given as a
string and otherwise raises GradingError with the exact wording; check_answer accepts the
right letter and otherwise gives the hint without revealing the right letter."""
import pytest

from autograder.checks import GradingError
from autograder.quiz import check_answer, check_choice


@pytest.mark.parametrize("answer", ["a", "b", "c", "d"])
def test_check_choice_accepts_each_option(answer):
    assert check_choice(answer, "abcd", "q1") is None


@pytest.mark.parametrize("answer", [None, "ab", "z", 1, "", "A", ["a"], "a "],
                         ids=["None", "two-letters", "not-an-option", "int", "empty",
                              "upper-case", "list", "trailing-space"])
def test_check_choice_rejects_with_exact_message(answer):
    with pytest.raises(GradingError) as info:
        check_choice(answer, "abcd", "q1")
    assert str(info.value) == (
        "q1: answer with one of 'a', 'b', 'c', 'd' (a one-letter string), "
        f"got {answer!r}.")


def test_check_choice_lists_the_given_options():
    with pytest.raises(GradingError) as info:
        check_choice("d", "abc", "Question 3")
    assert str(info.value) == (
        "Question 3: answer with one of 'a', 'b', 'c' (a one-letter string), got 'd'.")


def test_check_answer_accepts_the_right_letter():
    assert check_answer("c", "c", "q1", "Re-read the section on broadcasting.") is None


@pytest.mark.parametrize("answer", ["a", "b", "d"])
def test_check_answer_gives_hint_without_the_right_letter(answer):
    hint = "Re-read the section on broadcasting."
    with pytest.raises(GradingError) as info:
        check_answer(answer, "c", "q1", hint)
    msg = str(info.value)
    assert msg == f"q1: not the right choice. {hint}"
    assert "'c'" not in msg and '"c"' not in msg and "(c)" not in msg


def test_check_answer_is_case_sensitive():
    with pytest.raises(GradingError):
        check_answer("C", "c", "q1", "hint")
