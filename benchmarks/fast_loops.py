"""The loops everyone waits on, each beside its reference, in one run (a benchmark, not a test):

  set-up     `./course setup` in a fresh clone: uv (with pip's configured sources) against
             COURSE_INSTALLER=pip; both must give the same packages at the same versions; and uv
             once more with an empty uv cache (a machine's first build)
  uv itself  what a machine without uv pays once to bootstrap it (pip installs the wheel)
  generate   `./course generate` (one process) against stock `nbgrader generate_assignment`
             once per assignment; the release files must be byte-identical
  suite      with --suite: `./course test` in the fresh clone (test files in parallel), and with
             --suite-serial also COURSE_TEST_WORKERS=0 (one process) for reference

Every figure is wall time on this machine, with the load average printed beside it: on a shared
machine the reference and the new way are measured in the same run, so read the ratios.

    .venv/bin/python benchmarks/fast_loops.py [--suite] [--suite-serial] [--keep]
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


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def timed(command, cwd, env=None, check=True) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {done.returncode}:\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return seconds, done


def fresh_clone(work: Path, name: str) -> Path:
    clone = work / name
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    return clone


def packages(venv_python: Path) -> dict[str, str]:
    code = ("import importlib.metadata as m, json; print(json.dumps({d.metadata['Name'].lower().replace('_', '-'): "
            "d.version.split('+')[0] for d in m.distributions()}))")
    import json
    out = subprocess.run([str(venv_python), "-c", code], capture_output=True, text=True, check=True).stdout
    found = json.loads(out)
    for tool in ("pip", "pytorch-fundamentals-course"):  # the pip venv's own installer; the course itself
        found.pop(tool, None)
    return found


def _release_files(course: Path) -> dict[Path, bytes]:
    """Every file of a course's release/, by its path inside the course, with its bytes."""
    return {p.relative_to(course): p.read_bytes() for p in sorted((course / "release").rglob("*")) if p.is_file()}


def row(what: str, seconds: float, reference: str, ref_seconds: float, note: str = "") -> None:
    ratio = f"{ref_seconds / seconds:5.1f}x" if seconds else ""
    print(f"{what:<34}{seconds:8.1f} s   {reference:<34}{ref_seconds:8.1f} s  {ratio}  {note}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="store_true", help="also time ./course test in the fresh clone")
    parser.add_argument("--suite-serial", action="store_true", help="and, for reference, without parallel workers")
    parser.add_argument("--keep", action="store_true", help="keep the clones (printed)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="course-loops-"))
    failures = []
    print(f"{os.cpu_count()} cores, {load()} at the start")
    try:
        # uv itself, as a machine without it gets it (not counted in set-up: done once per machine)
        boot, _ = timed([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(work / "uv-bootstrap"),
                         f"uv=={uv_version()}"], work)
        print(f"bootstrapping uv {uv_version()} with pip (once per machine, cached in ~/.cache/pytorch-course): "
              f"{boot:.1f} s ({load()})")

        uv_clone, pip_clone = fresh_clone(work, "uv"), fresh_clone(work, "pip")
        uv_s, _ = timed(["./course", "setup"], uv_clone)
        pip_s, _ = timed(["./course", "setup"], pip_clone, env={"COURSE_INSTALLER": "pip"})
        installer = (uv_clone / ".venv" / ".installer").read_text().strip()
        same = packages(uv_clone / ".venv" / "bin" / "python") == packages(pip_clone / ".venv" / "bin" / "python")
        if installer != "uv" or not same:
            failures.append(f"set-up: ran {installer}; same packages as pip: {same}")
        row(f"set-up, ./course setup ({installer})", uv_s, "the same with pip", pip_s,
            f"same packages: {same}; {load()}")
        # uv keeps unpacked wheels in its cache: a machine's first build starts with none
        cold_s, _ = timed(["./course", "setup"], fresh_clone(work, "uv-cold"),
                          env={"UV_CACHE_DIR": str(work / "uv-cache")})
        row("set-up, uv with an empty uv cache", cold_s, "the same with pip", pip_s, load())

        # generate: stock, once per assignment, against ./course generate (one process)
        old, new = work / "gen-old", work / "gen-new"
        for course in (old, new):
            course.mkdir()
            shutil.copy(ROOT / "nbgrader_config.py", course)
            shutil.copytree(ROOT / "source", course / "source")
        ids = sorted(p.name for p in (ROOT / "source").iterdir() if p.is_dir())
        env = {"PATH": f"{uv_clone / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        start = time.perf_counter()
        for assignment in ids:
            timed(["nbgrader", "generate_assignment", assignment, "--force"], old, env=env)
        old_s = time.perf_counter() - start
        new_s, _ = timed(["python", "-m", "classgrader.commands.generate"], new, env=env)
        identical = _release_files(old) == _release_files(new)
        if not identical:
            failures.append("generate: release/ differs from stock generate_assignment")
        row(f"generate, {len(ids)} assignments (1 process)", new_s, "stock, a process per assignment", old_s,
            f"byte-identical: {identical}; {load()}")

        if args.suite:
            count = subprocess.run(["./course", "test", "--collect-only", "-q"], cwd=uv_clone,
                                   capture_output=True, text=True).stdout.strip().splitlines()[-1]
            suite_s, done = timed(["./course", "test", "-q"], uv_clone, check=False)
            summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "?"
            if args.suite_serial:
                serial_s, _ = timed(["./course", "test", "-q"], uv_clone, env={"COURSE_TEST_WORKERS": "0"}, check=False)
                row("suite, ./course test (parallel)", suite_s, "one process", serial_s, f"{summary}; {load()}")
            else:
                print(f"suite, ./course test (parallel): {suite_s:.0f} s ({summary}; {count}; {load()})")
            if done.returncode != 0:
                failures.append(f"suite: {summary}")
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


def uv_version() -> str:
    """The uv release ./course and the hub's set-up install: hub/uv_installer.py's, its one source."""
    return subprocess.run([sys.executable, str(ROOT / "hub" / "uv_installer.py"), "version"],
                          capture_output=True, text=True, check=True).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
