"""`./course generate [ID...]`: the student version of every assignment, in one process.

Stock `nbgrader generate_assignment ID` is a process per assignment, and each pays Python's
start, nbgrader's imports and the config again (about 3 s of the 3.4 s an assignment took).
Here nbgrader's own app is configured once, exactly as the command configures it (the
nbgrader_config.py of the working folder, `--force`), and its GenerateAssignment converter runs
once per assignment: the same preprocessors, the same files, the same gradebook entries.
Two costs that change nothing in what is made are left out: jsonschema's optional IRI grammar
(about 1.2 s to compile; no notebook schema uses IRIs), and a disk flush per gradebook commit
(SaveCells commits about 45 times per assignment; a generate cut short is simply run again).

    python -m classgrader.commands.generate [ID...]      (run from the course folder; all by default)

Its arguments are checked by ./course's one table (classgrader/cli.py) before nbgrader loads.
"""
import sys
from pathlib import Path


def _synchronous_off(dbapi_connection, _record) -> None:
    dbapi_connection.execute("PRAGMA synchronous=OFF")


def assignment_ids(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "source").iterdir() if p.is_dir() and not p.name.startswith("."))


def generate(ids: list[str]) -> None:
    from nbgrader.apps.generateassignmentapp import GenerateAssignmentApp
    from nbgrader.converters import GenerateAssignment
    from sqlalchemy import event
    from sqlalchemy.engine import Engine
    if not event.contains(Engine, "connect", _synchronous_off):  # no disk flush per gradebook commit
        event.listen(Engine, "connect", _synchronous_off)
    app = GenerateAssignmentApp()
    app.initialize(["--force"])  # reads ./nbgrader_config.py, as the command does
    for assignment_id in ids or assignment_ids(Path(app.coursedir.root)):
        app.coursedir.assignment_id = assignment_id
        # The converter nbgrader's command runs; fails loudly, like it, on a bad assignment.
        GenerateAssignment(coursedir=app.coursedir, parent=app).start()


def main(argv=None) -> int:
    from classgrader.cli import parse_or_exit  # the one command table: ./course generate's arguments
    args = parse_or_exit("generate", sys.argv[1:] if argv is None else list(argv))
    from nbgrader.converters import NbGraderException
    try:
        generate(args.ids)
    except NbGraderException:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
