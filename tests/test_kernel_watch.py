"""kernel_watch: a child taking a sandbox's private uid is heard; an ordinary child, or another
family's process, is not. What a watched kernel leaves running or mounted is found by its uid,
and another family's kernel is not counted with it."""
import os
import signal
import subprocess
import sys
import time

import pytest

from classgrader.kernels import sandbox
from coursekit import IN_CI, live_processes, work_area_mounts
from kernel_watch import PRIVATE_UIDS, KernelWatch

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root starts a process as another uid")
# CI runs as root, so there a missing sandbox is a failure, not a reason to skip.
needs_sandbox = pytest.mark.skipif(sandbox.unavailable_reason() is not None and not IN_CI,
                                   reason=f"{sandbox.unavailable_reason()}")


@needs_root
def test_a_private_uid_child_is_heard():
    with KernelWatch() as watch:
        subprocess.run(["sleep", "0.1"], user=250_000, group=250_000, check=True)
    assert (watch.listening, watch.uids) == (True, {250_000})


def test_an_ordinary_child_is_not_heard():
    with KernelWatch() as watch:
        subprocess.run(["sleep", "0.3"], check=True)
    assert watch.uids == set()


@needs_root
def test_a_private_uid_process_of_another_family_is_not_heard():
    """Started by a process that is gone: the machine's init adopts it, as another file's kernel."""
    with KernelWatch() as watch:
        subprocess.run([sys.executable, "-c", ADOPTED_THEN_PRIVATE], check=True)
        deadline = time.monotonic() + 60  # a bound against a hang, however busy the machine
        while not live_processes(lambda uid: uid == 250_001) and time.monotonic() < deadline:
            time.sleep(0.05)  # until it has taken the uid, heard or not
    assert (watch.listening, watch.uids) == (True, set())


# A process whose parent ends at once; only once the machine's init has adopted it (its parent
# gone, whatever the load) does it take a private uid: so it is another family's when it does.
ADOPTED_THEN_PRIVATE = """
import os, time
middle = os.getpid()
if os.fork():
    os._exit(0)
os.setsid()
while os.getppid() == middle:
    time.sleep(0.01)
os.setgroups([]); os.setgid(250_001); os.setuid(250_001)
time.sleep(2)
"""


def start_sandboxed_kernel_with_a_daemon(user: str) -> int:
    """Fork a process that enters a real sandbox as `user`, leaves a double-forked setsid process
    behind, as the hostile class's c46 does, and keeps running (a kernel that never ended).
    Returns the pid of its stand-in outside the sandbox: killing it ends the sandbox."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            signal.alarm(30)  # the stand-in's end ends the sandbox: never outlive a broken test
            sandbox.private_mounts()  # the work area vanishes with the sandbox, as in a class run
            jail = sandbox.Jail(workdir=sandbox.make_workarea(sandbox.Limits(), user),
                                expose=(sys.prefix, sys.base_prefix, "/usr"), user=user)
            sandbox.prepare(jail)
            sandbox.enter(jail)
            middle = os.fork()
            if middle == 0:
                os.setsid()
                if os.fork() == 0:
                    while True:
                        time.sleep(0.2)
                os._exit(0)
            os.waitpid(middle, 0)  # gone: the daemon's parent is the sandbox's PID 1 now
            os.write(write_end, b"up")
            while True:
                time.sleep(0.2)
        finally:
            os._exit(1)  # never back into the test runner
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        assert pipe.read(2) == b"up", "the sandboxed kernel did not start"
    return pid


def processes_of(uids) -> list[int]:
    return sorted(pid for pid, _ in live_processes(uids.__contains__))


def wait_for(condition, seconds: float = 10):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


@needs_root
@needs_sandbox
def test_a_watched_kernels_leftovers_are_found_by_its_uid_and_another_familys_are_not(covered):
    """The hostile class's check in small: a process the watched family's kernel leaves running
    is found; a private-uid process of another family (another file's kernel) is there too,
    seen machine-wide, and not counted."""
    user, other = sandbox.private_user(), sandbox.private_user()
    uid, other_uid = int(user[1:]), int(other[1:])
    subprocess.run(["setsid", "-f", "setpriv", f"--reuid={other_uid}", f"--regid={other_uid}", "--clear-groups",
                    "sleep", "20"], check=True)
    wait_for(lambda: processes_of({other_uid}))  # setsid -f returns before its child drops to the uid
    with KernelWatch() as watch:
        stand_in = start_sandboxed_kernel_with_a_daemon(user)
    try:
        assert watch.uids == {uid}
        left = processes_of(watch.uids)
        assert len(left) == 2, f"the kernel and its daemon, as {uid}: {left}"
        assert processes_of({other_uid}) and not set(processes_of({other_uid})) & set(left)
        assert set(left) < {pid for pid, _ in live_processes(PRIVATE_UIDS.__contains__)}
    finally:
        os.kill(stand_in, signal.SIGKILL)
        os.waitpid(stand_in, 0)
        for pid in processes_of({other_uid}):
            os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not processes_of(watch.uids))
    assert processes_of(watch.uids) == [], "the daemon outlived its sandbox"
    covered("a watched kernel's leftover process is found by its uid, another family's kernel is not counted")


@needs_root
@needs_sandbox
def test_work_areas_are_counted_by_their_kernels_uid():
    """Mounted here, as a class run that forgot its private mount namespace would leave them."""
    user, other = sandbox.private_user(), sandbox.private_user()
    ours = sandbox.make_workarea(sandbox.Limits(), user)
    try:
        theirs = sandbox.make_workarea(sandbox.Limits(), other)
        try:
            assert work_area_mounts({int(user[1:])}.__contains__) == {ours}
            assert theirs in work_area_mounts(PRIVATE_UIDS.__contains__)
        finally:
            sandbox.remove_workarea(theirs)
    finally:
        sandbox.remove_workarea(ours)
    assert work_area_mounts({int(user[1:])}.__contains__) == set()
