"""Grades as an LMS's gradebook import takes them, from nbgrader's gradebook, beside nbgrader's
own runtime/grades.csv:

    python -m classgrader.commands.lms_export --format canvas|moodle [--to PATH]

- canvas (Grades, Import): the columns Student, ID, SIS User ID, SIS Login ID, Section, then
  one column per assignment; a "Points Possible" row first. Student is "Last, First" (the id
  where the gradebook has no name), ID nbgrader's lms_user_id (Canvas's user id, where the
  course recorded it), SIS User ID the course's student id. Default: runtime/grades-canvas.csv.
- moodle (Grade administration, Import, CSV file): First name, Last name, ID number, Email
  address (the identifiers Moodle maps users by; ID number is the course's student id), then
  one column per assignment, its grade item. Default: runtime/grades-moodle.csv.

A score is the assignment's score less any late penalty, never below 0. A student who never
submitted an assignment has an empty cell, which both imports leave alone, not a 0.
Arguments are checked before nbgrader loads: one line and exit 2 when they are wrong."""
import csv
import io
import os
import sys

FORMATS = ("canvas", "moodle")
GRADEBOOK = os.path.join("runtime", "gradebook.db")  # as nbgrader_config.py sets it
USAGE = "usage: export --format canvas|moodle [--to PATH]"
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["First name", "Last name", "ID number", "Email address"]


class BadArguments(Exception):
    pass


def parse(argv: list[str], root: str) -> tuple[str, str]:
    """(format, destination); BadArguments when the arguments are wrong."""
    chosen, to, rest = None, None, list(argv)
    while rest:
        arg = rest.pop(0)
        if arg in ("--format", "--to"):
            if not rest:
                raise BadArguments(f"{arg} needs a value; {USAGE}")
            value = rest.pop(0)
            if arg == "--format":
                if value not in FORMATS:
                    raise BadArguments(f"--format is canvas or moodle, not '{value}'")
                chosen = value
            else:
                to = value
        else:
            raise BadArguments(f"unknown argument {arg}; {USAGE}")
    if chosen is None:
        raise BadArguments(USAGE)
    if not os.path.exists(os.path.join(root, GRADEBOOK)):
        raise BadArguments(f"no gradebook yet ({GRADEBOOK}); run ./course generate, then grade, first")
    return chosen, to or os.path.join(root, "runtime", f"grades-{chosen}.csv")


def _number(value: float) -> str:
    return f"{round(value, 2):g}"


def scores(gradebook) -> tuple[list, list, dict]:
    """(assignments, students, {(assignment, student): score or None when not submitted})."""
    from nbgrader.api import MissingEntry
    assignments = sorted(gradebook.assignments, key=lambda a: a.name)
    students = sorted(gradebook.students, key=lambda s: s.id)
    table = {}
    for assignment in assignments:
        for student in students:
            try:
                submission = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:
                table[assignment.name, student.id] = None
                continue
            table[assignment.name, student.id] = max(0.0, submission.score - (submission.late_submission_penalty or 0))
    return assignments, students, table


def _cells(assignments, student, table) -> list[str]:
    return ["" if table[a.name, student.id] is None else _number(table[a.name, student.id]) for a in assignments]


def canvas_rows(gradebook) -> list[list[str]]:
    assignments, students, table = scores(gradebook)
    rows = [CANVAS_COLUMNS + [a.name for a in assignments],
            ["Points Possible", "", "", "", ""] + [_number(a.max_score) for a in assignments]]
    for s in students:
        name = ", ".join(part for part in (s.last_name, s.first_name) if part) or s.id
        rows.append([name, s.lms_user_id or "", s.id, "", ""] + _cells(assignments, s, table))
    return rows


def moodle_rows(gradebook) -> list[list[str]]:
    assignments, students, table = scores(gradebook)
    rows = [MOODLE_COLUMNS + [a.name for a in assignments]]
    for s in students:
        rows.append([s.first_name or "", s.last_name or "", s.id, s.email or ""] + _cells(assignments, s, table))
    return rows


def write_csv(path: str, rows: list[list[str]]) -> None:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(temporary, "w", newline="", encoding="utf-8") as handle:
        handle.write(text.getvalue())
    os.replace(temporary, path)


def export(root: str, chosen: str, to: str) -> int:
    """Write the `chosen` format's CSV to `to`; the number of students in it."""
    from nbgrader.api import Gradebook

    from classgrader.commands.course import load_course
    with Gradebook(load_course(root).db_url) as gradebook:
        rows = (canvas_rows if chosen == "canvas" else moodle_rows)(gradebook)
    write_csv(to, rows)
    return len(rows) - (2 if chosen == "canvas" else 1)


def main(argv=None, root=None) -> int:
    root = root or os.getcwd()
    try:
        chosen, to = parse(sys.argv[1:] if argv is None else argv, root)
    except BadArguments as error:
        print(f"export: {error}", file=sys.stderr)
        return 2
    count = export(root, chosen, to)
    print(f"{os.path.relpath(to, root)}: {count} students, {chosen}'s gradebook columns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
