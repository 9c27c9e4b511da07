"""The class as the LMS lists it, in nbgrader's gradebook:

    python -m classgrader.commands.roster FILE [--login COLUMN] [--strip-domain] [--assignment NAME=ID ...]

FILE is the LMS's own export of the class (classgrader/commands/lms_files.py reads Canvas's and
Moodle's). Each student becomes, or updates, a row of nbgrader's student table through its
Gradebook API: first and last name, e-mail (where the file has one; a blank never erases one)
and lms_user_id (Canvas's user ID; Moodle's ID number, else its username, else e-mail). What
nbgrader's table has no column for, the LMS's identity columns as the file wrote them (Canvas's
SIS User ID, SIS Login ID and Section, Moodle's ID number, username, e-mail) and the LMS's
assignments with their ids, goes to runtime/lms-roster.json beside the gradebook; the exports
(classgrader/commands/lms_export.py) write from both. --assignment NAME=ID gives the Canvas id
of an assignment whose Canvas title is not its nbgrader name (kept for later runs).

The file and the arguments are checked by ./course's one table (classgrader/cli.py) before nbgrader
loads: one line and exit 2, nothing changed."""
import json
import os
import sys

from classgrader.commands import lms_files

STORE = os.path.join("runtime", "lms-roster.json")


def empty_store() -> dict:
    return {"lms": "", "students": {}, "assignments": [], "settings": {}}


def load_store(root: str) -> dict:
    """runtime/lms-roster.json, or an empty one where no roster was read yet."""
    try:
        with open(os.path.join(root, STORE), encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return empty_store()


def store_of(roster: lms_files.Roster, source: str, settings: dict) -> dict:
    return {"lms": roster.lms, "kind": roster.kind, "file": os.path.basename(source),
            "login_column": roster.login_column,
            "students": {s.login: {"identity": s.identity, "section": s.section} for s in roster.students},
            "assignments": [vars(a) for a in roster.assignments], "settings": settings}


def write_store(root: str, store: dict) -> None:
    path = os.path.join(root, STORE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(store, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    os.replace(temporary, path)


def fill_gradebook(root: str, roster: lms_files.Roster) -> tuple[int, int]:
    """Every roster student into nbgrader's student table: (added, updated)."""
    from nbgrader.api import Gradebook, MissingEntry

    from classgrader.commands.course import load_course
    added = updated = 0
    with Gradebook(load_course(root).db_url) as gradebook:
        for student in roster.students:
            fields = {"first_name": student.first_name, "last_name": student.last_name, "email": student.email,
                      "lms_user_id": student.lms_user_id}
            fields = {key: value for key, value in fields.items() if value}  # a blank never erases
            try:
                gradebook.find_student(student.login)
                updated += 1
            except MissingEntry:
                added += 1
            gradebook.update_or_create_student(student.login, **fields)
    return added, updated


def main(argv=None, root=None) -> int:
    from classgrader.cli import parse_or_exit  # the one command table: ./course roster's arguments and file
    args = parse_or_exit("roster", sys.argv[1:] if argv is None else list(argv))
    root = root or os.getcwd()
    path, settings = args.file, dict(value.split("=") for value in args.assignment)
    roster = lms_files.read(os.path.join(root, path), path, args.login, args.strip_domain)
    os.makedirs(os.path.join(root, "runtime"), exist_ok=True)
    added, updated = fill_gradebook(root, roster)
    write_store(root, store_of(roster, path, {**load_store(root).get("settings", {}), **settings}))
    ids = sum(1 for a in roster.assignments if a.lms_id)
    print(f"{path}: {roster.kind}, {len(roster.students)} students ({added} added to the gradebook, {updated} "
          f"updated), logins from {roster.login_column}"
          + (f", {len(roster.assignments)} assignments ({ids} with their Canvas id)" if roster.assignments else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
