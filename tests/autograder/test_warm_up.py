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


# One fresh interpreter: the warm-up on a build pretending to have CUDA compiled in, then as built.
BACKWARD_RUNS = """
import json, torch
from autograder import warm_up
calls = []
original = torch.autograd.backward
torch.autograd.backward = lambda *args, **kwargs: (calls.append(1), original(*args, **kwargs))[1]
runs = {}
for built in (True, False):
    torch.backends.cuda.is_built = lambda: built
    calls.clear()
    warm_up.exercise_torch()
    runs[str(built)] = len(calls)
print(json.dumps({"runs": runs, "mps_built": torch.backends.mps.is_built()}))
"""


def test_a_build_with_cuda_is_warmed_without_a_backward():
    """The first backward starts autograd's device threads, which on a CUDA build initialise the
    driver (cudaGetDeviceCount), and children forked after that cannot use the GPU ('CUDA error:
    initialization error' on a real GPU): where CUDA is compiled in, no backward."""
    done = subprocess.run([sys.executable, "-c", BACKWARD_RUNS], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["runs"] == {"True": 0, "False": 0 if seen["mps_built"] else 1}, seen
