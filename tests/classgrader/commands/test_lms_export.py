"""Tests for classgrader/commands/lms_export.py: from a real nbgrader gradebook, the Canvas and Moodle
gradebook CSVs have exactly the columns each format documents for its import (Canvas: Student,
ID, SIS User ID, SIS Login ID, Section, then one column per assignment, with a Points Possible
row; Moodle: identifier columns it maps users by, then one column per grade item), a score
less its late penalty, an empty cell where nothing was submitted and a real 0 kept; the
command writes beside runtime/grades.csv, and wrong arguments get one line and exit 2
before nbgrader loads."""
import csv
import shutil
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

from classgrader.commands.lms_export import canvas_rows, main, moodle_rows
from coursekit import ROOT, run_module, tool_env


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder with the repository's config and a gradebook: two assignments, three
    students; ann scored 2 of 3 and 0 of 2 (late, 1 point off), bob never submitted a2, cy
    never submitted anything."""
    tmp_path = tmp_path_factory.mktemp("course")
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    (tmp_path / "runtime").mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", tool_env()["PATH"])  # a new gradebook runs alembic
        fill_gradebook(f"sqlite:///{tmp_path}/runtime/gradebook.db")
    return tmp_path


def fill_gradebook(url: str) -> None:
    with Gradebook(url) as gradebook:
        for name, points in (("a1", 3), ("a2", 2)):
            gradebook.add_assignment(name)
            gradebook.add_notebook("nb", name)
            gradebook.add_grade_cell("q", "nb", name, max_score=points, cell_type="code")
        gradebook.add_student("ann", first_name="Ann", last_name="Lee", email="ann@example.org", lms_user_id="1001")
        gradebook.add_student("bob", first_name="Bob", last_name="Ray", email="bob@example.org")
        gradebook.add_student("cy")
        for assignment, student, score, late in (("a1", "ann", 2, 0), ("a2", "ann", 2, 1), ("a1", "bob", 0, 0)):
            submission = gradebook.add_submission(assignment, student)
            notebook = submission.notebooks[0]
            notebook.grades[0].auto_score = score
            notebook.late_submission_penalty = late
        gradebook.db.commit()


def test_canvas_columns_and_rows(course):
    with Gradebook(f"sqlite:///{course}/runtime/gradebook.db") as gradebook:
        rows = canvas_rows(gradebook)
    assert rows == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a1", "a2"],
        ["Points Possible", "", "", "", "", "3", "2"],
        ["Lee, Ann", "1001", "ann", "", "", "2", "1"],
        ["Ray, Bob", "", "bob", "", "", "0", ""],
        ["cy", "", "cy", "", "", "", ""],
    ]


def test_moodle_columns_and_rows(course):
    with Gradebook(f"sqlite:///{course}/runtime/gradebook.db") as gradebook:
        rows = moodle_rows(gradebook)
    assert rows == [
        ["First name", "Last name", "ID number", "Email address", "a1", "a2"],
        ["Ann", "Lee", "ann", "ann@example.org", "2", "1"],
        ["Bob", "Ray", "bob", "bob@example.org", "0", ""],
        ["", "", "cy", "", "", ""],
    ]


def export(root, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "classgrader.commands.lms_export", *args], cwd=root, env=tool_env(),
                          capture_output=True, text=True, timeout=120)


def test_the_command_writes_beside_nbgraders_csv(course):
    done = export(course, "--format", "canvas")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader((course / "runtime" / "grades-canvas.csv").open()))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a1", "a2"] and len(rows) == 5
    assert done.stdout == "runtime/grades-canvas.csv: 3 students, canvas's gradebook columns\n"


def test_a_chosen_destination(course, capsys):
    assert main(["--format", "moodle", "--to", str(course / "out.csv")], root=str(course)) == 0
    assert list(csv.reader((course / "out.csv").open()))[0] == [
        "First name", "Last name", "ID number", "Email address", "a1", "a2"]
    assert capsys.readouterr().out.endswith(": 3 students, moodle's gradebook columns\n")


@pytest.mark.parametrize("args, says", [
    ([], "usage: export --format canvas|moodle"),
    (["--format"], "--format needs a value"),
    (["--format", "blackboard"], "--format is canvas or moodle, not 'blackboard'"),
    (["--format", "canvas", "extra"], "unknown argument extra"),
])
def test_bad_arguments_say_one_line_and_exit_2(course, args, says):
    done, loaded = run_module(course, "classgrader.commands.lms_export", *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("export: ") and says in done.stderr and done.stderr.count("\n") == 1
    assert loaded == [], f"arguments must be checked before {', '.join(loaded)} loads"


def test_no_gradebook_yet(tmp_path):
    done = export(tmp_path, "--format", "canvas")
    assert done.returncode == 2 and "no gradebook yet" in done.stderr
