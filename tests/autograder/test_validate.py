"""Validate: the course's checklist (autograder/validate.py): one line per exercise in notebook
order, the check's own one-line reason, "not answered yet" for a stub, no traceback and no
test-cell source, a quiz question "answered, checked at grading" (never "passed", its visible
check sees only a letter), counts of exercises and questions as the notebook's own first cell
gives them, and the same verdict as nbgrader's Validator on every visible check.

That every source passes all its tests and every untouched release fails every graded test is
checked elsewhere, once each (a kernel start costs 3-4 s a notebook): nbval runs every source
notebook (a failing test cell fails it), the end-to-end grading gives every solution full marks
and every untouched release 0 (tests/autograde_e2e.py), and the browser tests press Validate on
every solved and several untouched assignments."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.validate import (
    CANNOT_SEE,
    Kernel,
    as_text,
    checklist,
    exercises,
    lines_from,
    read_notebook,
    summary,
    validate,
)
from coursekit import ROOT, build_submission, source_text, write_notebook
from scenarios import unit01

pytestmark = pytest.mark.early(4)

UNIT01 = ROOT / "source" / "01_tensors" / "01_tensors.ipynb"
RELEASE01 = ROOT / "release" / "01_tensors" / "01_tensors.ipynb"
EXERCISES = ["Q1 · Describe a tensor", "Q2 · Which property broke?", "Q3 · Fix a dtype bug",
             "Q4 · How much memory?", "Q5 · Rounding, or a bug?", "Check yourself · q1",
             "Check yourself · q2", "Check yourself · q3", "Check yourself · q4"]


# ---- the checklist ----

def student(tmp_path, name, answers):
    """A student's notebook of unit 01: the release with `answers` (None: untouched)."""
    nb = build_submission(read_notebook(UNIT01), read_notebook(RELEASE01), answers)
    return write_notebook(nb, tmp_path / name / "01_tensors.ipynb")


@pytest.fixture(scope="module")
def checklist_of(tmp_path_factory):
    """checklist_of(name, answers): the checklist of that student's notebook, made once per name
    (each costs a fresh kernel and the whole notebook); several tests read the same ones."""
    folder, made = tmp_path_factory.mktemp("checklists"), {}

    def get(name, answers):
        if name not in made:
            path = student(folder, name, answers)
            made[name] = (path, checklist(path))
        return made[name]
    return get


def scenario_answers(name):
    return next(s.answers for s in unit01.SCENARIOS if s.student == name)


def stubs(*grade_ids):
    """Answers that leave these answer cells as the release has them: not answered."""
    release = {c["metadata"]["nbgrader"]["grade_id"]: source_text(c) for c in read_notebook(RELEASE01)["cells"]
               if c["metadata"].get("nbgrader", {}).get("solution")}
    return {gid: release[gid] for gid in grade_ids}


def test_exercises_are_named_by_heading_in_notebook_order():
    assert [name for name, _, _ in exercises(read_notebook(RELEASE01))] == EXERCISES


def test_solved_untouched_and_half_done(checklist_of, covered):
    half = dict(stubs("q4_tensor_bytes_answer", "quiz_q2_answer"), **scenario_answers("len_as_numel"))
    seen = {}
    for name, answers in [("solution", {}), ("untouched", None), ("half", half)]:
        seen[name] = checklist_of(name, answers)[1]
        assert [line.exercise for line in seen[name]] == EXERCISES
    assert [line.status for line in seen["solution"]] == ["passed"] * 5 + ["answered"] * 4
    assert {line.status for line in seen["untouched"]} == {"unanswered"}
    assert [line.text() for line in seen["half"]] == [
        '✗ Q1 · Describe a tensor: failed: describe(torch.zeros(2, 3))["numel"]: wrong value. Expected 6, got 2.',
        "✓ Q2 · Which property broke?: passed", "✓ Q3 · Fix a dtype bug: passed",
        "· Q4 · How much memory?: not answered yet", "✓ Q5 · Rounding, or a bug?: passed",
        "○ Check yourself · q1: answered, checked at grading", "· Check yourself · q2: not answered yet",
        "○ Check yourself · q3: answered, checked at grading", "○ Check yourself · q4: answered, checked at grading"]
    text = as_text(seen["half"])
    assert text.splitlines()[0] == ("3 of 5 exercises pass their visible checks; "
                                    "3 of 4 questions answered, checked at grading.")
    assert text.splitlines()[-1] == CANNOT_SEE
    covered("checklist of unit 01 solved (5 passed, 4 answered), untouched (9 not answered yet), half-done "
            "(a failure with its reason, two not answered, the rest passed or answered)")


def test_a_wrong_quiz_letter_is_answered_not_passed(checklist_of, covered):
    """A wrong letter passes the visible check (one of a-d): the line must not say "passed"."""
    _, lines = checklist_of("quiz_wrong", scenario_answers("quiz_wrong"))
    quiz = [line for line in lines if line.kind == "question"]
    assert quiz and {line.status for line in quiz} == {"answered"}
    assert all(line.text().endswith(": answered, checked at grading") for line in quiz)
    assert "passed" not in " ".join(line.text() for line in quiz)
    covered("a wrong quiz letter: 'answered, checked at grading', never 'passed'")


NUMBERS = {"three": 3, "four": 4, "five": 5, "six": 6}


