"""What the tests need to drive the real course: notebooks on disk, nbgrader commands on a
course directory, and student submissions built by script from the sources."""
import ast
import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "source").iterdir() if p.is_dir())
SOURCE_NOTEBOOKS = sorted((ROOT / "source").glob("*/*.ipynb"))
RELEASE_NOTEBOOKS = sorted((ROOT / "release").glob("*/*.ipynb"))
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ALL_NOTEBOOKS = LESSONS + SOURCE_NOTEBOOKS + RELEASE_NOTEBOOKS
# CI sets CI=true: there a test that needs what this machine lacks (a browser, the sandbox, a memory
# cgroup) fails instead of skipping, so that CI never passes by testing nothing.
IN_CI = os.environ.get("CI", "").lower() in ("true", "1")

SOLUTION_MARKERS = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
SOLUTION_BLOCK = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)


def read_notebook(path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def source_text(cell) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_cells(nb) -> list[dict]:
    return [c for c in nb["cells"] if nbgrader_meta(c).get("grade")]


def squeeze(text: str) -> str:
    """Text without its whitespace: a line found in a page or file however it was wrapped or indented."""
    return re.sub(r"\s+", "", text)


def secret_lines() -> list[str]:
    """Substantial lines of solutions and hidden tests that what students are given anyway does not
    show: the lessons, the released assignments, and the helper packages they import (a hidden test
    that calls a helper shares lines with it). What a leak check looks for in what students get."""
    public = squeeze("".join(source_text(c) for p in LESSONS + RELEASE_NOTEBOOKS for c in read_notebook(p)["cells"])
                     + "".join(p.read_text() for d in ("utils", "autograder") for p in (ROOT / d).rglob("*.py")))
    lines = []
    for path in SOURCE_NOTEBOOKS:
        for cell in read_notebook(path)["cells"]:
            text = source_text(cell)
            for block in SOLUTION_BLOCK.findall(text) + HIDDEN_BLOCK.findall(text):
                lines += [line.strip() for line in block.splitlines()
                          if len(line.strip()) >= 30 and squeeze(line) not in public]
    return lines


# How long a command of the real pipeline may run in a test before the test calls it hung: a guard
# against a hang, far past the slowest run on a busy machine, never a measure of speed (CI's own
# limit bounds the whole run).
HANG_SECONDS = 3600


def tool_env() -> dict:
    """The environment with this venv's bin first: nbgrader shells out to alembic."""
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def nbgrader(course_root, *args, timeout=HANG_SECONDS) -> subprocess.CompletedProcess:
    """Run a real nbgrader command in `course_root`; fail with its output if it fails."""
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course_root, env=tool_env(),
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} exited {done.returncode}:\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return done


# Where generated courses are kept, by content, for make_course to copy: tests/conftest.py points
# it at a folder every pytest-xdist worker of one run shares; elsewhere (a benchmark) it is a
# folder of this process's own, made on first use.
builds: Path | None = None
BUILD_INPUTS = ("source", "nbgrader_config.py", "classgrader", "autograder", "utils")


@functools.cache  # what this process imports was installed before it started
def _installed() -> tuple[str, ...]:
    from importlib import metadata
    return tuple(sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()))


def build_key(assignments) -> str:
    """A digest of everything generating a course reads: the assignments asked for, the sources,
    the configuration, the grader's packages (the preprocessors generate runs), Python and every
    installed distribution's version. A course kept under another key is never used."""
    digest = hashlib.sha256(repr((tuple(assignments), sys.version, _installed())).encode())
    for name in BUILD_INPUTS:
        top = ROOT / name
        for path in sorted(top.rglob("*")) if top.is_dir() else [top]:
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _builds() -> Path:
    global builds
    if builds is None:
        import atexit
        import tempfile
        builds = Path(tempfile.mkdtemp(prefix="course-builds-"))
        atexit.register(shutil.rmtree, builds, True)
    builds.mkdir(parents=True, exist_ok=True)
    return builds


