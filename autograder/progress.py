"""nbgrader's pre/post convert hooks for class runs: when COURSE_PROGRESS names a file, each
student graded is appended to it as one JSON line (classroom.py reads it to show progress).
Outside a class run they do nothing."""
import json
import os
import time

_started = {}


def _student(notebooks) -> str:
    # nbgrader passes its --student pattern ("*"), so read the id off the path:
    # SUBMITTED/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb
    return os.path.basename(os.path.dirname(os.path.dirname(notebooks[0])))


def before(assignment, student, notebooks):
    _started[_student(notebooks)] = time.perf_counter()


def after(assignment, student, notebooks):
    path = os.environ.get("COURSE_PROGRESS")
    student = _student(notebooks)
    if path:
        seconds = time.perf_counter() - _started.get(student, time.perf_counter())
        with open(path, "a") as handle:
            handle.write(json.dumps({"student": student, "seconds": seconds}) + "\n")
