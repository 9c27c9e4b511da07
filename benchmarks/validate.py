"""Validate a solved notebook four ways, side by side (a benchmark, not a test):

  stock    `nbgrader validate NOTEBOOK`, the whole command (nbgrader's Validator, a kernel of its own)
  cold     `./course validate NOTEBOOK`, the whole command: `python -P autograder/validate.py NOTEBOOK`
  button   the Validate button: autograder/validate_button.py's warm kernel, started before the
           press (as the lab starts it when it opens and again after each press); timed from
           the press to the checklist
  via-lab  the same command while a course lab serves the folder: it asks the lab's button
           (a real JupyterLab, started as ./course lab starts it)

Each runs --repeat times on the same notebook (the reference answers of --unit, a student's
copy of the release); prints each way's median and range in seconds, and that all agree.

    .venv/bin/python benchmarks/validate.py [--unit 01] [--repeat 5]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import autograder  # noqa: F401  (the installed package, before tests/ joins the path)
from autograder.validate import all_done
from autograder.validate import checklist
from autograder.validate_button import WarmKernels

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))  # the reference answers are built as the tests build them
from coursekit import build_submission, read_notebook, running_lab, tool_env, write_notebook  # noqa: E402


COMMAND = [sys.executable, "-P", str(ROOT / "autograder" / "validate.py")]  # what ./course validate runs


def whole_command(args: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=tool_env(), capture_output=True, text=True, timeout=600)
    return time.perf_counter() - start, done.stdout + done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unit", default="01")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    [source] = sorted((ROOT / "source").glob(f"{args.unit}_*/*.ipynb"))
    release = ROOT / "release" / source.parent.name / source.name
    course = Path(tempfile.mkdtemp(prefix="validate-bench-"))
    shutil.copy(ROOT / "nbgrader_config.py", course)
    notebook = write_notebook(build_submission(read_notebook(source), read_notebook(release), {}),
                              course / "work" / source.parent.name / source.name)
    times = {"stock": [], "cold": [], "button": []}
    pool = WarmKernels(course)
    try:
        for _ in range(args.repeat):
            seconds, out = whole_command([sys.executable, "-m", "nbgrader", "validate", str(notebook)], course)
            assert "Success! Your notebook passes all the tests." in out, out[-2000:]
            times["stock"].append(seconds)
            seconds, out = whole_command(COMMAND + [str(notebook)], course)
            assert out.startswith("All "), out[-2000:]
            times["cold"].append(seconds)
            kernel = pool.take()  # the warm one: it was started before this press
            start = time.perf_counter()
            lines = checklist(notebook, kernel)
            times["button"].append(time.perf_counter() - start)
            assert all_done(lines), lines
            pool.wait_ready()  # the next press finds its kernel started, as in a lab between presses
        pool.close()
        times["via-lab"] = []
        with running_lab(course):
            time.sleep(30)  # the lab's first warm kernel starts with it
            for _ in range(args.repeat):
                seconds, out = whole_command(COMMAND + [str(notebook)], course)
                assert out.startswith("All "), out[-2000:]
                times["via-lab"].append(seconds)
                time.sleep(10)  # a student reads the checklist; the next kernel starts meanwhile
    finally:
        shutil.rmtree(course, ignore_errors=True)
    print(f"Validate of a solved {source.name}, {args.repeat} runs each, {os.cpu_count()} cores "
          f"(every way passes it)")
    print(f"{'way':<8} {'median s':>9} {'min s':>7} {'max s':>7}")
    for way, values in times.items():
        print(f"{way:<8} {statistics.median(values):>9.2f} {min(values):>7.2f} {max(values):>7.2f}")
    stock = statistics.median(times["stock"])
    print(f"stock / button: {stock / statistics.median(times['button']):.1f}x;  "
          f"stock / cold: {stock / statistics.median(times['cold']):.1f}x")


if __name__ == "__main__":
    main()
