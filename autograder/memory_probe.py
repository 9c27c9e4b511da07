"""PeakMemory: how much more memory a block held at its busiest than when it began.

What autograd keeps for a backward pass (every layer's output, until the graph goes) is memory:
evaluating a deep model without no_grad holds all its layers' outputs at once, with no_grad
about two. That difference is a fact about a process that can be read from outside it, so when
the grader checks a test again in its own process (classgrader's judge), the same block is
measured on the student's kernel from outside (`measured_elsewhere`), not by the kernel itself.

    with PeakMemory() as memory:
        evaluate(model, loader, loss_fn)
    memory.grown   # bytes: the most held at once during the block, less what was held before it

Measured here, it is this process's peak resident memory (Linux /proc); where there is no /proc
it raises MemoryUnmeasured, so a check built on it fails rather than passes.
"""
import contextlib
import ctypes
import sys

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


class _OwnProcess:
    """This process's resident memory: its peak reset to now (clear_refs 5), then read back.
    A process that may not reset its own peak (a jailed grading kernel, which runs as another
    user than its /proc files) sees only growth that raised its peak for good: never more than
    was held, and there the grader's own measurement from outside is the one that counts."""

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

    def grown(self) -> int:
        peak = status_bytes("VmHWM")
        return max(0, peak - self.before) if self.reset or peak > self.peak_before else 0


def status_bytes(field: str, pid: int | str = "self") -> int:
    """A size /proc/PID/status gives in kB (VmRSS, VmHWM), in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise MemoryUnmeasured(f"/proc/{pid}/status has no {field}")


_elsewhere = []  # how the grader measures the student's kernel, while it checks a test there


@contextlib.contextmanager
def measured_elsewhere(new_meter):
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
