"""The LMS's own export of a class, read as the LMS writes it: who the students are, how the LMS
knows each of them, and its assignments (docs/lms.md cites each format).

- Canvas, Grades, Export: Student, ID, [SIS User ID], SIS Login ID, [Integration ID], [Root
  Account], Section, then one column per assignment, "Title (id)", then totals; a
  "Points Possible" row first (and a "Muted" or "Manual Posting" row where assignments have one).
- Moodle, Participants, "Download table data as" CSV: First name, Last name, then the site's
  identity fields (Email address, ID number, Username, ...).
- Moodle, Grades, Export, Plain text file: First name, Last name, the profile fields (ID number,
  Institution, Department, Email address), one column per grade item, "Assignment: Name (Real)",
  then "Last downloaded from this course".

Which LMS wrote the file is told by its header. The login (nbgrader's student id) is one column
of it: Canvas's SIS Login ID, Moodle's Username, else its ID number; `login` names another.
Standard library only: classgrader/cli.py loads this file by path to check a roster before
anything is built, and every problem is one line (BadRoster)."""
import csv
import io
import re
from dataclasses import dataclass, field

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Root Account", "Section")
CANVAS_TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")  # as Canvas's Assignment.title_and_id reads a column
CANVAS_TEST_STUDENT = ("Student, Test", "Test Student")  # Canvas's Student View user, in every export
MOODLE_NAMES = ("First name", "Last name")
MOODLE_GRADE_COLUMN = re.compile(r"\A(.+) \((Real|Percentage|Letter)\)\Z")  # Moodle's "{name} ({display type})"
MOODLE_NOT_GRADES = ("Last downloaded from this course", "Suspended")
LOGIN_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # an nbgrader student id (classgrader/cli.py's)


class BadRoster(Exception):
    pass


@dataclass
class RosterStudent:
    login: str
    first_name: str
    last_name: str
    email: str
    lms_user_id: str
    section: str
    identity: dict  # the LMS's own identity columns, verbatim: what its import matches on


@dataclass
class RosterAssignment:
    title: str       # the LMS's name for it
    column: str      # the column as the LMS's export heads it ("Title (id)", "Assignment: Title (Real)")
    lms_id: str = ""  # Canvas's assignment id
    points: str = ""  # Canvas's points possible


@dataclass
class Roster:
    lms: str        # "canvas" or "moodle"
    kind: str       # what the LMS calls the export
    login_column: str
    students: list = field(default_factory=list)
    assignments: list = field(default_factory=list)


def _rows(text: str, name: str) -> list[list[str]]:
    first = text.split("\n", 1)[0]
    # Canvas writes ";" where its user's locale has a decimal comma; Moodle's text export lets you
    # pick comma, semicolon, colon or tab. The header has no quoted separators: count there.
    separator = max([",", ";", "\t", ":"], key=first.count)
    try:
        return [row for row in csv.reader(io.StringIO(text), delimiter=separator) if any(c.strip() for c in row)]
    except csv.Error as error:
        raise BadRoster(f"{name} is not a CSV file ({error})") from None


def read_text(path: str, name: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise BadRoster(f"no such file: {name}") from None
    except OSError as error:
        raise BadRoster(f"cannot read {name}: {error.strerror}") from None
    try:
        return data.decode("utf-8-sig")  # both LMSes write UTF-8, Moodle and Excel with a byte-order mark
    except UnicodeDecodeError:
        raise BadRoster(f"{name} is not UTF-8 text; export it from the LMS again as CSV") from None


def _name_parts(student: str) -> tuple[str, str]:
    """(first, last) from Canvas's Student column: "Last, First" (its sortable name) or "First Last"."""
    if "," in student:
        last, first = (part.strip() for part in student.split(",", 1))
        return first, last
    first, _, last = student.strip().rpartition(" ")
    return (first, last) if first else (last, "")


def _login(value: str, column: str, row: int, name: str, strip_domain: bool) -> str:
    login = value.strip()
    if strip_domain and "@" in login:
        login = login.split("@", 1)[0]
    if not login:
        raise BadRoster(f"{name} row {row} has no {column}; every student needs one (or choose the login "
                        f"column with --login)")
    if not LOGIN_PATTERN.fullmatch(login):
        hint = ", or --strip-domain to keep what comes before @" if "@" in login else ""
        raise BadRoster(f"{name} row {row}: {column} '{login}' is not a login nbgrader can use (letters, digits, "
                        f"_ . -); choose another column with --login{hint}")
    return login


def _column(header: list[str], wanted: str, name: str) -> int:
    if wanted not in header:
        raise BadRoster(f"{name} has no column '{wanted}' (its columns: {', '.join(header)})")
    return header.index(wanted)


def _canvas(rows: list[list[str]], name: str, login: str | None, strip_domain: bool) -> Roster:
    header = [cell.strip() for cell in rows[0]]
    section = header.index("Section")
    login_column = login or ("SIS Login ID" if "SIS Login ID" in header else "ID")
    at = _column(header, login_column, name)
    roster = Roster("canvas", "Canvas gradebook export", login_column)
    points = next((row for row in rows[1:] if row and "Points Possible" in row[0]), [])
    for index, column in enumerate(header[section + 1:], start=section + 1):
        match = CANVAS_TITLE_AND_ID.match(column)
        if match:
            roster.assignments.append(RosterAssignment(match[1], column, match[2],
                                                       points[index].strip() if index < len(points) else ""))
    for number, row in enumerate(rows[1:], start=2):
        row = row + [""] * (len(header) - len(row))
        if "Points Possible" in row[0] or all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.I) for c in row):
            continue
        if row[0].strip() in CANVAS_TEST_STUDENT:
            continue
        identity = {column: row[i].strip() for i, column in enumerate(header[:section + 1])
                    if column in CANVAS_IDENTITY}
        first, last = _name_parts(identity.get("Student", ""))
        roster.students.append(RosterStudent(_login(row[at], login_column, number, name, strip_domain), first, last,
                                             "", identity.get("ID", ""), identity.get("Section", ""), identity))
    return roster


