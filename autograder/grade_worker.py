"""One grading worker of a class run (classroom.py): real `nbgrader autograde` over one shard
of students, with two additions that concurrency needs.

- The gradebook is SQLite, written by every worker: each Gradebook connection holds an
  exclusive file lock from open to close, so writes never interleave (and never fail with
  "database is locked"); the long part, executing notebooks, still runs in parallel.
- Each student done is appended to the progress file (autograder/progress.py).

    python -m autograder.grade_worker ASSIGNMENT SHARD_DIR PROGRESS_FILE [NBGRADER ARGS...]
"""
import fcntl
import os
import sys

from nbgrader import api

_held = {"depth": 0, "file": None}


def _lock_gradebook(db_url: str) -> None:
    path = db_url.removeprefix("sqlite:///").split("?")[0] + ".lock"
    original_init, original_close = api.Gradebook.__init__, api.Gradebook.close

    def init(self, *args, **kwargs):
        if _held["depth"] == 0:
            _held["file"] = open(path, "a")
            fcntl.flock(_held["file"], fcntl.LOCK_EX)
        _held["depth"] += 1
        original_init(self, *args, **kwargs)

    def close(self):
        original_close(self)
        _held["depth"] = max(0, _held["depth"] - 1)
        if _held["depth"] == 0 and _held["file"]:
            fcntl.flock(_held["file"], fcntl.LOCK_UN)
            _held["file"].close()
            _held["file"] = None
    api.Gradebook.__init__, api.Gradebook.close = init, close


def main(assignment: str, shard: str, progress: str, *extra: str) -> None:
    from nbgrader.apps import NbGraderApp

    from .classroom import load_course
    _lock_gradebook(load_course(os.getcwd()).db_url)
    os.environ["COURSE_PROGRESS"] = progress  # read by autograder.progress (nbgrader_config.py)
    NbGraderApp.launch_instance(argv=["autograde", assignment, f"--CourseDirectory.submitted_directory={shard}",
                                      *extra])


if __name__ == "__main__":
    main(*sys.argv[1:])
