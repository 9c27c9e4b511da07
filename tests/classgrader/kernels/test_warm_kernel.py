"""Warm kernels (kernel_zygote + kernel_relay + warm_kernel): each notebook gets a fresh fork of
a pre-imported zygote, so nothing one student's kernel does is seen by the next, and a kernel
that dies leaves the zygote serving."""
import gc
import os
import resource
import time

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

from classgrader.judging.work_area import jail_spec
from classgrader.kernels import cgroup, sandbox
from classgrader.kernels.kernel_zygote import Zygote
from classgrader.kernels.warm_kernel import ZYGOTE_ENV, WarmKernelManager
from coursekit import IN_CI

LEAVE_STATE = """
import os, torch
torch.left_behind = "state"
os.environ["LEFT_BEHIND"] = "state"
open("/tmp/left_behind.txt", "w").write("state")
print(os.getpid())
"""
LOOK_FOR_STATE = """
import os, torch
print(hasattr(torch, "left_behind"), "LEFT_BEHIND" in os.environ, os.path.exists("/tmp/left_behind.txt"), os.getpid())
"""


@pytest.fixture(scope="module")
def zygote():
    started = Zygote()
    os.environ[ZYGOTE_ENV] = started.socket_path
    yield started
    del os.environ[ZYGOTE_ENV]
    started.stop()


def run(code: str, workdir, jail=None) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    client = NotebookClient(nb, kernel_manager_class=WarmKernelManager, resources={"metadata": {"path": str(workdir)}})
    client.km = WarmKernelManager(jail=jail)
    client.execute()
    return "".join(o.get("text", "") for o in nb.cells[0].outputs)


@pytest.mark.skipif(sandbox.unavailable_reason() is not None and not IN_CI,
                    reason="needs a sandbox (root on Linux)")
def test_nothing_passes_from_one_student_to_the_next(zygote, covered):
    users = [sandbox.private_user(), sandbox.private_user()]
    first, second = (sandbox.make_workarea(sandbox.Limits(), user) for user in users)
    try:
        pid = run(LEAVE_STATE, first, jail_spec(first, user=users[0])).strip()
        seen = run(LOOK_FOR_STATE, second, jail_spec(second, user=users[1])).split()
    finally:
        sandbox.remove_workarea(first), sandbox.remove_workarea(second)
    assert seen[:3] == ["False", "False", "False"], "the second kernel saw what the first left behind"
    assert (pid, seen[3]) == ("2", "2")  # each the kernel of a PID namespace of its own
    covered("a module attribute, an environment variable and a /tmp file left by one kernel are unseen by the next")


def test_a_dead_kernel_leaves_the_zygote_serving(zygote, tmp_path):
    with pytest.raises(DeadKernelError):
        run("import os; os._exit(3)", tmp_path)
    assert run("print(6 * 7)", tmp_path).strip() == "42"
    assert zygote.process.poll() is None


def test_a_manager_collected_without_a_shutdown_leaves_no_file_of_its_kernel(tmp_path):
    """jupyter_client removes the connection file of a manager it collects that was never shut
    down; the relay's word on the kernel, beside it, goes with it."""
    km = WarmKernelManager(connection_file=str(tmp_path / "kernel.json"))
    km.write_connection_file()
    (tmp_path / "kernel.json.kernel").write_text('{"pid": 1, "memory": null}')  # as the relay leaves it
    del km
    gc.collect()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


class _Channel:
    """A channel whose messages arrive as scripted: each get_msg returns the next one, or
    raises Empty (nothing within the wait)."""

    def __init__(self, script):
        self.script, self.waits = script, []

    async def get_msg(self, timeout=None):
        from queue import Empty
        self.waits.append(timeout)
        item = self.script.pop(0)(self) if self.script else None
        if item is None:
            raise Empty
        return item


def test_an_idle_lost_to_a_late_subscription_costs_one_more_question_not_a_wait():
    """ZeroMQ drops what a kernel publishes before the client's IOPub subscription joins: the
    first kernel_info's "idle" never arrives. The client asks again at once and takes the
    "idle" of either question (here the first one's, arriving late)."""
    import asyncio

    from classgrader.kernels.warm_kernel import WarmKernelClient
    client = WarmKernelClient()
    asked = []
    client.kernel_info = lambda: asked.append(f"m{len(asked)}") or asked[-1]
    client._handle_kernel_info_reply = lambda reply: None

    def reply(channel):
        return {"parent_header": {"msg_id": asked[-1]}, "msg_type": "kernel_info_reply", "content": {}}

    def late_idle(channel):
        return {"parent_header": {"msg_id": "m0"}, "msg_type": "status", "content": {"execution_state": "idle"}}
    client._shell_channel, client._iopub_channel = _Channel([reply, reply]), _Channel([lambda c: None, late_idle])
    asyncio.run(client.wait_for_ready(timeout=5))
    assert asked == ["m0", "m1"]
    assert max(client.iopub_channel.waits) <= 0.05  # never the 0.2 s jupyter_client waits there


