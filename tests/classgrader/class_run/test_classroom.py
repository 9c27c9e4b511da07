"""classroom: triage of a submission folder, and a class run that survives losing a worker."""
import os
import signal
import subprocess
import sys
import time

import pytest

from classgrader.class_run.classroom import triage
from coursekit import ROOT, build_submission, make_course, read_notebook, tool_env, write_notebook

pytestmark = pytest.mark.kernels

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


def workers_of(pid: int) -> list[int]:
    """The grade_worker processes started by the class run `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
                name = open(f"/proc/{entry}/comm").read().strip()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and name == "grade_worker":
                found.append(int(entry))
    return found


def test_a_dead_worker_does_not_stop_the_class(tmp_path, covered):
    course = make_course(tmp_path, ["01_tensors"])
    source = read_notebook(ROOT / "source" / "01_tensors" / NOTEBOOK)
    release = read_notebook(course / "release" / "01_tensors" / NOTEBOOK)
    students = [f"s{n}" for n in range(4)]  # two a worker: the killed one still has one left
    for student in students:
        write_notebook(build_submission(source, release, {}), course / "runtime" / "submitted" / student / "01_tensors" / NOTEBOOK)
    run = subprocess.Popen([sys.executable, "-m", "classgrader.class_run.classroom", "01_tensors", "--workers", "2"],
                           cwd=course, env=tool_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(workers_of(run.pid)) < 2:
        time.sleep(0.1)
    victims = workers_of(run.pid)
    assert victims, "no worker started"
    done = course / "runtime" / "grading" / "01_tensors" / "done"
    while time.time() < deadline and not list(done.glob("*.json")):
        time.sleep(0.05)
    os.kill(victims[0], signal.SIGKILL)  # one student of the class done: each worker has more left
    output, _ = run.communicate(timeout=600)
    assert run.returncode == 0, output[-3000:]
    assert sorted(p.stem for p in done.glob("*.json")) == students
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        totals = {s.student.id: s.score for s in gradebook.find_assignment("01_tensors").submissions}
    assert totals == {student: 16.0 for student in students}
    covered("a worker killed mid-run: its students were graded by a new one, the others carried on")


# Grading that kills or holds its worker, whatever the cause: here the worker's own hook before
# a student (nbgrader's pre_convert_hook, in the real worker) crashes it or never returns.
FAULTY_WORKER = """
import os, signal, time
from classgrader.class_run import progress
def before(assignment, student, notebooks):
    progress.before(assignment, student, notebooks)
    name = progress._student(notebooks)
    if name == "crasher":
        os.kill(os.getpid(), signal.SIGSEGV)
    if name == "hog":  # the grader's own memory grows without end
        hoard = [b"x" * 2**28 for _ in range(64)]
    while name == "staller":
        time.sleep(1)
"""


def test_a_crash_or_a_stall_costs_only_its_cause(tmp_path, covered):
    course = make_course(tmp_path, ["01_tensors"])
    (course / "faulty_worker.py").write_text(FAULTY_WORKER)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write('\nc.Autograde.pre_convert_hook = "faulty_worker.before"\nc.ClassRun.student_seconds = 30\n'
                     f'c.ClassRun.worker_memory_bytes = {3 * 2**30}\n')
    source = read_notebook(ROOT / "source" / "01_tensors" / NOTEBOOK)
    release = read_notebook(course / "release" / "01_tensors" / NOTEBOOK)
    students = ["crasher", "hog", "s0", "s1", "s2", "staller"]
    for student in students:
        write_notebook(build_submission(source, release, {}), course / "runtime" / "submitted" / student / "01_tensors" / NOTEBOOK)
    run = subprocess.run([sys.executable, "-m", "classgrader.class_run.classroom", "01_tensors", "--workers", "2"],
                         cwd=course, env=tool_env(), capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        totals = {s.student.id: s.score for s in gradebook.find_assignment("01_tensors").submissions}
    assert {student: totals.get(student) for student in ("s0", "s1", "s2")} == dict.fromkeys(("s0", "s1", "s2"), 16.0)
    import csv
    with open(course / "runtime" / "flags.csv", newline="") as handle:
        reasons = {row["student_id"]: row["reason"] for row in csv.DictReader(handle)}
    assert "killed by SIGSEGV" in reasons["crasher"] and "not graded" in reasons["crasher"], reasons
    assert "took longer than 30 s" in reasons["staller"], reasons
    from classgrader.kernels import cgroup
    if cgroup.unavailable_reason() is None:  # else the hog's worker meets its address-space limit
        assert "went past its memory limit of 3.0 GiB" in reasons["hog"], reasons
    assert set(reasons) == {"crasher", "hog", "staller"}
    assert all(f"NOT GRADED: {name}" in run.stdout for name in ("crasher", "hog", "staller"))
    covered("a student whose grading crashes its worker (SIGSEGV), grows it past its memory cgroup or holds it "
            "(past the watchdog) is graded alone once more, then marked failed with the reason; every other "
            "student of its shard is graded")


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
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=course, env=tool_env(),
                            capture_output=True, text=True, timeout=300)
    assert "STOPPED: the kernel zygote stopped (exit status 1)" in result.stdout, result.stdout + result.stderr
    assert not list((course / "runtime" / "grading" / "01_tensors" / "done").glob("*.json"))
    covered("a class run whose kernel zygote died stops at once, with the reason, and counts no one as graded")
