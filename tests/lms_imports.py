"""Canvas and Moodle as the tests need them: a class's own export, written as each LMS writes
it, and each LMS's grade import, which reads a file back as the LMS does. Written from the LMSes'
documentation and their own source (docs/lms.md cites both), never from classgrader's writer:

- Canvas: the gradebook export (lib/gradebook_exporter.rb in instructure/canvas-lms) and import
  (app/models/gradebook_importer.rb): the header must start Student, ID and end its student
  columns with Section; a column "Title (id)" is that assignment, else one of that title, else a
  new one; a "Points Possible" row; a student is found by ID, then SIS User ID, then SIS Login ID,
  then by name, else is a new one; a blank cell changes nothing.
- Moodle: the participants download (user/action_redir.php: First name, Last name, the identity
  fields) and the grades export (grade/export/txt: the profile fields, "Assignment: Name (Real)",
  "Last downloaded from this course"); the CSV import (grade/import/csv/classes/load_data.php):
  one column maps users (to userid, username, useridnumber or useremail), each other column to
  a grade item or nothing; a row whose user is blank or unknown abandons the whole import, a
  grade of "" or "-" is no grade, anything else must be a number."""
import csv
import io
import re
from dataclasses import dataclass, field

BOM = "\ufeff"


class ImportRefused(Exception):
    """What the LMS says when it will not import the file."""


def _csv(rows: list[list], separator: str = ",") -> str:
    text = io.StringIO()
    csv.writer(text, delimiter=separator, lineterminator="\n").writerows(rows)
    return text.getvalue()


# ---- Canvas ----

@dataclass
class CanvasCourse:
    students: list          # {"id", "sis_user_id", "login", "name", "sortable_name", "section"}
    assignments: dict       # Canvas assignment id -> (title, points possible)
    scores: dict = field(default_factory=dict)  # (user id, assignment id) -> score already in Canvas


def canvas_export(course: CanvasCourse, separator: str = ",") -> str:
    """Grades, Export, as Canvas writes it: with SIS ids, a byte-order mark, its totals, and the
    Student View's test student last."""
    totals = ["Current Score", "Unposted Current Score", "Final Score", "Unposted Final Score"]
    ids = list(course.assignments)
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
             *[f"{course.assignments[i][0]} ({i})" for i in ids], *totals],
            ["    Points Possible", "", "", "", "", *[f"{course.assignments[i][1]:.2f}" for i in ids],
             *["(read only)"] * len(totals)]]
    for s in course.students:
        scores = [course.scores.get((s["id"], i), "") for i in ids]
        rows.append([s["sortable_name"], s["id"], s["sis_user_id"], s["login"], s["section"], *scores, *[""] * 4])
    rows.append(["Student, Test", 9999, "", "", course.students[0]["section"], *[""] * len(ids), *[""] * 4])
    return BOM + _csv(rows, separator)


CANVAS_NOT_ASSIGNMENTS = re.compile("|".join(["Current Score", "Current Points", "Current Grade", "Final Score",
                                              "Final Points", "Final Grade", "Override Score", "Override Grade",
                                              "Override Status"]))


@dataclass
class CanvasImport:
    grades: dict            # Canvas user id -> {Canvas assignment id: cell}
    points: dict            # Canvas assignment id -> points possible the file sets
    new_students: list      # rows Canvas found no student for (names)
    new_assignments: list   # columns Canvas would make new assignments of


