"""autograder/memory_probe.py in this process: PeakMemory sees what a block held at once, not
what it allocated in all, and autograd's kept outputs are plain to see; within
measured_elsewhere it measures with the meter it is given instead."""
import time

import torch
import torch.nn.functional as F
from torch import nn

from autograder.memory_probe import OpenReading, PeakMemory, measured_elsewhere, resident_reading, status_bytes

MiB = 2**20


def test_what_a_block_held_at_once():
    with PeakMemory() as memory:
        block = torch.ones(64 * MiB // 4)
        del block
    assert 60 * MiB <= memory.grown < 80 * MiB
    with PeakMemory() as memory:
        for _ in range(8):  # 8 x 16 MiB one after the other: never more than one at once
            block = torch.ones(16 * MiB // 4)
            del block
    assert memory.grown < 32 * MiB


def test_an_evaluation_without_no_grad_holds_every_layers_output():
    deep = nn.Sequential(nn.Linear(4, 1024), *[nn.Tanh() for _ in range(8)], nn.Linear(1024, 3))
    x, y = torch.randn(2048, 4), torch.randint(0, 3, (2048,))
    layer_output = 2048 * 1024 * 4
    grown = {}
    for recording in (True, False, True, False):
        with torch.set_grad_enabled(recording), PeakMemory() as memory:
            F.cross_entropy(deep(x), y).item()
        grown[recording] = memory.grown
    assert grown[False] <= 3 * layer_output < 6 * layer_output <= grown[True], grown


class CountingMeter:
    """Another process's meter, as the grader's would be: here one whose readings are known."""
    started = 0

    def start(self):
        CountingMeter.started += 1

    def grown(self):
        return 12345


def test_measured_elsewhere_uses_the_meter_given():
    with measured_elsewhere(CountingMeter), PeakMemory() as memory:
        block = torch.ones(64 * MiB // 4)
        del block
    assert (memory.grown, CountingMeter.started) == (12345, 1)
    with PeakMemory() as memory:  # and after it, this process again
        pass
    assert memory.grown < 8 * MiB


class GoneMeter:
    """A meter of a process that ended during the block, as a kernel lost meanwhile."""

    def start(self):
        pass

    def grown(self):
        raise FileNotFoundError("its memory group is gone")


def test_the_blocks_own_error_is_never_replaced_by_one_of_measuring():
    import pytest
    with pytest.raises(KeyboardInterrupt), measured_elsewhere(GoneMeter), PeakMemory():
        raise KeyboardInterrupt  # stands for the grader's KernelLost, which must reach the grader
    with pytest.raises(FileNotFoundError), measured_elsewhere(GoneMeter), PeakMemory():
        pass  # without an error of its own, the failure to measure is the error


def test_spare_memory_let_go_as_the_block_starts_hides_no_growth(covered):
    """The route: 256 MiB held before the block and freed as it starts, then 96 MiB kept (a
    graph growing). Peak minus start reads nothing; the rise from the block's lowest point is
    the 96 MiB. The graph grows once the sampler has seen the low point, as a graph built over
    many steps does: how soon a thread samples depends on the machine's load, not the route."""
    from autograder.memory_probe import status_bytes
    spare = [torch.ones(256 * MiB // 4)]
    kept = []

    def call(sampled=lambda: None):
        spare.clear()
        sampled()
        kept.extend(torch.ones(16 * MiB // 4) for _ in range(6))
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    start = status_bytes("VmRSS")
    call()
    assert status_bytes("VmHWM") - start < 16 * MiB  # the route works on a peak-minus-start reading
    spare.append(torch.ones(256 * MiB // 4))
    kept.clear()

    def low_point_sampled():
        sampler, deadline = memory._meter.lowest, time.monotonic() + 60
        while sampler.lowest > status_bytes("VmRSS") + 8 * MiB and time.monotonic() < deadline:
            time.sleep(0.01)
    with PeakMemory() as memory:
        call(low_point_sampled)
    assert 88 * MiB <= memory.grown < 128 * MiB, memory.grown / MiB
    covered(f"PeakMemory: 256 MiB freed as the block starts, 96 MiB kept: grown {memory.grown / MiB:.0f} MiB")


def test_a_reading_kept_open_follows_the_file_and_the_process(tmp_path):
    """The sampler's readings: one descriptor, read from its start each time, sees what the file
    says now; a process's resident set read so is the one /proc/self/status gives."""
    usage = tmp_path / "memory.current"
    usage.write_text("100\n")
    reading = OpenReading(str(usage))
    assert reading() == 100
    usage.write_text("250\n")  # written in place, as a cgroup file changes under an open descriptor
    assert reading() == 250
    reading.close()
    resident = resident_reading()
    held = bytearray(64 * 2**20)
    held[::4096] = b"x" * len(held[::4096])  # touched: resident
    assert abs(resident() - status_bytes("VmRSS")) < 8 * 2**20 and resident() > 64 * 2**20
    resident.close()
