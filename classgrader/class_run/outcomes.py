"""What grading records for the class report (report.py): per student and item, the score, the
points, which check failed, the kind of mistake and the misconception it names, as data.

RecordOutcomes runs in the grading worker, after SaveAutoGrades (nbgrader_config.py), on the
graded notebook in memory; it writes runtime/grading/ASSIGNMENT/outcomes/STUDENT.json, one file
per student and assignment (a notebook's entry replaced when it is graded again). The folder is
the grader's, never one a student's kernel can write; it is written atomically, and no link on
the way is followed.

    {"student": ..., "assignment": ...,
     "notebooks": {NOTEBOOK: {"items": [ITEM, ...], "flags": [REASON, ...], "device": ... or None,
                              "misconceptions": {KEY: {"name", "lesson", "section"}}}}}
    ITEM = {"item": grade id, "exercise": its name, "score": float, "max": float,
            "category": None when full marks, else one of CATEGORIES,
            "ename", "message": the error the student saw (None when none),
            "misconception": key or None, "flag": the review reason or None}
"""
import contextlib
import json
import os
import re

from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor

# The kinds of mistake, in the order the report shows them.
CATEGORIES = ["shape", "dtype", "device", "graph", "type", "value", "misconception",
              "error raised", "no answer", "timeout/crash", "flagged"]

# The checks' own wording (autograder/checks.py, quiz.py): "NAME: wrong shape. ..." and so on.
_WORDED = [
    (re.compile(r": wrong shape\b"), "shape"),
    (re.compile(r": wrong dtype\b"), "dtype"),
    (re.compile(r": wrong device\b"), "device"),
    (re.compile(r": wrong (requires_grad|place in the graph)\b"), "graph"),
    (re.compile(r": (wrong type\b|the dict has no key|answer with one of)"), "type"),
    (re.compile(r": expected an? \w+(?: or \w+)*, got \w+"), "error raised"),
    (re.compile(r": (wrong values?\b|not the right choice|expected an? \w+(?: or \w+)*, but it returned)"), "value"),
]
# Error names the grader itself writes into a cell (isolated_execute.py, judge.py).
_BY_NAME = {
    "NotImplementedError": "no answer",
    "TimeoutError": "timeout/crash", "KernelDied": "timeout/crash", "Dropped": "timeout/crash",
    "Tampering": "flagged", "UnverifiedResult": "flagged",
    "PitfallError": "misconception",
    "DeviceMismatchError": "device",  # the grader's strict device mode (autograder/device_strict.py)
}
CHECK_FAILURES = {"GradingError", "AssertionError"}
MESSAGE_LIMIT = 600  # characters of a message kept: the report shows one example per misconception


def category(ename: str, evalue: str) -> str:
    """The kind of mistake an error output names: the check's own category where a check
    failed, else what the grader or Python said."""
    if ename in _BY_NAME:
        return _BY_NAME[ename]
    if ename in CHECK_FAILURES:
        for pattern, kind in _WORDED:
            if pattern.search(evalue):
                return kind
        return "value"  # a test's own assert: the answer did not have the property it checks
    return "error raised"


def misconception(ename: str, evalue: str) -> str | None:
    """The misconception key a pitfall check named, read back from its message."""
    if ename != "PitfallError":
        return None
    from autograder.misconceptions import misconception_of
    return misconception_of(evalue)


def _first_error(cell):
    return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)


def _exercises(nb) -> dict[int, tuple[str, list[int]]]:
    from autograder.validate import exercises
    return {test: (name, answers) for name, answers, test in exercises(nb)}


GRADED_ON = "Graded on: "  # autograder.start_grading prints the device with this


def _device(nb) -> str | None:
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                for line in output.get("text", "").splitlines():
                    if line.startswith(GRADED_ON):
                        return line[len(GRADED_ON):].strip()[:200]
    return None


