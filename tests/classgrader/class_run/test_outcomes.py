"""Tests for classgrader/class_run/outcomes.py: the kind of mistake read from what the real checks raise,
the misconception read back from every pitfall message, each misconception's lesson section a
real heading of its lesson, what one graded notebook's record holds, and how the record is
written (atomically, beside nbgrader's records, through no link). The report built on these
records is tested in test_report.py, where one real class is graded by nbgrader."""
import json
import os
import re
from pathlib import Path

import nbformat
import pytest
import torch
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder import check_answer, check_choice, check_keys, check_raises, check_tensor, check_value
from autograder.device_strict import DeviceMismatchError
from autograder.misconceptions import CATALOGUE, LESSON_SECTIONS, PitfallError, misconception_of, pitfall_if
from classgrader.class_run.outcomes import CATEGORIES, category, notebook_outcomes, write_record
from coursekit import ROOT


def raised(call) -> tuple[str, str]:
    try:
        call()
    except Exception as error:
        return type(error).__name__, str(error)
    raise AssertionError("nothing raised")


T = torch.zeros(3)
CASES = [
    (lambda: check_tensor(torch.zeros(3, 1), T), "shape"),
    (lambda: check_tensor(torch.zeros(3, dtype=torch.int64), T), "dtype"),
    (lambda: check_tensor(torch.zeros(3, device="meta"), T), "device"),
    (lambda: check_tensor(torch.zeros(3, requires_grad=True), T), "graph"),
    (lambda: check_tensor([0.0, 0.0, 0.0], T), "type"),
    (lambda: check_tensor(torch.ones(3), T), "value"),
    (lambda: check_tensor(torch.ones(()), torch.zeros(())), "value"),
    (lambda: check_value(torch.tensor(2), 2), "type"),
    (lambda: check_value(3, 2), "value"),
    (lambda: check_keys({}, ["shape"]), "type"),
    (lambda: check_raises(lambda: 1, ValueError), "value"),
    (lambda: check_raises(lambda: 1 / 0, ValueError), "error raised"),
    (lambda: check_choice("z", "abcd", name="q1"), "type"),
    (lambda: check_answer("a", "c", name="q1", hint="Re-read section 1."), "value"),
    (lambda: pitfall_if(True, "len-as-numel"), "misconception"),
    (lambda: [][1], "error raised"),
]


@pytest.mark.parametrize(("call", "kind"), CASES)
def test_the_kind_of_mistake_is_the_checks_own(call, kind):
    assert category(*raised(call)) == kind


@pytest.mark.parametrize(("ename", "kind"), [("NotImplementedError", "no answer"), ("TimeoutError", "timeout/crash"),
                                             ("KernelDied", "timeout/crash"), ("Dropped", "timeout/crash"),
                                             ("Tampering", "flagged"), ("UnverifiedResult", "flagged"),
                                             ("AssertionError", "value"), ("RuntimeError", "error raised")])
def test_what_the_grader_writes_into_a_cell(ename, kind):
    assert category(ename, "whatever it says") == kind


def test_a_strict_device_mismatch_is_a_device_mistake():
    assert category(DeviceMismatchError.__name__, "add: tensors on cpu and meta") == "device"
    assert {kind for _, kind in CASES} <= set(CATEGORIES)


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_every_pitfall_message_names_its_key(key):
    ename, message = raised(lambda: pitfall_if(True, key, "You gave 3."))
    assert (ename, misconception_of(message)) == ("PitfallError", key)
    with pytest.raises(PitfallError) as info:
        pitfall_if(True, key)
    assert info.value.key == key


def test_a_message_that_names_no_misconception():
    assert misconception_of("Pitfall: something else entirely.") is None
    assert misconception_of("q1: wrong value.") is None


