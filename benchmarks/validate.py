"""A student's lab start and Validate presses, quiet and under load (a benchmark, not a test).

A copy of the course as a student has it (work/ made by autograder/student_folder.py, the reference
answers of --unit in work/ID/ID.ipynb); JupyterLab started as ./course lab starts a student's
(lab/student, serving work/), then, each --repeat times:

  lab start     from starting the process to the lab answering (/api/status), the CPU time the
                server used to get there (what the start costs where it has a core to itself), and
                the time to the Validate worker's being ready (it imports torch beside the lab)
  press 1       Validate's endpoint, once the worker is ready; timed from the request to the checklist
  press 2       right after the first
  3 at once     three presses sent together (the slowest of the three)

first on the machine as it is ("quiet"), then with --busy busy loops beside it (default: one per
core, as ../shared/tools/under-load makes them). Prints medians and ranges in seconds, and the load
average each part ran at; every press's checklist must pass.

    .venv/bin/python benchmarks/validate.py [--unit 01] [--repeat 3] [--busy N]
"""
import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))  # the reference answers are built as the tests build them
from coursekit import LAB_TOKEN, build_submission, free_port, read_notebook, tool_env, write_notebook  # noqa: E402


def student_course(unit: str) -> tuple[Path, str]:
    """A course folder with a student's work/ (lessons and the solved assignment); the notebook's lab path."""
    [source] = sorted((ROOT / "source").glob(f"{unit}_*/*.ipynb"))
    course = Path(tempfile.mkdtemp(prefix="validate-bench-"))
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks", course / "notebooks")
    subprocess.run([sys.executable, "-P", str(ROOT / "autograder" / "student_folder.py"), str(course),
                    str(course / "work")], check=True)
    release = ROOT / "release" / source.parent.name / source.name
    relative = f"{source.parent.name}/{source.name}"
    write_notebook(build_submission(read_notebook(source), read_notebook(release), {}), course / "work" / relative)
    return course, relative


@contextlib.contextmanager
def student_lab(course: Path):
    """JupyterLab as ./course lab starts a student's; yields (its address, seconds until it answered)."""
    port, start = free_port(), time.perf_counter()
    config = ROOT / "lab" / "student"
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={LAB_TOKEN}", f"--ServerApp.root_dir={course / 'work'}",
         f"--LabApp.app_settings_dir={config}", f"--LabApp.workspaces_dir={course / 'workspaces'}"]
        + (["--allow-root"] if os.geteuid() == 0 else []),
        cwd=course, env=dict(tool_env(), JUPYTER_CONFIG_PATH=str(config)), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={LAB_TOKEN}", timeout=5)
                break
            except OSError:
                time.sleep(0.05)
        yield base, time.perf_counter() - start, cpu_seconds(server.pid)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used (user and system): what its start costs on an idle machine,
    where it would have the core to itself."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def press(base: str, path: str) -> float:
    request = urllib.request.Request(f"{base}/assignments/validate", data=f"path={path}".encode(),
                                     headers={"Authorization": f"token {LAB_TOKEN}"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=1800) as response:
        reply = json.loads(response.read())
    seconds = time.perf_counter() - start
    assert reply["success"] and reply["value"]["all_passed"], reply
    return seconds


def one_round(course: Path, path: str) -> dict:
    with student_lab(course) as (base, answered, cpu):
        start = time.perf_counter() - answered
        press(base, path)  # waits for the worker: its readiness, not a press a student would make then
        times = {"lab answers": answered, "its CPU time": cpu, "worker ready": time.perf_counter() - start}
        time.sleep(2)  # a student reads the checklist
        times["press 1"] = press(base, path)
        times["press 2"] = press(base, path)
        with ThreadPoolExecutor(3) as pool:
            times["3 at once"] = max(pool.map(lambda _: press(base, path), range(3)))
    return times


@contextlib.contextmanager
def busy_loops(count: int):
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def measure(course: Path, path: str, repeat: int) -> tuple[dict, float]:
    rounds = [one_round(course, path) for _ in range(repeat)]
    return {k: [r[k] for r in rounds] for k in rounds[0]}, os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unit", default="01")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--busy", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    course, path = student_course(args.unit)
    try:
        quiet = measure(course, path, args.repeat)
        with busy_loops(args.busy):
            loaded = measure(course, path, args.repeat)
    finally:
        shutil.rmtree(course, ignore_errors=True)
    print(f"A student's lab and Validate of a solved {path}, {args.repeat} rounds each, "
          f"{len(os.sched_getaffinity(0))} cores; seconds, median (min-max)")
    for name, (times, load) in [("as the machine is", quiet), (f"with {args.busy} busy loops", loaded)]:
        print(f"{name} (load average {load:.1f} at its end):")
        for what, values in times.items():
            print(f"  {what:<12} {statistics.median(values):6.2f}  ({min(values):.2f}-{max(values):.2f})")


if __name__ == "__main__":
    main()