def make_course(root: Path, assignments=ASSIGNMENTS) -> Path:
    """A fresh course directory with the repository's config and sources, the given
    assignments generated (which also records them in that course's gradebook).
    Generating costs seconds, mostly loading nbgrader: a course is generated once per content
    (build_key) and kept; later ones are byte copies of it (nothing in a generated course names
    its folder: the config finds its paths from where it lies). While one process generates it,
    another that wants the same course waits for it (a lock per key) instead of generating it too.
    Its runtime/grading/references, where class runs keep the grader's own runs of the solutions,
    is one folder for every course made from the same builds."""
    import fcntl
    folder = _builds()
    key = build_key(assignments)
    kept = folder / key
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.is_dir():
            partial = folder / f"{key}.{os.getpid()}.partial"
            partial.mkdir()
            shutil.copy(ROOT / "nbgrader_config.py", partial)
            shutil.copytree(ROOT / "source", partial / "source")
            generate(partial, *assignments)
            partial.rename(kept)  # whole or not at all: a build cut short is never taken for one
    shutil.copytree(kept, root, dirs_exist_ok=True, symlinks=True)
    # The grader's own runs of the solutions are kept by a digest of everything they depend on
    # (classgrader/judging/reference_store.py), the course's configuration included, and locked
    # while one is made: every course of the run shares them, as one course's class runs do.
    references, link = folder / "references", root / "runtime" / "grading" / "references"
    references.mkdir(exist_ok=True)
    link.parent.mkdir(parents=True, exist_ok=True)
    if not os.path.lexists(link):  # a course made again in the same folder keeps its link
        link.symlink_to(references, target_is_directory=True)
    return root


