"""Which students only each layer of the grader's defence stops (a measurement, not a test).

The hostile class (tests/scenarios/hostile_class.py) is graded through the real class run
(`./course autograde`: classgrader/class_run/classroom.py, real nbgrader workers, warm sandboxed
kernels), once for each layer with that layer off, every other on, and each student's score and
flags are compared with what the class expects. A student graded otherwise with a layer off is
one that only that layer stops: every other layer was on and let them through.

    .venv/bin/python benchmarks/layers.py [--layers outside,records] [--only c53,c54] [--workers 2]

Layers (see docs/threat-model.md, "What each layer stops alone"):

  outside  tests judged in the grader over the answer channel (routing.route never says outside:
           every test runs in the kernel, re-checked and shadowed)
  records  a passing test's records re-checked in the grader against the reference (verify.judge
           finds nothing)
  shadows  a kernel test's value checks run again in the grader (routing.route never says
           shadowed)
  reading  the student's code read against the allow-list (code_scan.notebook_findings finds nothing)
  audit    the in-kernel integrity audit (what it reports is read as nothing found)
  bridging part of the outside judging and the shadows: a graph the test computed replayed in the
           kernel (graph_replay), a result's backward run there (autograd_bridge), the test's
           files mirrored (mirror); off, those tensors cross without their graphs, results come
           back without a way to the kernel's graph, and no file is mirrored
  none     every layer on: the class as tests/test_class_grading.py grades it

A layer is switched off by replacing one function in the class run's own process before it
forks its grade workers (classgrader/class_run/grade_worker.py), which inherit the replacement;
the kernels are untouched, and no product code carries a switch. Each layer grades a fresh copy
of the course (built afresh: a FIFO of the class is not copied), so the grader's own run of each
solution is made with the layer off too.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _route_never(skipped, instead):
    from classgrader.judging import routing
    decided = routing.route

    def route(*args, **kwargs):
        chosen = decided(*args, **kwargs)
        return instead if chosen is skipped else chosen
    routing.route = route


def _outside_off():
    from classgrader.judging.routing import Route
    _route_never(Route.OUTSIDE, Route.SHADOWED)


def _records_off():
    from classgrader.judging import verify
    verify.judge = lambda entries, reference=None: ([], [])


def _shadows_off():
    from classgrader.judging.routing import Route
    _route_never(Route.SHADOWED, Route.KERNEL)


def _reading_off():
    from classgrader.class_run import code_scan
    code_scan.notebook_findings = lambda nb, release: []


def _audit_off():
    from classgrader.judging import isolated_execute
    isolated_execute._findings = lambda entries: []


def _bridging_off():
    import contextlib

    from classgrader.judging import autograd_bridge, graph_replay, mirror
    graph_replay.recording = contextlib.nullcontext
    autograd_bridge.attach = lambda result, leaves, backward, keep=(): result
    mirror.test_files = lambda values: []


LAYERS = {"outside": _outside_off, "records": _records_off, "shadows": _shadows_off, "reading": _reading_off,
          "audit": _audit_off, "bridging": _bridging_off, "none": lambda: None}


def grade_with_layer_off(layer: str, argv: list[str]) -> int:
    """The class run (`./course autograde ARGV`) in this process, `layer` off (in the course's folder)."""
    import importlib

    from classgrader.class_run import classroom
    for module in classroom.GRADING_STACK:  # loaded before the switch, as the class run loads them
        importlib.import_module(module)
    LAYERS[layer]()
    return classroom.main(argv)


# -- the class ---------------------------------------------------------------------------------
def build_class(folder: Path, only: tuple[str, ...]):
    """A course with the hostile class's submissions in it, not yet graded: (its path, the students)."""
    if str(ROOT / "tests") not in sys.path:
        sys.path.append(str(ROOT / "tests"))  # the scripted class lives with the tests
    from coursekit import make_course
    from scenarios.hostile_class import STUDENTS, submit
    students = [s for s in STUDENTS if not only or s.student.startswith(only)]
    course = make_course(folder, sorted({s.assignment for s in students}))
    submit(course, students)
    return course, students


def results(course: Path) -> tuple[dict, dict]:
    """(assignment, student) -> score, and -> the reasons it was flagged for."""
    from nbgrader.api import Gradebook
    scores, flags = {}, {}
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        for assignment in gradebook.assignments:
            for submission in assignment.submissions:
                scores[(assignment.name, submission.student.id)] = submission.score
    with open(course / "runtime" / "flags.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            flags.setdefault((row["assignment"], row["student_id"]), []).append(row["reason"])
    return scores, flags


def departures(course: Path, students) -> list[str]:
    """Each student graded otherwise than the class expects, with how."""
    from scenarios.hostile_class import expected_score
    scores, flags = results(course)
    found = []
    for student in students:
        key = (student.assignment, student.student)
        want, got, reasons = expected_score(student, course), scores.get(key, 0.0), flags.get(key, [])
        what = []
        if abs(got - want) > 1e-6:
            what.append(f"scores {got:g} where {want:g} is due")
        if student.flag is None and reasons:
            what.append(f"flagged ({reasons[0][:90]})")
        elif student.flag is not None and not any(student.flag in reason for reason in reasons):
            what.append(f"not flagged for {student.flag[:60]!r}" + (f" (only: {reasons[0][:70]})" if reasons else ""))
        if what:
            found.append(f"{student.student}: {'; '.join(what)}")
    return found


def measure(layer: str, only: tuple[str, ...], workers: int) -> tuple[list[str], float, int]:
    """(each student graded otherwise with `layer` off, the class run's seconds, the class's size)."""
    course, students = build_class(Path(tempfile.mkdtemp(prefix=f"course-layers-{layer}-")), only)
    assignments = sorted({s.assignment for s in students})
    from coursekit import tool_env
    command = [sys.executable, __file__, "--grade-with", layer, "--", *assignments, "--workers", str(workers)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=course, env=tool_env(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the class run with {layer} off failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    found = departures(course, students)
    shutil.rmtree(course, ignore_errors=True)
    return found, seconds, len(students)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default=",".join(LAYERS), help="which to switch off, one run each")
    parser.add_argument("--only", default="", help="student id prefixes, e.g. c53,c54 (default: the whole class)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--grade-with", help=argparse.SUPPRESS)  # the class run itself, a layer off
    args, rest = parser.parse_known_args()
    if args.grade_with:
        sys.exit(grade_with_layer_off(args.grade_with, [a for a in rest if a != "--"]))
    layers = args.layers.split(",")
    unknown = [layer for layer in layers if layer not in LAYERS]
    if unknown:
        parser.error(f"no layer {', '.join(unknown)}; there are {', '.join(LAYERS)}")
    only = tuple(filter(None, args.only.split(",")))
    for layer in layers:
        found, seconds, size = measure(layer, only, args.workers)
        print(f"\n{layer} off ({size} students, {seconds:.0f} s, load {os.getloadavg()[0]:.1f}): "
              f"{len(found)} graded otherwise", flush=True)
        for line in found:
            print(f"  {line}", flush=True)

if __name__ == "__main__":
    main()
