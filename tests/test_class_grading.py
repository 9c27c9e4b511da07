"""A whole class, hostile and broken notebooks included, through `./course autograde`
(classgrader/class_run/classroom.py: real nbgrader workers, warm sandboxed kernels), on a temporary course.

What must hold: the run completes in one command; every honest submission scores exactly what
it deserves; every tampering attempt scores what its honest part deserves and is flagged with
the reason; a kernel death, timeout or memory bomb costs only what it affected; submitted files
are byte-identical after grading; a run killed midway and started again ends where an
uninterrupted one does; running again is idempotent. Prints the table scenario -> expected
score -> score -> flagged."""
import csv
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from coursekit import HANG_SECONDS, live_processes, make_course, tool_env, work_area_mounts
from kernel_watch import KernelWatch
from scenarios.hostile_class import STUDENTS, expected_score, submit

pytestmark = pytest.mark.early(1)

# COURSE_CLASS_ONLY=c68,c7 grades only the students whose ids start so (a quicker look at a few).
ONLY = tuple(filter(None, os.environ.get("COURSE_CLASS_ONLY", "").split(",")))
STUDENTS = [s for s in STUDENTS if not ONLY or s.student.startswith(ONLY)]
ASSIGNMENTS = sorted({s.assignment for s in STUDENTS})


def classroom(course: Path, *args, timeout=HANG_SECONDS) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "classgrader.class_run.classroom", *args], cwd=course, env=tool_env(),
                          capture_output=True, text=True, timeout=timeout)


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def gradebook_state(course: Path) -> list[tuple]:
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        return sorted((a.name, s.student.id, n.name, g.name, g.score, g.needs_manual_grade)
                      for a in gradebook.assignments for s in a.submissions
                      for n in s.notebooks for g in n.grades)


