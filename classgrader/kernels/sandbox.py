"""Confine a freshly forked process (a grading kernel) before it runs untrusted student code.

enter() gives the process new mount, network and PID namespaces. It sees an allow-list, not the
machine: an empty root with read-only binds of the exposed paths (the Python environment, the
check library), its work directory (the only writable place on disk: a size-limited tmpfs the
grader made with make_workarea), a private /tmp and /dev/shm, a few devices and its own /proc.
The machine's accelerator, if it has one, is there too: its device nodes under /dev and its
driver's libraries where the host keeps them, read-only (accelerator.py finds them at run time).
No network at all (it talks to the grader over Unix sockets in its work directory). It is PID 1
of its namespace, so every process it starts ends with it. Then it sets resource limits and
becomes an unprivileged user, so none of it can be undone. Linux only; the parent must be root.

Memory: what a kernel keeps resident is bounded by the memory cgroup its zygote put it in
(cgroup.py); enter() checks the bound is there. A CUDA process reserves far more address space
than it uses, so the address-space limit (RLIMIT_AS) applies only to a kernel given no
accelerator, and always where no cgroup bounds it: then it gets no accelerator either."""
import contextlib
import ctypes
import functools
import os
import pwd
import re
import resource
import signal
import stat
import sys
import tempfile
from dataclasses import dataclass

from classgrader.kernels import accelerator, cgroup

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC = 0x20000, 0x20000000, 0x40000000, 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
SYS_PIVOT_ROOT = 155  # x86_64

# The per-mount flags mountinfo lists; a read-only remount must repeat them or the kernel refuses.
MOUNT_FLAGS = {"ro": MS_RDONLY, "nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
               "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
PSEUDO_FILESYSTEMS = ("proc", "sysfs", "devtmpfs", "devpts", "mqueue", "cgroup")
DEVICES = ("null", "zero", "full", "random", "urandom")
# The root's merged-/usr links (lib -> usr/lib), recreated so exposed binaries find their loader.
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
NEW_ROOT = "/tmp/.sandbox-root"  # built on a private tmpfs over /tmp, then made the root
HOME = "/tmp/home"  # private, so libraries' caches and config land neither in workdir nor outside
WORKAREAS = "/run/course-kernels"  # root's own: where make_workarea mounts kernels' work areas

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 4 * 2**30   # resident (its memory cgroup); RLIMIT_AS, where that applies,
                                    # gives it this much beyond the address space it starts with
    address_space: bool | None = None  # RLIMIT_AS wherever no cgroup bounds memory, and besides:
                                       # None, for a kernel given no accelerator; False, never; True, always
    cpu_seconds: int = 600          # RLIMIT_CPU (soft; hard = soft + 5)
    processes: int = 512            # RLIMIT_NPROC (threads count on Linux)
    file_bytes: int = 64 * 2**20    # RLIMIT_FSIZE
    open_files: int = 1024          # RLIMIT_NOFILE
    disk_bytes: int = 256 * 2**20   # the work area (make_workarea): all its files together
    disk_files: int = 20_000        # ... and how many there may be
    tmp_bytes: int = 256 * 2**20    # the private /tmp (memory, gone with the kernel)
    # also set RLIMIT_CORE to 0


@dataclass(frozen=True)
class Jail:
    workdir: str                 # the one writable place on disk (plus a private /tmp and /dev/shm)
    expose: tuple[str, ...] = ()  # the only other host paths it sees, read-only
    limits: Limits = Limits()
    user: str = "nobody"
    # Host device nodes (each at its place under /dev) and driver libraries (at their own
    # paths) to give the kernel; None: the machine's accelerator, found at run time.
    devices: tuple[str, ...] | None = None
    libraries: tuple[str, ...] | None = None


class SandboxError(RuntimeError):
    """A step of confining the process failed: it must not go on to run student code."""


@functools.cache
def unavailable_reason() -> str | None:
    """None when sandboxes can be set up on this machine, else a sentence saying why not."""
    if _libc is None:
        return "Sandboxes need Linux namespaces, and this is not Linux."
    if os.geteuid() != 0:
        return "Sandboxes are set up by root, and this process is not root."
    pid = os.fork()
    if pid == 0:  # try in a throwaway child: its namespaces die with it
        try:
            _new_namespaces(CLONE_NEWPID)
            os._exit(0)
        except BaseException as error:
            os._exit(getattr(error, "errno", None) or 255)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code:
        why = os.strerror(code) if 0 < code < 255 else f"exit status {code}"
        return f"This machine does not allow new mount, network and PID namespaces ({why})."
    return None


def make_workarea(limits: Limits, user: str) -> str:
    """A fresh work area for one kernel: a tmpfs of limits.disk_bytes (and disk_files inodes)
    owned by `user`, mounted by the (root) grader under WORKAREAS; returns its path. Going over
    fills this area only (ENOSPC for that kernel); remove_workarea() frees all of it at once.
    The path stays short: the kernel's Unix sockets live there and must fit 107 bytes."""
    uid, gid = _account(user)
    os.makedirs(WORKAREAS, mode=0o711, exist_ok=True)
    info = os.lstat(WORKAREAS)  # root's own folder, never a link anyone could have put there
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise SandboxError(f"Sandbox: {WORKAREAS} is not a folder only root can write")
    path = tempfile.mkdtemp(dir=WORKAREAS, prefix="")
    with _step(f"mount a {limits.disk_bytes // 2**20} MiB work area at {path}"):
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV,
               f"size={limits.disk_bytes},nr_inodes={limits.disk_files},mode=0700,uid={uid},gid={gid}")
    return path


