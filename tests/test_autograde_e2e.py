"""The whole chain, for real: scripted submissions -> `nbgrader autograde` ->
`nbgrader generate_feedback` -> `nbgrader export`, on a temporary course directory.

Checks: the solution scores full marks; the untouched release scores zero and the run
completes; each misconception loses exactly the points of the item it breaks and its
feedback names it; alternative correct answers and answers that warn score full marks;
feedback shows no hidden-test code; the export agrees with the gradebook; submitted files
are byte-identical after grading."""
import csv
import hashlib
import html
import os
import re
import time

import pytest
from nbconvert import HTMLExporter
from nbformat import reads
from nbgrader.api import Gradebook

from coursekit import (HIDDEN_BLOCK, ROOT, build_submission, grade_cells, nbgrader,
                       read_notebook, source_text, write_notebook)
from scenarios import unit01, unit02, unit03, unit04, unit05, unit06, unit07, unit08

UNITS = [unit01, unit02, unit03, unit04, unit05, unit06, unit07, unit08]
# While working on one unit: COURSE_E2E_UNITS=06_modules ./course test tests/test_autograde_e2e.py
if os.environ.get("COURSE_E2E_UNITS"):
    UNITS = [u for u in UNITS if u.ASSIGNMENT in os.environ["COURSE_E2E_UNITS"].split(",")]
CASES = [(unit, s) for unit in UNITS for s in unit.SCENARIOS]


def case_id(case):
    unit, scenario = case
    return f"{unit.ASSIGNMENT}-{scenario.student}"


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
            lines += [l.strip() for l in block.splitlines()
                      if len(l.strip()) >= 25 and re.sub(r"\s+", "", l) not in visible]
    return lines


@pytest.fixture(scope="module")
def graded(course):
    """Submit every scenario, then autograde, make feedback and export, once."""
    submitted = {}
    for unit, scenario in CASES:
        source = read_notebook(ROOT / "source" / unit.ASSIGNMENT / unit.NOTEBOOK)
        release = read_notebook(course / "release" / unit.ASSIGNMENT / unit.NOTEBOOK)
        nb = build_submission(source, release, scenario.answers, scenario.extra_cells)
        path = course / "runtime" / "submitted" / student_id(unit, scenario) / unit.ASSIGNMENT / unit.NOTEBOOK
        write_notebook(nb, path)
        submitted[path] = hashlib.sha256(path.read_bytes()).hexdigest()
    seconds = {}
    for unit in UNITS:
        start = time.perf_counter()
        nbgrader(course, "autograde", unit.ASSIGNMENT)
        seconds[unit.ASSIGNMENT] = (time.perf_counter() - start) / len(unit.SCENARIOS)
        nbgrader(course, "generate_feedback", unit.ASSIGNMENT)
    nbgrader(course, "export")
    return {"submitted": submitted, "seconds": seconds}


def scores(course, unit, scenario) -> dict[str, tuple[float, float]]:
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(unit.NOTEBOOK.removesuffix(".ipynb"), unit.ASSIGNMENT,
                                                      student_id(unit, scenario))
        return {g.name: (g.score, g.max_score) for g in notebook.grades}


def feedback_html(course, unit, scenario) -> str:
    path = (course / "runtime" / "feedback" / student_id(unit, scenario) / unit.ASSIGNMENT
            / unit.NOTEBOOK.replace(".ipynb", ".html"))
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_each_submission_scores_what_it_deserves(case, course, graded, covered):
    unit, scenario = case
    got = scores(course, unit, scenario)
    assert got, "no grades recorded"
    expected = {name: (0.0 if "*" in scenario.loses or name in scenario.loses else maximum)
                for name, (_, maximum) in got.items()}
    assert {n: s for n, (s, _) in got.items()} == expected
    total = sum(s for s, _ in got.values())
    covered(f"{scenario.student}: {total:g}/{sum(m for _, m in got.values()):g}"
            f" (loses {sorted(scenario.loses) or 'nothing'})")


@pytest.mark.parametrize("case", [c for c in CASES if c[1].says], ids=case_id)
def test_feedback_says_what_is_wrong(case, course, graded):
    unit, scenario = case
    text = html.unescape(feedback_html(course, unit, scenario))
    for phrase in scenario.says:
        assert phrase in text, f"{scenario.student}'s feedback does not say {phrase!r}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_feedback_shows_no_hidden_test_code(case, course, graded):
    unit, scenario = case
    page = visible_text(feedback_html(course, unit, scenario))
    leaked = [line for line in hidden_lines(unit) if re.sub(r"\s+", "", line) in page]
    assert not leaked, f"hidden-test code in {scenario.student}'s feedback: {leaked[:3]}"
    assert "Gradedon:cpu" in page or "Gradedon:cuda" in page or "Gradedon:mps" in page, (
        "the feedback does not name the grading device")


def test_the_leak_detector_sees_code_in_plain_html(course, graded):
    """Guards the test above: a plain HTML export of an autograded notebook (hidden tests
    restored) must show up as leaking, or the check could never fail."""
    unit, scenario = CASES[0]
    autograded = (course / "runtime" / "autograded" / student_id(unit, scenario) / unit.ASSIGNMENT / unit.NOTEBOOK)
    page, _ = HTMLExporter().from_notebook_node(reads(autograded.read_text(), as_version=4))
    lines = hidden_lines(unit)
    assert lines and all(re.sub(r"\s+", "", l) in visible_text(page) for l in lines)


def test_export_agrees_with_the_gradebook(course, graded, covered):
    with open(course / "runtime" / "grades.csv", newline="") as handle:
        rows = {(r["assignment"], r["student_id"]): r["score"] for r in csv.DictReader(handle)}
    submitted = set()
    for unit, scenario in CASES:
        total = sum(s for s, _ in scores(course, unit, scenario).values())
        key = (unit.ASSIGNMENT, student_id(unit, scenario))
        assert float(rows[key]) == pytest.approx(total)
        submitted.add(key)
    # A student who never submitted an assignment has no score for it: empty, not a 0.
    never = [key for key in rows if key not in submitted]
    assert never and all(rows[key] == "" for key in never), [rows[key] for key in never if rows[key] != ""][:3]
    covered(f"grades.csv: {len(submitted)} rows agree with the gradebook, {len(never)} never-submitted rows empty")


def test_submitted_files_are_untouched(graded, covered):
    changed = [p for p, digest in graded["submitted"].items()
               if hashlib.sha256(p.read_bytes()).hexdigest() != digest]
    assert not changed, f"grading changed submitted files: {changed}"
    for assignment, seconds in graded["seconds"].items():
        covered(f"nbgrader autograde {assignment}: {seconds:.1f} s per submission")
