"""The course on a GPU, in one run (a check to run by hand on a machine with CUDA, not a test):

  sandbox       one grading kernel, forked from the zygote and jailed as a class run's are: it
                must run a CUDA operation, without an address-space limit, inside its memory
                cgroup, and PyTorch must refuse it more than its share of the GPU's memory
  hidden tests  every source notebook (solutions and hidden tests) run in a kernel, as an
                instructor checks an assignment: each must pass, graded on `cuda`
  class         a small class per unit graded by `./course autograde`'s code (sandboxed, forked
                from the zygote): the reference solution must score full marks and the untouched
                release 0, and the course's setup cell must say it graded on `cuda`
  lesson        every lesson in notebooks/ run top to bottom; the device column says whether
                the lesson's kernel used CUDA

Prints a table (unit, part, device, result, seconds) and exits 1 if any row failed: a graded
part (sandbox, hidden tests, class) that did not run on `cuda` fails, whatever it scored.
Notebooks run several at once while the classes are graded, to fit in about 8 minutes.

How kernels share the GPU: each grading kernel may take a share of each GPU's memory, the
same for all: 0.9 / COURSE_KERNELS_AT_ONCE (the class run's workers; by default one per core
and one more), the rest left to the graders' own inputs and the CUDA contexts. The zygote puts
the share in the kernel's COURSE_GPU_MEMORY_FRACTION; the kernel hands it to PyTorch
(torch.cuda.set_per_process_memory_fraction) when it first initialises CUDA itself, so a
kernel that never uses the GPU pays nothing. A student's cell that asks for more gets
torch.OutOfMemoryError and costs that cell only; the other kernels go on. (The cap is
PyTorch's, in the kernel's own process: it holds honest and careless code to its share, not
code that deliberately sets another fraction.) Host memory is
bounded per kernel by its memory cgroup (resident bytes), not by an address-space limit,
which a CUDA context's reservations exceed.

On a machine without a GPU it says so and exits 2 at once, having run nothing; --cpu instead
dry-runs the script itself (then every device is cpu).

    .venv/bin/python benchmarks/gpu_check.py [--units 01_tensors,02_devices] [--workers 8] [--cpu]
"""
import argparse
import concurrent.futures
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
sys.path.append(str(ROOT / "tests"))

from classgrader.judging import graded_device  # noqa: E402  (light: no torch)
from classgrader.kernels import accelerator, cgroup, sandbox  # noqa: E402
from coursekit import ASSIGNMENTS, LESSONS, build_submission, read_notebook, tool_env, write_notebook  # noqa: E402

CELL_TIMEOUT = 600
GRADED_PARTS = ("sandbox", "hidden tests", "class: solved", "class: blank")
# Appended to a lesson (in memory): did this kernel put anything on the GPU?
DEVICE_PROBE = ("import sys\nprint('gpu-check-device:', "
                "'cuda' if 'torch' in sys.modules and sys.modules['torch'].cuda.is_initialized() else 'cpu')")
# Run in the jailed kernel: what it sees and may do.
SANDBOX_PROBE = """
import json, os, resource, torch
seen = {"share": os.environ.get("COURSE_GPU_MEMORY_FRACTION"),
        "address space": resource.getrlimit(resource.RLIMIT_AS)[0], "dev": sorted(os.listdir("/dev"))}
try:
    x = torch.ones(1000, device="cuda")
    seen.update(device="cuda", sum=float((x * 2).sum()), name=torch.cuda.get_device_name())
    total = torch.cuda.get_device_properties(0).total_memory
    try:
        torch.empty(int(float(seen["share"] or 1) * total * 1.05), dtype=torch.uint8, device="cuda")
        seen["share held"] = False
    except Exception as past:  # noqa: BLE001 (held only if it is the error a cell can catch: OutOfMemoryError)
        seen["share held"] = isinstance(past, torch.OutOfMemoryError)
        seen["past the share"] = f"{type(past).__name__}: {str(past)[:160]}"
except Exception as error:  # noqa: BLE001 (what stopped CUDA is the finding)
    seen.update(device="cpu", error=f"{type(error).__name__}: {str(error)[:200]}")
print("sandbox-probe:", json.dumps(seen))
"""


def no_gpu_reason() -> str | None:
    """Why this machine cannot run the check on a GPU, asked without importing torch."""
    if not accelerator.device_nodes():
        return "no GPU here: this machine has no NVIDIA device nodes (/dev/nvidia*)"
    reasons = [accelerator.machine()[1], sandbox.unavailable_reason(), cgroup.unavailable_reason()]
    return "; ".join(filter(None, reasons)) or None


