"""A grading kernel's work area: the folder a student's notebook runs in, and the records area
inside it where the kernel's checks write and the grader reads.

With a sandbox, the work area is a size-limited tmpfs of the kernel's own user, holding a copy
of the student's regular files (never a notebook: the graded one holds the hidden tests); the
grader writes nothing in it once the kernel runs, and reads it only through folder descriptors
taken before, each file opened without following links. Its records area is root's own tmpfs,
mounted on it (a mount point the kernel can neither fill from its work area nor move), with a
fresh folder, under a name no earlier kernel could guess, for each kernel. nbgrader's own
folder (runtime/autograded), where root writes the graded notebook, is never seen by the kernel."""
import os
import secrets
import shutil
import sys
import tempfile

from classgrader.class_run import staging
from classgrader.kernels import sandbox
from classgrader.kernels.kernel_zygote import ZYGOTE_ENV

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORDS = ".grading"  # in the work area: where each kernel's record folder is made
OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_private_mounts: list[bool] = []  # done once per process: see WorkArea.__init__


class SandboxUnavailable(RuntimeError):
    pass


def allowed_paths() -> list[str]:
    """All a grading kernel sees of the machine besides its work area, /tmp, /dev/shm, a few
    devices and its own /proc: the Python environment, the system libraries it loads, and the
    check library and the grader's kernel half (classgrader/in_kernel). Not the course (source/,
    runtime/), not the rest of the grader, not /root or /home, nothing else."""
    paths = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), "/usr",
             "/etc/ld.so.cache", "/etc/localtime"}
    paths |= {os.path.join(REPO, *package) for package in (("autograder",), ("utils",), ("classgrader", "in_kernel"))}
    return sorted(p for p in paths if os.path.exists(p))


def jail_spec(workdir: str, limits=None, user=None) -> dict:
    """The jail for a grading kernel, as the zygote takes it; workdir is a work area made for
    `user` (sandbox.make_workarea), whose contents are given to it here."""
    jail = sandbox.Jail(workdir=workdir, expose=tuple(allowed_paths()), limits=sandbox.Limits(**(limits or {})),
                        user=user or sandbox.private_user())
    sandbox.prepare(jail)
    return {"workdir": jail.workdir, "expose": list(jail.expose), "limits": dict(limits or {}), "user": jail.user}


def copy_regular_files(source: str, target: str) -> None:
    """Copy the student's files (not the notebooks: the graded one holds the hidden tests) into
    the work area: regular files and folders only, following nothing (staging.py)."""
    staging.copy_tree(source, target, skip=lambda relative: relative.endswith(".ipynb"))


class WorkArea:
    """One notebook's work area, from its making (here) to its removal (close)."""

    def __init__(self, use_sandbox: bool, limits: dict, log):
        """A fresh, empty work area; with a sandbox, for a user of its own (SandboxUnavailable
        where there can be none: grading never runs unconfined unless told to)."""
        self.use_sandbox, self.limits = use_sandbox, dict(limits)
        self.jail: dict | None = None  # jail_spec's, once filled; None without a sandbox
        self.area_fd: int | None = None
        self.records_fd: int | None = None
        self.trace_fd: int | None = None  # the current kernel's record folder (new_trace_dir)
        self.trace_dir = ""  # the same folder, as the kernel sees it
        self.full = False
        self.user: str | None = None
        if not use_sandbox:
            log.warning("Grading WITHOUT a sandbox: student code runs with the grader's rights.")
            self.path = tempfile.mkdtemp(prefix="course-kernel-")
            return
        reason = sandbox.unavailable_reason()
        if reason:
            raise SandboxUnavailable(
                f"Cannot grade safely: {reason} Grade as root on Linux, or opt out explicitly with "
                "COURSE_SANDBOX=off (student code then runs with your rights).")
        if not os.environ.get(ZYGOTE_ENV) and not _private_mounts:
            # This process will start its own zygote: let both share mounts nobody else sees.
            sandbox.private_mounts()
            _private_mounts.append(True)
        self.user = sandbox.private_user()
        self.path = sandbox.make_workarea(sandbox.Limits(**self.limits), self.user)

    @property
    def records_path(self) -> str:
        return os.path.join(self.path, RECORDS)

    def fill(self, submitted: str) -> None:
        """The student's files from `submitted`, then the jail and the records area, made before
        any kernel runs."""
        copy_regular_files(submitted, self.path)
        self.area_fd = os.open(self.path, OPEN_FOLDER)
        self.jail = jail_spec(self.path, self.limits, self.user) if self.user else None
        os.mkdir(RECORDS, 0o711, dir_fd=self.area_fd)
        self.records_fd = os.open(RECORDS, OPEN_FOLDER, dir_fd=self.area_fd)
        if self.jail:
            sandbox.mount_records_area(self.records_fd, sandbox.Limits(**self.limits))
            os.close(self.records_fd)
            self.records_fd = os.open(RECORDS, OPEN_FOLDER, dir_fd=self.area_fd)  # the tmpfs's root

    def new_trace_dir(self) -> None:
        """A fresh folder for the next kernel's check records and sockets; the last kernel's goes
        first (its processes all ended with it, and removal goes by folder descriptors, following
        no link). Read back through the folder descriptor taken here (verify.read_records)."""
        if self.records_fd is None:
            raise RuntimeError("a kernel's record folder was asked for before the work area was filled")
        if self.trace_fd is not None:
            os.close(self.trace_fd)
            shutil.rmtree(os.path.basename(self.trace_dir), dir_fd=self.records_fd, ignore_errors=True)
        name = secrets.token_hex(8)
        os.mkdir(name, 0o700, dir_fd=self.records_fd)
        self.trace_fd = os.open(name, OPEN_FOLDER, dir_fd=self.records_fd)
        if self.jail:
            os.fchown(self.trace_fd, *sandbox._account(self.jail["user"]))
        self.trace_dir = os.path.join(self.records_path, name)

    def newly_full(self) -> bool:
        """Whether the kernel has just filled its work area (True once): only its own cells could suffer."""
        if self.full or self.jail is None:
            return False
        if self.area_fd is None:
            raise RuntimeError("the work area's disk was checked before the work area was open")
        info = os.statvfs(self.area_fd)
        self.full = info.f_bavail * info.f_frsize < 2**20 or info.f_favail < 16
        return self.full

    def close(self) -> None:
        for fd in (self.trace_fd, self.records_fd, self.area_fd):
            if fd is not None:
                os.close(fd)
        self.trace_fd = self.records_fd = self.area_fd = None
        if not self.use_sandbox:
            shutil.rmtree(self.path, ignore_errors=True)  # fd-based: follows no link the kernel left
        else:
            sandbox.remove_workarea(self.path)
