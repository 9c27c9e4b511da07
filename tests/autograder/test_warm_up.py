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
