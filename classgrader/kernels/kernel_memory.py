"""A grading kernel's memory, read by the grader from outside the kernel: what the kernel
holds at once cannot be reported lower by code in it (autograder.memory_probe says why a test
wants it).

The kernel's own memory cgroup is read where it has one (kernel_zygote makes it): its peak is
reset to its usage when a measurement starts. Without one, its processes' peak resident memory
is (/proc, clear_refs). Both are files of root's that no kernel can reach: a jail shows no cgroup
file system, and only root may reset another user's peak. Either way the usage is sampled too
(memory_probe.LowestPoint), and the rise above the call's lowest point counts: memory let go as
the call starts hides no growth.

    meter = KernelMemory.of({"pid": 1234, "memory": "/sys/fs/cgroup/.../course-kernel-ab12cd34"})
    meter.start(); ...; meter.grown()   # bytes
"""
import contextlib
import os

from autograder.memory_probe import LowestPoint, MemoryUnmeasured, OpenReading, status_bytes


class KernelMemory:
    def start(self) -> None:
        raise NotImplementedError

    def grown(self) -> int:
        raise NotImplementedError

    @staticmethod
    def of(process: dict) -> "KernelMemory":
        """The meter for the kernel a zygote reported (kernel_zygote: its pid, its memory group)."""
        if process.get("memory"):
            group = process["memory"]
            if os.path.exists(os.path.join(group, "memory.max_usage_in_bytes")):
                return GroupV1(group)
            if os.path.exists(os.path.join(group, "memory.peak")):
                return GroupV2(group)
        if process.get("pid"):
            return ProcessTree(int(process["pid"]))
        raise MemoryUnmeasured("the grader was not told which process the kernel is")


def _read_int(path: str) -> int:
    with open(path) as handle:
        return int(handle.read().split()[0])


class GroupV1(KernelMemory):
    """cgroup v1: writing 0 to memory.max_usage_in_bytes sets the peak to the usage now."""

    def __init__(self, group: str):
        self.group = group

    def start(self) -> None:
        try:
            with open(os.path.join(self.group, "memory.max_usage_in_bytes"), "w") as peak:
                peak.write("0")
            self.before = _read_int(os.path.join(self.group, "memory.usage_in_bytes"))
            self.lowest = LowestPoint(OpenReading(os.path.join(self.group, "memory.usage_in_bytes")))
        except OSError as error:
            raise MemoryUnmeasured(f"the kernel's memory group cannot be read ({error.strerror})") from None

    def grown(self) -> int:
        rise = self.lowest.stop()
        return max(rise, _read_int(os.path.join(self.group, "memory.max_usage_in_bytes")) - self.before)


class GroupV2(KernelMemory):
    """cgroup v2: a write to memory.peak resets the peak seen through that open file (Linux 6.12
    and later); where it cannot, the kernel's processes are measured instead."""

    def __init__(self, group: str):
        self.group = group
        self.peak: int | None = None  # the open memory.peak, whose reads see the peak since its reset
        self.fallback: ProcessTree | None = None

    def start(self) -> None:
        self.close()
        try:
            self.peak = os.open(os.path.join(self.group, "memory.peak"), os.O_RDWR | os.O_CLOEXEC)
            os.write(self.peak, b"reset\n")  # resets the peak this descriptor reads
            self.before = _read_int(os.path.join(self.group, "memory.current"))
            self.lowest = LowestPoint(OpenReading(os.path.join(self.group, "memory.current")))
        except OSError:
            self.close()
            pids = _read_ints(os.path.join(self.group, "cgroup.procs"))
            if not pids:
                raise MemoryUnmeasured("the kernel's memory group holds no process") from None
            self.fallback = ProcessTree(min(pids))
            self.fallback.start()

    def grown(self) -> int:
        if self.fallback is not None:
            return self.fallback.grown()
        rise = self.lowest.stop()
        if self.peak is None:
            raise RuntimeError("the kernel's memory group was read without a start() before it")
        peak = int(os.pread(self.peak, 64, 0).split()[0])
        self.close()
        return max(rise, peak - self.before)

    def close(self) -> None:
        if self.peak is not None:
            with contextlib.suppress(OSError):
                os.close(self.peak)
            self.peak = None


def _read_ints(path: str) -> list[int]:
    try:
        with open(path) as handle:
            return [int(word) for word in handle.read().split()]
    except (OSError, ValueError):
        return []


class ProcessTree(KernelMemory):
    """The kernel process `pid` and every process under it (a jailed kernel runs under a
    reaper, a fork below the one the zygote made): each one's peak reset, then the peaks summed."""

    def __init__(self, pid: int):
        self.pid = pid

    def _tree(self) -> list[int]:
        found, waiting = [], [self.pid]
        while waiting:
            pid = waiting.pop()
            found.append(pid)
            for task in _listing(f"/proc/{pid}/task"):
                waiting += _read_ints(f"/proc/{pid}/task/{task}/children")
        return found

    def start(self) -> None:
        self.before = {}
        for pid in self._tree():
            with contextlib.suppress(OSError, MemoryUnmeasured):
                with open(f"/proc/{pid}/clear_refs", "w") as clear:
                    clear.write("5")
                self.before[pid] = status_bytes("VmRSS", pid)
        if self.pid not in self.before:
            raise MemoryUnmeasured(f"the kernel's process {self.pid} cannot be measured")
        self.lowest = LowestPoint(self._held)

    def _held(self) -> int:
        total = 0
        for pid in self._tree():
            with contextlib.suppress(OSError, MemoryUnmeasured):
                total += status_bytes("VmRSS", pid)
        return total

    def grown(self) -> int:
        rise = self.lowest.stop()
        total = 0
        for pid in self._tree():
            with contextlib.suppress(OSError, MemoryUnmeasured):
                total += status_bytes("VmHWM", pid) - self.before.get(pid, 0)
        return max(0, total, rise)


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []
