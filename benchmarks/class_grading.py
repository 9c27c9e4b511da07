"""Grade the same class three ways in one run and compare (a benchmark, not a test):

  stock  sequential `nbgrader autograde` with nbgrader's own pipeline (a kernel per notebook)
  ours   `./course autograde` (classgrader/classroom.py: warm sandboxed kernels, parallel workers)
  floor  the same autograded notebooks' cells exec'd in this one already-warm interpreter

The class is the scripted submissions of tests/scenarios/unitNN.py (honest and wrong answers,
so the scores differ between students), repeated --copies times. Checks that all three give
every student the same score, then prints seconds per notebook and the ratios.

    .venv/bin/python benchmarks/class_grading.py [--unit 01] [--copies 2] [--workers 2]
"""
import argparse
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import autograder  # noqa: E402,F401  (the installed package, before tests/ and its autograder/ folder join the path)

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))  # the scripted submissions live with the tests

from coursekit import build_submission, make_course, read_notebook, tool_env, write_notebook  # noqa: E402

STOCK_CONFIG = """
# Stock nbgrader, for comparison: its own sanitize and autograde steps, no class-run hooks.
c.Autograde.sanitize_preprocessors = ["nbgrader.preprocessors.ClearOutput", "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec", "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata"]
c.Autograde.autograde_preprocessors = ["nbgrader.preprocessors.Execute", "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor", "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades", "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata"]
c.Autograde.pre_convert_hook = None
c.Autograde.post_convert_hook = None
"""


def build_class(course: Path, unit, copies: int) -> list[str]:
    source = read_notebook(ROOT / "source" / unit.ASSIGNMENT / unit.NOTEBOOK)
    release = read_notebook(course / "release" / unit.ASSIGNMENT / unit.NOTEBOOK)
    students = []
    for copy in range(copies):
        for scenario in unit.SCENARIOS:
            student = f"s{copy}_{scenario.student}"
            nb = build_submission(source, release, scenario.answers, scenario.extra_cells)
            write_notebook(nb, course / "runtime" / "submitted" / student / unit.ASSIGNMENT / unit.NOTEBOOK)
            students.append(student)
    return students


def scores(course: Path, assignment: str) -> dict[str, float]:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        return {s.student.id: s.score for s in gradebook.find_assignment(assignment).submissions}


def timed(command, cwd) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=tool_env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def timed_class_run(command, cwd) -> tuple[float, float]:
    """(total seconds, seconds before the first notebook started grading): the class run's
    fixed start (zygote, imports, triage), read off its per-student lines as they come."""
    start, first = time.perf_counter(), None
    run = subprocess.Popen(command, cwd=cwd, env=tool_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    for line in run.stdout:
        found = re.search(r"graded in\s+([\d.]+) s", line)
        if found and first is None:
            first = time.perf_counter() - start - float(found.group(1))
    if run.wait():
        raise subprocess.CalledProcessError(run.returncode, command)
    return time.perf_counter() - start, first or 0.0


def floor(course: Path, assignment: str, notebook: str) -> tuple[float, dict[str, float]]:
    """Exec every autograded notebook's code cells in this process; score = points of the
    test cells that raised nothing. Only the execution is timed."""
    import contextlib
    import io

    import nbformat
    import torch  # noqa: F401  (warm: imported before the clock starts)
    import autograder  # noqa: F401
    total, found = 0.0, {}
    for path in sorted((course / "runtime" / "autograded").glob(f"*/{assignment}/{notebook}")):
        nb = nbformat.read(path, as_version=4)
        namespace, score = {"__name__": "__main__"}, 0.0
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for cell in nb.cells:
                if cell.cell_type != "code":
                    continue
                try:
                    exec(compile(cell.source, str(path), "exec"), namespace)
                except BaseException:  # noqa: BLE001 (a student's error is a failed cell)
                    continue
                meta = cell.metadata.get("nbgrader", {})
                score += meta.get("points", 0) if meta.get("grade") else 0
        total += time.perf_counter() - start
        found[path.parts[-3]] = score
    return total, found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--unit", default="01")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    unit = importlib.import_module(f"scenarios.unit{args.unit}")
    work = Path(tempfile.mkdtemp(prefix="course-bench-"))
    try:
        (work / "ours").mkdir(), (work / "stock").mkdir()
        ours_course = make_course(work / "ours", [unit.ASSIGNMENT])
        stock_course = make_course(work / "stock", [unit.ASSIGNMENT])
        with open(stock_course / "nbgrader_config.py", "a") as config:
            config.write(STOCK_CONFIG)
        students = build_class(ours_course, unit, args.copies)
        build_class(stock_course, unit, args.copies)
        n = len(students)
        stock_s = timed([sys.executable, "-m", "nbgrader", "autograde", unit.ASSIGNMENT], stock_course)
        ours_s, ours_start = timed_class_run([sys.executable, "-m", "classgrader.classroom", unit.ASSIGNMENT,
                                              "--workers", str(args.workers)], ours_course)
        floor_s, floor_scores = floor(ours_course, unit.ASSIGNMENT, unit.NOTEBOOK)
        stock_scores, ours_scores = scores(stock_course, unit.ASSIGNMENT), scores(ours_course, unit.ASSIGNMENT)
        agree = stock_scores == ours_scores == floor_scores
        print(f"{n} notebooks of {unit.ASSIGNMENT}, {os.cpu_count()} cores, {args.workers} workers")
        print(f"{'way':<8}{'s/notebook':>12}{'total s':>10}")
        for name, seconds in (("stock", stock_s), ("ours", ours_s), ("floor", floor_s)):
            print(f"{name:<8}{seconds / n:>12.2f}{seconds:>10.1f}")
        print(f"stock / ours = {stock_s / ours_s:.1f}x   ours / floor = {ours_s / floor_s:.1f}x")
        print(f"ours = {ours_start:.1f} s of fixed start (zygote, imports, triage) + "
              f"{(ours_s - ours_start) / n:.2f} s per notebook; that part alone is "
              f"{(ours_s - ours_start) / floor_s:.1f}x the floor")
        print("scores agree" if agree else "SCORES DIFFER: " + json.dumps(
            {s: (stock_scores.get(s), ours_scores.get(s), floor_scores.get(s)) for s in students
             if len({stock_scores.get(s), ours_scores.get(s), floor_scores.get(s)}) > 1}))
        return 0 if agree else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
