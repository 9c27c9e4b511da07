"""Tests for classgrader/commands/lms_files.py: the LMS's own exports of a class, written as Canvas
and Moodle write them (tests/lms_imports.py), are told apart by their header and read into
logins, names, the LMS's identity columns and its assignments; whatever is not such a file, or
has no usable login for a student, is one line that says what to do."""
import pytest

import lms_imports as lms
from classgrader.commands.lms_files import BadRoster, parse, read

CANVAS = lms.CanvasCourse(
    students=[{"id": 1001, "sis_user_id": "S-0001", "login": "ann", "name": "Ann Lee", "sortable_name": "Lee, Ann",
               "section": "A"},
              {"id": 1002, "sis_user_id": "", "login": "bob", "name": "Bob Ray", "sortable_name": "Ray, Bob",
               "section": "A and B"}],
    assignments={4471: ("01_tensors", 10), 4480: ("Quiz 1", 2.5)})
MOODLE = lms.MoodleCourse(
    users=[{"username": "ann", "idnumber": "20260001", "email": "ann@uni.example", "firstname": "Ann",
            "lastname": "Lee", "institution": "Uni", "department": "CS"},
           {"username": "bob", "idnumber": "", "email": "bob@uni.example", "firstname": "Bob",
            "lastname": "Ray", "institution": "Uni", "department": "CS"}],
    items=["01_tensors", "Forum posts"])


def test_canvas_gradebook_export():
    roster = parse(lms.canvas_export(CANVAS), "grades.csv")
    assert (roster.lms, roster.kind, roster.login_column) == ("canvas", "Canvas gradebook export", "SIS Login ID")
    ann, bob = roster.students  # the Student View's test student is not one
    assert (ann.login, ann.first_name, ann.last_name, ann.email, ann.lms_user_id, ann.section) == (
        "ann", "Ann", "Lee", "", "1001", "A")
    assert ann.identity == {"Student": "Lee, Ann", "ID": "1001", "SIS User ID": "S-0001", "SIS Login ID": "ann",
                            "Section": "A"}
    assert bob.section == "A and B"
    assert [(a.title, a.column, a.lms_id, a.points) for a in roster.assignments] == [
        ("01_tensors", "01_tensors (4471)", "4471", "10.00"), ("Quiz 1", "Quiz 1 (4480)", "4480", "2.50")]


def test_canvas_with_semicolons_a_muted_row_and_names_first_last():
    text = lms.canvas_export(CANVAS, separator=";").replace("Lee, Ann", "Ann Lee")
    lines = text.splitlines()
    text = "\n".join([lines[0], ";;;;;Muted;;;;;", *lines[1:]]) + "\n"
    roster = parse(text, "grades.csv")
    assert [(s.login, s.first_name, s.last_name) for s in roster.students] == [("ann", "Ann", "Lee"),
                                                                             ("bob", "Bob", "Ray")]
    assert [a.lms_id for a in roster.assignments] == ["4471", "4480"]


def test_another_login_column():
    roster = parse(lms.canvas_export(CANVAS).replace("S-0001", "s0001"), "grades.csv", login="ID")
    assert [s.login for s in roster.students] == ["1001", "1002"] and roster.login_column == "ID"


def test_moodle_participants():
    roster = parse(lms.moodle_participants(MOODLE, ("idnumber", "username", "email")), "participants.csv")
    assert (roster.lms, roster.kind, roster.login_column) == ("moodle", "Moodle participants export", "Username")
    ann, bob = roster.students
    assert (ann.login, ann.first_name, ann.last_name, ann.email, ann.lms_user_id) == (
        "ann", "Ann", "Lee", "ann@uni.example", "20260001")
    assert bob.lms_user_id == "bob"  # no ID number: the username is what Moodle knows the student by
    assert roster.assignments == []


def test_moodle_grades_export_with_logins_from_email():
    roster = parse(lms.moodle_grades_export(MOODLE), "grades.csv", login="Email address", strip_domain=True)
    assert (roster.kind, [s.login for s in roster.students]) == ("Moodle grades export", ["ann", "bob"])
    assert roster.students[0].identity["ID number"] == "20260001"
    assert [(a.title, a.column) for a in roster.assignments] == [
        ("01_tensors", "Assignment: 01_tensors (Real)"), ("Forum posts", "Assignment: Forum posts (Real)")]


def test_moodle_grades_export_logins_from_its_id_number():
    users = [dict(u, idnumber=f"s{i}") for i, u in enumerate(MOODLE.users)]
    roster = parse(lms.moodle_grades_export(lms.MoodleCourse(users, MOODLE.items)), "grades.csv")
    assert (roster.login_column, [s.login for s in roster.students]) == ("ID number", ["s0", "s1"])


CANVAS_TEXT = lms.canvas_export(CANVAS)


@pytest.mark.parametrize(("text", "options", "says"), [
    ("", {}, "x.csv is empty"),
    ("Name,Score\nann,3\n", {}, "x.csv is neither Canvas's gradebook export (Student, ID, ..., Section, ...) nor "
                                "Moodle's participants or grades export (First name, Last name, ...); its header: "
                                "Name, Score"),
    (CANVAS_TEXT.replace(",ann,", ",,"), {}, "x.csv row 3 has no SIS Login ID; every student needs one (or choose "
                                             "the login column with --login)"),
    (CANVAS_TEXT.replace(",ann,", ",ann@uni.example,"), {},
     "x.csv row 3: SIS Login ID 'ann@uni.example' is not a login nbgrader can use (letters, digits, _ . -); choose "
     "another column with --login, or --strip-domain to keep what comes before @"),
    (CANVAS_TEXT.replace(",bob,", ",ann,"), {}, "x.csv: two students have the login 'ann' (SIS Login ID); choose "
                                                "another column with --login"),
    (CANVAS_TEXT, {"login": "Login"}, "x.csv has no column 'Login' (its columns: Student, ID, SIS User ID, "),
    (CANVAS_TEXT.splitlines()[0] + "\n", {}, "x.csv lists no students"),
    (lms.moodle_participants(MOODLE, ("email",)), {}, "x.csv has neither a Username nor an ID number column; name "
                                                      "the login column with --login (e.g. --login 'Email address' "
                                                      "--strip-domain)"),
])
def test_what_is_not_a_roster_is_one_line(text, options, says):
    with pytest.raises(BadRoster) as refused:
        parse(text, "x.csv", **options)
    assert str(refused.value).startswith(says) and "\n" not in str(refused.value)


def test_files_that_cannot_be_read(tmp_path):
    with pytest.raises(BadRoster, match=r"^no such file: nosuch\.csv$"):
        read(str(tmp_path / "nosuch.csv"), "nosuch.csv")
    (tmp_path / "latin1.csv").write_bytes("First name,Last name,Username\nJosé,Pérez,jose\n".encode("latin-1"))
    with pytest.raises(BadRoster, match=r"^latin1\.csv is not UTF-8 text; export it from the LMS again as CSV$"):
        read(str(tmp_path / "latin1.csv"), "latin1.csv")
