"""The grader's own runs of the solutions, kept for the workers and runs of a course.

Each worker needs the reference of every notebook it grades (reference_run.py): the solution
run in a sandboxed kernel of the grader's, about nine seconds a notebook. It depends only on
the source notebook, the grader's code and configuration and the machine, so it is computed
once for them all: kept under runtime/grading/references/ (the instructor's folder, which no
kernel can reach), named by a digest of everything it depends on, and read back as data only
(torch.load with weights_only). While one worker computes a reference the others wait for it
(a lock per digest) instead of computing it again. A reference that could not establish every
test is not kept: the next worker tries again, rather than fail every student on one bad run."""
import contextlib
import fcntl
import hashlib
import io
import os
import sys

from classgrader.commands.course import grader_digest
from classgrader.judging.reference_run import Reference

FORMAT = b"reference 1"
OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


def digest(source: bytes, config_file: str, settings: dict) -> str:
    """What a reference depends on: the source notebook, the grader, the course's configuration
    (`config_file`: nbgrader_config.py), the execute step's own settings, Python, torch and
    the machine's accelerator."""
    import torch

    from classgrader.kernels import accelerator
    parts = [FORMAT, source, grader_digest(), sys.version.encode(), torch.__version__.encode(),
             repr(accelerator.machine()).encode(), repr(sorted(settings.items())).encode()]
    if os.path.isfile(config_file):
        with open(config_file, "rb") as handle:
            parts.append(handle.read())
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


class Store:
    """The kept reference of one digest, in `folder`."""

    def __init__(self, folder: str, key: str):
        self.folder, self.key = folder, key
        self.path = os.path.join(folder, f"{key}.pt")

    @contextlib.contextmanager
    def locked(self):
        """Held while a worker looks for the reference and, if need be, computes and keeps it."""
        os.makedirs(self.folder, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(os.path.join(self.folder, f"{self.key}.lock"), flags, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield self
        finally:
            os.close(fd)  # and the lock with it

    def load(self) -> Reference | None:
        """The kept reference, or None: none kept, or a file that is not one (it is computed again)."""
        import torch
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as handle:
                kept = torch.load(io.BytesIO(handle.read()), weights_only=True)
            if kept.get("format") != FORMAT.decode():
                return None
            return Reference(set(kept["outside"]), kept["records"],
                             {gid: (list(passed), list(failed)) for gid, (passed, failed) in kept["shadows"].items()},
                             dict(kept["incomplete"]))
        except Exception:  # torn, foreign or from another version: not a reference
            return None

    def save(self, reference: Reference) -> bool:
        """Keep `reference` (written whole, then renamed into place); False for one that could
        not establish every test, which is never kept."""
        import torch
        if reference.incomplete:
            return False
        kept = {"format": FORMAT.decode(), "outside": sorted(reference.outside), "records": reference.records,
                "shadows": {gid: [list(passed), list(failed)] for gid, (passed, failed) in reference.shadows.items()},
                "incomplete": {}}
        buffer = io.BytesIO()
        torch.save(kept, buffer)
        partial = f"{self.path}.{os.getpid()}.tmp"
        with os.fdopen(os.open(partial, OPEN_NEW, 0o644), "wb") as handle:
            handle.write(buffer.getvalue())
        os.replace(partial, self.path)
        return True
