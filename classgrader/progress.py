"""How a worker tells the class run that a student is graded, and with which flags.

nbgrader calls `before` and `after` around each student (its pre/post convert hooks, set in
nbgrader_config.py); `flags.SaveFlags` calls `note_flags` in between, in the same worker
process. `after` writes one JSON line, {"student", "seconds", "flags"}, to the pipe the class
run gave the worker (`report_to`). Outside a class run no pipe is set and nothing is written."""
import json
import os
import time

_state = {"fd": None}
_started = {}
_flags = {}


def report_to(fd: int | None) -> None:
    """Send each graded student's line to `fd` (a pipe's write end, or an open file)."""
    _state["fd"] = fd


def _student(notebooks) -> str:
    # nbgrader passes its --student pattern ("*"), so read the id off the path:
    # SUBMITTED/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb
    return os.path.basename(os.path.dirname(os.path.dirname(notebooks[0])))


def note_flags(student: str, flags: list[dict]) -> None:
    """Flags found while grading one of `student`'s notebooks, sent with their line."""
    _flags.setdefault(student, []).extend(flags)


def before(assignment, student, notebooks):
    student = _student(notebooks)
    _started[student] = time.perf_counter()
    _flags.pop(student, None)


def after(assignment, student, notebooks):
    student = _student(notebooks)
    seconds = time.perf_counter() - _started.pop(student, time.perf_counter())
    line = json.dumps({"student": student, "seconds": seconds, "flags": _flags.pop(student, [])}) + "\n"
    if _state["fd"] is not None:
        os.write(_state["fd"], line.encode())  # one write: lines from one worker never interleave
