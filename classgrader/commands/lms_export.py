"""Grades as an LMS's gradebook import takes them, from nbgrader's gradebook, beside nbgrader's
own runtime/grades.csv (docs/lms.md: each format, and the LMS's documentation it follows):

    python -m classgrader.commands.lms_export --format canvas|moodle [--to PATH]

- canvas (Grades, Import): Student, ID, SIS User ID, SIS Login ID, Section, then one column per
  graded assignment, "Title (id)" where the roster or `./course roster --assignment` gives its
  Canvas id (so the import fills that assignment instead of making a new one); a "Points
  Possible" row first, as Canvas's own export has. Default: runtime/grades-canvas.csv.
- moodle (Grades, Import, CSV file): First name, Last name, ID number, Username, Email address
  (the fields Moodle's import maps users from), then one column per graded assignment, headed
  as Moodle's grades export heads its grade item where the roster was one. Default:
  runtime/grades-moodle.csv.

Who each student is to the LMS comes from `./course roster` (runtime/lms-roster.json and
nbgrader's student table): the LMS's identity columns as its own export wrote them. With a
roster, the students it lists are written and any other student of the gradebook is named on
stdout and left out (Canvas would stop at an unknown student, Moodle abandon the whole import);
without one, every student, the login standing in for the LMS's login (SIS Login ID, Username).
A column is written for each assignment with at least one graded submission. A score is the
assignment's score less any late penalty, never below 0; a student who never submitted has an
empty cell, which both imports leave alone, not a 0.
Arguments are checked by ./course's one table (classgrader/cli.py, as ./course export) before
nbgrader loads: one line and exit 2 when they are wrong."""
import csv
import io
import os
import re
import sys

from classgrader.commands.roster import empty_store, load_store

FORMATS = ("canvas", "moodle")
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS = "    Points Possible"  # as Canvas's export writes it; its import looks for "Points Possible"
MOODLE_COLUMNS = ["First name", "Last name", "ID number", "Username", "Email address"]


def _number(value: float) -> str:
    return f"{round(value, 2):g}"


def _same(a: str, b: str) -> bool:
    """One assignment's names in nbgrader and in the LMS ("01_tensors", "01 Tensors")."""
    return re.sub(r"[^0-9a-z]", "", a.lower()) == re.sub(r"[^0-9a-z]", "", b.lower())


def scores(gradebook) -> tuple[list, list, dict]:
    """(graded assignments, students, {(assignment, student): score or None when not submitted})."""
    from nbgrader.api import MissingEntry
    assignments = sorted((a for a in gradebook.assignments if a.submissions), key=lambda a: a.name)
    students = sorted(gradebook.students, key=lambda s: s.id)
    table: dict[tuple[str, str], float | None] = {}
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


def _listed(students, store: dict, lms: str, notes: list) -> tuple[list, dict]:
    """(the students to write, {login: the LMS's identity columns}) and what to tell about the rest."""
    known = {login: entry["identity"] for login, entry in store["students"].items()} if store["lms"] == lms else {}
    if not known:
        notes.append(f"no {lms} roster read yet (./course roster FILE): each login stands in for the LMS's own")
        return students, {}
    left = [s.id for s in students if s.id not in known]
    if left:
        notes.append(f"not in the roster ({store.get('file', '')}), left out: {', '.join(left)}")
    return [s for s in students if s.id in known], known


