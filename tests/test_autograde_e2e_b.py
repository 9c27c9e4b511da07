"""End-to-end grading of 04_autograd, 05_no_grad, 06_modules (tests/autograde_e2e.py has the tests and
says what they check)."""
import pytest

import autograde_e2e
from autograde_e2e import *  # noqa: F403 (the module fixture, the tests, their parametrization)

pytestmark = pytest.mark.early(5)

UNITS = autograde_e2e.units("04_autograd", "05_no_grad", "06_modules")