def canvas_import(text: str, course: CanvasCourse) -> CanvasImport:
    text = text.removeprefix(BOM)
    first = text.split("\n", 1)[0]
    separator = ";" if len(next(csv.reader([first], delimiter=";"))) > len(next(csv.reader([first]))) else ","
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=separator) if any(c.strip(" ;,") for c in row)]
    header = rows[0]
    if not (len(header) > 3 and "Student" in header[0] and "ID" in header[1]):
        raise ImportRefused("Invalid header row")
    columns, login_at, sis_at = 3, None, None
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        login_at, columns = 2, 4
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        extra = 1 if len(header) > 4 and re.search(r"Integration\s+ID", header[4]) else 0
        sis_at, login_at, columns = 2, 3, 5 + extra
    if "Section" not in header[columns - 1]:
        raise ImportRefused("Invalid header row")
    assignment_at, new_assignments = {}, []
    for index, name in enumerate(header[columns:], start=columns):
        if CANVAS_NOT_ASSIGNMENTS.search(name):
            continue
        match = re.match(r"\A(.*)\s\((\d+)\)\Z", name)
        found = int(match[2]) if match and int(match[2]) in course.assignments else None
        if found is None:
            found = next((i for i, (title, _) in course.assignments.items() if title == name), None)
        if found is None:
            new_assignments.append(name)
        else:
            assignment_at[found] = index
    result = CanvasImport({}, {}, [], new_assignments)
    for row in rows[1:]:
        row = row + [""] * (len(header) - len(row))
        if "Points Possible" in row[0]:
            result.points = {i: row[at] for i, at in assignment_at.items()}
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.I) for c in row):
            continue
        student = next((s for s in course.students if row[1] and str(s["id"]) == row[1].strip()), None)
        if student is None and sis_at is not None and row[sis_at]:
            student = next((s for s in course.students if s["sis_user_id"] == row[sis_at]), None)
        if student is None and login_at is not None and row[login_at]:
            student = next((s for s in course.students if s["login"] == row[login_at]), None)
        if student is None:
            student = next((s for s in course.students if row[0] in (s["name"], s["sortable_name"])), None)
        if student is None:
            result.new_students.append(row[0])
            continue
        result.grades[student["id"]] = {i: row[at].strip() for i, at in assignment_at.items()}
    return result


# ---- Moodle ----

@dataclass
class MoodleCourse:
    users: list   # {"username", "idnumber", "email", "firstname", "lastname", "institution", "department"}
    items: list   # the assignments' names (activities of the Assignment module)


MOODLE_FIELD_NAMES = {"firstname": "First name", "lastname": "Last name", "idnumber": "ID number",
                      "institution": "Institution", "department": "Department", "email": "Email address",
                      "username": "Username"}


def moodle_participants(course: MoodleCourse, identity=("username", "email")) -> str:
    """Participants, select all, "Download table data as" Comma separated values: First name,
    Last name, then the site's "Show user identity" fields; UTF-8 with a byte-order mark."""
    fields = ["firstname", "lastname", *identity]
    rows = [[MOODLE_FIELD_NAMES[f] for f in fields]] + [[u[f] for f in fields] for u in course.users]
    return BOM + _csv(rows)


def moodle_grades_export(course: MoodleCourse) -> str:
    """Grades, Export, Plain text file (the site's default profile fields, real grades, comma)."""
    fields = ["firstname", "lastname", "idnumber", "institution", "department", "email"]
    rows = [[MOODLE_FIELD_NAMES[f] for f in fields] + [f"Assignment: {item} (Real)" for item in course.items]
            + ["Course total (Real)", "Last downloaded from this course"]]
    rows += [[u[f] for f in fields] + ["-"] * len(course.items) + ["-", "1764633600"] for u in course.users]
    return _csv(rows)


def moodle_item_of(column: str, course: MoodleCourse):
    """The grade item a teacher picks for a column on the import's mapping page: the one the column
    names, as Moodle's own export heads it or by its name alone; None is "ignore"."""
    for item in course.items:
        if column in (item, f"Assignment: {item} (Real)"):
            return item
    return None


def moodle_import(text: str, course: MoodleCourse, map_from: str, map_to: str) -> dict:
    """{username: {item: grade or None}}; ImportRefused where Moodle abandons the import."""
    field_of = {"userid": "id", "useridnumber": "idnumber", "useremail": "email", "username": "username"}[map_to]
    rows = list(csv.reader(io.StringIO(text.removeprefix(BOM))))
    header = [h.strip() for h in rows[0]]
    user_at = header.index(map_from)
    items = {i: moodle_item_of(h, course) for i, h in enumerate(header)}
    grades = {}
    for row in rows[1:]:
        if len(row) <= 1:
            continue
        value = row[user_at].strip()
        user = next((u for u in course.users if value and u[field_of] == value), None)
        if user is None:
            raise ImportRefused(f"user mapping error: no user with {field_of} '{value}'")
        for i, cell in enumerate(row):
            if items[i] is None or i == user_at:
                continue
            cell = cell.strip()
            if cell in ("", "-"):
                grade = None
            else:
                try:
                    grade = float(cell)
                except ValueError:
                    raise ImportRefused(f"bad grade '{cell}' for {items[i]}") from None
            grades.setdefault(user["username"], {})[items[i]] = grade
    return grades
