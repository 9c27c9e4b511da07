"""Tests for autograder/errors.py: one GradingError class, the same wherever it is imported from."""
from autograder.checks import GradingError as from_checks
from autograder.errors import GradingError
from autograder.misconceptions import PitfallError


def test_one_grading_error_for_checks_and_pitfalls():
    assert from_checks is GradingError
    assert issubclass(PitfallError, GradingError) and issubclass(GradingError, AssertionError)
