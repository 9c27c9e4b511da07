"""Grading on a GPU: the class run initialises no CUDA before it forks its workers (a process
that has cannot fork children that use it), and each kernel given the GPU caps PyTorch's
allocator at its share of the GPU's memory when it starts CUDA itself."""
import json
import subprocess
import sys

import torch

from classgrader.kernels import kernel_zygote
from coursekit import ROOT, tool_env

# A fresh interpreter: torch with CUDA and one GPU, as far as device detection can tell, every
# way into the CUDA runtime recorded; then what a class run loads before it forks its workers.
SIMULATED_CLASS_RUN = """
import json, os, sys
import torch, torch.cuda as cuda
import torch._dynamo  # imported as built (CPU): its CUDA parts would look for kernels that are not there
calls = []
cuda._is_compiled = lambda: True
cuda._device_count_nvml = lambda: 1
torch._C._cuda_getDeviceCount = lambda: calls.append("cudaGetDeviceCount (initialises the driver)") or 1
cuda._lazy_init = lambda: calls.append("torch.cuda._lazy_init")
cuda.init = lambda: calls.append("torch.cuda.init")
from classgrader.class_run import classroom
for name in classroom.GRADING_STACK:
    __import__(name)
classroom.default_workers()
loaded = {"calls": list(calls), "initialized": cuda.is_initialized()}
torch.cuda.is_available()  # what a grader asking torch itself would do: shows the check sees it
print(json.dumps({"loaded": loaded, "asked": calls}))
"""


def test_the_class_run_initialises_no_cuda_before_forking_its_workers(covered):
    env = tool_env()
    env.pop("PYTORCH_NVML_BASED_CUDA_CHECK", None)
    done = subprocess.run([sys.executable, "-c", SIMULATED_CLASS_RUN], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["loaded"] == {"calls": [], "initialized": False}, report
    assert report["asked"], "torch.cuda.is_available() reached no CUDA runtime call: the check is blind"
    covered("a simulated one-GPU torch: everything a class run loads before forking its workers makes no "
            f"CUDA runtime call (a grader asking torch.cuda.is_available() itself makes {report['asked']})")


def test_a_kernel_given_the_gpu_caps_its_allocator_at_its_share_when_it_starts_cuda(monkeypatch):
    monkeypatch.setenv(kernel_zygote.KERNELS_AT_ONCE_ENV, "9")
    assert kernel_zygote.gpu_share() == (1 - kernel_zygote.GPU_RESERVE) / 9
    monkeypatch.setenv(kernel_zygote.GPU_SHARE_ENV, "0.1000")
    queued = len(torch.cuda._queued_calls)
    kernel_zygote.take_a_share_of_the_gpu()
    assert not torch.cuda.is_initialized()  # nothing started: the cap waits for the kernel's own first use
    assert len(torch.cuda._queued_calls) == queued + 1
    cap, _ = torch.cuda._queued_calls.pop()
    capped = []
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction",
                        lambda share, index: capped.append((share, index)))
    cap()  # as PyTorch's lazy CUDA start runs it
    assert capped == [(0.1, 0), (0.1, 1)]


def test_without_a_share_nothing_is_queued(monkeypatch):
    monkeypatch.delenv(kernel_zygote.GPU_SHARE_ENV, raising=False)
    queued = len(torch.cuda._queued_calls)
    kernel_zygote.take_a_share_of_the_gpu()
    assert len(torch.cuda._queued_calls) == queued
