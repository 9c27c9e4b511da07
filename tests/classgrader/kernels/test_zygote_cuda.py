"""The zygote never initialises CUDA: a process that has cannot fork children that use it, and
every grading kernel is a fork of the zygote. Each kernel initialises CUDA for itself."""
import json
import shutil
import subprocess
import sys

import pytest

from coursekit import ROOT, tool_env

# Run in a fresh interpreter: torch with CUDA compiled in and one GPU, as far as every question
# device detection asks can tell, and every way into the CUDA runtime recorded. Then the zygote's
# own preparation (its imports, its warm-up, the device detection every notebook starts with).
SIMULATED_GPU = """
import json, os, sys
import torch, torch.cuda as cuda
import torch._dynamo  # imported as built (CPU): its CUDA parts would look for kernels that are not there
calls = []
cuda._is_compiled = lambda: True                      # a CUDA build of torch
cuda._device_count_nvml = lambda: 1                   # NVML (no CUDA context) sees one GPU
torch._C._cuda_getDeviceCount = lambda: calls.append("cudaGetDeviceCount (initialises the driver)") or 1
cuda._lazy_init = lambda: calls.append("torch.cuda._lazy_init")
cuda.init = lambda: calls.append("torch.cuda.init")
if sys.argv[1] == "zygote":
    from classgrader.kernels import kernel_zygote
    kernel_zygote.prepare()
else:  # the same detection without the zygote's preparation: shows what the check would catch
    os.environ.pop("PYTORCH_NVML_BASED_CUDA_CHECK", None)
    import autograder
    autograder.grading_device()
import autograder
print(json.dumps({"calls": calls, "device": str(autograder.grading_device()),
                  "initialized": cuda.is_initialized()}))
"""


def simulated(mode: str) -> dict:
    env = tool_env()
    env.pop("PYTORCH_NVML_BASED_CUDA_CHECK", None)
    done = subprocess.run([sys.executable, "-c", SIMULATED_GPU, mode], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_zygote_warm_up_and_device_detection_never_touch_the_cuda_runtime(covered):
    zygote = simulated("zygote")
    assert zygote["device"] == "cuda", "device detection saw no GPU: the simulation did not take"
    assert zygote["calls"] == [] and not zygote["initialized"], zygote
    # The check can fail: plain detection, as a process that skipped prepare() would run it.
    plain = simulated("plain")
    assert plain["calls"], "plain device detection did not reach the CUDA runtime: the check is blind"
    covered("a simulated one-GPU torch: the zygote's imports, warm-up and device detection make "
            f"no CUDA runtime call; without its NVML setting detection makes {plain['calls']}")


@pytest.mark.cuda
def test_a_forked_kernel_uses_cuda_after_the_zygote_prepared():
    """On a real GPU: after prepare(), CUDA is still uninitialised, and a fork can use it."""
    code = """
import os, torch
from classgrader.kernels import kernel_zygote
kernel_zygote.prepare()
assert not torch.cuda.is_initialized(), "the zygote initialised CUDA"
pid = os.fork()
if pid == 0:
    x = torch.ones(1000, device="cuda")
    torch.cuda.set_per_process_memory_fraction(0.01)
    try:  # PyTorch's out-of-memory message asks NVML: it must start in the fork
        torch.empty(2 * torch.cuda.get_device_properties(0).total_memory // 100, dtype=torch.uint8, device="cuda")
        os._exit(2)
    except torch.OutOfMemoryError:
        pass
    os._exit(0 if float((x * 2).sum()) == 2000.0 else 1)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, f"a forked kernel could not use CUDA ({status})"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=tool_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


# A stand-in for the driver's NVML: counts its starts and ends, and sees one GPU.
FAKE_NVML = r"""
static int started = 0;
int nvmlInit_v2(void) { started++; return 0; }
int nvmlInit(void) { started++; return 0; }
int nvmlShutdown(void) { if (started == 0) return 1; started--; return 0; }
int nvmlDeviceGetCount_v2(unsigned *count) { *count = 1; return 0; }
int fake_started(void) { return started; }
"""
NVML_LEFT = """
import ctypes, json, torch.cuda
import torch._dynamo  # imported as built (CPU), before the build pretends to have CUDA
from classgrader.kernels import kernel_zygote
torch.cuda._is_compiled = lambda: True  # a CUDA build: device detection asks NVML how many GPUs
nvml, release = ctypes.CDLL("libnvidia-ml.so.1"), kernel_zygote.release_nvml
kernel_zygote.release_nvml = lambda: None
kernel_zygote.prepare()
kept = nvml.fake_started()  # what prepare() would leave without ending NVML
release()
print(json.dumps({"kept": kept, "ended": nvml.fake_started()}))
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="builds a stand-in NVML with gcc")
def test_the_zygote_forks_with_nvml_ended(tmp_path):
    """PyTorch's NVML-based device check starts NVML and never ends it; a kernel forked with it
    started cannot start it again, and PyTorch asks NVML for every CUDA out-of-memory message
    (the student would get an internal assertion on a real GPU). So prepare() ends it."""
    source = tmp_path / "nvml.c"
    source.write_text(FAKE_NVML)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(tmp_path / "libnvidia-ml.so.1"), str(source)], check=True)
    env = {**tool_env(), "LD_LIBRARY_PATH": str(tmp_path), "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}
    done = subprocess.run([sys.executable, "-c", NVML_LEFT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    left = json.loads(done.stdout.strip().splitlines()[-1])
    assert left["kept"] > 0 and left["ended"] == 0, left
