"""classgrader/time_limits.py: the course's cell timeout is written once, in nbgrader_config.py,
and every limit that derives from it (Validate's, the class grader's, the class run's watchdog,
a hub user's settings) follows a change of that one line."""
import re
import shutil
import subprocess
import sys

import pytest
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from classgrader import time_limits
from coursekit import ROOT

# The course's own code, as git lists it (and what it does not ignore): what a grep for the number reads.
LISTED = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"], cwd=ROOT,
                        capture_output=True, text=True, check=True).stdout.split()
PRODUCT = [ROOT / name for name in LISTED if not name.startswith(("tests/", "benchmarks/"))]


def course_timeout() -> int:
    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config().Execute.timeout


def test_the_cell_timeout_is_written_once():
    """Its number next to the word timeout, or a timeout multiplied by a number, appears in one
    line of the product: nbgrader_config.py's (the hub's server start is a number of its own, named)."""
    number = course_timeout()
    near = re.compile(rf"timeout\W[^#\n]*\b{number}\b|\b{number}\b[^#\n]*\Wtimeout", re.I)
    multiplied = re.compile(r"\d\s*\*\s*\(?\s*(self\.)?timeout\b|\btimeout\)?\s*\*\s*\d")
    found = [f"{path.relative_to(ROOT)}: {line.strip()}" for path in PRODUCT if path.exists()
             for line in path.read_text(encoding="utf-8").splitlines() if near.search(line) or multiplied.search(line)]
    assert found == [f"nbgrader_config.py: c.Execute.timeout = {number}"]


def test_each_multiple_is_defined_once():
    names = ("REFERENCE_TIMEOUTS", "GRADER_TIMEOUTS", "STUDENT_TIMEOUTS", "WATCHDOG_TIMES", "PREPARING")
    defined = [f"{path.relative_to(ROOT)}: {name}" for path in PRODUCT if path.exists()
               for name in names if re.search(rf"^\s*{name}\b[\w, ]*=", path.read_text(encoding="utf-8"), re.M)]
    assert defined == [f"classgrader/time_limits.py: {name}" for name in names]


@pytest.fixture
def course(tmp_path):
    """The course's nbgrader_config.py with one change: a cell timeout of 7 s."""
    text = (ROOT / "nbgrader_config.py").read_text()
    changed = text.replace(f"c.Execute.timeout = {course_timeout()}\n", "c.Execute.timeout = 7\n")
    assert changed != text
    (tmp_path / "nbgrader_config.py").write_text(changed)
    return tmp_path


def test_a_changed_cell_timeout_changes_every_limit(course):
    from autograder.validate import kernel_settings
    from classgrader.class_run.classroom import student_seconds
    from classgrader.commands.course import load_course
    from classgrader.judging import isolated_execute
    config = load_course(str(course)).config
    assert kernel_settings(course)[1] == 7  # Validate's kernels, the button's and ./course validate's
    student, own = isolated_execute.IsolatedExecute(config=config), isolated_execute.OwnRun(config=config)
    assert (student.timeout, student._cell_timeout(), own._cell_timeout(), student._grader_seconds()) == (
        7, 7, 7 * time_limits.REFERENCE_TIMEOUTS, 7 * time_limits.GRADER_TIMEOUTS)
    budget = time_limits.student_budget(student.timeout, student.student_budget)
    assert budget == 7 * time_limits.STUDENT_TIMEOUTS
    assert student_seconds(config) == time_limits.WATCHDOG_TIMES * budget + time_limits.WATCHDOG_START
    shutil.copytree(ROOT / "hub", course / "hub", ignore=shutil.ignore_patterns("__pycache__"))
    written = subprocess.run([sys.executable, str(course / "hub" / "user_config.py"), "/srv/exchange"],
                             capture_output=True, text=True, check=True, timeout=60).stdout
    assert "c.Execute.timeout = 7\n" in written  # a hub user's Validate


def test_a_set_budget_replaces_the_derived_one():
    config = Config()
    config.Execute.timeout, config.IsolatedExecute.student_budget = 7, 50
    from classgrader.class_run.classroom import student_seconds
    assert time_limits.student_budget(7, 50) == 50
    assert student_seconds(config) == time_limits.WATCHDOG_TIMES * 50 + time_limits.WATCHDOG_START


@pytest.mark.parametrize("value", [None, 0, -1, "120", True])
def test_no_limit_is_refused_with_what_to_set(value):
    with pytest.raises(ValueError, match=r"needs a cell timeout in seconds \(c.Execute.timeout in nbgrader_config"):
        time_limits.grader_test(value)