def flags(course: Path) -> dict[tuple[str, str], list[str]]:
    found = {}
    with open(course / "runtime" / "flags.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            found.setdefault((row["assignment"], row["student_id"]), []).append(row["reason"])
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    # Every assignment generated, as the other class runs' courses are (one build for them all);
    # the class run grades only ASSIGNMENTS.
    course = make_course(tmp_path_factory.mktemp("class"))
    submit(course, STUDENTS)
    before = digests(course / "runtime" / "submitted")
    protected = digests(course / "release") | digests(course / "source")

    # The uids of this class run's kernels: what they leave behind is found by them, and another
    # test file's kernels running meanwhile (under pytest-xdist) are not counted.
    with KernelWatch() as watch:
        # First 01_tensors run: killed once a few students are done, then started again.
        first = ASSIGNMENTS[0]
        done = course / "runtime" / "grading" / first / "done"
        # Its temporary folder is the test's own: killed with its whole session, the zygote too, it
        # cleans nothing up (its socket's folder would stay in /tmp).
        run = subprocess.Popen([sys.executable, "-m", "classgrader.class_run.classroom", first, "--workers", "2"],
                               cwd=course, env=dict(tool_env(), TMPDIR=str(tmp_path_factory.mktemp("killed-tmp"))),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 600
        while time.time() < deadline and run.poll() is None and len(list(done.glob("*.json"))) < 6:
            time.sleep(0.2)
        killed_after = len(list(done.glob("*.json")))
        if run.poll() is None:  # a class narrowed by COURSE_CLASS_ONLY may be done already
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()

        # Then the whole class, every assignment in one run, as an instructor would.
        start = time.perf_counter()
        result = classroom(course, *ASSIGNMENTS, "--workers", "2")
        seconds = time.perf_counter() - start
        assert result.returncode == 0, f"autograde failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        outputs = dict.fromkeys(ASSIGNMENTS, result.stdout)
        state = gradebook_state(course)
        flagged = flags(course)
        again = classroom(course, *ASSIGNMENTS, "--workers", "2")
    return {"course": course, "before": before, "protected": protected, "outputs": outputs,
            "state": state, "flags": flagged, "again": again, "seconds": seconds, "killed_after": killed_after,
            "kernel_uids": watch.uids, "watched": watch.listening}


def score(state, student) -> float:
    return sum(s for a, who, _, _, s, _ in state if who == student.student and a == student.assignment)


def test_class_table(graded, covered):
    """Every student: the expected score, and flagged exactly when (and why) they should be."""
    course, rows, wrong = graded["course"], [], []
    for student in STUDENTS:
        want, got = expected_score(student, course), score(graded["state"], student)
        reasons = graded["flags"].get((student.assignment, student.student), [])
        ok = got == pytest.approx(want) and (
            (student.flag is None and not reasons) or
            (student.flag is not None and any(student.flag in r for r in reasons)))
        rows.append(f"{'ok ' if ok else 'BAD'} {student.student:<30} {student.scenario[:44]:<44} "
                    f"{want:>5g} {got:>5g}  {'flagged: ' + reasons[0][:70] if reasons else '-'}")
        if not ok:
            wrong.append(rows[-1])
    table = "\n".join([f"    {'student':<30} {'scenario':<44} {'expct':>5} {'score':>5}  flagged", *rows])
    print("\n" + table)
    covered(f"synthetic class: {len(STUDENTS)} students, {len(STUDENTS) - len(wrong)} as expected\n" + table)
    assert not wrong, "students graded other than expected:\n" + "\n".join(wrong)


def test_submitted_and_course_files_are_untouched(graded):
    course = graded["course"]
    assert digests(course / "runtime" / "submitted") == graded["before"]
    assert digests(course / "release") | digests(course / "source") == graded["protected"]


def kernel_processes(uids: set[int]) -> list[str]:
    """Processes running as the private uid of one of the class run's kernels (sandbox.private_user)."""
    return [f"{pid} (uid {uid})" for pid, uid in live_processes(uids.__contains__)]


def test_the_class_runs_kernels_were_watched(graded):
    """The checks below look for the kernels' leftovers by these uids: none heard, nothing checked."""
    assert graded["watched"], "the kernel watch could not listen (it needs root): no kernel's leftovers can be found"
    assert graded["kernel_uids"], "the kernel watch heard no kernel of the class run take its uid"


def test_no_process_outlives_its_kernel(graded, covered):
    """c46 left a double-forked setsid process behind: it ended with its kernel's namespace."""
    assert kernel_processes(graded["kernel_uids"]) == []
    covered(f"after the class run no process of its {len(graded['kernel_uids'])} kernels is left "
            "(the daemon student's included)")


def unmounted_leftovers() -> list[str]:
    """What lies in the work areas' folder other than empty mount-point folders and work areas
    mounted here (none of the class run's, as checked: another program's, a sandbox test's)."""
    areas, found = Path("/run/course-kernels"), []
    for entry in areas.iterdir() if areas.exists() else []:
        try:
            if not entry.is_mount() and (not entry.is_dir() or any(entry.iterdir())):
                found.append(str(entry))
        except FileNotFoundError:  # another program's, removed meanwhile
            pass
    return found


def test_disk_use_stays_bounded(graded, covered):
    """c47 wrote until its 256 MiB work area was full, c38 a 200 MB file: none of it reaches runtime/."""
    course = graded["course"]
    sizes = {folder: sum(p.stat().st_size for p in (course / "runtime" / folder).rglob("*") if p.is_file())
             for folder in ("autograded", "grading")}
    assert sizes["autograded"] < 64 * 2**20 and sizes["grading"] < 64 * 2**20, sizes
    # Work areas are mounted in the class run's own mount namespace: none of its kernels' is left
    # here, even from the run killed midway (which may leave empty mount-point folders, harmless).
    assert work_area_mounts(graded["kernel_uids"].__contains__) == set()
    assert unmounted_leftovers() == []
    covered(f"runtime/autograded holds {sizes['autograded'] / 2**20:.1f} MiB for {len(STUDENTS)} students; "
            "no work area is left mounted")


def test_a_killed_run_resumes(graded, covered):
    assert graded["killed_after"] >= 1, "the first run was not killed midway"
    assert "already graded" in graded["outputs"][ASSIGNMENTS[0]]
    covered(f"killed after {graded['killed_after']} students, resumed: the table above is the resumed run")


def test_running_again_changes_nothing(graded, covered):
    result = graded["again"]
    assert result.returncode == 0 and result.stdout.count(" 0 to grade") == len(ASSIGNMENTS), result.stdout[-2000:]
    assert gradebook_state(graded["course"]) == graded["state"]
    assert flags(graded["course"]) == graded["flags"]
    covered(f"./course autograde {' '.join(ASSIGNMENTS)}: {len(STUDENTS)} students in {graded['seconds']:.0f} s "
            f"on 2 workers ({graded['killed_after']} of them graded before the first run was killed)")


def test_progress_names_every_student(graded):
    output = graded["outputs"][ASSIGNMENTS[1]]
    for student in STUDENTS:
        if student.assignment == ASSIGNMENTS[1]:
            assert student.student in output
