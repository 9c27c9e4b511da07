"""The course on a GPU, in one run (a check to run by hand on a machine with CUDA, not a test):

  hidden tests  every source notebook (solutions and hidden tests) run in a kernel, as an
                instructor checks an assignment: each must pass, graded on `cuda`
  class         a small class per unit graded through `./course autograde` (sandboxed, forked
                from the zygote): the reference solution must score full marks and the untouched
                release 0, and the autograded notebooks must say they were graded on `cuda`
  lesson        every lesson in notebooks/ run top to bottom; the device column says whether
                the lesson's kernel used CUDA

Prints a table (unit, part, device, result, seconds) and exits 1 if any row failed. On a machine
without CUDA it refuses unless --cpu (a dry run of the script itself; every device is then cpu).

    .venv/bin/python benchmarks/gpu_check.py [--units 01_tensors,02_devices] [--workers 4] [--cpu]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))

from coursekit import ASSIGNMENTS, LESSONS, build_submission, read_notebook, tool_env, write_notebook  # noqa: E402

CELL_TIMEOUT = 600
# Appended to a lesson (in memory): did this kernel put anything on the GPU?
DEVICE_PROBE = "import sys\nprint('gpu-check-device:', 'cuda' if 'torch' in sys.modules and sys.modules['torch'].cuda.is_initialized() else 'cpu')"


def run_notebook(path: Path, cwd: Path, probe: bool = False) -> tuple[str, str, str]:
    """(device, result, detail) for one notebook run with nbclient in a fresh kernel."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    nb = nbformat.read(path, as_version=4)
    if probe:
        nb.cells.append(nbformat.v4.new_code_cell(DEVICE_PROBE))
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(cwd)}})
    try:
        client.execute()
        result, detail = "passed", ""
    except (CellExecutionError, CellTimeoutError) as error:
        result, detail = "FAILED", str(error).strip().splitlines()[-1][:160]
    text = "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.get("outputs", []) if out.get("output_type") == "stream")
    return device_in(text), result, detail


def text_of(text) -> str:
    return text if isinstance(text, str) else "".join(text)  # a notebook file may hold a list of lines


def device_in(text: str) -> str:
    for line in text.splitlines():
        for marker in ("Graded on: ", "gpu-check-device: "):
            if line.startswith(marker):
                return line[len(marker):].split()[0]
    return "?"


def class_course(work: Path) -> Path:
    """A course folder of its own, driven by its own ./course: this checkout's files, its .venv."""
    course = work / "class"
    course.mkdir()
    for name in ("course", "nbgrader_config.py", "requirements.txt", "pyproject.toml"):
        shutil.copy2(ROOT / name, course / name)
    for name in ("source", "release"):
        shutil.copytree(ROOT / name, course / name)
    for name in (".venv", "classgrader", "autograder", "utils"):
        (course / name).symlink_to(ROOT / name)
    return course


def course_cmd(course: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([str(course / "course"), *args], cwd=course, env=tool_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"./course {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done


def grade_class(course: Path, assignment: str, workers: int) -> list[tuple]:
    """Two students: the reference solution and the untouched release; rows for each."""
    from nbgrader.api import Gradebook
    notebook = f"{assignment}.ipynb"
    source = read_notebook(course / "source" / assignment / notebook)
    release = read_notebook(course / "release" / assignment / notebook)
    expected = {"solved": None, "blank": 0.0}  # None: full marks
    write_notebook(build_submission(source, release, {}), course / "runtime" / "submitted" / "solved" / assignment / notebook)
    write_notebook(build_submission(source, release, None), course / "runtime" / "submitted" / "blank" / assignment / notebook)
    start = time.perf_counter()
    course_cmd(course, "autograde", assignment, "--workers", str(workers))
    seconds = time.perf_counter() - start
    rows = []
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gb:
        for student, want in expected.items():
            sub = gb.find_submission(assignment, student)
            want = sub.max_score if want is None else want
            graded = course / "runtime" / "autograded" / student / assignment / notebook
            device = device_in("".join(text_of(out.get("text", "")) for cell in read_notebook(graded)["cells"]
                                       for out in cell.get("outputs", []))) if graded.exists() else "?"
            ok = sub.score == want
            rows.append((assignment, f"class: {student}", device, "passed" if ok else "FAILED",
                         seconds / len(expected), "" if ok else f"scored {sub.score} of {sub.max_score}, expected {want}"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", default=",".join(ASSIGNMENTS), help="comma-separated assignment ids")
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--cpu", action="store_true", help="run without CUDA (a dry run: every device is cpu)")
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: hidden,class,lesson")
    args = parser.parse_args()
    import torch
    expected_device = "cuda"
    if not torch.cuda.is_available():
        if not args.cpu:
            print("gpu_check: torch sees no CUDA device here (use --cpu for a dry run)", file=sys.stderr)
            return 2
        expected_device = "cpu"
    else:
        print(f"GPU: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    units, skip = args.units.split(","), set(filter(None, args.skip.split(",")))
    rows = []
    work = Path(tempfile.mkdtemp(prefix="course-gpu-"))
    try:
        if "hidden" not in skip:
            for assignment in units:
                folder = work / "source" / assignment
                shutil.copytree(ROOT / "source" / assignment, folder)
                start = time.perf_counter()
                device, result, detail = run_notebook(folder / f"{assignment}.ipynb", folder)
                rows.append((assignment, "hidden tests", device, result, time.perf_counter() - start, detail))
        if "class" not in skip:
            course = class_course(work)
            course_cmd(course, "generate", *units)
            for assignment in units:
                try:
                    rows += grade_class(course, assignment, args.workers)
                except Exception as error:  # noqa: BLE001 (a row, not a stop: report every unit)
                    rows.append((assignment, "class", "?", "FAILED", 0.0, str(error)[-160:]))
        if "lesson" not in skip:
            lessons = work / "notebooks"
            shutil.copytree(ROOT / "notebooks", lessons)
            chosen = {unit[:2] for unit in units}
            for lesson in LESSONS:  # all of them (lesson 09 has no assignment) unless --units chose
                if args.units != ",".join(ASSIGNMENTS) and lesson.name[:2] not in chosen:
                    continue
                start = time.perf_counter()
                device, result, detail = run_notebook(lessons / lesson.name, lessons, probe=True)
                rows.append((lesson.stem, "lesson", device, result, time.perf_counter() - start, detail))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # A graded part that ran on the wrong device failed, whatever it scored.
    rows = [(u, part, dev, "FAILED" if part != "lesson" and dev != expected_device else res, s,
             det or (f"graded on {dev}, expected {expected_device}" if part != "lesson" and dev != expected_device else ""))
            for u, part, dev, res, s, det in rows]
    print(f"{'unit':<24}{'part':<16}{'device':<8}{'result':<8}{'seconds':>8}  detail")
    for unit, part, device, result, seconds, detail in rows:
        print(f"{unit:<24}{part:<16}{device:<8}{result:<8}{seconds:>8.1f}  {detail}")
    failed = sum(row[3] != "passed" for row in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
