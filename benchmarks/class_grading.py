"""Grade the same class three ways in one run and compare (a benchmark, not a test):

  stock  sequential `nbgrader autograde` with nbgrader's own pipeline (a kernel per notebook)
  ours   `./course autograde` (classgrader/class_run/classroom.py: warm sandboxed kernels, parallel workers)
  floor  the same autograded notebooks' cells exec'd in this one already-warm interpreter

The class is the scripted submissions of tests/scenarios/unitNN.py (honest and wrong answers,
so the scores differ between students), repeated --copies times. Checks that all three give
every student the same score, then prints seconds per notebook and the ratios.

    .venv/bin/python benchmarks/class_grading.py [--unit 01] [--copies 2] [--workers N]

With --class N (say 200) it grades instead a class of N students of one unit in realistic shares
(KINDS: solved, wrong in places, half done, blank, broken), and a class of N/4 to show the cost
grows linearly, and prints the wall time, seconds per notebook by kind and the grader's peak
memory (proportional set size of the whole process tree, sampled). Stock nbgrader grades only
an evenly drawn --stock-sample of the class (sequential stock takes ~5 s a notebook); its time is
scaled to N, and the printout says so. Scores of the sample must agree.
"""
import argparse
import contextlib
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

import autograder  # noqa: F401  (the installed package, before tests/ and its autograder/ folder join the path)

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
                except BaseException:
                    continue
                meta = cell.metadata.get("nbgrader", {})
                score += meta.get("points", 0) if meta.get("grade") else 0
        total += time.perf_counter() - start
        found[path.parts[-3]] = score
    return total, found


# A class as it hands in: (kind, share). "wrong": a scripted student of the unit who loses some
# items; "half": the first half of the answers done, the rest the untouched stubs; "broken":
# every answer cell raises (a typo'd import) before defining anything.
KINDS = [("solved", 0.35), ("wrong", 0.25), ("half", 0.20), ("blank", 0.15), ("broken", 0.05)]


