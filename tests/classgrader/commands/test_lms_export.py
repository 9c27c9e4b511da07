"""Tests for classgrader/commands/lms_export.py: from a real nbgrader gradebook, the Canvas and Moodle
gradebook CSVs have the columns each LMS's import reads (Canvas: Student, ID, SIS User ID, SIS
Login ID, Section, a column per graded assignment and a Points Possible row; Moodle: the fields
it maps users from, a column per graded assignment), a score less its late penalty, an empty
cell where nothing was submitted and a real 0 kept. Then the class day as the docs tell it:
the LMS's own export of the class (written as Canvas and Moodle write theirs) through the real
`./course roster`, grades through the real `./course export`, and the file read back by each
LMS's import as its documentation describes it (tests/lms_imports.py): every student row is a
student the LMS knows, every assignment column one of its assignments, every grade the
gradebook's. Wrong arguments get one line and exit 2 before nbgrader loads."""
import csv
import importlib
import shutil
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

import lms_imports as lms
from classgrader import cli
from classgrader.commands.lms_export import canvas_rows, main, moodle_rows
from coursekit import ROOT, run_module, tool_env


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder with the repository's config and a gradebook: three assignments, three
    students; ann scored 2 of 3 and 0 of 2 (late, 1 point off), bob never submitted a2, cy
    never submitted anything, nobody submitted a3 (so it was never graded)."""
    tmp_path = tmp_path_factory.mktemp("course")
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    (tmp_path / "runtime").mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", tool_env()["PATH"])  # a new gradebook runs alembic
        fill_gradebook(f"sqlite:///{tmp_path}/runtime/gradebook.db")
    return tmp_path


def fill_gradebook(url: str) -> None:
    with Gradebook(url) as gradebook:
        for name, points in (("a1", 3), ("a2", 2), ("a3", 5)):
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
        notes = []
        rows = canvas_rows(gradebook, notes=notes)
    assert rows == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a1", "a2"],
        ["    Points Possible", "", "", "", "", "3", "2"],
        ["Lee, Ann", "1001", "", "ann", "", "2", "1"],
        ["Ray, Bob", "", "", "bob", "", "0", ""],
        ["cy", "", "", "cy", "", "", ""],
    ]
    assert notes[0].startswith("no canvas roster read yet") and "no Canvas id for a1" in notes[1]


def test_moodle_columns_and_rows(course):
    with Gradebook(f"sqlite:///{course}/runtime/gradebook.db") as gradebook:
        rows = moodle_rows(gradebook)
    assert rows == [
        ["First name", "Last name", "ID number", "Username", "Email address", "a1", "a2"],
        ["Ann", "Lee", "", "ann", "ann@example.org", "2", "1"],
        ["Bob", "Ray", "", "bob", "bob@example.org", "0", ""],
        ["", "", "", "cy", "", "", ""],
    ]


def export(root, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "classgrader.commands.lms_export", *args], cwd=root, env=tool_env(),
                          capture_output=True, text=True, timeout=120)


def test_the_command_writes_beside_nbgraders_csv(course, capsys, monkeypatch):
    monkeypatch.chdir(course)  # where ./course runs it, and its arguments are checked
    assert main(["--format", "canvas"], root=str(course)) == 0
    rows = list(csv.reader((course / "runtime" / "grades-canvas.csv").open()))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a1", "a2"] and len(rows) == 5
    assert capsys.readouterr().out.startswith("runtime/grades-canvas.csv: 3 students, canvas's gradebook columns\n"
                                  "  no canvas roster read yet (./course roster FILE)")


def test_a_chosen_destination(course, capsys, monkeypatch):
    monkeypatch.chdir(course)
    assert main(["--format", "moodle", "--to", str(course / "out.csv")], root=str(course)) == 0
    assert next(csv.reader((course / "out.csv").open())) == [
        "First name", "Last name", "ID number", "Username", "Email address", "a1", "a2"]
    assert ": 3 students, moodle's gradebook columns\n" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "says"), [
    ([], "export: this writes an LMS's gradebook import, --format canvas or moodle; ./course export --format "
         "nbgrader runs nbgrader's own"),
    (["--format"], "export: argument --format: expected one argument; usage: ./course export "),
    (["--format", "blackboard"], "export: argument --format: invalid choice: 'blackboard'"),
    (["--format", "canvas", "extra"], "export: unrecognized arguments: extra; usage: ./course export "),
])
def test_bad_arguments_say_one_line_and_exit_2(course, args, says):
    """Parsed by ./course's one table (classgrader/cli.py), as ./course export parses them."""
    done, loaded = run_module(course, "classgrader.commands.lms_export", *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"course: {says}") and done.stderr.count("\n") == 1, done.stderr
    assert loaded == [], f"arguments must be checked before {', '.join(loaded)} loads"


