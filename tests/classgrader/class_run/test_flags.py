"""flags.structural_problems: what a submission changed in its notebook's structure."""
import copy

import nbformat

from classgrader.class_run.flags import structural_problems
from coursekit import ROOT

RELEASE = nbformat.read(ROOT / "release" / "01_tensors" / "01_tensors.ipynb", as_version=4)


def cell_index(nb, grade_id):
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def test_an_untouched_release_has_no_problems():
    assert structural_problems(copy.deepcopy(RELEASE), RELEASE) == []


def test_each_change_is_named():
    nb = copy.deepcopy(RELEASE)
    nb.cells[cell_index(nb, "q1_describe_tests")].source = "pass"
    del nb.cells[cell_index(nb, "q2_classify_error_tests")]
    answer = cell_index(nb, "q3_channel_means_answer")
    nb.cells.insert(answer + 1, copy.deepcopy(nb.cells[answer]))
    nb.cells[cell_index(nb, "q4_tensor_bytes_answer")].cell_type = "markdown"
    nb.cells[cell_index(nb, "setup")].source += "\nimport os"
    assert structural_problems(nb, RELEASE) == [
        "duplicate grade id: q3_channel_means_answer appears 2 times",
        "locked cell edited: setup (graded with the original)",
        "test cell edited: q1_describe_tests (graded with the original)",
        "test cell deleted: q2_classify_error_tests (restored from the source)",
        "cell type changed: q4_tensor_bytes_answer (code -> markdown)",
    ]


def test_answers_may_change_freely():
    nb = copy.deepcopy(RELEASE)
    nb.cells[cell_index(nb, "q1_describe_answer")].source = "def describe(t):\n    return {}"
    nb.cells.append(nbformat.v4.new_code_cell("print('my own cell')"))
    assert structural_problems(nb, RELEASE) == []
