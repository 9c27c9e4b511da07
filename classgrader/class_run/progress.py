"""How a worker tells the class run that a student is graded, and with which flags.

nbgrader calls `before` and `after` around each student (its pre/post convert hooks, set in
nbgrader_config.py); `flags.SaveFlags` calls `note_flags` in between, in the same worker
process. `before` writes one line, Started, and `after` one, Graded (with the student's flags,
seconds and device), to the pipe the class run gave the worker (`report_to`); the lines' kinds
and encoding are records.py's, which the class run reads them with. Outside a class run no pipe
is set and nothing is written."""
import os
import time

from classgrader.class_run import records

_state: dict[str, int | None] = {"fd": None}
_started: dict[str, float] = {}
_flags: dict[str, list[records.Flag]] = {}
_devices: dict[str, str] = {}


def report_to(fd: int | None) -> None:
    """Send each graded student's line to `fd` (a pipe's write end, or an open file)."""
    _state["fd"] = fd


def _student(notebooks) -> str:
    # nbgrader passes its --student pattern ("*"), so read the id off the path:
    # SUBMITTED/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb
    return os.path.basename(os.path.dirname(os.path.dirname(notebooks[0])))


def note_flags(student: str, flags: list[records.Flag], device: str | None = None) -> None:
    """Flags found while grading one of `student`'s notebooks, and the device its tests ran
    on, sent with their line."""
    _flags.setdefault(student, []).extend(flags)
    if device:
        _devices[student] = device


def before(assignment, student, notebooks):
    student = _student(notebooks)
    _started[student] = time.perf_counter()
    _flags.pop(student, None)
    _send(records.started(student))  # should this worker die now, the class run knows whose grading did it


def preparing(what: str) -> None:
    """The grader's own work before a student's grading can be timed (its run of the solution,
    once per worker): the class run's watchdog gives it a clock of its own."""
    _send(records.preparing(what))


def prepared() -> None:
    """The grader's own work is done: the student's clock starts again from here."""
    _send(records.prepared())


def _send(event: records.Progress) -> None:
    if _state["fd"] is not None:
        os.write(_state["fd"], records.progress_line(event))  # one write: lines never interleave


def after(assignment, student, notebooks):
    student = _student(notebooks)
    seconds = time.perf_counter() - _started.pop(student, time.perf_counter())
    _send(records.graded(student, seconds, _flags.pop(student, []), _devices.pop(student, None)))