def headings(lesson: str) -> set[str]:
    nb = json.loads((ROOT / "notebooks" / lesson).read_text())
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return {re.sub(r"^\d+\.\s+", "", m.group(1).strip()) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def test_every_misconception_has_a_lesson_section_that_exists():
    assert set(LESSON_SECTIONS) == set(CATALOGUE)
    for key, (lesson, section) in LESSON_SECTIONS.items():
        assert section in headings(lesson), f"{key}: no heading {section!r} in notebooks/{lesson}"


def cell(gid, points=None, solution=False, error=None, source="check()"):
    meta = {"grade": points is not None, "solution": solution, "locked": not solution, "grade_id": gid}
    if points is not None:
        meta["points"] = points
    code = new_code_cell(source, metadata={"nbgrader": meta})
    if error:
        code.outputs = [new_output("error", ename=error[0], evalue=error[1], traceback=[f"{error[0]}: {error[1]}"])]
    return code


def graded(*cells):
    return nbformat.from_dict(new_notebook(cells=list(cells)))


def test_one_notebooks_record():
    nb = graded(
        new_code_cell("DEVICE = start_grading()", outputs=[
            new_output("stream", name="stdout", text="Graded on: cpu (no accelerator found)\n")]),
        new_markdown_cell("## Q1 · Describe a tensor"), cell("q1_answer", solution=True),
        cell("q1_tests", 3, error=raised(lambda: pitfall_if(True, "size-not-called", "You gave a method."))),
        new_markdown_cell("## Q2 · Means"), cell("q2_answer", solution=True, error=("NotImplementedError", "")),
        cell("q2_tests", 2, error=("NameError", "name 'q2' is not defined")),
        new_markdown_cell("## Q3 · Shape"), cell("q3_answer", solution=True), cell("q3_tests", 1),
        new_markdown_cell("## Q4 · Safe"), cell("q4_answer", solution=True),
        cell("q4_tests", 2, error=("Tampering", "the grader's tools were replaced. This cell was left out.")))
    record = notebook_outcomes(nb, [("q4_tests", "tampering: tools replaced"), (None, "test cell edited: q9")])
    items = {i["item"]: i for i in record["items"]}
    assert list(items) == ["q1_tests", "q2_tests", "q3_tests", "q4_tests"]  # test cells only, in order
    assert items["q1_tests"] == {
        "item": "q1_tests", "exercise": "Q1 · Describe a tensor", "score": 0.0, "max": 3.0,
        "category": "misconception", "ename": "PitfallError",
        "message": "Pitfall: t.size without calling it. " + CATALOGUE["size-not-called"].explanation
                   + " You gave a method.", "misconception": "size-not-called", "flag": None}
    assert items["q2_tests"]["category"] == "no answer"  # the stub raised, whatever the test then said
    assert (items["q3_tests"]["score"], items["q3_tests"]["category"], items["q3_tests"]["ename"]) == (1.0, None, None)
    assert (items["q4_tests"]["category"], items["q4_tests"]["flag"]) == ("flagged", "tampering: tools replaced")
    assert record["flags"] == ["test cell edited: q9"] and record["device"] == "cpu (no accelerator found)"
    assert record["misconceptions"] == {"size-not-called": {
        "name": "t.size without calling it", "lesson": "01_tensors_lesson.ipynb", "section": "Shape"}}


def test_records_are_merged_per_student_and_replaced_per_notebook(tmp_path):
    first = write_record(str(tmp_path), "a1", "ann", "part1", {"items": [1]})
    write_record(str(tmp_path), "a1", "ann", "part2", {"items": [2]})
    write_record(str(tmp_path), "a1", "ann", "part1", {"items": [3]})
    assert Path(first) == tmp_path / "runtime" / "grading" / "a1" / "outcomes" / "ann.json"
    assert json.loads(Path(first).read_text()) == {"student": "ann", "assignment": "a1",
                                                   "notebooks": {"part1": {"items": [3]}, "part2": {"items": [2]}}}
    assert os.listdir(Path(first).parent) == ["ann.json"]  # no temporary file left behind


def test_no_link_is_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "course" / "runtime" / "grading" / "a1").mkdir(parents=True)
    (tmp_path / "course" / "runtime" / "grading" / "a1" / "outcomes").symlink_to(elsewhere)
    with pytest.raises(OSError, match=r"Not a directory|Too many levels of symbolic links"):  # ENOTDIR or ELOOP
        write_record(str(tmp_path / "course"), "a1", "ann", "nb", {"items": []})
    assert os.listdir(elsewhere) == []
    os.unlink(tmp_path / "course" / "runtime" / "grading" / "a1" / "outcomes")
    target = elsewhere / "target.json"
    target.write_text("{}")
    folder = tmp_path / "course" / "runtime" / "grading" / "a1" / "outcomes"
    folder.mkdir()
    (folder / "ann.json").symlink_to(target)
    write_record(str(tmp_path / "course"), "a1", "ann", "nb", {"items": []})
    assert target.read_text() == "{}" and not (folder / "ann.json").is_symlink()  # the link replaced, not followed


@pytest.mark.parametrize("student", ["", "..", "a/b", "."])
def test_a_student_id_that_is_not_a_file_name_is_refused(tmp_path, student):
    with pytest.raises(ValueError, match="not a plain file name"):
        write_record(str(tmp_path), "a1", student, "nb", {})


def test_recorded_after_nbgrader_saves_the_grades_and_before_the_flags_are_taken():
    from traitlets.config.loader import PyFileConfigLoader
    steps = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config().Autograde.autograde_preprocessors
    mine = steps.index("classgrader.class_run.outcomes.RecordOutcomes")
    saved, flagged = (steps.index("nbgrader.preprocessors.SaveAutoGrades"),
                      steps.index("classgrader.class_run.flags.SaveFlags"))
    assert saved < mine < flagged


def test_a_record_that_cannot_be_written_costs_no_grade(tmp_path, caplog):
    from traitlets.config import Config

    from classgrader.class_run.outcomes import RecordOutcomes
    config = Config()
    config.CourseDirectory.root = str(tmp_path / "nowhere")  # no such folder
    nb = graded(cell("q1_tests", 1))
    resources = {"nbgrader": {"student": "ann", "assignment": "a1", "notebook": "nb", "db_url": "sqlite://"}}
    step = RecordOutcomes(config=config)
    assert step.preprocess(nb, resources) == (nb, resources)
    assert "No outcomes recorded for ann's nb" in caplog.text
