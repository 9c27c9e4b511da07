"""classroom: triage of a submission folder, a class run that survives losing a worker, and one that
stops when it cannot start kernels."""
import subprocess
import sys

import pytest

from classgrader.class_run.classroom import triage
from coursekit import ROOT, build_submission, make_course, read_notebook, tool_env, write_notebook

NOTEBOOK = "01_tensors.ipynb"


def test_triage_names_what_cannot_be_graded(tmp_path):
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / NOTEBOOK).write_text((ROOT / "release" / "01_tensors" / NOTEBOOK).read_text())
    assert triage(tmp_path / "ok", [NOTEBOOK]) == ({}, [])
    (tmp_path / "renamed").mkdir()
    (tmp_path / "renamed" / "mine.ipynb").write_text("{}")
    broken, flags = triage(tmp_path / "renamed", [NOTEBOOK])
    assert flags == ["renamed notebook: found mine.ipynb, expected 01_tensors.ipynb"] and NOTEBOOK in broken
    (tmp_path / "empty").mkdir()
    assert triage(tmp_path / "empty", [NOTEBOOK])[1] == ["missing notebook: 01_tensors.ipynb was not submitted"]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / NOTEBOOK).write_text('{"cells": [')
    assert triage(tmp_path / "bad", [NOTEBOOK])[1][0].startswith("invalid notebook: 01_tensors.ipynb cannot be read")


# Grading that kills or holds its worker, whatever the cause: here the worker's own hook before
# a student (nbgrader's pre_convert_hook, in the real worker) kills it once (as soon as its kernel
# runs), crashes it, or never returns.
FAULTY_WORKER = """
import os, signal, time
from classgrader.class_run import progress
from classgrader.kernels import warm_kernel
KILLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "survivor-killed")
started = warm_kernel.WarmKernelManager._async_post_start_kernel
async def then_killed(self, **kw):  # as the OOM killer or an operator would, once
    await started(self, **kw)
    if not os.path.exists(KILLED):
        with open(KILLED, "w") as note:
            note.write(open("/proc/self/comm").read().strip())  # whom it kills: the worker itself
        os.kill(os.getpid(), signal.SIGKILL)
def before(assignment, student, notebooks):
    progress.before(assignment, student, notebooks)
    name = progress._student(notebooks)
    if name == "survivor":
        warm_kernel.WarmKernelManager._async_post_start_kernel = then_killed
    if name == "crasher":
        os.kill(os.getpid(), signal.SIGSEGV)
    if name == "hog":  # the grader's own memory grows without end
        hoard = [b"x" * 2**28 for _ in range(64)]
    while name == "staller":
        time.sleep(1)
"""
ORDINARY = ["s0", "s1", "s2"]
# Sorted names are dealt to the workers in turn: with these, most orders of grading end in three rounds.
STUDENTS = ["crasher", "hog", *ORDINARY, "staller", "survivor"]


def left_in(scratch) -> list[str]:
    """What a class run left in its temporary folder `scratch`, torch's compiler cache
    (torchinductor_USER, which the class run keeps for every run) aside."""
    return [str(p.relative_to(scratch)) for p in scratch.rglob("*")
            if not p.relative_to(scratch).parts[0].startswith("torchinductor_")]