def _moodle(rows: list[list[str]], name: str, login: str | None, strip_domain: bool) -> Roster:
    header = [cell.strip() for cell in rows[0]]
    grades = [(i, match) for i, c in enumerate(header) if (match := MOODLE_GRADE_COLUMN.match(c))]
    identity_columns = [c for i, c in enumerate(header)
                        if c not in MOODLE_NOT_GRADES and i not in {g for g, _ in grades}]
    is_report = bool(grades) or MOODLE_NOT_GRADES[0] in header
    default = next((c for c in ("Username", "ID number") if c in header), None)
    login_column = login or default
    if login_column is None:
        raise BadRoster(f"{name} has neither a Username nor an ID number column; name the login column with --login "
                        f"(e.g. --login 'Email address' --strip-domain)")
    at = _column(header, login_column, name)
    roster = Roster("moodle", "Moodle grades export" if is_report else "Moodle participants export", login_column)
    for _, match in grades:
        title = match[1]
        if title.startswith("Course total"):
            continue
        # "Assignment: Name" for an activity (its module's name first), the name alone otherwise.
        roster.assignments.append(RosterAssignment(title.split(": ", 1)[-1], match[0]))
    for number, row in enumerate(rows[1:], start=2):
        row = row + [""] * (len(header) - len(row))
        identity = {c: row[header.index(c)].strip() for c in identity_columns}
        lms_user_id = next((identity[c] for c in ("ID number", "Username", "Email address") if identity.get(c)), "")
        roster.students.append(RosterStudent(_login(row[at], login_column, number, name, strip_domain),
                                             identity.get("First name", ""), identity.get("Last name", ""),
                                             identity.get("Email address", ""), lms_user_id,
                                             identity.get("Groups", ""), identity))
    return roster


def parse(text: str, name: str, login: str | None = None, strip_domain: bool = False) -> Roster:
    """The roster in `text` (the file `name`); BadRoster, one line, when it is not one."""
    rows = _rows(text.removeprefix("\ufeff"), name)
    if not rows:
        raise BadRoster(f"{name} is empty")
    header = [cell.strip() for cell in rows[0]]
    if header[:2] == ["Student", "ID"] and "Section" in header:
        roster = _canvas(rows, name, login, strip_domain)
    elif header[:2] == list(MOODLE_NAMES):
        roster = _moodle(rows, name, login, strip_domain)
    else:
        raise BadRoster(f"{name} is neither Canvas's gradebook export (Student, ID, ..., Section, ...) nor Moodle's "
                        f"participants or grades export (First name, Last name, ...); its header: "
                        f"{', '.join(header)[:120]}")
    if not roster.students:
        raise BadRoster(f"{name} lists no students")
    seen = {}
    for student in roster.students:
        if student.login in seen:
            raise BadRoster(f"{name}: two students have the login '{student.login}' ({roster.login_column}); "
                            f"choose another column with --login")
        seen[student.login] = student
    return roster


def read(path: str, name: str | None = None, login: str | None = None, strip_domain: bool = False) -> Roster:
    name = name or path
    return parse(read_text(path, name), name, login, strip_domain)
