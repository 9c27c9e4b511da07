"""The whole chain, for real, as an instructor runs it: scripted submissions -> `./course
autograde` (classgrader.class_run.classroom: triage, warm sandboxed kernels, real nbgrader workers) ->
`./course feedback` (nbgrader generate_feedback) -> `./course export` (nbgrader export), on a
temporary course directory. Stock `nbgrader autograde` with the course's configuration is run
by tests/test_exchange_flow.py.

Checks: the solution scores full marks; the untouched release scores zero and the run
completes; each misconception loses exactly the points of the item it breaks and its
feedback names it; alternative correct answers and answers that warn score full marks;
feedback shows no hidden-test code; the export agrees with the gradebook; submitted files
are byte-identical after grading.

The tests are split over tests/test_autograde_e2e_*.py, a few units each, so that the test
workers share the grading: each of those files sets UNITS and takes everything else from here
(`from autograde_e2e import *`: the module fixture, the tests and their parametrization)."""
import csv
import hashlib
import html
import os
import re
import subprocess
import sys
import time

import pytest
from nbconvert import HTMLExporter
from nbformat import reads
from nbgrader.api import Gradebook

from coursekit import (
    HANG_SECONDS,
    HIDDEN_BLOCK,
    ROOT,
    build_submission,
    grade_cells,
    make_course,
    nbgrader,
    read_notebook,
    source_text,
    tool_env,
    write_notebook,
)
from scenarios import unit01, unit02, unit03, unit04, unit05, unit06, unit07, unit08

__all__ = [
    "graded",
    "pytest_generate_tests",
    "test_each_submission_scores_what_it_deserves",
    "test_export_agrees_with_the_gradebook",
    "test_feedback_says_what_is_wrong",
    "test_feedback_shows_no_hidden_test_code",
    "test_submitted_files_are_untouched",
    "test_the_leak_detector_sees_code_in_plain_html",
    "units",
]

ALL_UNITS = [unit01, unit02, unit03, unit04, unit05, unit06, unit07, unit08]


def units(*assignments: str) -> list:
    """The scenario modules of these assignments; while working on one unit,
    COURSE_E2E_UNITS=06_modules ./course test tests/test_autograde_e2e_*.py keeps only it."""
    chosen = [u for u in ALL_UNITS if u.ASSIGNMENT in assignments]
    assert len(chosen) == len(assignments), f"unknown assignments in {assignments}"
    if os.environ.get("COURSE_E2E_UNITS"):
        chosen = [u for u in chosen if u.ASSIGNMENT in os.environ["COURSE_E2E_UNITS"].split(",")]
    return chosen


def cases(module) -> list:
    return [(unit, s) for unit in module.UNITS for s in unit.SCENARIOS]


def case_id(case):
    unit, scenario = case
    return f"{unit.ASSIGNMENT}-{scenario.student}"


def pytest_generate_tests(metafunc):
    """`case` runs over the scenarios of the file's UNITS (with `says` only where the test asks)."""
    if "case" in metafunc.fixturenames:
        found = cases(metafunc.module)
        if metafunc.definition.get_closest_marker("says"):
            found = [c for c in found if c[1].says]
        metafunc.parametrize("case", found, ids=case_id)


def student_id(unit, scenario) -> str:
    return f"{unit.ASSIGNMENT[:2]}_{scenario.student}"


