"""nbgrader's Validator, configured as the Validate button and the autograder are: every
source passes all its tests, and every untouched release fails every graded test."""
import pytest

from autograder.validate import validate
from coursekit import RELEASE_NOTEBOOKS, ROOT, SOURCE_NOTEBOOKS


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_source_passes_all_its_tests(path, covered):
    result = validate(path)
    assert result == {}, f"{path.name} fails its own tests: {result}"
    covered(f"{path.relative_to(ROOT)}: Validator returns no failures")


@pytest.mark.parametrize("path", RELEASE_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_untouched_release_fails_every_graded_test(path, covered):
    result = validate(path, invert=True)
    assert result == {}, f"{path.name}: some graded tests pass with no answers: {result}"
    covered(f"{path.relative_to(ROOT)}: every graded test fails when untouched")