def run_notebook(path: str, cwd: str, probe: bool = False) -> tuple[str, str, str, float]:
    """(device, result, detail, seconds) for one notebook run with nbclient in a fresh kernel.
    A kernel that dies before it answers is started once more: kernels started side by side
    can pick the same free TCP port (jupyter_client's race), which is not the notebook's fault."""
    start = time.perf_counter()
    for attempt in (1, 2):
        device, result, detail = _run_once(path, cwd, probe)
        if attempt == 2 or "before replying to kernel_info" not in detail:
            break
    return device, result, detail, time.perf_counter() - start


def _run_once(path: str, cwd: str, probe: bool) -> tuple[str, str, str]:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(path, as_version=4)
    if probe:
        nb.cells.append(nbformat.v4.new_code_cell(DEVICE_PROBE))
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": cwd}})
    try:
        client.execute()
        result, detail = "passed", ""
    except (CellExecutionError, CellTimeoutError, DeadKernelError, RuntimeError) as error:
        result, detail = "FAILED", str(error).strip().splitlines()[-1][:160]
    text = "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.get("outputs", []) if out.get("output_type") == "stream")
    return device_in(text), result, detail


def device_in(text: str) -> str:
    for line in text.splitlines():
        for marker in (graded_device.MARKER, "gpu-check-device: "):
            if line.startswith(marker):
                return line[len(marker):].split()[0]
    return "?"


def sandbox_probe(expected: str) -> tuple:
    """A row: one kernel forked from a zygote and jailed as a class run's kernels are."""
    import nbformat
    from nbclient import NotebookClient

    from classgrader.judging.work_area import jail_spec
    from classgrader.kernels.kernel_zygote import Zygote
    from classgrader.kernels.warm_kernel import ZYGOTE_ENV, WarmKernelManager
    start = time.perf_counter()
    zygote, user = Zygote(), sandbox.private_user()
    os.environ[ZYGOTE_ENV] = zygote.socket_path
    area = sandbox.make_workarea(sandbox.Limits(), user)
    try:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SANDBOX_PROBE)])
        client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_manager_class=WarmKernelManager,
                                resources={"metadata": {"path": area}})
        client.km = WarmKernelManager(jail=jail_spec(area, user=user))
        client.execute()
        text = "".join(out.get("text", "") for out in nb.cells[0].outputs)
        seen = json.loads(text.split("sandbox-probe:", 1)[1])
    except Exception as error:
        return ("sandbox", "sandbox", "?", "FAILED", time.perf_counter() - start, str(error)[-160:])
    finally:
        sandbox.remove_workarea(area)
        del os.environ[ZYGOTE_ENV]
        zygote.stop()
    problems = [seen.get("error", "")] if seen["device"] != expected else []
    if expected == "cuda":
        problems += [] if seen.get("share held") else [f"past its share ({seen['share']}) a kernel got "
                                                        f"{seen.get('past the share', 'its memory')}"]
        problems += [] if seen["address space"] == -1 else [f"address-space limit {seen['address space']}"]
    detail = ("; ".join(filter(None, problems))
              or f"{seen.get('name', 'cpu')}, share {seen['share']}, /dev: {' '.join(seen['dev'])}")
    return ("sandbox", "sandbox", seen["device"], "FAILED" if problems else "passed", time.perf_counter() - start,
            detail)


def class_course(work: Path) -> Path:
    """A course folder of its own: this checkout's configuration and sources. The grader is the
    installed one (this checkout's, as ./course setup installs it): a copy or a link in the course
    would put paths under /tmp in a kernel's jail, where /tmp is the kernel's own."""
    course = work / "class"
    course.mkdir()
    shutil.copy2(ROOT / "nbgrader_config.py", course / "nbgrader_config.py")
    for name in ("source", "release"):
        shutil.copytree(ROOT / name, course / name)
    return course


