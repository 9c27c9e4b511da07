"""End-to-end grading of 04_autograd, 05_no_grad, 06_modules (tests/autograde_e2e.py has the tests and says what they check)."""
import pytest

from autograde_e2e import *  # noqa: F403 (the module fixture, the tests, their parametrization)

pytestmark = pytest.mark.early(5)

UNITS = units("04_autograd", "05_no_grad", "06_modules")
