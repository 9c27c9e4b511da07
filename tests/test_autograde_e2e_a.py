"""End-to-end grading of 01_tensors, 02_devices, 03_broadcasting_views (tests/autograde_e2e.py has the
tests and says what they check)."""
import pytest

import autograde_e2e
from autograde_e2e import *  # noqa: F403 (the module fixture, the tests, their parametrization)

pytestmark = pytest.mark.early(3)

UNITS = autograde_e2e.units("01_tensors", "02_devices", "03_broadcasting_views")
