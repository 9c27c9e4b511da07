"""PeakMemory: how much more memory a block held at its busiest than at its lowest before that.

What autograd keeps for a backward pass (every layer's output, until the graph goes) is memory:
evaluating a deep model without no_grad holds all its layers' outputs at once, with no_grad
about two. That difference is a fact about a process that can be read from outside it, so when
the grader checks a test again in its own process (classgrader's judge), the same block is
measured on the student's kernel from outside (`measured_elsewhere`), not by the kernel itself.

    with PeakMemory() as memory:
        evaluate(model, loader, loss_fn)
    memory.grown   # bytes: the most held at once during the block, less the least held before that

The rise is counted from the lowest point of the block, not from where it began: memory held
before the call and let go as it starts (spare memory freed while the graph grows) would hide
growth from a peak-minus-start reading. A thread samples the usage throughout (LowestPoint);
the exact peak since the start counts too, so a short spike is not missed between samples.
Measured here, it is this process's resident memory (Linux /proc); where there is no /proc it
raises MemoryUnmeasured, so a check built on it fails rather than passes.
"""
import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE = 128 * 1024  # bytes: blocks this large are mapped fresh and returned on free


class MemoryUnmeasured(RuntimeError):
    """This process's memory cannot be measured here; the message says why."""


def _map_large_blocks_fresh() -> None:
    """glibc hands freed large blocks back to later allocations of a similar size unless the
    threshold for mapping is fixed: then resident memory rises with what is live and falls when
    it is freed, so a peak measures what was held at once, not what the allocator had cached.
    Elsewhere (macOS, musl) nothing is changed and nothing is measured."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, LARGE)


_map_large_blocks_fresh()


class OpenReading:
    """A number a file gives (a cgroup's usage, a process's statm), read again and again from one
    descriptor kept open: a sample every few milliseconds then costs a read, not an open, a read
    and a close, so the sampler takes little from a busy machine. `field`: which of the file's
    words; `scale`: what one unit of it is, in bytes."""

    def __init__(self, path: str, field: int = 0, scale: int = 1):
        self.fd: int | None = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        self.field, self.scale = field, scale

    def __call__(self) -> int:
        if self.fd is None:
            raise ValueError("the reading was closed")
        return int(os.pread(self.fd, 256, 0).split()[self.field]) * self.scale

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def resident_reading(pid: int | str = "self") -> OpenReading:
    """Bytes a process holds in memory now (its resident set, as /proc/PID/status's VmRSS)."""
    return OpenReading(f"/proc/{pid}/statm", field=1, scale=os.sysconf("SC_PAGE_SIZE"))


class LowestPoint:
    """A reading (bytes held now) sampled in a thread of its own until stop(): the largest rise
    of it above the lowest value sampled before. What a block keeps alive stays held while it
    runs, so sampling every few milliseconds sees it; a shorter spike is the exact peak's."""

    INTERVAL = 0.005  # seconds between samples: a kept graph is held far longer; fewer GIL hand-overs
    LONGEST = 900  # seconds: a sampler never stopped (its meter's grown() replaced) ends by itself

    def __init__(self, read):
        self._read, self._stop = read, threading.Event()
        self.lowest, self.rise = read(), 0
        self._thread = threading.Thread(target=self._run, name="memory-lowest-point", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        now = self._read()
        self.lowest = min(self.lowest, now)
        self.rise = max(self.rise, now - self.lowest)

    def _run(self) -> None:
        for _ in range(int(self.LONGEST / self.INTERVAL)):
            if self._stop.wait(self.INTERVAL):
                return
            with contextlib.suppress(OSError, ValueError, MemoryUnmeasured):
                self._sample()

    def stop(self) -> int:
        """Stops sampling; the largest rise above the lowest point, in bytes."""
        self._stop.set()
        self._thread.join()
        with contextlib.suppress(OSError, ValueError, MemoryUnmeasured):
            self._sample()
        with contextlib.suppress(OSError):
            getattr(self._read, "close", lambda: None)()  # an OpenReading's descriptor
        return self.rise


class _OwnProcess:
    """This process's resident memory: its peak reset to now (clear_refs 5), then read back,
    and its lowest point sampled meanwhile (LowestPoint). A process that may not reset its own
    peak (a jailed grading kernel, which runs as another user than its /proc files) counts only
    growth that raised its peak for good, or that its samples saw: never more than was held,
    and there the grader's own measurement from outside is the one that counts."""

    def start(self) -> None:
        self.reset = True
        try:
            with open("/proc/self/clear_refs", "w") as clear:
                clear.write("5")
        except PermissionError:
            self.reset = False
        except OSError as error:
            raise MemoryUnmeasured(f"this process's peak memory cannot be read here ({error.strerror})") from None
        try:
            self.before, self.peak_before = status_bytes("VmRSS"), status_bytes("VmHWM")
        except OSError as error:
            raise MemoryUnmeasured(f"this process's memory cannot be read here ({error.strerror})") from None
        try:
            self.lowest = LowestPoint(resident_reading())
        except OSError as error:
            raise MemoryUnmeasured(f"this process's memory cannot be read here ({error.strerror})") from None

    def grown(self) -> int:
        rise = self.lowest.stop()
        peak = status_bytes("VmHWM")
        from_start = max(0, peak - self.before) if self.reset or peak > self.peak_before else 0
        return max(from_start, rise)


def status_bytes(field: str, pid: int | str = "self") -> int:
    """A size /proc/PID/status gives in kB (VmRSS, VmHWM), in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise MemoryUnmeasured(f"/proc/{pid}/status has no {field}")


class Meter(Protocol):
    """What PeakMemory measures a block with: start() as it begins, grown() (bytes) as it ends."""

    def start(self) -> None: ...

    def grown(self) -> int: ...


_elsewhere: list[Callable[[], Meter]] = []  # how the grader measures the student's kernel, while it checks a test there


@contextlib.contextmanager
def measured_elsewhere(new_meter: Callable[[], Meter]) -> Iterator[None]:
    """Within this block PeakMemory measures with new_meter() (an object with start() and
    grown()), another process's memory read from outside it, instead of this process's own."""
    _elsewhere.append(new_meter)
    try:
        yield
    finally:
        _elsewhere.remove(new_meter)


class PeakMemory:
    """with PeakMemory() as memory: ...; memory.grown is the most the block held at once, in
    bytes, beyond what was held when it began."""

    def __enter__(self):
        self.grown = None
        self._meter = (_elsewhere[-1] if _elsewhere else _OwnProcess)()
        self._meter.start()
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None:
            self.grown = self._meter.grown()
        else:  # the block's own error goes on, never one of measuring (a kernel lost meanwhile)
            with contextlib.suppress(Exception):
                self.grown = self._meter.grown()
        return False