def course_cmd(course: Path, *args: str) -> subprocess.CompletedProcess:
    """One command of ./course's table, run as ./course runs it once .venv is there, but with this
    interpreter: a lent GPU machine's Python is not the 3.11 that ./course's bootstrap builds .venv with."""
    command = [sys.executable, "-P", str(ROOT / "classgrader" / "cli.py"), "run", *args]
    done = subprocess.run(command, cwd=course, env=tool_env(), capture_output=True, text=True)
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
    submitted = course / "runtime" / "submitted"
    write_notebook(build_submission(source, release, {}), submitted / "solved" / assignment / notebook)
    write_notebook(build_submission(source, release, None), submitted / "blank" / assignment / notebook)
    start = time.perf_counter()
    course_cmd(course, "autograde", assignment, "--workers", str(workers))
    seconds = time.perf_counter() - start
    rows = []
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gb:
        for student, want in expected.items():
            sub = gb.find_submission(assignment, student)
            want = sub.max_score if want is None else want
            graded = course / "runtime" / "autograded" / student / assignment / notebook
            device = (graded_device.reported(read_notebook(graded)) or "?").split()[0] if graded.exists() else "?"
            ok = sub.score == want
            rows.append((assignment, f"class: {student}", device, "passed" if ok else "FAILED", seconds / len(expected),
                         "" if ok else f"scored {sub.score} of {sub.max_score}, expected {want}"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", default=",".join(ASSIGNMENTS), help="comma-separated assignment ids")
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1), help="class run workers")
    parser.add_argument("--notebooks-at-once", type=int, default=max(1, min(6, (os.cpu_count() or 2) // 2)))
    parser.add_argument("--cpu", action="store_true", help="run without CUDA (a dry run: every device is cpu)")
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: sandbox,hidden,class,lesson")
    args = parser.parse_args()
    units, skip = args.units.split(","), set(filter(None, args.skip.split(",")))
    unknown = set(units) - set(ASSIGNMENTS)
    if unknown:
        print(f"gpu_check: no such unit: {', '.join(sorted(unknown))} (units: {', '.join(ASSIGNMENTS)})",
              file=sys.stderr)
        return 2
    reason = no_gpu_reason()
    if reason and not args.cpu:
        print(f"gpu_check: {reason}. Nothing was run (--cpu dry-runs the check without a GPU).", file=sys.stderr)
        return 2
    expected_device = "cpu" if args.cpu else "cuda"
    names = graded_device.gpu_names()
    print(f"GPU: {', '.join(names) or 'none'}; "
          f"grading kernels expected on: {graded_device.expected({'workdir': ''})}", flush=True)
    began = time.perf_counter()
    rows = Rows()
    work = Path(tempfile.mkdtemp(prefix="course-gpu-"))
    # Notebooks run in processes started afresh (spawn): this one stays free of CUDA and of
    # their kernels, and they run while the classes are graded.
    pool = concurrent.futures.ProcessPoolExecutor(args.notebooks_at_once,
                                                  mp_context=multiprocessing.get_context("spawn"))
    try:
        if "sandbox" not in skip:
            rows.append(sandbox_probe(expected_device))
        pending = []
        if "hidden" not in skip:
            for assignment in units:
                folder = work / "source" / assignment
                shutil.copytree(ROOT / "source" / assignment, folder)
                notebook = str(folder / f"{assignment}.ipynb")
                pending.append(((assignment, "hidden tests"), pool.submit(run_notebook, notebook, str(folder))))
        if "lesson" not in skip:
            lessons = work / "notebooks"
            shutil.copytree(ROOT / "notebooks", lessons)
            chosen = {unit[:2] for unit in units}
            every = args.units == ",".join(ASSIGNMENTS)  # all lessons (09 has no assignment) unless --units chose
            pending.extend(((lesson.stem, "lesson"),
                            pool.submit(run_notebook, str(lessons / lesson.name), str(lessons), True))
                           for lesson in LESSONS if every or lesson.name[:2] in chosen)
        if "class" not in skip:
            course = class_course(work)
            course_cmd(course, "generate", *units)
            for assignment in units:
                try:
                    rows += grade_class(course, assignment, args.workers)
                except Exception as error:
                    rows.append((assignment, "class", "?", "FAILED", 0.0, str(error)[-160:]))
        for (unit, part), future in pending:
            try:
                device, result, detail, seconds = future.result()
            except Exception as error:
                device, result, detail, seconds = "?", "FAILED", str(error)[-160:], 0.0
            rows.append((unit, part, device, result, seconds, detail))
    finally:
        pool.shutdown(cancel_futures=True)
        shutil.rmtree(work, ignore_errors=True)
    return report(rows, expected_device, time.perf_counter() - began)


class Rows(list):
    """The table's rows, each also printed as it comes: a run cut short still shows what it found."""

    def append(self, row: tuple) -> None:
        print("  row:", *row[:4], f"{row[4]:.1f} s", row[5], file=sys.stderr, flush=True)
        super().append(row)

    def __iadd__(self, rows):
        for row in rows:
            self.append(row)
        return self


def report(rows: list[tuple], expected_device: str, seconds: float) -> int:
    """Print the table; a graded part that ran on another device failed, whatever it scored."""
    def elsewhere(part: str, dev: str) -> bool:
        return part.startswith(GRADED_PARTS) and dev != expected_device
    rows = [(u, part, dev, "FAILED" if elsewhere(part, dev) else res, s,
             det or (f"graded on {dev}, expected {expected_device}" if elsewhere(part, dev) else ""))
            for u, part, dev, res, s, det in rows]
    print(f"{'unit':<24}{'part':<16}{'device':<8}{'result':<8}{'seconds':>8}  detail")
    for unit, part, device, result, took, detail in rows:
        print(f"{unit:<24}{part:<16}{device:<8}{result:<8}{took:>8.1f}  {detail}")
    failed = sum(row[3] != "passed" for row in rows)
    print(f"{len(rows) - failed} passed, {failed} failed, in {seconds:.0f} s")
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