@pytest.fixture(scope="module")
def faulty_class(tmp_path_factory):
    """One class of 01_tensors on two workers, whose grading of some students kills its worker:
    the tests below read its outcome (one class run, its rounds of retries, for both)."""
    course = make_course(tmp_path_factory.mktemp("faulty"), ["01_tensors"])
    (course / "faulty_worker.py").write_text(FAULTY_WORKER)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write('\nc.Autograde.pre_convert_hook = "faulty_worker.before"\nc.ClassRun.student_seconds = 30\n'
                     f'c.ClassRun.worker_memory_bytes = {3 * 2**30}\n')
    source = read_notebook(ROOT / "source" / "01_tensors" / NOTEBOOK)
    release = read_notebook(course / "release" / "01_tensors" / NOTEBOOK)
    for student in STUDENTS:
        write_notebook(build_submission(source, release, {}),
                       course / "runtime" / "submitted" / student / "01_tensors" / NOTEBOOK)
    # A temporary folder of the run's own, to see what its killed workers leave there.
    scratch = tmp_path_factory.mktemp("faulty-tmp")
    run = subprocess.run([sys.executable, "-m", "classgrader.class_run.classroom", "01_tensors", "--workers", "2"],
                         cwd=course, env=dict(tool_env(), TMPDIR=str(scratch)), capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    grading = course / "runtime" / "grading" / "01_tensors"
    left = left_in(scratch) + [p.name for p in grading.glob("*.tmp")]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        totals = {s.student.id: s.score for s in gradebook.find_assignment("01_tensors").submissions}
    import csv
    with open(course / "runtime" / "flags.csv", newline="") as handle:
        reasons = {row["student_id"]: row["reason"] for row in csv.DictReader(handle)}
    done = sorted(p.stem for p in (course / "runtime" / "grading" / "01_tensors" / "done").glob("*.json"))
    killed = course / "survivor-killed"
    return {"stdout": run.stdout, "totals": totals, "reasons": reasons, "done": done,
            "killed": killed.read_text() if killed.exists() else None, "left": left}


def test_a_dead_worker_does_not_stop_the_class(faulty_class, covered):
    assert faulty_class["killed"] == "grade_worker", "the survivor's worker was not killed while grading it"
    assert faulty_class["done"] == sorted(STUDENTS)  # everyone has a verdict
    graded = ["survivor", *ORDINARY]
    assert {s: faulty_class["totals"].get(s) for s in graded} == dict.fromkeys(graded, 16.0)
    assert "survivor" not in faulty_class["reasons"], faulty_class["reasons"]
    covered("a worker killed (SIGKILL) once its kernel runs: that student is graded again, in full and unflagged, "
            "the rest of its shard by a new worker; the other workers carry on")


def test_a_crash_or_a_stall_costs_only_its_cause(faulty_class, covered):
    reasons, stdout = faulty_class["reasons"], faulty_class["stdout"]
    assert {s: faulty_class["totals"].get(s) for s in ORDINARY} == dict.fromkeys(ORDINARY, 16.0)
    assert "killed by SIGSEGV" in reasons["crasher"] and "not graded" in reasons["crasher"], reasons
    assert "took longer than 30 s" in reasons["staller"], reasons
    from classgrader.kernels import cgroup
    if cgroup.unavailable_reason() is None:  # else the hog's worker meets its address-space limit
        assert "went past its memory limit of 3.0 GiB" in reasons["hog"], reasons
    assert set(reasons) == {"crasher", "hog", "staller"}
    assert all(f"NOT GRADED: {name}" in stdout for name in ("crasher", "hog", "staller"))
    covered("a student whose grading crashes its worker (SIGSEGV), grows it past its memory cgroup or holds it "
            "(past the watchdog) is graded alone once more, then marked failed with the reason; every other "
            "student of its shard is graded")


def test_killed_workers_leave_nothing_in_the_temporary_folder(faulty_class, covered):
    """A worker killed while its kernel runs never shuts the kernel down: the kernel's connection
    file (its key included) stayed in /tmp. A worker's temporary folder is its own, removed once it ends."""
    assert faulty_class["killed"] == "grade_worker", "no worker was killed while its kernel ran: nothing to leave"
    assert faulty_class["left"] == [], faulty_class["left"]
    covered("a class run whose workers were killed (SIGKILL, SIGSEGV, the watchdog) leaves nothing in its "
            "temporary folder (no kernel connection file) and no worker's temporary folder")


def test_a_run_whose_zygote_is_gone_stops_with_the_reason(tmp_path, covered):
    course = make_course(tmp_path, ["01_tensors"])
    release = read_notebook(course / "release" / "01_tensors" / NOTEBOOK)
    write_notebook(release, course / "runtime" / "submitted" / "s0" / "01_tensors" / NOTEBOOK)
    script = (
        "import os, sys\n"
        "from classgrader.kernels import sandbox\n"
        "from classgrader.class_run.classroom import ClassRun, ZygoteGone\n"
        "from classgrader.kernels.kernel_zygote import Zygote\n"
        # As ./course autograde does first: work areas its workers mount (and the one a killed
        # worker leaves) stay in this run's own mount namespace, not the machine's.
        "sandbox.private_mounts()\n"
        "zygote = Zygote(socket_path=os.path.join(sys.argv[1], 'missing', 'z.sock'), wait=False)\n"
        "zygote.process.wait()\n"
        "try:\n"
        "    ClassRun(os.getcwd(), '01_tensors', 1, False, zygote).run()\n"
        "except ZygoteGone as error:\n"
        "    print('STOPPED:', error)\n")
    scratch = tmp_path / "tmp"  # the run's temporary folder: a zygote given its socket's path makes none there
    scratch.mkdir()
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=course,
                            env=dict(tool_env(), TMPDIR=str(scratch)), capture_output=True, text=True, timeout=300)
    assert "STOPPED: the kernel zygote stopped (exit status 1)" in result.stdout, result.stdout + result.stderr
    assert not list((course / "runtime" / "grading" / "01_tensors" / "done").glob("*.json"))
    assert left_in(scratch) == []
    covered("a class run whose kernel zygote died stops at once, with the reason, and counts no one as graded")
