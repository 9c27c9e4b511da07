"""classgrader/kernels/kernel_memory.py on real processes: a grader reads, from outside, how much
more a process (and what it started) held at its busiest than when the measurement began, by
its memory cgroup or by /proc, and a real grading kernel says where to read it."""
import os
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.memory_probe import MemoryUnmeasured
from classgrader.kernels import cgroup, sandbox
from classgrader.kernels.kernel_memory import GroupV1, GroupV2, KernelMemory, ProcessTree
from coursekit import IN_CI

MiB = 2**20
# Holds N MiB for a moment each time it reads a line N, then frees it (holder() may run it in a child).
HOLDER = """
import sys
for line in sys.stdin:
    block = bytearray(int(line) * 2**20)  # zero-filled: every page touched, so resident
    del block
    print("done", flush=True)
"""


def holder(through_a_child: bool = False) -> subprocess.Popen:
    code = HOLDER if not through_a_child else (
        f"import subprocess, sys; subprocess.run([sys.executable, '-S', '-c', {HOLDER!r}])")
    return subprocess.Popen([sys.executable, "-S", "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)


def held_once(process: subprocess.Popen, meter: KernelMemory, mib: int) -> int:
    meter.start()
    process.stdin.write(f"{mib}\n")
    process.stdin.flush()
    assert process.stdout.readline() == "done\n"
    return meter.grown()


def ended(process: subprocess.Popen) -> None:
    process.stdin.close()
    process.wait(timeout=10)


def test_a_process_tree_shows_what_it_held_at_once_and_freed():
    process = holder()
    try:
        process.stdin.write("1\n"), process.stdin.flush(), process.stdout.readline()  # its interpreter warmed up
        meter = ProcessTree(process.pid)
        assert 90 * MiB <= held_once(process, meter, 100) < 120 * MiB
        assert held_once(process, meter, 1) < 8 * MiB  # freed: the next measurement starts from where it is
    finally:
        ended(process)


def test_a_process_tree_counts_what_the_process_started():
    process = holder(through_a_child=True)
    try:
        process.stdin.write("1\n"), process.stdin.flush(), process.stdout.readline()
        assert held_once(process, ProcessTree(process.pid), 100) >= 90 * MiB
    finally:
        ended(process)


@pytest.mark.skipif(cgroup.unavailable_reason() is not None and not IN_CI,
                    reason=f"{cgroup.unavailable_reason()}")
def test_a_memory_group_shows_what_its_processes_held_at_once():
    with cgroup.MemoryLimit.create(512 * MiB, "test") as group:
        process = holder()
        try:
            group.add(process.pid)
            process.stdin.write("1\n"), process.stdin.flush(), process.stdout.readline()
            meter = KernelMemory.of({"pid": process.pid, "memory": group.path})
            assert isinstance(meter, GroupV1 if group.controller.version == 1 else GroupV2)
            assert 90 * MiB <= held_once(process, meter, 100) < 130 * MiB
            assert held_once(process, meter, 1) < 8 * MiB
        finally:
            ended(process)


def test_without_a_process_nothing_is_measured():
    with pytest.raises(MemoryUnmeasured, match="not told which process"):
        KernelMemory.of({})
    with pytest.raises(MemoryUnmeasured, match="cannot be measured"):
        ProcessTree(2**22 + 7).start()  # above pid_max: no such process


@pytest.mark.skipif(sandbox.unavailable_reason() is not None and not IN_CI,
                    reason="needs a sandbox (root on Linux)")
def test_a_jailed_grading_kernel_is_measured_from_outside(tmp_path, covered):
    from classgrader.judging.work_area import jail_spec
    from classgrader.kernels.kernel_zygote import Zygote
    from classgrader.kernels.warm_kernel import ZYGOTE_ENV, WarmKernelManager
    zygote = Zygote()
    os.environ[ZYGOTE_ENV] = zygote.socket_path
    user = sandbox.private_user()
    area = sandbox.make_workarea(sandbox.Limits(), user)
    try:
        hold = nbformat.v4.new_code_cell("import torch\nblock = torch.ones(64 * 2**20 // 4)\ndel block")
        nb = nbformat.v4.new_notebook(cells=[hold])
        client = NotebookClient(nb, kernel_manager_class=WarmKernelManager, resources={"metadata": {"path": area}})
        client.km = WarmKernelManager(jail=jail_spec(area, user=user))
        with client.setup_kernel():
            process = client.km.kernel_process()
            meter = KernelMemory.of(process)
            meter.start()
            client.execute_cell(hold, 0)
            grown = meter.grown()
            by_processes = ProcessTree(process["pid"])  # as where the machine has no memory cgroup
            by_processes.start()
            client.execute_cell(hold, 0)
            grown_by_processes = by_processes.grown()
    finally:
        del os.environ[ZYGOTE_ENV]
        zygote.stop()
        sandbox.remove_workarea(area)
    assert process["pid"] > 0 and (process["memory"] is not None) == (cgroup.unavailable_reason() is None)
    assert 60 * MiB <= grown < 100 * MiB, grown
    assert 60 * MiB <= grown_by_processes < 100 * MiB, grown_by_processes  # the kernel is a process below the fork
    covered(f"a jailed kernel that held 64 MiB for a moment measured from outside: {grown / MiB:.0f} MiB "
            f"({type(meter).__name__}), {grown_by_processes / MiB:.0f} MiB (ProcessTree)")