def canvas_column(assignment, store: dict, notes: list) -> str:
    """"Title (id)" where the Canvas id is known (the import then fills that assignment), else the name."""
    canvas = [a for a in store["assignments"] if a.get("lms_id")] if store["lms"] == "canvas" else []
    chosen = store.get("settings", {}).get(assignment.name)
    if chosen:
        found = [a for a in canvas if a["lms_id"] == chosen]
        found = found or [{"column": f"{assignment.name} ({chosen})", "points": ""}]
    else:
        found = [a for a in canvas if _same(a["title"], assignment.name)]
    if len(found) != 1:
        notes.append(f"no Canvas id for {assignment.name}: its import makes a new assignment unless one is titled "
                     f"{assignment.name} (./course roster FILE --assignment {assignment.name}=ID)")
        return assignment.name
    points = found[0]["points"]
    ours = _number(assignment.max_score)
    try:
        theirs = float(points.replace(",", "."))  # Canvas writes a decimal comma where its locale has one
    except ValueError:
        theirs = assignment.max_score
    if theirs != assignment.max_score:
        notes.append(f"{assignment.name}: Canvas has {points} points possible, nbgrader {ours}; "
                     f"the import sets Canvas's to {ours}")
    return found[0]["column"]


def canvas_rows(gradebook, store: dict | None = None, notes: list | None = None) -> list[list[str]]:
    store, notes = store or empty_store(), [] if notes is None else notes
    assignments, students, table = scores(gradebook)
    students, known = _listed(students, store, "canvas", notes)
    rows = [CANVAS_COLUMNS + [canvas_column(a, store, notes) for a in assignments],
            [CANVAS_POINTS, "", "", "", ""] + [_number(a.max_score) for a in assignments]]
    for s in students:
        if s.id in known:
            identity = [known[s.id].get(column, "") for column in CANVAS_COLUMNS]
        else:
            name = ", ".join(part for part in (s.last_name, s.first_name) if part) or s.id
            identity = [name, s.lms_user_id or "", "", s.id, ""]
        rows.append(identity + _cells(assignments, s, table))
    return rows


def moodle_column(assignment, store: dict) -> str:
    """The grade item's column as Moodle's grades export heads it, where the roster was one."""
    items = [a for a in store["assignments"] if _same(a["title"], assignment.name)] if store["lms"] == "moodle" else []
    return items[0]["column"] if len(items) == 1 else assignment.name


def moodle_rows(gradebook, store: dict | None = None, notes: list | None = None) -> list[list[str]]:
    store, notes = store or empty_store(), [] if notes is None else notes
    assignments, students, table = scores(gradebook)
    students, known = _listed(students, store, "moodle", notes)
    rows = [MOODLE_COLUMNS + [moodle_column(a, store) for a in assignments]]
    for s in students:
        identity = known.get(s.id)
        if identity is None:
            cells = [s.first_name or "", s.last_name or "", "", s.id, s.email or ""]
        else:
            cells = [identity.get("First name") or s.first_name or "", identity.get("Last name") or s.last_name or "",
                     identity.get("ID number", ""), identity.get("Username", ""),
                     identity.get("Email address") or s.email or ""]
        rows.append(cells + _cells(assignments, s, table))
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


def export(root: str, chosen: str, to: str) -> tuple[int, list[str]]:
    """Write the `chosen` format's CSV to `to`: (the number of students in it, what to tell)."""
    from nbgrader.api import Gradebook

    from classgrader.commands.course import load_course
    notes: list[str] = []
    with Gradebook(load_course(root).db_url) as gradebook:
        rows = (canvas_rows if chosen == "canvas" else moodle_rows)(gradebook, load_store(root), notes)
    write_csv(to, rows)
    return len(rows) - (2 if chosen == "canvas" else 1), notes


def main(argv=None, root=None) -> int:
    from classgrader.cli import parse_or_exit, refuse  # the one command table: ./course export's arguments
    args = parse_or_exit("export", sys.argv[1:] if argv is None else list(argv))
    if args.format not in FORMATS:  # ./course export runs nbgrader's own export for that
        refuse(f"export: this writes an LMS's gradebook import, --format {' or '.join(FORMATS)}; "
               f"./course export --format nbgrader runs nbgrader's own")
    root = root or os.getcwd()
    chosen, to = args.format, args.to or os.path.join(root, "runtime", f"grades-{args.format}.csv")
    count, notes = export(root, chosen, to)
    print(f"{os.path.relpath(to, root)}: {count} students, {chosen}'s gradebook columns")
    for note in notes:
        print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