@contextlib.contextmanager
def machine_held():
    """This machine's users, groups, sudo rules and folders in /srv, /opt and /home, held by one
    test at a time while it changes them or compares them before and after a command: the hub's
    test files make and remove users side by side under pytest-xdist, and a comparison that saw
    another file's users come counted them as its command's. A lock in the run's shared folder
    (the builds' folder, which every worker of one run shares)."""
    import fcntl
    with open(_builds() / "machine.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def generate(course_root, *assignments, timeout=HANG_SECONDS) -> subprocess.CompletedProcess:
    """`./course generate` in `course_root`: nbgrader's generate_assignment for every assignment
    in one process (classgrader/commands/generate.py; tests/classgrader/commands/test_generate.py holds it equal
    to the stock command)."""
    done = subprocess.run([sys.executable, "-m", "classgrader.commands.generate", *assignments], cwd=course_root,
                          env=tool_env(), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"generate {' '.join(assignments)} exited {done.returncode}:\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return done


def solution_code(source_cell) -> str:
    """What a student who wrote the reference answer would have in the cell."""
    return SOLUTION_MARKERS.sub("", source_text(source_cell))


def build_submission(source_nb: dict, release_nb: dict, answers: dict[str, str] | None,
                     extra_cells: dict[str, str] | None = None) -> dict:
    """A student's notebook: the release, with each answer cell holding `answers[grade_id]`
    or else the reference solution. answers=None leaves the release untouched.
    extra_cells inserts a plain code cell of the given code after the named cell."""
    nb = json.loads(json.dumps(release_nb))
    if answers is None:
        return nb
    solutions = {nbgrader_meta(c)["grade_id"]: solution_code(c)
                 for c in source_nb["cells"] if nbgrader_meta(c).get("solution")}
    unknown = set(answers) - set(solutions)
    assert not unknown, f"scenario names answer cells that do not exist: {unknown}"
    cells = []
    for cell in nb["cells"]:
        gid = nbgrader_meta(cell).get("grade_id")
        if gid in solutions:
            cell["source"] = answers.get(gid, solutions[gid])
        cells.append(cell)
        if extra_cells and gid in extra_cells:
            cells.append({"cell_type": "code", "execution_count": None, "id": f"extra-{gid}",
                          "metadata": {}, "outputs": [], "source": extra_cells[gid]})
    nb["cells"] = cells
    return nb


def write_notebook(nb: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


LAB_TOKEN = "course-test-token"
# A bound against a lab that never stops (a shutdown that hangs), far past a busy machine's
# shutdown: a failure, not a measure of speed.
LAB_STOP_SECONDS = 300


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_lab(root: Path, *extra_args: str, role: str = "student", env: dict | None = None):
    """JupyterLab serving `root` on loopback with LAB_TOKEN, started the way ./course lab starts
    it (from the folder, so nbgrader's extensions read its nbgrader_config.py; with lab/ROLE's
    extensions and settings; `env`: more of its environment); yields its URL."""
    import time
    import urllib.request
    port = free_port()
    with open(root / "lab.log", "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
             f"--IdentityProvider.token={LAB_TOKEN}", f"--ServerApp.root_dir={root}",
             f"--LabApp.app_settings_dir={ROOT / 'lab' / role}", *extra_args]
            + (["--allow-root"] if os.geteuid() == 0 else []),  # CI runs as root
            cwd=root, stdout=log, stderr=subprocess.STDOUT,
            env=dict(tool_env(), JUPYTER_CONFIG_PATH=str(ROOT / "lab" / role), **(env or {})))
    base = f"http://127.0.0.1:{port}"  # the server has the log file's descriptor of its own
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={LAB_TOKEN}", timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"JupyterLab did not start:\n{(root / 'lab.log').read_text()[-3000:]}")
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=LAB_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise AssertionError(f"JupyterLab did not stop within {LAB_STOP_SECONDS} s of SIGTERM") from None


# ---- ./course's argument checks: a course with no .venv at all, so reaching anything heavy fails ----

ARGUMENT_NOTEBOOK = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def argument_course(root: Path) -> Path:
    """The ./course script and its checks, a source/ and release/ of two assignments, a
    student's work/ and an instructor's runtime/ with one submission and no grades."""
    for path in ("course", "classgrader/cli.py", "autograder/arguments.py", "classgrader/arguments.py",
                 "classgrader/class_run/classroom.py"):  # (the pipeline's mark: what makes instructor commands exist)
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, root / path)
    for assignment in ("01_tensors", "02_devices"):
        for folder in ("source", "release"):
            (root / folder / assignment).mkdir(parents=True)
            (root / folder / assignment / f"{assignment}.ipynb").write_text(json.dumps(ARGUMENT_NOTEBOOK))
    (root / "work" / "01_tensors").mkdir(parents=True)
    (root / "work" / "01_tensors" / "01_tensors.ipynb").write_text(json.dumps(ARGUMENT_NOTEBOOK))
    (root / "runtime" / "submitted" / "alice" / "02_devices").mkdir(parents=True)
    (root / "README.md").write_text("# not a notebook\n")
    (root / "work" / "truncated.ipynb").write_text(json.dumps(ARGUMENT_NOTEBOOK)[:25])
    return root


def snapshot(root: Path) -> dict:
    """Every file's digest (and every folder) under root: what "nothing changed" compares."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*")) if "__pycache__" not in p.parts}


def run_course(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["./course", *args], cwd=root, capture_output=True, text=True, timeout=30)


def imports_of_check(root: Path, script: str, *command: str) -> list[str]:
    """Which heavy modules running `script COMMAND README.md` (as ./course does) imports."""
    probe = ("import runpy, sys; sys.argv = ['x', *{!r}, 'README.md']\n"
             "try: runpy.run_path({!r}, run_name='__main__')\n"
             "except SystemExit: pass\n"
             "print(sorted(m for m in ('torch', 'nbgrader', 'nbformat', 'traitlets') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-P", "-c", probe.format(command, script)], cwd=root,
                          capture_output=True, text=True, timeout=30)
    return ast.literal_eval(done.stdout.strip()) if done.returncode == 0 else [done.stderr]


def refused_in_one_line(root: Path, args: str, line: str) -> None:
    """./course ARGS exits 2 with exactly `line` on stderr, changes nothing under root, and
    never got as far as building the environment."""
    before = snapshot(root)
    done = run_course(root, *args.split())
    assert (done.returncode, done.stderr, done.stdout) == (2, line + "\n", "")
    assert snapshot(root) == before
    assert not (root / ".venv").exists()  # the check came before the environment


def live_processes(uid_wanted) -> list[tuple[int, int]]:
    """(pid, uid) of every process on the machine, zombies aside, whose uid satisfies uid_wanted."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:  # gone meanwhile
            continue
        uid = int(re.search(r"Uid:\s+(\d+)", text)[1])
        if uid_wanted(uid) and "State:\tZ" not in text:
            found.append((int(status.parent.name), uid))
    return found


WORK_AREAS = "/run/course-kernels/"  # classgrader/kernels/sandbox.WORKAREAS


def work_area_mounts(uid_wanted) -> set[str]:
    """The kernels' work areas mounted where this process can see them, of the kernels whose uid
    satisfies uid_wanted: each is a tmpfs mounted for its kernel's uid (sandbox.make_workarea)."""
    found = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        owner = re.search(r"(?:^|,)uid=(\d+)", fields[-1])  # the file system's own options, last
        if fields[4].startswith(WORK_AREAS) and owner and uid_wanted(int(owner[1])):
            found.add(fields[4])
    return found


HEAVY = ("torch", "nbgrader", "matplotlib", "nbformat")  # what takes seconds to import


def run_module(root: Path, module: str, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`python -m MODULE ARGS` in root: (the run, which of HEAVY it had imported when it ended),
    for "arguments are checked before anything heavy loads", however busy the machine."""
    probe = root / ".heavy-imports"
    code = ("import atexit, runpy, sys\n"
            "path = sys.argv.pop(1)\n"
            f"atexit.register(lambda: open(path, 'w').write(' '.join(m for m in {HEAVY!r} if m in sys.modules)))\n"
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n")
    done = subprocess.run([sys.executable, "-c", code, str(probe), *args], cwd=root, env=tool_env(),
                          capture_output=True, text=True, timeout=300)
    loaded = probe.read_text().split()
    probe.unlink()
    return done, loaded