def visible_text(page: str) -> str:
    """The text a reader of an HTML page sees, whitespace removed (so highlighted code,
    split into many spans, still matches its source line)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    return re.sub(r"\s+", "", text)


def hidden_lines(unit) -> list[str]:
    """Every substantial line of hidden-test code in the unit's source notebook that the
    student version does not show anyway."""
    source = read_notebook(ROOT / "source" / unit.ASSIGNMENT / unit.NOTEBOOK)
    release = read_notebook(ROOT / "release" / unit.ASSIGNMENT / unit.NOTEBOOK)
    visible = re.sub(r"\s+", "", "".join(source_text(c) for c in release["cells"]))
    lines = []
    for cell in grade_cells(source):
        for block in HIDDEN_BLOCK.findall(source_text(cell)):
            lines += [line.strip() for line in block.splitlines()
                      if len(line.strip()) >= 25 and re.sub(r"\s+", "", line) not in visible]
    return lines


def course_command(course, module: str, *args, timeout=HANG_SECONDS) -> subprocess.CompletedProcess:
    """What `./course autograde|...` runs, in `course`; fails with its output if it fails."""
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=course, env=tool_env(),
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"{module} {' '.join(args)} exited {done.returncode}:\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return done


@pytest.fixture(scope="module")
def graded(request, tmp_path_factory):
    """A course of the file's units; submit every scenario, then grade each unit with
    `./course autograde`, make feedback and export, once."""
    module_units = request.module.UNITS
    if not module_units:
        pytest.skip("COURSE_E2E_UNITS keeps none of this file's units")
    # Every assignment, graded or not: the export then has never-submitted rows to check.
    course = make_course(tmp_path_factory.mktemp("e2e"))
    submitted = {}
    for unit, scenario in cases(request.module):
        source = read_notebook(ROOT / "source" / unit.ASSIGNMENT / unit.NOTEBOOK)
        release = read_notebook(course / "release" / unit.ASSIGNMENT / unit.NOTEBOOK)
        nb = build_submission(source, release, scenario.answers, scenario.extra_cells)
        path = course / "runtime" / "submitted" / student_id(unit, scenario) / unit.ASSIGNMENT / unit.NOTEBOOK
        write_notebook(nb, path)
        submitted[path] = hashlib.sha256(path.read_bytes()).hexdigest()
    start = time.perf_counter()
    # One run for the file's units, as an instructor grades several assignments at once; one
    # worker: the test files already grade side by side, one per core, and each extra worker
    # runs the reference notebook once more.
    done = course_command(course, "classgrader.class_run.classroom", *(u.ASSIGNMENT for u in module_units),
                          "--workers", "1")
    for unit in module_units:
        assert f"{unit.ASSIGNMENT}: {len(unit.SCENARIOS)} submissions, {len(unit.SCENARIOS)} to grade" in done.stdout, \
            done.stdout
    assert "NOT GRADED" not in done.stdout, done.stdout
    seconds = (time.perf_counter() - start) / sum(len(u.SCENARIOS) for u in module_units)
    for unit in module_units:
        nbgrader(course, "generate_feedback", unit.ASSIGNMENT)
    nbgrader(course, "export")
    return {"course": course, "submitted": submitted, "seconds": seconds, "grades": gradebook_grades(course)}


def gradebook_grades(course) -> dict[tuple[str, str, str], dict[str, tuple[float, float]]]:
    """(assignment, student, notebook) -> {grade: (score, max_score)}: every grade the gradebook
    holds, read in one opening (each opening costs a database engine's start)."""
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        return {(a.name, s.student.id, n.name): {g.name: (g.score, g.max_score) for g in n.grades}
                for a in gradebook.assignments for s in a.submissions for n in s.notebooks}


def scores(graded, unit, scenario) -> dict[str, tuple[float, float]]:
    key = (unit.ASSIGNMENT, student_id(unit, scenario), unit.NOTEBOOK.removesuffix(".ipynb"))
    assert key in graded["grades"], f"the gradebook holds no submission {key}"
    return graded["grades"][key]


def feedback_html(course, unit, scenario) -> str:
    path = (course / "runtime" / "feedback" / student_id(unit, scenario) / unit.ASSIGNMENT
            / unit.NOTEBOOK.replace(".ipynb", ".html"))
    return path.read_text(encoding="utf-8")


def test_each_submission_scores_what_it_deserves(case, graded, covered):
    unit, scenario = case
    got = scores(graded, unit, scenario)
    assert got, "no grades recorded"
    expected = {name: (0.0 if "*" in scenario.loses or name in scenario.loses else maximum)
                for name, (_, maximum) in got.items()}
    assert {n: s for n, (s, _) in got.items()} == expected
    total = sum(s for s, _ in got.values())
    covered(f"{scenario.student}: {total:g}/{sum(m for _, m in got.values()):g}"
            f" (loses {sorted(scenario.loses) or 'nothing'})")


@pytest.mark.says  # only the scenarios whose feedback must say something
def test_feedback_says_what_is_wrong(case, graded):
    unit, scenario = case
    text = html.unescape(feedback_html(graded["course"], unit, scenario))
    for phrase in scenario.says:
        assert phrase in text, f"{scenario.student}'s feedback does not say {phrase!r}"


def test_feedback_shows_no_hidden_test_code(case, graded):
    unit, scenario = case
    page = visible_text(feedback_html(graded["course"], unit, scenario))
    # A hidden line the student's own code also holds (a loop written the textbook way) is theirs.
    submitted = (graded["course"] / "runtime" / "submitted" / student_id(unit, scenario) / unit.ASSIGNMENT
                 / unit.NOTEBOOK)
    own = re.sub(r"\s+", "", "".join(source_text(c) for c in read_notebook(submitted)["cells"]))
    plain = [re.sub(r"\s+", "", line) for line in hidden_lines(unit)]
    leaked = [line for line in plain if line in page and line not in own]
    assert not leaked, f"hidden-test code in {scenario.student}'s feedback: {leaked[:3]}"
    assert "Gradedon:cpu" in page or "Gradedon:cuda" in page or "Gradedon:mps" in page, (
        "the feedback does not name the grading device")


def test_the_leak_detector_sees_code_in_plain_html(request, graded):
    """Guards the test above: a plain HTML export of an autograded notebook (hidden tests
    restored) must show up as leaking, or the check could never fail."""
    unit, scenario = cases(request.module)[0]
    autograded = (graded["course"] / "runtime" / "autograded" / student_id(unit, scenario) / unit.ASSIGNMENT
                  / unit.NOTEBOOK)
    page, _ = HTMLExporter().from_notebook_node(reads(autograded.read_text(), as_version=4))
    lines = hidden_lines(unit)
    assert lines and all(re.sub(r"\s+", "", line) in visible_text(page) for line in lines)


def test_export_agrees_with_the_gradebook(request, graded, covered):
    course = graded["course"]
    with open(course / "runtime" / "grades.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    rows = {(r["assignment"], r["student_id"]): r["score"] for r in table}
    graded_on = {(r["assignment"], r["student_id"]): r["graded_on"] for r in table}
    submitted = set()
    for unit, scenario in cases(request.module):
        total = sum(s for s, _ in scores(graded, unit, scenario).values())
        key = (unit.ASSIGNMENT, student_id(unit, scenario))
        assert float(rows[key]) == pytest.approx(total)
        submitted.add(key)
    # A student who never submitted an assignment has no score for it: empty, not a 0.
    never = [key for key in rows if key not in submitted]
    assert never and all(rows[key] == "" for key in never), [rows[key] for key in never if rows[key] != ""][:3]
    # Each submission says where its tests ran (the class run's record of it); a blank one says nothing.
    assert all(graded_on[key].split(" ")[0] in ("cpu", "cuda", "mps") for key in submitted), \
        sorted({graded_on[key] for key in submitted})
    assert all(graded_on[key] == "" for key in never)
    covered(f"grades.csv: {len(submitted)} rows agree with the gradebook, {len(never)} never-submitted rows empty")


def test_submitted_files_are_untouched(graded, covered, request):
    changed = [p for p, digest in graded["submitted"].items()
               if hashlib.sha256(p.read_bytes()).hexdigest() != digest]
    assert not changed, f"grading changed submitted files: {changed}"
    units = " ".join(u.ASSIGNMENT for u in request.module.UNITS)
    covered(f"./course autograde {units}: {graded['seconds']:.1f} s per submission")
