"""benchmarks/gpu_check.py without a GPU: it says so in one line and exits non-zero at once,
having loaded nothing heavy (not even torch) and run nothing; and its table fails a graded
part that ran on another device than the GPU, whatever it scored."""
import json
import subprocess
import sys
import time

import pytest

from classgrader.kernels import accelerator
from coursekit import ROOT, tool_env

CHECK = ROOT / "benchmarks" / "gpu_check.py"
# Runs the script as `python gpu_check.py ARGS` would, then says how it ended and what it loaded.
RUN = """
import json, runpy, sys
sys.argv = [sys.argv[1], *sys.argv[2:]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
    code = 0
except SystemExit as leaving:
    code = leaving.code
print(json.dumps({"code": code, "loaded": sorted(m for m in ("torch", "nbclient", "nbgrader") if m in sys.modules)}))
"""


def run_check(*args: str) -> tuple[dict, str, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", RUN, str(CHECK), *args], cwd=ROOT, env=tool_env(),
                          capture_output=True, text=True, timeout=120)
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]), done.stderr, time.monotonic() - start


@pytest.mark.skipif(bool(accelerator.device_nodes()), reason="this machine has a GPU")
def test_without_a_gpu_it_says_so_and_runs_nothing(tmp_path, covered):
    ended, said, seconds = run_check()
    assert ended == {"code": 2, "loaded": []}, (ended, said)
    assert said.count("\n") == 1 and "no GPU here" in said and "Nothing was run" in said, said
    covered(f"gpu_check.py without a GPU: exit 2 after {seconds:.1f} s, torch never imported: {said.strip()}")


def test_an_unknown_unit_gets_one_line():
    ended, said, _ = run_check("--units", "99_nothing")
    units = ", ".join(sorted(p.name for p in (ROOT / "source").iterdir() if p.is_dir()))
    assert ended["code"] == 2 and said.strip() == f"gpu_check: no such unit: 99_nothing (units: {units})"


def test_a_graded_part_off_the_gpu_fails_whatever_it_scored(capsys):
    sys.path.insert(0, str(CHECK.parent))
    try:
        import gpu_check
    finally:
        sys.path.remove(str(CHECK.parent))
    rows = [("01_tensors", "hidden tests", "cuda", "passed", 1.0, ""),
            ("01_tensors", "class: solved", "cpu", "passed", 1.0, ""),
            ("sandbox", "sandbox", "cpu", "passed", 1.0, ""),
            ("09_silent_symptoms_lesson", "lesson", "cpu", "passed", 1.0, "")]
    assert gpu_check.report(rows, "cuda", 4.0) == 1
    table = capsys.readouterr().out.splitlines()
    assert "graded on cpu, expected cuda" in table[2] and "FAILED" in table[2] and "FAILED" in table[3]
    assert "passed" in table[1] and "passed" in table[4] and table[-1] == "2 passed, 2 failed, in 4 s"
    assert gpu_check.report(rows[:1], "cuda", 1.0) == 0


def test_its_dry_run_forks_a_jailed_kernel_from_a_zygote():
    """--cpu runs the script's own steps without a GPU: here the sandbox probe, one kernel jailed
    as a class run's are (the parts that grade whole notebooks are the class tests' business)."""
    ended, said, _ = run_check("--cpu", "--units", "01_tensors", "--skip", "hidden,class,lesson")
    assert ended["code"] == 0, said