def test_no_gradebook_yet(tmp_path):
    done = export(tmp_path, "--format", "canvas")
    assert done.returncode == 2 and "no gradebook yet" in done.stderr


# ---- the class day: the LMS's roster in, the LMS's import out ----

@pytest.fixture
def class_course(course, tmp_path):
    """A copy of the course and its gradebook, for one LMS's round trip."""
    copy = tmp_path / "course"
    shutil.copytree(course, copy, ignore=shutil.ignore_patterns("grades-*.csv", "out.csv"))
    return copy


def course_command(root, *args) -> subprocess.CompletedProcess:
    """What ./course ARGS runs, in root: classgrader/cli.py's check, then the command it runs (the
    bootstrap between them only makes sure .venv is built). Each loads nbgrader (seconds): one
    round trip runs so, the others in_process."""
    cli = str(ROOT / "classgrader" / "cli.py")
    check = subprocess.run([sys.executable, "-P", cli, "check", *args], cwd=root, capture_output=True, text=True,
                           timeout=60)
    assert (check.returncode, check.stdout) == (0, "env\n"), check.stderr
    done = subprocess.run([sys.executable, "-P", cli, "run", *args], cwd=root, env=tool_env(), capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done


def in_process(root, monkeypatch, capsys, *args) -> str:
    """./course ARGS as classgrader/cli.py's table checks it and what it runs, the command's own
    module called in this process (nbgrader already loaded): its stdout."""
    monkeypatch.chdir(root)
    command = cli.RUNS[args[0]](cli.parse(args[0], list(args[1:])))
    assert command[:2] == [sys.executable, "-m"], command
    capsys.readouterr()
    assert importlib.import_module(command[2]).main(command[3:], root=str(root)) == 0
    return capsys.readouterr().out


CANVAS = lms.CanvasCourse(
    students=[{"id": 1001, "sis_user_id": "S-0001", "login": "ann", "name": "Ann Lee", "sortable_name": "Lee, Ann",
               "section": "PyTorch 101 A"},
              {"id": 1002, "sis_user_id": "S-0002", "login": "bob", "name": "Bob Ray", "sortable_name": "Ray, Bob",
               "section": "PyTorch 101 B"},
              {"id": 1003, "sis_user_id": "S-0003", "login": "dee", "name": "Dana Dee", "sortable_name": "Dee, Dana",
               "section": "PyTorch 101 A"}],
    # a1 has its nbgrader name in Canvas, a2 another title (given with --assignment), the quiz is Canvas's own.
    assignments={4471: ("a1", 3), 4480: ("Quiz 1", 10), 4472: ("Devices homework", 2)},
    scores={(1001, 4480): "8.00"})


def test_canvas_imports_the_export_of_its_own_roster(class_course, covered):
    (class_course / "canvas-grades.csv").write_text(lms.canvas_export(CANVAS), encoding="utf-8")
    done = course_command(class_course, "roster", "canvas-grades.csv", "--assignment", "a2=4472")
    assert done.stdout == ("canvas-grades.csv: Canvas gradebook export, 3 students (1 added to the gradebook, 2 "
                           "updated), logins from SIS Login ID, 3 assignments (3 with their Canvas id)\n")
    with Gradebook(f"sqlite:///{class_course}/runtime/gradebook.db") as gradebook:
        table = {s.id: (s.first_name, s.last_name, s.email, s.lms_user_id) for s in gradebook.students}
    assert table == {"ann": ("Ann", "Lee", "ann@example.org", "1001"), "bob": ("Bob", "Ray", "bob@example.org", "1002"),
                     "cy": (None, None, None, None), "dee": ("Dana", "Dee", None, "1003")}

    done = course_command(class_course, "export", "--format", "canvas")
    assert done.stdout == ("runtime/grades-canvas.csv: 3 students, canvas's gradebook columns\n"
                           "  not in the roster (canvas-grades.csv), left out: cy\n")
    text = (class_course / "runtime" / "grades-canvas.csv").read_text(encoding="utf-8")
    imported = lms.canvas_import(text, CANVAS)
    assert (imported.new_students, imported.new_assignments) == ([], [])
    # a3 was never graded: no column; Canvas's quiz is not nbgrader's: not touched.
    assert imported.grades == {1001: {4471: "2", 4472: "1"}, 1002: {4471: "0", 4472: ""}, 1003: {4471: "", 4472: ""}}
    assert imported.points == {4471: "3", 4472: "2"}
    assert text.splitlines()[2] == "\"Lee, Ann\",1001,S-0001,ann,PyTorch 101 A,2,1"
    covered("Canvas's gradebook export -> ./course roster -> ./course export --format canvas -> Canvas's import: "
            "3 students by their Canvas ids, 2 assignments by their ids, no new student or assignment")


MOODLE = lms.MoodleCourse(
    users=[{"username": "ann", "idnumber": "20260001", "email": "ann@uni.example", "firstname": "Ann",
            "lastname": "Lee", "institution": "Uni", "department": "CS"},
           {"username": "bob", "idnumber": "20260002", "email": "bob@uni.example", "firstname": "Bob",
            "lastname": "Ray", "institution": "Uni", "department": "CS"},
           {"username": "dee", "idnumber": "20260003", "email": "dee@uni.example", "firstname": "Dana",
            "lastname": "Dee", "institution": "Uni", "department": "Maths"}],
    items=["a1", "a2", "Forum posts"])
MOODLE_GRADES = {"ann": {"a1": 2.0, "a2": 1.0}, "bob": {"a1": 0.0, "a2": None}, "dee": {"a1": None, "a2": None}}


def test_moodle_imports_the_export_of_its_participants(class_course, monkeypatch, capsys, covered):
    participants = lms.moodle_participants(MOODLE, ("username", "email"))
    (class_course / "participants.csv").write_text(participants, encoding="utf-8")
    said = in_process(class_course, monkeypatch, capsys, "roster", "participants.csv")
    assert "Moodle participants export, 3 students (1 added to the gradebook, 2 updated), logins from Username" in said
    with Gradebook(f"sqlite:///{class_course}/runtime/gradebook.db") as gradebook:
        dee = gradebook.find_student("dee")
        assert (dee.first_name, dee.last_name, dee.email, dee.lms_user_id) == ("Dana", "Dee", "dee@uni.example", "dee")
    in_process(class_course, monkeypatch, capsys, "export", "--format", "moodle")
    text = (class_course / "runtime" / "grades-moodle.csv").read_text(encoding="utf-8")
    for map_from, map_to in (("Username", "username"), ("Email address", "useremail")):
        assert lms.moodle_import(text, MOODLE, map_from, map_to) == MOODLE_GRADES
    covered("Moodle's participants download -> ./course roster -> ./course export --format moodle -> Moodle's CSV "
            "import mapping users by Username or Email address: every row and grade")


def test_moodle_imports_the_export_of_its_grades_export(class_course, monkeypatch, capsys, covered):
    (class_course / "moodle-grades.csv").write_text(lms.moodle_grades_export(MOODLE), encoding="utf-8")
    said = in_process(class_course, monkeypatch, capsys, "roster", "moodle-grades.csv", "--login", "Email address",
                      "--strip-domain")
    assert "Moodle grades export, 3 students" in said and "logins from Email address" in said
    in_process(class_course, monkeypatch, capsys, "export", "--format", "moodle")
    text = (class_course / "runtime" / "grades-moodle.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0] == ("First name,Last name,ID number,Username,Email address,"
                                    "Assignment: a1 (Real),Assignment: a2 (Real)")
    for map_from, map_to in (("ID number", "useridnumber"), ("Email address", "useremail")):
        assert lms.moodle_import(text, MOODLE, map_from, map_to) == MOODLE_GRADES
    covered("Moodle's grades export -> ./course roster --login 'Email address' --strip-domain -> ./course export "
            "--format moodle -> Moodle's CSV import mapping users by ID number or Email address: every row and grade")