def mount_records_area(folder_fd: int, limits: Limits) -> None:
    """A tmpfs of its own, root's (mode 711), over the folder in a work area where each kernel
    gets a folder for its check records and sockets (folder_fd, opened by root before any kernel
    runs): a student filling the work area cannot stop the records, nor records fill the work
    area, and being a mount point it cannot be moved or replaced by the kernel."""
    with _step("mount the records area"):
        _mount("tmpfs", f"/proc/self/fd/{folder_fd}", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
               f"size={limits.file_bytes},nr_inodes=10000,mode=0711")


def unmount(fd: int) -> None:
    """Detach the mount whose root fd was opened on (nothing if it is not a mount)."""
    if _libc is not None:
        _libc.umount2(os.fsencode(f"/proc/self/fd/{fd}"), MNT_DETACH)


def remove_workarea(path: str) -> None:
    """Unmount a work area (everything in it goes) and remove its mount point."""
    if (_libc is not None and _libc.umount2(os.fsencode(path), MNT_DETACH) != 0
            and ctypes.get_errno() not in (22, 2)):  # EINVAL: not mounted; ENOENT: gone
        raise OSError(ctypes.get_errno(), f"umount {path}: {os.strerror(ctypes.get_errno())}")
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(path)


def is_workarea(path: str, limits: Limits) -> bool:
    """Is path a work area of this size (a tmpfs mounted right there)?"""
    try:
        info = os.statvfs(path)
    except OSError:
        return False
    return os.path.ismount(path) and abs(info.f_blocks * info.f_frsize - limits.disk_bytes) < 2**20


def private_mounts() -> None:
    """Give this process (and what it starts from now on) a mount namespace of its own, so the
    work areas it mounts vanish with it, even if killed, and are never seen by the host."""
    _libc_call("unshare", ctypes.c_int(CLONE_NEWNS))
    _mount(None, "/", None, MS_REC | MS_PRIVATE)


def prepare(jail: Jail) -> None:
    """Run by the (root) parent before forking: give what it put in the work area to the
    sandbox user. Symbolic links are not followed."""
    uid, gid = _account(jail.user)
    workdir = os.path.realpath(jail.workdir)
    os.chown(workdir, uid, gid)
    for folder, dirs, files in os.walk(workdir):
        for name in dirs + files:
            os.lchown(os.path.join(folder, name), uid, gid)


