"""Tests for classgrader/kernels/sandbox.py: a forked child enters a sandbox, tries to cross one limit
and reports what happened through a pipe. Each test first shows that the same action works
outside the sandbox where that means something, so no test can pass because the action was
impossible anyway. Work directories are real work areas (size-limited tmpfs mounts, removed
after each test); exposed paths live under pytest's tmp_path, so under /tmp, which the
sandbox covers with its own tmpfs: they exercise exposing paths from under /tmp."""
import ctypes
import errno
import fcntl
import json
import os
import pwd
import re
import resource
import signal
import socket
import stat
import struct
import sys
import time
import uuid
from pathlib import Path

import pytest

from classgrader.kernels import sandbox
from classgrader.kernels.sandbox import Jail, Limits, SandboxError, private_user
from coursekit import IN_CI, live_processes

REPO = Path(__file__).resolve().parents[3]
NOBODY = pwd.getpwnam("nobody")
# CI runs as root, so there a missing sandbox is a failure, not a reason to skip.
pytestmark = pytest.mark.skipif(sandbox.unavailable_reason() is not None and not IN_CI,
                                reason=f"{sandbox.unavailable_reason()}")
libc = ctypes.CDLL(None, use_errno=True)
MNT_DETACH = 2


def run_sandboxed(jail: Jail, action, before=None) -> tuple[int, dict]:
    """Fork; the child calls before() (if given, outside the sandbox), enters the sandbox,
    runs action() and reports its dict, or the exception, as json. Returns (wait status, report)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            signal.alarm(60)  # never hang the test run
            extra = before() if before else {}
            sandbox.enter(jail)
            report = {**extra, **action()}
        except BaseException as error:
            report = {"raised": type(error).__name__, "message": str(error)}
        try:
            os.write(write_end, json.dumps(report).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    return status, json.loads(data) if data else {}


@pytest.fixture
def areas():
    """Work areas made by a test, unmounted after it."""
    made = []
    yield made
    for path in made:
        sandbox.remove_workarea(path)


@pytest.fixture
def make_jail(areas):
    def make(tmp_path, files=None, **options) -> Jail:
        """A jail like the grader's: a fresh work area holding `files` ({name: text}), the
        check library and the Python environment exposed, plus options["expose"]."""
        limits, user = options.pop("limits", Limits()), options.pop("user", "nobody")
        workdir = sandbox.make_workarea(limits, user)
        areas.append(workdir)
        for name, text in (files or {}).items():
            Path(workdir, name).write_text(text)
        expose = (str(REPO / "autograder"), sys.prefix, sys.base_prefix, "/usr", *options.pop("expose", ()))
        jail = Jail(workdir=workdir, expose=expose, limits=limits, user=user, **options)
        sandbox.prepare(jail)
        return jail
    return make


def attempt(action) -> str:
    """'ok' if action() ran, else the errno name of the OSError it raised."""
    try:
        action()
        return "ok"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error))


def write(path) -> None:
    with open(path, "w") as file:
        file.write("written from the sandbox")


def test_sandboxes_are_available_as_root():
    assert os.geteuid() == 0, "these tests run as root (as CI does)"
    assert sandbox.unavailable_reason() is None


def test_no_network_not_even_the_hosts_loopback(tmp_path, make_jail, covered):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    socket.create_connection(("127.0.0.1", port), timeout=5).close()  # works outside

    def inside():
        probe = socket.socket()
        flags = struct.unpack("16sH", fcntl.ioctl(probe, 0x8913, struct.pack("16sH14x", b"lo", 0))[:18])[1]
        return {"interfaces": [name for _, name in socket.if_nameindex()], "lo_up": bool(flags & 1),
                "connect": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=5))}

    _, report = run_sandboxed(make_jail(tmp_path), inside)
    server.close()
    assert report == {"interfaces": ["lo"], "lo_up": False, "connect": "ENETUNREACH"}
    covered("a sandboxed kernel has only a down lo, and cannot reach a TCP server on the host's 127.0.0.1")


def test_unix_sockets_in_the_workdir_still_reach_the_grader(tmp_path, make_jail):
    jail = make_jail(tmp_path)
    grader = socket.socket(socket.AF_UNIX)
    grader.bind(f"{jail.workdir}/grader.sock")
    os.chmod(f"{jail.workdir}/grader.sock", 0o777)
    grader.listen()

    def inside():
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(f"{jail.workdir}/grader.sock")
            client.sendall(b"hello from the kernel")
        with socket.socket(socket.AF_UNIX) as own:
            own.bind(f"{jail.workdir}/kernel.sock")
        return {"sent": True}

    _, report = run_sandboxed(jail, inside)
    assert report == {"sent": True}
    connection, _ = grader.accept()
    assert connection.recv(100) == b"hello from the kernel"
    assert Path(jail.workdir, "kernel.sock").is_socket()


def test_memory_limit(tmp_path, make_jail, covered):
    # RLIMIT_AS gives the kernel memory_bytes beyond the address space it starts with (torch,
    # pytest): with 512 MiB, 256 MiB must still fit, 1 GiB (twice 512) must not.
    headroom = 512 * 2**20
    jail = make_jail(tmp_path, limits=Limits(memory_bytes=headroom))
    bytearray(2 * headroom)  # works outside

    def inside():
        small = len(bytearray(headroom // 2))
        try:
            bytearray(2 * headroom)
            return {"small": small, "large": "allocated"}
        except MemoryError:
            return {"small": small, "large": "MemoryError"}

    _, report = run_sandboxed(jail, inside)
    assert report == {"small": headroom // 2, "large": "MemoryError"}
    covered("a sandboxed kernel gets MemoryError past its address-space limit")


def test_cpu_time_limit_kills_a_busy_loop(tmp_path, make_jail, covered):
    jail = make_jail(tmp_path, limits=Limits(cpu_seconds=1))

    def inside():
        while time.process_time() < 8:  # without the limit, the loop ends and reports
            pass
        return {"survived": time.process_time()}

    started = time.monotonic()
    status, report = run_sandboxed(jail, inside)
    assert report == {}, report
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL)
    assert time.monotonic() - started < 7
    covered(f"a busy loop with a 1 s CPU limit dies of {signal.Signals(os.WTERMSIG(status)).name}")


def nobody_tasks() -> int:
    """Threads (which RLIMIT_NPROC counts) that already run as nobody on this machine."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if int(re.search(r"Uid:\s+(\d+)", text)[1]) == NOBODY.pw_uid:
            count += int(re.search(r"Threads:\s+(\d+)", text)[1])
    return count


