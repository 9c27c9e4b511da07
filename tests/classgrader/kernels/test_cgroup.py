"""classgrader/kernels/cgroup.py on the machine's real memory controller: a forked child allocates
past its group's limit and is killed by the kernel, where the same allocation succeeds
outside a group; groups are removed with whatever still runs in them."""
import os
import signal
import time

import pytest

from classgrader.kernels import cgroup
from coursekit import IN_CI

pytestmark = pytest.mark.skipif(cgroup.unavailable_reason() is not None and not IN_CI,
                                reason=f"{cgroup.unavailable_reason()}")
MiB = 2**20


def allocate_in_child(size: int, group: cgroup.MemoryLimit | None) -> int:
    """Fork a child that joins `group` (if any) and touches `size` bytes; its wait status."""
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_write)
            os.read(ready_read, 1)  # moved into the group before it allocates anything
            block = bytearray(size)  # zero-filled: every page is touched, so resident
            os._exit(0 if len(block) == size else 1)
        finally:
            os._exit(2)
    os.close(ready_read)
    if group is not None:
        group.add(pid)
    os.close(ready_write)
    return os.waitpid(pid, 0)[1]


def test_a_process_past_its_limit_is_killed_and_only_it(covered):
    assert os.waitstatus_to_exitcode(allocate_in_child(512 * MiB, None)) == 0  # fits outside a group
    with cgroup.MemoryLimit.create(128 * MiB, "test") as group:
        status = allocate_in_child(512 * MiB, group)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
        assert group.oom_kills() >= 1
        assert 100 * MiB < group.peak_bytes() <= 128 * MiB
        assert os.waitstatus_to_exitcode(allocate_in_child(32 * MiB, group)) == 0  # under it: fine
    assert not os.path.exists(group.path)
    covered(f"cgroup v{group.controller.version}: a child touching 512 MiB in a 128 MiB group is "
            "SIGKILLed by the OOM killer (the same child outside a group is not); 32 MiB fits")


def test_limit_memory_puts_a_process_in_a_group_and_close_ends_it():
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    try:
        group = cgroup.limit_memory(pid, 256 * MiB, "test")
        assert group.pids() == [pid]
        assert os.path.basename(group.path).startswith("course-test-")
        assert cgroup.limit_of(pid) == 256 * MiB
        assert cgroup.limit_of() != 256 * MiB  # the caller is not in it
        group.close()
        assert os.waitpid(pid, 0)[0] == pid and not os.path.exists(group.path)
        group.close()  # again: nothing left to do
    finally:
        if os.path.exists(f"/proc/{pid}"):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def test_the_caller_can_limit_itself_and_leave():
    with cgroup.limit_memory(0, 256 * MiB, "self") as group:
        assert group.pids() == [os.getpid()] and cgroup.limit_of() == 256 * MiB
        group.leave()
        assert group.pids() == []
    assert not os.path.exists(group.path)


def test_each_version_works_or_says_why_not():
    """The machine's own answer for v1 and v2 alike: a limit that holds, or a reason (no silent
    unlimited group); at least one of them works where the tests run."""
    working, reasons = [], []
    for version in (1, 2):
        try:
            with cgroup.MemoryLimit.create(64 * MiB, "probe", version) as group:
                assert group.controller.version == version
                working.append(version)
        except cgroup.CgroupUnavailable as error:
            reasons.append(str(error))
    assert all(reason.startswith("no memory controller") or "cannot" in reason for reason in reasons), reasons
    assert working


def test_a_limit_must_be_positive():
    with pytest.raises(ValueError, match="must be a positive number of bytes"):
        cgroup.MemoryLimit.create(0, "bad")


def test_on_v2_groups_go_beside_a_group_that_holds_the_caller(tmp_path):
    """cgroup v2 refuses a controller to the children of a group with processes, and the caller is
    in its own group: groups are made under its parent (which gives memory to its children),
    unless the group is the root or gives its children memory already. The choice reads only
    the group's cgroup.subtree_control, laid out here as the cgroup file system lays it out."""
    root = tmp_path / "cgroup"
    home = root / "process_api" / "8faa69ec"
    home.mkdir(parents=True)
    (root / "cgroup.subtree_control").write_text("cpu memory pids\n")
    (home / "cgroup.subtree_control").write_text("\n")
    assert cgroup.v2_parent(str(home), str(root)) == str(root / "process_api")
    assert cgroup.v2_parent(str(root), str(root)) == str(root)
    (home / "cgroup.subtree_control").write_text("memory\n")
    assert cgroup.v2_parent(str(home), str(root)) == str(home)