def enter(jail: Jail) -> None:
    """Irreversibly confine the calling process (a fresh fork child). Raises SandboxError,
    saying which step failed, if any does. The caller goes on as PID 1 of a new PID namespace:
    the process that called stays outside only to wait for it and exit as it does."""
    if _libc is None:
        raise SandboxError(unavailable_reason())
    with _step(f"look up the user {jail.user!r}"):
        uid, gid = _account(jail.user)
    workdir = os.path.realpath(jail.workdir)
    exposed = sorted({os.path.realpath(path) for path in jail.expose if os.path.exists(path)} - {"/"})
    with _step("check the work area"):
        if not is_workarea(workdir, jail.limits):
            raise OSError(f"{workdir} is not a {jail.limits.disk_bytes // 2**20} MiB work area (make_workarea)")
    with _step("find the accelerator and the memory bound"):
        bounded = memory_bounded(jail.limits)
        devices, libraries = given_accelerator(jail) if bounded else ((), ())
        libraries = [path for path in libraries if not _inside(path, exposed)]  # already there
        address_space = address_space_limit(jail.limits, bounded, bool(devices), address_space_in_use())

    with _step("create new mount, network, IPC and PID namespaces"):
        _new_namespaces(CLONE_NEWPID)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _stand_in_for(os.fork())  # returns only in the child, PID 1 of the new namespace
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    with _step("open the work directory and the exposed paths"):  # before /tmp is covered
        fds = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in [*exposed, workdir]}
        device_fds = {accelerator.place_in_jail(path): _open_device(path) for path in devices}
        links = {path: os.readlink(path) for path in libraries if os.path.islink(path)}
        library_fds = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in libraries if path not in links}
    with _step("build an empty root"):
        _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=700")
        os.mkdir(NEW_ROOT)
        _mount("tmpfs", NEW_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    with _step("add devices, /tmp and /dev/shm"):
        for device in DEVICES:
            _bind_at(os.open(f"/dev/{device}", os.O_PATH | os.O_CLOEXEC), f"{NEW_ROOT}/dev/{device}")
        for place, fd in device_fds.items():
            _bind_at(fd, NEW_ROOT + place)
        for path, options in [("/tmp", f"size={jail.limits.tmp_bytes},mode=1777"), ("/dev/shm", "size=64m,mode=1777")]:
            os.makedirs(NEW_ROOT + path, exist_ok=True)
            _mount("tmpfs", NEW_ROOT + path, "tmpfs", MS_NOSUID | MS_NODEV, options)
        for name in ROOT_LINKS:
            if os.path.islink(f"/{name}") and not os.readlink(f"/{name}").startswith("/"):
                os.symlink(os.readlink(f"/{name}"), f"{NEW_ROOT}/{name}")
        os.mkdir(f"{NEW_ROOT}/proc")
    # Shallower first, so a path inside another exposed one (the venv inside the repo) is
    # bound on top of it, and one under /tmp on top of the private /tmp; the work directory
    # last, writable.
    with _step("add the accelerator's driver libraries"):  # outside every exposed path
        for path, target in links.items():
            os.makedirs(os.path.dirname(NEW_ROOT + path), mode=0o755, exist_ok=True)
            if not os.path.lexists(NEW_ROOT + path):  # a root link (lib -> usr/lib) is there already
                os.symlink(target, NEW_ROOT + path)
        for path, fd in library_fds.items():
            _bind_at(fd, NEW_ROOT + path)
    for path in [*sorted(exposed, key=lambda p: p.count("/")), workdir]:
        with _step(f"expose {path}"):
            _bind_at(fds.pop(path), NEW_ROOT + path)
    with _step("make it the root"):
        os.mkdir(f"{NEW_ROOT}/.old")
        _libc_call("syscall", ctypes.c_long(SYS_PIVOT_ROOT), os.fsencode(NEW_ROOT), os.fsencode(f"{NEW_ROOT}/.old"))
        os.chdir("/")
        _libc_call("umount2", b"/.old", ctypes.c_int(MNT_DETACH))
        os.rmdir("/.old")
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # its own processes only

    with _step("start the kernel under a reaper"):
        # PID 1 of a namespace ignores signals it has no handler for (the CPU limit's SIGXCPU,
        # a SIGTERM): the kernel runs as its child, and PID 1 only reaps and stands in.
        _stand_in_for(os.fork(), reap=True)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    with _step("make the file systems read-only"):
        keep_writable = {workdir, "/tmp", "/dev/shm"}
        for point, options in _reachable_mounts(keep_writable, workdir):
            flags = sum(MOUNT_FLAGS.get(option, 0) for option in options)
            if not flags & (MS_NOATIME | MS_RELATIME):
                flags |= MS_STRICTATIME
            _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        still_writable = [point for point, options in _reachable_mounts(keep_writable, workdir) if "ro" not in options]
        if still_writable:
            raise OSError(f"still writable: {', '.join(still_writable)}")

    limits = jail.limits
    with _step("set resource limits"):
        for which, soft, hard in [
                (resource.RLIMIT_AS, address_space, address_space),
                (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5),
                (resource.RLIMIT_NPROC, limits.processes, limits.processes),
                (resource.RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes),
                (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
                (resource.RLIMIT_CORE, 0, 0)]:
            _, ceiling = resource.getrlimit(which)
            if ceiling != resource.RLIM_INFINITY:  # root without CAP_SYS_RESOURCE cannot raise it
                soft, hard = (ceiling if v == resource.RLIM_INFINITY else min(v, ceiling) for v in (soft, hard))
            resource.setrlimit(which, (soft, hard))

    with _step(f"become the user {jail.user!r}"):
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        _prctl(PR_SET_DUMPABLE, 0)  # other sandboxes run as the same user: no ptrace between them
        if os.getresuid() != (uid,) * 3 or os.getresgid() != (gid,) * 3:
            raise OSError(f"still running as uids {os.getresuid()}, gids {os.getresgid()}")

    with _step("set up the home and work directories"):
        os.makedirs(f"{HOME}/.config/matplotlib", exist_ok=True)
        os.environ.update(HOME=HOME, TMPDIR="/tmp", MPLCONFIGDIR=f"{HOME}/.config/matplotlib",
                          USER=jail.user, LOGNAME=jail.user)
        os.chdir(workdir)


def memory_bounded(limits: Limits) -> bool:
    """Is the calling process's resident memory bounded by a cgroup to limits.memory_bytes or less?"""
    bound = cgroup.limit_of()
    return bound is not None and bound <= limits.memory_bytes


def given_accelerator(jail: Jail) -> tuple[list[str], list[str]]:
    """(device nodes, driver libraries) the jail gives: its own, else the machine's."""
    found, _ = accelerator.machine()
    devices = found.devices if jail.devices is None else jail.devices
    libraries = found.libraries if jail.libraries is None else jail.libraries
    return list(devices), list(libraries)


def address_space_limit(limits: Limits, bounded: bool, accelerated: bool, in_use: int = 0) -> int:
    """RLIMIT_AS for a kernel that already has `in_use` bytes of address space: limits.memory_bytes
    more, or none (RLIM_INFINITY) for a kernel given an accelerator whose memory a cgroup bounds, as
    limits.address_space says. Counted beyond what it starts with because that depends on the build
    of PyTorch, not on the student: a CUDA build reserves over 3 GiB on import, GPU or not."""
    if not bounded or limits.address_space or (limits.address_space is None and not accelerated):
        return in_use + limits.memory_bytes
    return resource.RLIM_INFINITY


def address_space_in_use() -> int:
    """This process's address space (VmSize), in bytes."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))


def _inside(path: str, folders) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _open_device(path: str) -> int:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    if not stat.S_ISCHR(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a character device")
    return fd


def _stand_in_for(child: int, reap: bool = False) -> None:
    """In the parent: pass signals on to child, wait for it, then end as it ended. Returns only
    in the child. Run outside the new PID namespace (for its PID 1) and as that PID 1 (for the
    kernel, reap=True: it also collects every orphan). When PID 1 ends, the kernel ends with
    every process it started, setsid or not. A request to terminate becomes a kill."""
    if child == 0:
        return
    def forward(signum, _frame):
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL if signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT) else signum)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    while True:
        try:
            pid, status = os.waitpid(-1 if reap else child, 0)
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            break
    if reap:  # PID 1 ignores even its own signals: the stand-in outside re-raises (below)
        os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status) % 256)
    if os.WIFEXITED(status) and 128 < os.WEXITSTATUS(status) < 128 + signal.NSIG:
        status = os.WEXITSTATUS(status) - 128  # a wait status: killed by that signal
    if os.WIFSIGNALED(status):
        fatal = os.WTERMSIG(status)
        if fatal not in (signal.SIGKILL, signal.SIGSTOP):  # those cannot be handled anyway
            signal.signal(fatal, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [fatal])
        os.kill(os.getpid(), fatal)
    os._exit(os.waitstatus_to_exitcode(status) % 256)


@functools.cache  # looked up once in the zygote (by prepare), not in each forked child
def _account(user: str) -> tuple[int, int]:
    if user.startswith("#"):  # "#UID": an account of its own, in no passwd file, group the same number
        return int(user[1:]), int(user[1:])
    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid


def private_user() -> str:
    """A uid no other running sandbox has (in all likelihood: one in a million): kernels that
    run at once cannot signal each other, nor share the per-user process limit."""
    return f"#{200_000 + int.from_bytes(os.urandom(3), 'big') % 1_000_000}"


@contextlib.contextmanager
def _step(what: str):
    try:
        yield
    except (OSError, KeyError, ValueError) as error:
        raise SandboxError(f"Sandbox: could not {what}: {error}") from error


def _libc_call(name: str, *args) -> None:
    if getattr(_libc, name)(*args) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{name}: {os.strerror(error)}")


def _mount(source, target, fstype, flags, options=None) -> None:
    def encode(text):
        return ctypes.c_char_p(None if text is None else os.fsencode(text))
    _libc_call("mount", encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(options))


def _new_namespaces(extra: int = 0) -> None:
    # IPC too: System V shared memory, semaphores and queues outlive the processes that made
    # them (a detached segment holds its memory until removed); in a namespace of the kernel's
    # own they go when it ends.
    _libc_call("unshare", ctypes.c_int(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | extra))
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # so no mount made here reaches the host


def _prctl(option: int, value: int) -> None:
    _libc_call("prctl", ctypes.c_int(option), *(ctypes.c_ulong(arg) for arg in (value, 0, 0, 0)))


def _bind_at(fd: int, target: str) -> None:
    """Bind what fd was opened on at target in the new root, making target (a directory, or an
    empty file for a file) and its missing parents (traversable directories)."""
    try:
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        os.makedirs(target if is_dir else os.path.dirname(target), mode=0o755, exist_ok=True)
        if not is_dir and not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o444))
        _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    finally:
        os.close(fd)


def _reachable_mounts(keep_writable: set[str], workdir: str):
    """(mount point, per-mount options) of the mounts to make read-only: not pseudo file
    systems, not kept writable, not the grader's own mounts in the work directory (its records
    area), and not shadowed by another mount (those are out of reach)."""
    with open("/proc/self/mountinfo") as table:
        rows = [line.split() for line in table]
    for row in rows:
        point = re.sub(r"\\([0-7]{3})", lambda code: chr(int(code[1], 8)), row[4])
        fstype = row[row.index("-") + 1]
        if fstype.startswith(PSEUDO_FILESYSTEMS) or point in keep_writable or point.startswith(f"{workdir}/"):
            continue
        if _visible_mount_id(point) == int(row[0]):
            yield point, row[5].split(",")


def _visible_mount_id(path: str) -> int | None:
    """The id of the mount that path resolves to now (the top one), or None if it is gone."""
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        with open(f"/proc/self/fdinfo/{fd}") as info:
            return next(int(line.split()[1]) for line in info if line.startswith("mnt_id:"))
    finally:
        os.close(fd)
