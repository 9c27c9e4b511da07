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

The file and the arguments are checked before nbgrader loads: one line and exit 2, nothing changed."""
import json
import os
import re
import sys

from classgrader.commands import lms_files

STORE = os.path.join("runtime", "lms-roster.json")
USAGE = "usage: roster FILE [--login COLUMN] [--strip-domain] [--assignment NAME=ID ...]"


class BadArguments(Exception):
    pass


def parse(argv: list[str]) -> tuple[str, str | None, bool, dict]:
    """(file, login column or None, strip domain, {assignment: Canvas id}); BadArguments when wrong."""
    path, login, strip, settings, rest = None, None, False, {}, list(argv)
    while rest:
        arg = rest.pop(0)
        if arg in ("--login", "--assignment"):
            if not rest:
                raise BadArguments(f"{arg} needs a value; {USAGE}")
            value = rest.pop(0)
            if arg == "--login":
                login = value
            elif not re.fullmatch(r"[^=\s]+=\d+", value):
                raise BadArguments(f"--assignment takes NAME=CANVAS_ID (e.g. 01_tensors=4471), not '{value}'")
            else:
                name, number = value.split("=")
                settings[name] = number
        elif arg == "--strip-domain":
            strip = True
        elif arg.startswith("-") or path is not None:
            raise BadArguments(f"unknown argument {arg}; {USAGE}")
        else:
            path = arg
    if path is None:
        raise BadArguments(USAGE)
    return path, login, strip, settings


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
    root = root or os.getcwd()
    try:
        path, login, strip, settings = parse(sys.argv[1:] if argv is None else argv)
        roster = lms_files.read(os.path.join(root, path), path, login, strip)
    except (BadArguments, lms_files.BadRoster) as error:
        print(f"roster: {error}", file=sys.stderr)
        return 2
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
