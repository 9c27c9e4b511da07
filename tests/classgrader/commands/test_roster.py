"""Tests for classgrader/commands/roster.py: the LMS's export of the class fills nbgrader's student
table through its Gradebook API (a blank in the file never erases what the table has) and
runtime/lms-roster.json beside it (the LMS's identity columns, its assignments, and the
--assignment settings, kept from run to run); wrong arguments and files that are not a roster
get one line and exit 2 before nbgrader loads, through the real ./course too, and change
nothing."""
import json
import shutil

import pytest
from nbgrader.api import Gradebook

import lms_imports as lms
from classgrader.commands.roster import STORE, main
from coursekit import ROOT, argument_course, refused_in_one_line, run_module, snapshot, tool_env

CANVAS = lms.CanvasCourse(
    students=[{"id": 1001, "sis_user_id": "S-0001", "login": "ann", "name": "Ann Lee", "sortable_name": "Lee, Ann",
               "section": "A"},
              {"id": 1002, "sis_user_id": "S-0002", "login": "bob", "name": "Bob Ray", "sortable_name": "Ray, Bob",
               "section": "B"}],
    assignments={4471: ("01_tensors", 10)})


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A course whose gradebook knows ann already, with her e-mail, and Canvas's export of the class."""
    root = tmp_path_factory.mktemp("course")
    shutil.copy(ROOT / "nbgrader_config.py", root)
    (root / "runtime").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", tool_env()["PATH"])  # a new gradebook runs alembic
        with Gradebook(f"sqlite:///{root}/runtime/gradebook.db") as gradebook:
            gradebook.add_student("ann", email="ann@uni.example")
    (root / "canvas.csv").write_text(lms.canvas_export(CANVAS), encoding="utf-8")
    return root


@pytest.fixture
def course(made, tmp_path):
    return shutil.copytree(made, tmp_path / "course")


def test_the_roster_fills_the_gradebook_and_the_store(course, capsys, monkeypatch):
    monkeypatch.chdir(course)  # where ./course runs it, and reads the file to check it
    assert main(["canvas.csv", "--assignment", "02_devices=4472"], root=str(course)) == 0
    assert capsys.readouterr().out == ("canvas.csv: Canvas gradebook export, 2 students (1 added to the gradebook, 1 "
                                       "updated), logins from SIS Login ID, 1 assignments (1 with their Canvas id)\n")
    with Gradebook(f"sqlite:///{course}/runtime/gradebook.db") as gradebook:
        rows = {s.id: (s.first_name, s.last_name, s.email, s.lms_user_id) for s in gradebook.students}
    assert rows == {"ann": ("Ann", "Lee", "ann@uni.example", "1001"), "bob": ("Bob", "Ray", None, "1002")}
    store = json.loads((course / STORE).read_text())
    assert store["students"]["bob"] == {"identity": {"Student": "Ray, Bob", "ID": "1002", "SIS User ID": "S-0002",
                                                     "SIS Login ID": "bob", "Section": "B"}, "section": "B"}
    assert store["assignments"] == [{"title": "01_tensors", "column": "01_tensors (4471)", "lms_id": "4471",
                                     "points": "10.00"}]
    assert (store["lms"], store["file"], store["settings"]) == ("canvas", "canvas.csv", {"02_devices": "4472"})
    # Read again later, without --assignment: the setting stays.
    assert main(["canvas.csv", "--assignment", "03_autograd=4473"], root=str(course)) == 0
    assert json.loads((course / STORE).read_text())["settings"] == {"02_devices": "4472", "03_autograd": "4473"}


@pytest.mark.parametrize(("args", "says"), [
    ([], "the following arguments are required: FILE; usage: ./course roster FILE [--login COLUMN] [--strip-domain] "
         "[--assignment NAME=ID ...]"),
    (["canvas.csv", "--login"], "argument --login: expected one argument"),
    (["canvas.csv", "--assignment", "02_devices"], "--assignment takes NAME=CANVAS_ID (e.g. 01_tensors=4471), "
                                                   "not '02_devices'"),
    (["canvas.csv", "other.csv"], "unrecognized arguments: other.csv"),
    (["nosuch.csv"], "no such file: nosuch.csv"),
    (["canvas.csv", "--login", "Email"], "canvas.csv has no column 'Email'"),
])
def test_bad_arguments_say_one_line_and_exit_2(course, args, says):
    before = snapshot(course)
    done, loaded = run_module(course, "classgrader.commands.roster", *args)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith(f"course: roster: {says}") and done.stderr.count("\n") == 1, done.stderr
    assert loaded == [], f"arguments must be checked before {', '.join(loaded)} loads"
    assert snapshot(course) == before


def test_the_real_course_script_refuses_a_file_that_is_no_roster(tmp_path, covered):
    course = argument_course(tmp_path)
    (course / "classgrader" / "commands").mkdir()
    shutil.copy2(ROOT / "classgrader" / "commands" / "lms_files.py", course / "classgrader" / "commands")
    (course / "grades.csv").write_text("Name,Score\nann,3\n")
    refused_in_one_line(course, "roster grades.csv", "course: roster: grades.csv is neither Canvas's gradebook "
                        "export (Student, ID, ..., Section, ...) nor Moodle's participants or grades export (First "
                        "name, Last name, ...); its header: Name, Score")
    (course / "grades.csv").write_text(lms.canvas_export(CANVAS).replace(",bob,", ",,"))
    refused_in_one_line(course, "roster grades.csv", "course: roster: grades.csv row 4 has no SIS Login ID; every "
                        "student needs one (or choose the login column with --login)")
    covered("./course roster FILE: a file that is not the LMS's export, or a student without a login: one line, "
            "exit 2, no .venv, nothing changed")
