"""Tests for autograder/warm_up.py: the process it warms is left as a student's code expects it
(recording on, no dispatch mode active, no gradient left on anything it can reach), with the one
intra-op thread that makes forking it safe. Run in a fresh interpreter: the thread count is the
process's own."""
import json
import subprocess
import sys

from coursekit import ROOT

SCRIPT = """
import json, torch
from torch.utils._python_dispatch import _get_current_dispatch_mode
from autograder.warm_up import exercise_torch
exercise_torch()
x = torch.ones(2, requires_grad=True)
print(json.dumps({"threads": torch.get_num_threads(), "grad_enabled": torch.is_grad_enabled(),
                  "mode": repr(_get_current_dispatch_mode()), "records": (x * 2).grad_fn is not None,
                  "default_dtype": str(torch.get_default_dtype())}))
"""


def test_the_warmed_process_is_left_as_student_code_expects():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state == {"threads": 1, "grad_enabled": True, "mode": "None", "records": True,
                     "default_dtype": "torch.float32"}


BACKWARD_RUNS = """
import json, torch
from autograder import warm_up
calls = []
original = torch.autograd.backward
torch.autograd.backward = lambda *args, **kwargs: (calls.append(1), original(*args, **kwargs))[1]
torch.backends.cuda.is_built = lambda: {built}
warm_up.exercise_torch()
print(json.dumps(len(calls)))
"""


def test_a_build_with_cuda_is_warmed_without_a_backward():
    """The first backward starts autograd's device threads, which on a CUDA build initialise the
    driver (cudaGetDeviceCount), and children forked after that cannot use the GPU ('CUDA error:
    initialization error', as a lent H200 showed): where CUDA is compiled in, no backward."""
    runs = {}
    for built in (True, False):
        done = subprocess.run([sys.executable, "-c", BACKWARD_RUNS.format(built=built)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        runs[built] = json.loads(done.stdout.strip().splitlines()[-1])
    mps_built = torch_mps_built()
    assert runs[True] == 0 and runs[False] == (0 if mps_built else 1), runs


def torch_mps_built() -> bool:
    done = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.mps.is_built())"],
                          capture_output=True, text=True, timeout=300)
    return done.stdout.strip() == "True"
