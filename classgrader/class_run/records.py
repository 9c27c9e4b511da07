"""The class run's two wires of its own, in one module both ends import: what each holds (the
TypedDicts below, each kind a Literal), how it is encoded, and what a reader refuses.

The progress pipe: a grade worker (progress.py, in nbgrader's convert hooks) writes one JSON line
per event to the pipe the class run gave it, and the class run (classroom.py) reads them: Started
when a student's grading starts, Preparing and Prepared around the grader's own run of the
solution, Graded when a student is graded, with the flags found and the device its tests ran on.

The done records: runtime/grading/ASSIGNMENT/done/STUDENT.json, one JSON file a student, written
by the class run once it has a verdict (GradedRecord, or FailedRecord when grading could not
finish), keyed on what was graded so that a rerun skips it; read by the class run itself (stage,
flags.csv), the report (commands/report.py) and the export (commands/export.py).

Every line and record read goes through `protocol.conforming` (the one check of every wire):
exactly the fields of its kind, each of its type, or Malformed, whose message names the line or
the file."""
import json
import os
import typing
from typing import Literal, TypedDict

from classgrader.in_kernel.protocol import Malformed as Malformed, conforming  # Malformed: what readers catch


class Flag(TypedDict):
    """Something for the instructor to review: the graded item it concerns (None: the whole
    submission) and why."""
    item: str | None
    reason: str


# -- the progress pipe (worker -> class run) --------------------------------------------------
class Started(TypedDict):
    """A student's grading starts: should the worker die now, this student is its cause."""
    kind: Literal["started"]
    student: str


class Preparing(TypedDict):
    """The grader's own work before a student's grading can be timed: a longer clock."""
    kind: Literal["preparing"]
    what: str


class Prepared(TypedDict):
    """The grader's own work is done: the student's clock starts again."""
    kind: Literal["prepared"]


class Graded(TypedDict):
    kind: Literal["graded"]
    student: str
    seconds: float
    flags: list[Flag]
    device: str | None


Progress = Started | Preparing | Prepared | Graded


# -- the done records (class run -> its later runs, the report, the export) ------------------
class GradedRecord(TypedDict):
    """A student graded: what was graded (`key`: the files' and the grader's digest), every flag
    (the triage's and the grading's), how long it took and where its tests ran."""
    kind: Literal["graded"]
    key: str
    flags: list[Flag]
    seconds: float
    device: str | None


class FailedRecord(TypedDict):
    """A student whose grading could not finish: the triage's flags and one more with `why`."""
    kind: Literal["failed"]
    key: str
    flags: list[Flag]
    why: str


DoneRecord = GradedRecord | FailedRecord


def _by_kind(union: object) -> dict[str, type]:
    """Each kind of a union of TypedDicts by its `kind` (so the kinds are written once, above)."""
    return {typing.get_args(typing.get_type_hints(kind)["kind"])[0]: kind for kind in typing.get_args(union)}


_PROGRESS = _by_kind(Progress)
_DONE = _by_kind(DoneRecord)
_QUOTED = 200  # characters of a refused line quoted in its error


# -- making them: every writer's lines and records are made here ------------------------------
def flag(item: str | None, reason: str) -> Flag:
    return {"item": item, "reason": reason}


def started(student: str) -> Started:
    return {"kind": "started", "student": student}


def preparing(what: str) -> Preparing:
    return {"kind": "preparing", "what": what}


def prepared() -> Prepared:
    return {"kind": "prepared"}


# float(seconds): an int is a float to mypy, not to the reader (an int is no float on the wire)
def graded(student: str, seconds: float, flags: list[Flag], device: str | None) -> Graded:
    return {"kind": "graded", "student": student, "seconds": float(seconds), "flags": flags, "device": device}


def graded_record(key: str, flags: list[Flag], seconds: float, device: str | None) -> GradedRecord:
    return {"kind": "graded", "key": key, "flags": flags, "seconds": float(seconds), "device": device}


def failed_record(key: str, flags: list[Flag], why: str) -> FailedRecord:
    return {"kind": "failed", "key": key, "flags": flags, "why": why}


def _kind(kinds: dict[str, type], data: object, what: str) -> type:
    kind = data.get("kind") if type(data) is dict else None
    if type(kind) is not str or kind not in kinds:
        raise Malformed(f"no such {what}: kind {kind!r}")
    return kinds[kind]


# -- encoding and reading ---------------------------------------------------------------------
def progress_line(event: Progress) -> bytes:
    """An event as the one JSON line it travels as."""
    return json.dumps(event).encode() + b"\n"


def read_progress(line: bytes) -> Progress:
    """An event read back from its line (without its newline); Malformed, quoting the line, for
    anything that is not one of the Progress kinds exactly."""
    try:
        data = json.loads(line)
        checked: Progress = conforming(_kind(_PROGRESS, data, "progress line"), data)
    except (ValueError, RecursionError) as error:  # Malformed, or not JSON (UnicodeDecodeError is a ValueError)
        raise Malformed(f"progress line {line[:_QUOTED]!r} refused: {error}") from None
    return checked


def done_json(record: DoneRecord) -> str:
    return json.dumps(record)


def read_done(path: str) -> DoneRecord | None:
    """The done record at `path`, None when there is none; Malformed, naming the file, when what
    is there is not one of the DoneRecord kinds exactly (not JSON, a field missing, extra or
    mistyped, a link, unreadable)."""
    if not os.path.lexists(path):
        return None
    try:
        if os.path.islink(path):  # the class run writes files only
            raise Malformed("a link, not a record")
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        checked: DoneRecord = conforming(_kind(_DONE, data, "done record"), data)
    except (OSError, ValueError, RecursionError) as error:
        raise Malformed(f"done record {path} refused: {error}") from None
    return checked


def read_done_folder(folder: str) -> tuple[dict[str, DoneRecord], dict[str, str]]:
    """Every record of a done/ folder by student, and why each one refused was refused (a name
    that does not end in .json, a temporary file of a write cut short, is none)."""
    found: dict[str, DoneRecord] = {}
    refused: dict[str, str] = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".json"):
            continue
        student = name.removesuffix(".json")
        try:
            record = read_done(os.path.join(folder, name))
        except Malformed as error:
            refused[student] = str(error)
            continue
        if record is not None:
            found[student] = record
    return found, refused