def notebook_outcomes(nb, flags=()) -> dict:
    """The record of one graded notebook: every autograded test cell, in order; `flags` are
    (grade id or None, reason) pairs as isolated_execute.py gives them."""
    by_item: dict[str, str] = {}
    for gid, reason in flags:
        if gid is not None:
            by_item.setdefault(gid, reason)
    exercises = _exercises(nb)
    items = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
            continue
        gid = cell.metadata["nbgrader"]["grade_id"]
        score, points = utils.determine_grade(cell)
        name, answers = exercises.get(index, (gid, []))
        error = _first_error(cell)
        unanswered = any((_first_error(nb.cells[i]) or {}).get("ename") == "NotImplementedError" for i in answers)
        ename, evalue = (error.get("ename", ""), error.get("evalue", "")) if error else (None, None)
        kind = None
        if score is None or score < points:
            kind = "no answer" if unanswered else category(ename or "", evalue or "")
            if error is None:
                kind = "flagged" if gid in by_item else "value"  # scored below full without an error
        items.append({"item": gid, "exercise": name, "score": float(score or 0.0), "max": float(points),
                      "category": kind, "ename": ename,
                      "message": None if evalue is None else evalue[:MESSAGE_LIMIT],
                      "misconception": misconception(error.get("ename", ""), error.get("evalue", ""))
                      if error else None,
                      "flag": by_item.get(gid)})
    return {"items": items, "flags": [reason for gid, reason in flags if gid is None], "device": _device(nb),
            "misconceptions": _named({item["misconception"] for item in items} - {None})}


def _named(keys) -> dict:
    """What the report shows of each misconception hit, so that it needs no torch to read it."""
    from autograder.misconceptions import CATALOGUE, LESSON_SECTIONS
    return {key: {"name": CATALOGUE[key].name, "lesson": LESSON_SECTIONS.get(key, ("", ""))[0],
                  "section": LESSON_SECTIONS.get(key, ("", ""))[1]} for key in sorted(keys)}


# -- writing, safely ------------------------------------------------------------------------

def safe_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


def _open_dir(parent_fd: int, name: str) -> int:
    """The folder `name` in `parent_fd`, made if missing; never through a link."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o755, dir_fd=parent_fd)
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)


def outcomes_folder(assignment: str) -> list[str]:
    """An assignment's outcomes folder under the course root, as parts of its path."""
    return ["runtime", "grading", assignment, "outcomes"]


def _read(fd_dir: int, name: str) -> dict | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd_dir)
    except OSError:
        return None
    with os.fdopen(fd) as handle:
        try:
            found = json.load(handle)
        except ValueError:
            return None
    return found if isinstance(found, dict) else None


def write_record(root: str, assignment: str, student: str, notebook: str, record: dict) -> str:
    """Put `record` for `notebook` into the student's outcomes file, atomically; its path."""
    if not (safe_name(assignment) and safe_name(student)):
        raise ValueError(f"not a plain file name: {assignment!r}, {student!r}")
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for part in outcomes_folder(assignment):
            fds.append(_open_dir(fds[-1], part))
        here, name = fds[-1], f"{student}.json"
        whole = _read(here, name) or {}
        if whole.get("student") != student or not isinstance(whole.get("notebooks"), dict):
            whole = {"student": student, "assignment": assignment, "notebooks": {}}
        whole["notebooks"][notebook] = record
        temporary = f".{name}.{os.getpid()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=here)
        with os.fdopen(fd, "w") as handle:
            json.dump(whole, handle)
        os.replace(temporary, name, src_dir_fd=here, dst_dir_fd=here)
    finally:
        for fd in reversed(fds):
            os.close(fd)
    return os.path.join(root, *outcomes_folder(assignment), name)


class RecordOutcomes(NbGraderPreprocessor):
    """After SaveAutoGrades and before SaveFlags (which takes the flags out of resources).
    The grades are saved by then: a record that cannot be written costs the report that
    student, never the student a grade."""

    def preprocess(self, nb, resources):
        from nbgrader.coursedir import CourseDirectory
        info = resources["nbgrader"]
        try:
            record = notebook_outcomes(nb, resources.get("course_flags", []))
            write_record(CourseDirectory(config=self.config).root, info["assignment"], info["student"],
                         info["notebook"], record)
        except Exception as error:
            self.log.warning("No outcomes recorded for %s's %s: %s", info["student"], info["notebook"], error)
        return nb, resources