def submission(kind: str, i: int, unit, source: dict, release: dict) -> dict:
    answer_ids = [c["metadata"]["nbgrader"]["grade_id"] for c in source["cells"]
                  if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    stubs = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in release["cells"]
             if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    if kind == "solved":
        return build_submission(source, release, {})
    if kind == "blank":
        return build_submission(source, release, None)
    if kind == "half":
        return build_submission(source, release, {g: stubs[g] for g in answer_ids[len(answer_ids) // 2:]})
    if kind == "broken":
        missing_module = "import torch_utils_helpers  # no such module\n"
        return build_submission(source, release, dict.fromkeys(answer_ids, missing_module))
    wrong = [sc for sc in unit.SCENARIOS if sc.answers and sc.loses and not sc.extra_cells]
    scenario = wrong[i % len(wrong)]
    return build_submission(source, release, scenario.answers, scenario.extra_cells)


def build_scaled_class(course: Path, unit, size: int) -> dict[str, str]:
    """student -> kind, `size` students in KINDS' shares, interleaved (so any even sample keeps them)."""
    source = read_notebook(ROOT / "source" / unit.ASSIGNMENT / unit.NOTEBOOK)
    release = read_notebook(course / "release" / unit.ASSIGNMENT / unit.NOTEBOOK)
    counts = {kind: round(share * size) for kind, share in KINDS}
    counts["solved"] += size - sum(counts.values())
    order = sorted(((j + 0.5) / counts[kind], kind) for kind in counts for j in range(counts[kind]))
    students = {}
    for i, (_, kind) in enumerate(order):
        student = f"s{i:04d}_{kind}"
        write_notebook(submission(kind, i, unit, source, release),
                       course / "runtime" / "submitted" / student / unit.ASSIGNMENT / unit.NOTEBOOK)
        students[student] = kind
    return students


def measured_class_run(command, cwd) -> tuple[float, float, dict[str, float]]:
    """(wall seconds, peak PSS bytes of the whole process tree, seconds per student as the run
    reported them). The tree is sampled every 0.5 s: a peak between samples can be missed."""
    import threading

    import psutil
    start = time.perf_counter()
    run = subprocess.Popen(command, cwd=cwd, env=tool_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    peak, done = [0], threading.Event()

    def sample():
        root = psutil.Process(run.pid)
        while not done.wait(0.5):
            total = 0
            try:
                for proc in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                        total += proc.memory_full_info().pss
            except psutil.NoSuchProcess:
                return
            peak[0] = max(peak[0], total)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    seconds = {}
    for line in run.stdout:
        found = re.search(r"(\S+)\s+graded in\s+([\d.]+) s", line)
        if found:
            seconds[found.group(1)] = float(found.group(2))
    done.set()
    if run.wait():
        raise subprocess.CalledProcessError(run.returncode, command)
    return time.perf_counter() - start, peak[0], seconds


def scale_main(args, unit) -> int:
    work = Path(tempfile.mkdtemp(prefix="course-bench-"))
    try:
        results = {}
        for size in (args.class_size // 4, args.class_size):
            (work / f"ours{size}").mkdir()
            course = make_course(work / f"ours{size}", [unit.ASSIGNMENT])
            kinds = build_scaled_class(course, unit, size)
            wall, peak, seconds = measured_class_run(
                [sys.executable, "-m", "classgrader.class_run.classroom", unit.ASSIGNMENT,
                 "--workers", str(args.workers)], course)
            results[size] = (course, kinds, wall, peak, seconds)
        big = args.class_size
        course, kinds, wall, peak, seconds = results[big]
        (work / "stock").mkdir()
        stock_course = make_course(work / "stock", [unit.ASSIGNMENT])
        with open(stock_course / "nbgrader_config.py", "a") as config:
            config.write(STOCK_CONFIG)
        sample = sorted(kinds)[::max(1, big // args.stock_sample)]
        for student in sample:
            shutil.copytree(course / "runtime" / "submitted" / student,
                            stock_course / "runtime" / "submitted" / student)
        stock_s = timed([sys.executable, "-m", "nbgrader", "autograde", unit.ASSIGNMENT], stock_course)
        ours_scores, stock_scores = scores(course, unit.ASSIGNMENT), scores(stock_course, unit.ASSIGNMENT)
        agree = all(ours_scores[s] == stock_scores.get(s) for s in sample)
        load = os.getloadavg()
        print(f"A class of {big} of {unit.ASSIGNMENT}, {os.cpu_count()} cores, {args.workers} workers, "
              f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the end")
        print(f"{'kind':<8}{'students':>9}{'s/notebook':>12}   (inside a worker, as the run reports it)")
        for kind, _ in KINDS:
            mine = [seconds[s] for s, k in kinds.items() if k == kind and s in seconds]
            print(f"{kind:<8}{len(mine):>9}{sum(mine) / max(1, len(mine)):>12.2f}")
        small = args.class_size // 4
        _, _, wall_small, peak_small, _ = results[small]
        per = (wall - wall_small) / (big - small)
        print(f"wall: {wall_small:.1f} s for {small}, {wall:.1f} s for {big}: {wall_small / small:.2f} and "
              f"{wall / big:.2f} s per notebook; each further notebook {per:.2f} s (linear: fixed start "
              f"{wall - per * big:.1f} s)")
        print(f"grader's peak memory (PSS, whole tree): {peak_small / 2**20:.0f} MiB for {small}, "
              f"{peak / 2**20:.0f} MiB for {big}")
        stock_scaled = stock_s / len(sample) * big
        print(f"stock nbgrader on {len(sample)} of them (every {big // len(sample)}th): {stock_s:.1f} s, "
              f"{stock_s / len(sample):.2f} s per notebook; scaled to {big}: {stock_scaled:.0f} s")
        print(f"stock (scaled) / ours = {stock_scaled / wall:.1f}x")
        differ = {s: (stock_scores.get(s), ours_scores.get(s)) for s in sample
                  if stock_scores.get(s) != ours_scores.get(s)}
        print("scores of the sample agree" if agree else "SCORES DIFFER: " + json.dumps(differ))
        return 0 if agree else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--unit", default="01")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="default: ./course autograde's own")
    parser.add_argument("--class", dest="class_size", type=int, default=0, help="grade a class of this size instead")
    parser.add_argument("--stock-sample", type=int, default=20, help="with --class: how many stock nbgrader grades")
    args = parser.parse_args()
    if args.workers is None:
        from classgrader.class_run.classroom import default_workers
        args.workers = default_workers()
    unit = importlib.import_module(f"scenarios.unit{args.unit}")
    if args.class_size:
        return scale_main(args, unit)
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
        ours_s, ours_start = timed_class_run([sys.executable, "-m", "classgrader.class_run.classroom", unit.ASSIGNMENT,
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