def memory_groups() -> set[str]:
    """The kernels' memory cgroups that exist now (the zygote makes them beside this process's)."""
    from classgrader.kernels import cgroup
    parent = cgroup.find().parent
    return {name for name in os.listdir(parent) if name.startswith(cgroup.PREFIX + "kernel-")}


GROUP_AND_PEAK = """
import os
import time
print(open("/proc/self/cgroup").read().count("course-kernel-"), os.environ.get("COURSE_GPU_MEMORY_FRACTION"))
"""


@pytest.mark.skipif((sandbox.unavailable_reason() is not None or cgroup.unavailable_reason() is not None)
                    and not IN_CI, reason="needs a sandbox and a memory cgroup (root on Linux)")
def test_a_kernel_past_its_memory_cgroup_is_stopped_and_the_next_student_is_graded(zygote, covered):
    """No address-space limit (as for a kernel given a GPU): only the kernel's memory cgroup
    stops it. 1.5 GiB fits outside; the kernel under 1 GiB is killed, the zygote serves on."""
    assert len(bytearray(3 * 2**29)) == 3 * 2**29  # the allocation works outside
    limits = {"memory_bytes": 2**30, "address_space": False}
    before = memory_groups()
    users = [sandbox.private_user(), sandbox.private_user()]
    first, second = (sandbox.make_workarea(sandbox.Limits(**limits), user) for user in users)
    try:
        assert run(GROUP_AND_PEAK, first, jail_spec(first, limits, users[0])).split() == ["1", "None"]
        with pytest.raises(DeadKernelError):
            run("block = bytearray(3 * 2**29)", first, jail_spec(first, limits, users[0]))
        assert run("print(6 * 7)", second, jail_spec(second, limits, users[1])).strip() == "42"
    finally:
        sandbox.remove_workarea(first), sandbox.remove_workarea(second)
    assert zygote.process.poll() is None
    deadline = time.monotonic() + 5
    while memory_groups() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert memory_groups() - before == set(), "a kernel's memory cgroup outlived it"
    covered("a jailed kernel without an address-space limit, in its 1 GiB memory cgroup, dies touching "
            "1.5 GiB (which fits outside); the next kernel runs; every kernel's cgroup is removed")


@pytest.mark.skipif(sandbox.unavailable_reason() is not None and not IN_CI,
                    reason="needs a sandbox (root on Linux)")
def test_the_grader_expects_the_device_a_sandboxed_kernel_reports(zygote, covered):
    from classgrader.judging import graded_device
    user = sandbox.private_user()
    area = sandbox.make_workarea(sandbox.Limits(), user)
    try:
        jail = jail_spec(area, user=user)
        printed = run("import autograder\nautograder.start_grading()", area, jail)
    finally:
        sandbox.remove_workarea(area)
    line = next(line for line in printed.splitlines() if line.startswith(graded_device.MARKER))
    assert line.removeprefix(graded_device.MARKER) == graded_device.expected(jail)
    covered(f"a sandboxed kernel reports '{line}', as the grader expected")


@pytest.mark.cuda
def test_a_sandboxed_kernel_computes_on_the_gpu_within_its_share(zygote):
    """On a real GPU: a jailed kernel, forked from the zygote, sees the GPU, has no address-space
    limit, and PyTorch refuses it more than its share of the GPU's memory."""
    user = sandbox.private_user()
    area = sandbox.make_workarea(sandbox.Limits(), user)
    code = """
import os, resource, torch
share = float(os.environ["COURSE_GPU_MEMORY_FRACTION"])
x = torch.ones(1000, device="cuda")
try:
    torch.empty(int(share * torch.cuda.get_device_properties(0).total_memory * 1.05), dtype=torch.uint8, device="cuda")
    held = False
except torch.OutOfMemoryError:
    held = True
print(float((x * 2).sum()), resource.getrlimit(resource.RLIMIT_AS)[0], held)
"""
    try:
        printed = run(code, area, jail_spec(area, user=user)).split()
    finally:
        sandbox.remove_workarea(area)
    assert printed == ["2000.0", str(resource.RLIM_INFINITY), "True"], printed


def test_the_relays_word_on_the_kernel_is_taken_only_as_a_kernel_started(tmp_path):
    km = WarmKernelManager(connection_file=str(tmp_path / "kernel.json"))
    facts = tmp_path / "kernel.json.kernel"
    assert km.kernel_process() == {}  # not forked yet
    facts.write_text('{"pid": 41, "memory": null}')
    assert km.kernel_process() == {"pid": 41, "memory": None}
    for forged in ('{"pid": "41", "memory": null}', '{"pid": 41}', "[41]", "not json"):
        facts.write_text(forged)
        assert km.kernel_process() == {}, forged
