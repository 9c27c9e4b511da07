"""One grading worker of a class run (classroom.py): real `nbgrader autograde` over one shard
of students, with two additions that concurrency needs.

- The gradebook is SQLite, written by every worker: each Gradebook connection holds an
  exclusive file lock from open to close, so writes never interleave (and never fail with
  "database is locked"); the long part, executing notebooks, still runs in parallel.
- Each student done is reported, with its flags, on the worker's pipe (classgrader/class_run/progress.py).

A class run forks its workers (`start`) after loading nbgrader and torch once, so no worker
pays those imports again. By hand, for one shard:

    python -m classgrader.class_run.grade_worker ASSIGNMENT SHARD_DIR [NBGRADER ARGS...]
"""
import ctypes
import fcntl
import json
import os
import signal
import sys
import tempfile
import traceback
from typing import Any

from nbgrader import api

from classgrader.class_run import progress
from classgrader.commands.course import load_course
from classgrader.kernels.kernel_zygote import ZYGOTE_ENV, die_with_parent

PR_SET_NAME = 15
NAME = b"grade_worker"  # what ps, top and /proc/PID/comm show for a forked worker

_held = {"depth": 0, "fd": None}  # the lock file stays open from the first open to the last close


def _lock_gradebook(db_url: str) -> None:
    path = db_url.removeprefix("sqlite:///").split("?")[0] + ".lock"
    original_init, original_close = api.Gradebook.__init__, api.Gradebook.close

    def init(self, *args, **kwargs):
        if _held["depth"] == 0:
            _held["fd"] = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
            fcntl.flock(_held["fd"], fcntl.LOCK_EX)
        _held["depth"] += 1
        original_init(self, *args, **kwargs)

    def close(self):
        original_close(self)
        _held["depth"] = max(0, _held["depth"] - 1)
        if _held["depth"] == 0 and _held["fd"] is not None:
            fcntl.flock(_held["fd"], fcntl.LOCK_UN)
            os.close(_held["fd"])
            _held["fd"] = None
    api.Gradebook.__init__, api.Gradebook.close = init, close


class _SchemaCheckedOnce:
    """jsonschema as nbgrader's metadata validator uses it (its one call, `validate`), with each
    schema checked once: jsonschema.validate checks the schema itself on every call, about 1 ms,
    and nbgrader validates every graded cell of every notebook against the one schema it has."""

    def __init__(self, jsonschema: Any) -> None:
        self._jsonschema = jsonschema
        self._validators: dict[str, Any] = {}

    def validate(self, instance: object, schema: dict) -> None:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._validators:
            kind = self._jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)
            self._validators[key] = kind(schema)
        # As jsonschema.validate: the most relevant error, if any.
        error = self._jsonschema.exceptions.best_match(self._validators[key].iter_errors(instance))
        if error is not None:
            raise error


def check_metadata_schema_once() -> None:
    """nbgrader's metadata validator, its schema checked once (_SchemaCheckedOnce)."""
    from nbgrader.nbgraderformat import common
    if not isinstance(common.jsonschema, _SchemaCheckedOnce):  # where nbgrader's one call finds it
        common.jsonschema = _SchemaCheckedOnce(common.jsonschema)


def main(assignment: str, shard: str, *extra: str, report: int | None = None) -> None:
    from nbgrader.apps import NbGraderApp
    _lock_gradebook(load_course(os.getcwd()).db_url)
    check_metadata_schema_once()
    progress.report_to(report)
    NbGraderApp.launch_instance(argv=["autograde", assignment, f"--CourseDirectory.submitted_directory={shard}",
                                      *extra])


def start(assignment: str, shard: str, report: int, log_path: str, zygote_socket: str, memory=None,
          scratch: str | None = None) -> int:
    """Fork a worker for `shard`, its output going to `log_path`; returns its pid. It ends
    with the class run: a killed run leaves no worker writing to the gradebook. `memory` bounds
    it before it does anything: a cgroup.MemoryLimit it joins, or a number of bytes of address
    space (where the machine has no memory controller; the worker uses no accelerator).
    `scratch`: its temporary folder (tempfile's, in this process only: its kernels' environment
    is left as it is), which the class run removes once the worker has ended."""
    sys.stdout.flush(), sys.stderr.flush()  # else buffered text would be written twice
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        if isinstance(memory, int):
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        elif memory is not None:
            memory.add(0)
        die_with_parent(signal.SIGTERM)
        ctypes.CDLL(None).prctl(PR_SET_NAME, NAME)
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log, 1), os.dup2(log, 2)
        os.environ[ZYGOTE_ENV] = zygote_socket
        if scratch is not None:
            tempfile.tempdir = scratch
        main(assignment, shard, report=report)
        code = 0
    except SystemExit as leaving:
        code = leaving.code if isinstance(leaving.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    main(*sys.argv[1:])
