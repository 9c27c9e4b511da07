"""Confine a freshly forked process (a grading kernel) before it runs untrusted student code.

enter() gives the process its own mount and network namespaces: no network at all (it talks
to the grader over Unix sockets in its work directory), every file system read-only except
the work directory and a private /tmp and /dev/shm, hidden paths replaced by empty ones.
Then it sets resource limits and becomes an unprivileged user, so none of it can be undone.
Linux only; the parent must be root."""
import contextlib
import ctypes
import functools
import os
import pwd
import re
import resource
import stat
import sys
from dataclasses import dataclass

CLONE_NEWNS, CLONE_NEWNET = 0x20000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 4, 38

# The per-mount flags mountinfo lists; a read-only remount must repeat them or the kernel refuses.
MOUNT_FLAGS = {"ro": MS_RDONLY, "nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
               "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
# Kernel interfaces, left as they are: their files guard themselves (root-owned, per process).
PSEUDO_FILESYSTEMS = ("proc", "sysfs", "devtmpfs", "devpts", "mqueue", "cgroup")
EMPTY_FILE = "/tmp/.sandbox-empty"  # bound over hidden files
HOME = "/tmp/home"  # private, so libraries' caches and config land neither in workdir nor outside

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 4 * 2**30   # RLIMIT_AS
    cpu_seconds: int = 600          # RLIMIT_CPU (soft; hard = soft + 5)
    processes: int = 512            # RLIMIT_NPROC (threads count on Linux)
    file_bytes: int = 64 * 2**20    # RLIMIT_FSIZE
    open_files: int = 1024          # RLIMIT_NOFILE
    # also set RLIMIT_CORE to 0


@dataclass(frozen=True)
class Jail:
    workdir: str                 # the one writable place (plus a private /tmp and /dev/shm)
    expose: tuple[str, ...] = ()  # must stay readable (the repo checkout, the venv), even if under /tmp
    hide: tuple[str, ...] = ()   # replaced by an empty read-only dir (or, for a file, an empty file)
    limits: Limits = Limits()
    user: str = "nobody"


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
            _new_namespaces()
            os._exit(0)
        except BaseException as error:
            os._exit(getattr(error, "errno", None) or 255)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code:
        why = os.strerror(code) if 0 < code < 255 else f"exit status {code}"
        return f"This machine does not allow new mount and network namespaces ({why})."
    return None


def prepare(jail: Jail) -> None:
    """Run by the (root) parent before forking: give workdir, recursively, to the sandbox
    user so the confined child can write there. Symbolic links are not followed."""
    uid, gid = _account(jail.user)
    workdir = os.path.realpath(jail.workdir)
    os.chown(workdir, uid, gid)
    for folder, dirs, files in os.walk(workdir):
        for name in dirs + files:
            os.lchown(os.path.join(folder, name), uid, gid)


def enter(jail: Jail) -> None:
    """Irreversibly confine the calling process (a fresh fork child). Raises SandboxError,
    saying which step failed, if any does."""
    if _libc is None:
        raise SandboxError(unavailable_reason())
    with _step(f"look up the user {jail.user!r}"):
        uid, gid = _account(jail.user)
    workdir = os.path.realpath(jail.workdir)
    exposed = [os.path.realpath(path) for path in jail.expose]
    hidden = {os.path.realpath(path): os.path.isdir(path) for path in jail.hide if os.path.lexists(path)}

    with _step("create new mount and network namespaces"):
        _new_namespaces()
    with _step("open the work directory and the exposed paths"):  # before anything covers them
        fds = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in [*exposed, workdir]}
    with _step("mount a private /tmp and /dev/shm"):
        _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=1777")
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
        os.close(os.open(EMPTY_FILE, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o444))

    # Shallower paths first: a hidden dir inside an exposed one covers it, and a workdir or
    # exposed path inside a hidden dir (or /tmp) is bound back on top of the cover. Exposed
    # paths are bound even where nothing covers them, so one inside the workdir is read-only too.
    steps = [(path, 0) for path in exposed] + [(path, 1) for path in hidden] + [(workdir, 2)]
    for path, kind in sorted(steps, key=lambda step: (step[0].count("/"), step[1])):
        with _step(f"{('expose', 'hide', 'bind the work directory')[kind]} {path}"):
            if kind == 1:
                _cover(path, hidden[path])
            else:
                _bind_back(fds[path], path)
    for fd in fds.values():
        os.close(fd)

    with _step("make the file systems read-only"):
        keep_writable = {workdir, "/tmp", "/dev/shm"}
        for point, options in _reachable_mounts(keep_writable):
            flags = sum(MOUNT_FLAGS.get(option, 0) for option in options)
            if not flags & (MS_NOATIME | MS_RELATIME):
                flags |= MS_STRICTATIME
            _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        still_writable = [point for point, options in _reachable_mounts(keep_writable) if "ro" not in options]
        if still_writable:
            raise OSError(f"still writable: {', '.join(still_writable)}")

    limits = jail.limits
    with _step("set resource limits"):
        for which, soft, hard in [
                (resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes),
                (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5),
                (resource.RLIMIT_NPROC, limits.processes, limits.processes),
                (resource.RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes),
                (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
                (resource.RLIMIT_CORE, 0, 0)]:
            _, ceiling = resource.getrlimit(which)
            if ceiling != resource.RLIM_INFINITY:  # root without CAP_SYS_RESOURCE cannot raise it
                soft, hard = min(soft, ceiling), min(hard, ceiling)
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
    encode = lambda text: ctypes.c_char_p(None if text is None else os.fsencode(text))
    _libc_call("mount", encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(options))


def _new_namespaces() -> None:
    _libc_call("unshare", ctypes.c_int(CLONE_NEWNS | CLONE_NEWNET))
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # so no mount made here reaches the host


def _prctl(option: int, value: int) -> None:
    _libc_call("prctl", ctypes.c_int(option), *(ctypes.c_ulong(arg) for arg in (value, 0, 0, 0)))


def _bind_back(fd: int, path: str) -> None:
    """Bind what fd was opened on at path, making path (and parents, traversable) if a cover hid it."""
    is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
    missing, parent = [], path
    while not os.path.lexists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for made in reversed(missing):
        if made == path and not is_dir:
            os.close(os.open(made, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o444))
        else:
            os.mkdir(made)
            os.chmod(made, 0o755)
    _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)


def _cover(path: str, is_dir: bool) -> None:
    if not os.path.lexists(path):
        return  # under /tmp and no exposed path holds it: already out of sight
    if is_dir:
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    else:
        _mount(EMPTY_FILE, path, None, MS_BIND)


def _reachable_mounts(keep_writable: set[str]):
    """(mount point, per-mount options) of the mounts to make read-only: not pseudo file
    systems, not kept writable, and not shadowed by another mount (those are out of reach)."""
    with open("/proc/self/mountinfo") as table:
        rows = [line.split() for line in table]
    for row in rows:
        point = re.sub(r"\\([0-7]{3})", lambda code: chr(int(code[1], 8)), row[4])
        fstype = row[row.index("-") + 1]
        if fstype.startswith(PSEUDO_FILESYSTEMS) or point in keep_writable:
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