@pytest.mark.parametrize("notebook", sorted((ROOT / "release").glob("*/*.ipynb")), ids=lambda p: p.parent.name)
def test_summary_counts_what_the_notebook_counts(notebook, covered):
    """Its first cell says "five exercises ... a four-question check yourself" (or "four parts"):
    the checklist of every cell answered counts the same, an exercise with two test cells once."""
    nb = read_notebook(notebook)
    first = "".join(nb["cells"][0]["source"])
    said = re.search(r"(\w+) (?:exercises|parts) .* a (\w+)-question", first)
    ok = {i: {"status": "ok"} for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"}
    assert summary(lines_from(nb, ok)) == (f"All {NUMBERS[said[1]]} exercises pass their visible checks; "
                                           f"all {NUMBERS[said[2]]} questions answered, checked at grading.")
    covered(f"{notebook.parent.name}: the checklist counts {said[1]} exercises and {said[2]} questions, as it says")


def test_no_traceback_and_no_test_cell_source(checklist_of):
    nb_path, lines = checklist_of("size_not_called", scenario_answers("size_not_called"))
    text = as_text(lines)
    assert "Traceback" not in text and "File " not in text and "autograder/" not in text
    tests = [c for c in read_notebook(nb_path)["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    for cell in tests:
        for line in source_text(cell).splitlines():
            if len(line.strip()) > 25:  # a statement, not a bracket
                assert line.strip() not in text, f"test-cell source shown: {line}"


# Scenarios whose mistakes a visible check catches (plus the untouched release and two right ones).
AGREE = ["solution", "untouched", "len_as_numel", "size_not_called", "warns", "quiz_wrong"]


@pytest.mark.parametrize("name", AGREE)
def test_checklist_agrees_with_nbgraders_validator(checklist_of, name, covered):
    """Same cells failing as stock nbgrader's Validator finds, on the same configuration."""
    nb_path, lines = checklist_of(name, scenario_answers(name))
    ours = {line.exercise for line in lines if line.status not in ("passed", "answered")}
    stock = validate(nb_path).get("failed", [])
    names = dict(zip([source_text(read_notebook(RELEASE01)["cells"][t]) for _, _, t in exercises(
        read_notebook(RELEASE01))], EXERCISES))
    theirs = {names[cell["source"]] for cell in stock}
    assert ours == theirs
    covered(f"{name}: the checklist and nbgrader's Validator fail the same {len(ours)} exercises")


def test_command_line_exit_status_and_text(tmp_path, covered):
    solved, untouched = student(tmp_path, "solved", {}), student(tmp_path, "untouched", None)
    for path, code, first in [(solved, 0, "All 5 exercises pass their visible checks; "
                                          "all 4 questions answered, checked at grading."),
                              (untouched, 1, "0 of 5 exercises pass their visible checks; "
                                             "0 of 4 questions answered, checked at grading.")]:
        done = subprocess.run([sys.executable, "-P", str(ROOT / "autograder" / "validate.py"), str(path)],
                              capture_output=True, text=True, timeout=300)
        assert (done.returncode, done.stdout.splitlines()[0], done.stderr) == (code, first, "")
    covered("./course validate (python -P autograder/validate.py): exit 0 and the checklist on a solved notebook, "
            "exit 1 untouched, nothing on stderr (no kernel warnings)")


@pytest.fixture(scope="module")
def kernel():
    """One Kernel for the two tests below (each starts from names of its own)."""
    kernel = Kernel()
    yield kernel
    kernel.close()


def test_kernel_runs_every_cell_after_an_error(kernel):
    replies = kernel.run(["x_after_error = 1", "raise ValueError('boom')", "x_after_error += 1",
                          "assert x_after_error == 2"])
    assert [r["status"] for r in replies] == ["ok", "error", "ok", "ok"]
    assert (replies[1]["ename"], replies[1]["evalue"]) == ("ValueError", "boom")


def test_kernel_is_configured_as_the_autograders(kernel):
    """The warm kernel runs nbgrader_config.py's exec line: stderr goes to stdout."""
    [reply] = kernel.run(["import sys; assert sys.stderr is sys.stdout, 'stderr not redirected'"])
    assert reply["status"] == "ok", reply


def test_the_notebooks_scratch_folders_go_with_its_kernel():
    """A notebook's tempfile.mkdtemp() (a checkpoint's folder) lies in the kernel's own folder,
    which closing the kernel removes: Validate leaves nothing in the machine's /tmp."""
    kernel = Kernel()
    try:
        replies = kernel.run(["import tempfile; made = tempfile.mkdtemp(); open(made + '/checkpoint.pt', 'wb').close()",
                              f"assert made.startswith({kernel._folder + '/'!r}), made"])
        assert [r["status"] for r in replies] == ["ok", "ok"], replies
    finally:
        kernel.close()
    assert not Path(kernel._folder).exists()


def test_json_of_the_reply_is_plain_data(checklist_of):
    lines = checklist_of("solution", {})[1]
    assert json.loads(json.dumps([vars(line) for line in lines]))[0] == {
        "exercise": "Q1 · Describe a tensor", "status": "passed", "reason": "", "kind": "exercise",
        "heading": "Q1 · Describe a tensor"}


def test_the_cell_timeout_is_the_courses_else_nbgraders_own():
    """Validate's kernels stop a cell when the autograder's would: at the course's c.Execute.timeout,
    or, for a course that sets none, at nbgrader's own default (never a number of Validate's own)."""
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config

    from autograder.validate import cell_timeout
    config = Config()
    assert cell_timeout(config) == Execute.timeout.default_value
    config.Execute.timeout = 7
    assert cell_timeout(config) == 7