def test_process_limit(tmp_path, make_jail, covered):
    # The limit counts all of nobody's threads, the sandboxed child included: allow 3 more.
    jail = make_jail(tmp_path, limits=Limits(processes=nobody_tasks() + 1 + 3))

    def inside():
        hold_read, hold_write = os.pipe()
        children, outcome = [], "no error"
        for _ in range(40):
            try:
                pid = os.fork()
            except OSError as error:
                outcome = errno.errorcode[error.errno]
                break
            if pid == 0:  # wait until the parent is done forking, so all are alive at once
                os.close(hold_write)
                os.read(hold_read, 1)
                os._exit(0)
            children.append(pid)
        os.close(hold_write)
        for pid in children:
            os.waitpid(pid, 0)
        return {"forked": len(children), "outcome": outcome}

    _, report = run_sandboxed(jail, inside)
    assert report["outcome"] == "EAGAIN", report
    assert 1 <= report["forked"] <= 10, report
    covered(f"fork fails with EAGAIN past the process limit, after {report['forked']} children")


def test_file_size_limit(tmp_path, make_jail):
    jail = make_jail(tmp_path, limits=Limits(file_bytes=2**20))

    def inside():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so crossing the limit is an OSError
        written = 0
        fd = os.open("big.bin", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while written < 4 * 2**20:
                written += os.write(fd, bytes(64 * 1024))
            return {"written": written, "outcome": "no error"}
        except OSError as error:
            return {"written": written, "outcome": errno.errorcode[error.errno]}

    _, report = run_sandboxed(jail, inside)
    assert report == {"written": 2**20, "outcome": "EFBIG"}


def test_writes_only_in_workdir_and_a_private_tmp(tmp_path, make_jail, covered):
    shared = tmp_path / "shared"  # world-writable outside: only the read-only mount stops nobody
    shared.mkdir()
    shared.chmod(0o777)
    tmp_path.chmod(0o755)
    jail = make_jail(tmp_path, files={"submission.ipynb": "{}"}, expose=(str(shared),))
    marker = f"sandbox-{uuid.uuid4().hex}"
    assert os.stat("/var/tmp").st_mode & 0o777 == 0o777  # writable by anyone outside

    def inside():
        return {
            "workdir": attempt(lambda: write("result.txt")),
            "submission": attempt(lambda: write("submission.ipynb")),
            "exposed": attempt(lambda: write(shared / "x")),
            "repo": attempt(lambda: write(REPO / marker)),
            "check library": attempt(lambda: write(REPO / "autograder" / marker)),
            "root home": attempt(lambda: write(f"/root/{marker}")),
            "var tmp": attempt(lambda: write(f"/var/tmp/{marker}")),
            "tmp": attempt(lambda: write(f"/tmp/{marker}")),
            "dev shm": attempt(lambda: write(f"/dev/shm/{marker}")),
            "dev null": attempt(lambda: write("/dev/null")),
            # Its own memory as a file: written at an address, it rewrites the process (probes included).
            "own memory": attempt(lambda: open("/proc/self/mem", "r+b").close()),
            "home": os.environ["HOME"], "cwd": os.getcwd(),
        }

    _, report = run_sandboxed(jail, inside)
    assert report.get("workdir") == report.get("submission") == report.get("dev null") == "ok", report
    assert report["exposed"] == report["check library"] == report["root home"] == "EROFS", report
    # Read-only where the repository is exposed; where a clone lives under /tmp, the jail's own
    # /tmp holds only root's mount points on the way to the check library: not writable either.
    assert report["repo"] in ("EROFS", "EACCES"), report
    assert report["var tmp"] == "ENOENT", report  # not even there: it was not exposed
    assert report["tmp"] == report["dev shm"] == "ok", report
    assert attempt(lambda: open("/proc/self/mem", "r+b").close()) == "ok"  # outside, a process may
    assert report["own memory"] in ("EACCES", "EROFS"), report
    assert report["cwd"] == jail.workdir and report["home"].startswith("/tmp/")
    assert Path(jail.workdir, "result.txt").stat().st_uid == NOBODY.pw_uid
    for place in ("/tmp", "/dev/shm", "/var/tmp", "/root", REPO, REPO / "autograder"):
        assert not Path(place, marker).exists(), place
    covered("only the work area, a private /tmp and /dev/shm are writable; exposed paths read-only; "
            "not its own memory (/proc/self/mem)")


def test_only_the_allowed_paths_are_there(tmp_path, make_jail, covered):
    """An allow-list: another copy of the course, the course's source/ and runtime/, /root and
    /home are all there outside (readable by root, who forks the kernel), absent inside."""
    other_course = tmp_path / "other-course"
    (other_course / "source").mkdir(parents=True)
    (other_course / "source" / "hidden.txt").write_text("hidden test")
    (REPO / "runtime").mkdir(exist_ok=True)
    secrets = [other_course / "source" / "hidden.txt", REPO / "source", REPO / "runtime", Path("/home"),
               Path("/etc/passwd"), Path("/var"), Path.home() / ".bashrc"]
    outside = {str(path): path.exists() for path in secrets}
    assert all(outside.values()), outside  # the route exists without the sandbox

    def inside():
        return {"seen": {str(path): path.exists() for path in secrets},
                "root": sorted(os.listdir("/")), "repo": sorted(os.listdir(REPO)),
                "lazy import": __import__("email.mime.text").__name__,
                "processes": sorted(p for p in os.listdir("/proc") if p.isdigit()), "pid": os.getpid()}

    _, report = run_sandboxed(make_jail(tmp_path), inside)
    assert report["seen"] == dict.fromkeys(outside, False), report
    assert set(report["repo"]) <= {"autograder", ".venv"}, report["repo"]
    assert report["lazy import"] == "email", report
    assert report["processes"] == ["1", "2"] and report["pid"] == 2, report  # its reaper and itself
    covered("a kernel sees only the allowed paths (no other course copy, source/, runtime/, /home, "
            "/etc, ~), its lazy imports still resolve, and its /proc shows only itself and its reaper")


def test_of_the_grader_a_kernel_sees_only_its_kernel_half(tmp_path, make_jail, covered):
    """The grader's own allow-list (work_area.allowed_paths): of classgrader/ a kernel sees
    classgrader/in_kernel and nothing else; the judge, the class run and the sandbox stay outside."""
    from classgrader.judging import work_area
    grader = REPO / "classgrader"
    outside = sorted(str(p.relative_to(grader)) for p in grader.rglob("*.py"))
    assert any(not name.startswith("in_kernel/") for name in outside)  # there is more to hide

    def inside():
        found = [os.path.relpath(os.path.join(folder, name), grader) for folder, dirs, files in os.walk(grader)
                 for name in files if name.endswith(".py")]
        return {"classgrader": sorted(found), "source": (REPO / "source").exists()}

    _, report = run_sandboxed(make_jail(tmp_path, expose=work_area.allowed_paths()), inside)
    assert report["classgrader"] == [name for name in outside if name.startswith("in_kernel/")], report
    assert "in_kernel/integrity.py" in report["classgrader"] and not report["source"], report
    covered("of the grader, a kernel sees only classgrader/in_kernel (the audit, the answer server, the protocol)")


def test_a_plain_folder_is_refused_as_a_work_area(tmp_path):
    (tmp_path / "plain").mkdir()
    _, report = run_sandboxed(Jail(workdir=str(tmp_path / "plain")), dict)
    assert report["raised"] == SandboxError.__name__ and "check the work area" in report["message"], report


def test_the_work_area_is_a_disk_quota(tmp_path, make_jail, covered):
    """Many files, each under the file-size limit: a plain folder takes them all; the work area
    stops at its size, with ENOSPC for that kernel only."""
    size, chunk = 8 * 2**20, 2**20

    def fill(folder) -> dict:
        written = 0
        try:
            for n in range(4 * size // chunk):
                with open(os.path.join(folder, f"part-{n}"), "wb") as handle:
                    handle.write(bytes(chunk))
                written += chunk
            return {"written": written, "outcome": "no error"}
        except OSError as error:
            return {"written": written, "outcome": errno.errorcode[error.errno]}

    plain = tmp_path / "plain"
    plain.mkdir()
    assert fill(plain) == {"written": 4 * size, "outcome": "no error"}  # the route, undefended
    jail = make_jail(tmp_path, limits=Limits(disk_bytes=size))
    _, report = run_sandboxed(jail, lambda: fill("."))
    assert report["outcome"] == "ENOSPC" and size - chunk <= report["written"] <= size, report
    covered(f"a kernel's files stop at its {size // 2**20} MiB work area (ENOSPC); "
            f"a plain folder took {4 * size // 2**20} MiB")


DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(0.05)
    os._exit(0)
"""


def processes_of(uid: int) -> list[int]:
    return [pid for pid, _ in live_processes(lambda found: found == uid)]


def test_a_double_forked_process_ends_with_its_kernel(tmp_path, make_jail, covered):
    """Without a PID namespace a double-forked, setsid process outlives its kernel; in the
    sandbox the kernel is PID 1 of its own namespace, and takes every process with it."""
    user = private_user()
    uid = int(user[1:])
    plain = os.fork()
    if plain == 0:  # the route, undefended: a child that drops to uid and leaves a daemon
        try:
            os.setgid(uid), os.setuid(uid)
            exec(DAEMON)
        finally:
            os._exit(0)  # never back into the test runner as that uid
    os.waitpid(plain, 0)
    time.sleep(0.3)
    survivors = processes_of(uid)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors, "without a PID namespace the daemon should have survived"

    def inside():
        exec(DAEMON)
        time.sleep(0.3)
        return {"running": len([p for p in os.listdir("/proc") if p.isdigit()])}

    _, report = run_sandboxed(make_jail(tmp_path, user=user), inside)
    assert report["running"] >= 2, report  # the daemon was running inside
    deadline = time.time() + 5
    while processes_of(uid) and time.time() < deadline:
        time.sleep(0.05)
    assert processes_of(uid) == []
    covered("a double-forked setsid process survives its parent without the sandbox and ends with its kernel inside")


SHARED_MEMORY = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
segment = libc.shmget(0, 2**20, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600: never removed
assert segment >= 0, ctypes.get_errno()
"""


def removed_shared_memory(uid: int) -> list[int]:
    """The System V shared memory segments uid made that the host still held (their ids), now removed."""
    rows = [line.split() for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]]
    found = [int(row[1]) for row in rows if int(row[9]) == uid]
    for segment in found:
        libc.shmctl(segment, 0, None)  # IPC_RMID
    return found


def test_shared_memory_ends_with_its_kernel(tmp_path, make_jail, covered):
    """A System V segment outlives the process that made it, holding its memory until removed;
    the sandbox's IPC namespace takes every segment with the kernel."""
    user = private_user()
    uid = int(user[1:])
    plain = os.fork()
    if plain == 0:  # the route, undefended
        try:
            os.setgid(uid), os.setuid(uid)
            exec(SHARED_MEMORY)
        finally:
            os._exit(0)
    os.waitpid(plain, 0)
    assert removed_shared_memory(uid), "without an IPC namespace the segment should have outlived its process"

    def inside():
        exec(SHARED_MEMORY)
        return {"made": True}

    _, report = run_sandboxed(make_jail(tmp_path, user=user), inside)
    assert report == {"made": True}, report
    assert removed_shared_memory(uid) == []  # removed even when the test fails: never left on the host
    covered("a System V shared memory segment outlives its process without the sandbox and ends with its kernel inside")


def test_runs_as_nobody_for_good(tmp_path, make_jail):
    def inside():
        return {"ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups()],
                "setuid": attempt(lambda: os.setuid(0)),
                "umount": "ok" if libc.umount2(b"/tmp", MNT_DETACH) == 0 else errno.errorcode[ctypes.get_errno()],
                "unshare": "ok" if libc.unshare(0x20000) == 0 else errno.errorcode[ctypes.get_errno()]}

    _, report = run_sandboxed(make_jail(tmp_path), inside)
    nobody = [NOBODY.pw_uid, NOBODY.pw_uid, NOBODY.pw_gid, NOBODY.pw_gid, []]
    assert report == {"ids": nobody, "setuid": "EPERM", "umount": "EPERM", "unshare": "EPERM"}


def test_a_failing_step_raises_sandbox_error(tmp_path):
    jail = Jail(workdir=str(tmp_path / "missing"))
    _, report = run_sandboxed(jail, dict)
    assert report["raised"] == SandboxError.__name__
    assert "check the work area" in report["message"]


def test_a_private_user_has_a_uid_of_its_own(tmp_path, make_jail, covered):
    """Kernels graded at the same time get different uids: no signals between them, and one
    student's processes do not count against another's process limit."""
    user = private_user()
    assert user != private_user()
    jail = make_jail(tmp_path, user=user)
    _, report = run_sandboxed(jail, lambda: {"ids": [os.getuid(), os.getgid()]})
    assert report == {"ids": [int(user[1:])] * 2}
    assert Path(jail.workdir).stat().st_uid == int(user[1:])  # the work area is its own
    covered(f"a private uid ({user}) per kernel")


def stand_in_accelerator(tmp_path) -> tuple[Path, Path]:
    """A dev folder with stand-ins for a GPU's nodes (the kernel's zero and null devices under
    nvidia0 and nvidiactl, so they work when reached), a node and a file that are not the
    accelerator's, and a driver folder with a libcuda link chain: (dev folder, driver folder)."""
    dev, driver = tmp_path / "dev", tmp_path / "driver"
    dev.mkdir(), driver.mkdir()
    os.mknod(dev / "nvidia0", 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    os.mknod(dev / "nvidiactl", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(dev / "sda", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a node, but not the GPU's
    for node in dev.iterdir():
        node.chmod(0o666)  # as the driver makes its nodes (mknod's mode went through the umask)
    (dev / "nvidia1").write_text("a file, not a device")
    (driver / "libcuda.so.999.1").write_text("the driver")
    (driver / "libcuda.so.1").symlink_to("libcuda.so.999.1")
    (driver / "libcudart.so.12").write_text("the toolkit's, which comes with torch")
    (tmp_path / "driver-link").symlink_to("driver")  # where the linker is told to look
    tmp_path.chmod(0o755)
    return dev, driver


def in_a_memory_group(limits: Limits):
    """A cgroup bounding memory to limits.memory_bytes, and a before() that joins it."""
    from classgrader.kernels import cgroup
    group = cgroup.MemoryLimit.create(limits.memory_bytes, "test")
    return group, lambda: group.add() or {}


def looks_at_dev(driver: Path):
    def inside():
        with open("/dev/nvidia0", "rb") as node:
            zeros = node.read(8)
        library = driver.parent / "driver-link" / "libcuda.so.1"
        return {"dev": sorted(os.listdir("/dev")), "reads": list(zeros),
                "writes": attempt(lambda: write("/dev/nvidiactl")),
                "library": library.read_text() if library.exists() else None,
                "link": os.readlink(library) if library.is_symlink() else None,
                "library write": attempt(lambda: write(driver / "libcuda.so.999.1")),
                "toolkit seen": (driver / "libcudart.so.12").exists(),
                "address space": resource.getrlimit(resource.RLIMIT_AS)[0]}
    return inside


def test_the_accelerators_devices_and_driver_and_nothing_else_of_dev(tmp_path, make_jail, monkeypatch, covered):
    from classgrader.kernels import accelerator
    dev, driver = stand_in_accelerator(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "driver-link"))
    devices, libraries = accelerator.device_nodes(str(dev)), accelerator.driver_libraries()
    assert devices == [str(dev / "nvidia0"), str(dev / "nvidiactl")]
    assert {str(tmp_path / "driver-link"), str(driver / "libcuda.so.1"),
            str(driver / "libcuda.so.999.1")} <= set(libraries)
    assert not any("libcudart" in path for path in libraries)
    with open(dev / "nvidia0", "rb") as node:
        assert node.read(4) == bytes(4)  # the stand-in works outside
    limits = Limits()
    jail = make_jail(tmp_path, limits=limits)
    jail = Jail(**{**jail.__dict__, "devices": tuple(devices), "libraries": tuple(libraries)})
    group, join = in_a_memory_group(limits)
    try:
        _, report = run_sandboxed(jail, looks_at_dev(driver), before=join)
    finally:
        group.close()
    assert report.get("dev") == sorted([*sandbox.DEVICES, "shm", "nvidia0", "nvidiactl"]), report
    assert report["reads"] == [0] * 8 and report["writes"] == "ok", report  # the nodes work
    assert (report["library"], report["link"]) == ("the driver", "libcuda.so.999.1"), report
    assert report["library write"] == "EROFS" and not report["toolkit seen"], report
    assert report["address space"] == resource.RLIM_INFINITY, report  # CUDA's reservations fit
    covered("a kernel bounded by a memory cgroup sees the stand-in GPU's nodes (working) and its driver's "
            "libcuda link chain (through a linked folder) read-only, "
            "nothing else of /dev but null/zero/full/random/urandom/shm, "
            "and has no address-space limit")


def test_without_a_memory_bound_the_accelerator_is_not_given(tmp_path, make_jail, covered):
    """A CUDA kernel cannot live under RLIMIT_AS, and memory must stay bounded: a kernel no
    cgroup bounds gets the address-space limit and none of the accelerator."""
    from classgrader.kernels import accelerator
    dev, driver = stand_in_accelerator(tmp_path)
    jail = make_jail(tmp_path)
    jail = Jail(**{**jail.__dict__, "devices": tuple(accelerator.device_nodes(str(dev))),
                   "libraries": (str(driver / "libcuda.so.1"), str(driver / "libcuda.so.999.1"))})
    _, report = run_sandboxed(jail, lambda: {"dev": sorted(os.listdir("/dev")),
                                             "library": (driver / "libcuda.so.1").exists(),
                                             "address space": resource.getrlimit(resource.RLIMIT_AS)[0]})
    # memory_bytes beyond what the forked kernel started with (about what this process has)
    beyond = report.pop("address space") - Limits().memory_bytes
    assert 0 < beyond < sandbox.address_space_in_use() + 2**30, beyond
    assert report == {"dev": sorted([*sandbox.DEVICES, "shm"]), "library": False}, report
    covered("a kernel no cgroup bounds gets RLIMIT_AS and no accelerator")


def test_this_machines_own_accelerator_is_what_a_default_jail_gives(tmp_path, make_jail):
    from classgrader.kernels import accelerator
    found, reason = accelerator.machine()
    group, join = in_a_memory_group(Limits())
    try:
        _, report = run_sandboxed(make_jail(tmp_path), lambda: {"dev": sorted(os.listdir("/dev"))}, before=join)
    finally:
        group.close()
    places = [accelerator.place_in_jail(path).removeprefix("/dev/").split("/")[0] for path in found.devices]
    assert report == {"dev": sorted({*sandbox.DEVICES, "shm", *places})}, (report, reason)


def test_the_address_space_limit_applies_only_without_an_accelerator_or_a_memory_bound():
    limit = sandbox.address_space_limit
    memory = Limits().memory_bytes
    assert limit(Limits(), bounded=True, accelerated=False, in_use=3 * 2**30) == memory + 3 * 2**30
    assert limit(Limits(), bounded=True, accelerated=False) == memory
    assert limit(Limits(), bounded=True, accelerated=True) == resource.RLIM_INFINITY
    assert limit(Limits(), bounded=False, accelerated=True) == memory
    assert limit(Limits(address_space=False), bounded=True, accelerated=False) == resource.RLIM_INFINITY
    assert limit(Limits(address_space=False), bounded=False, accelerated=False) == memory
    assert limit(Limits(address_space=True), bounded=True, accelerated=True) == memory
