"""Tests for classgrader/commands/run_all.py: the committed untouched release, executed top to bottom
by nbclient as Run All does (stopping at an error unless a cell is tagged raises-exception),
stops at the first exercise without the tags and reaches every test cell with them, each
still showing its NotImplementedError; the tagging itself leaves the setup cells alone."""
import copy

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from classgrader.commands.run_all import TAG, tag_cells
from coursekit import ROOT

RELEASE = ROOT / "release" / "01_tensors" / "01_tensors.ipynb"


def graded_cells(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


def execute(nb, folder):
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()


def test_without_the_tags_run_all_stops_at_the_first_exercise(tmp_path):
    nb = nbformat.read(RELEASE, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("tags", None)
    with pytest.raises(CellExecutionError, match="NotImplementedError"):
        execute(nb, tmp_path)
    assert not any(c.outputs for c in graded_cells(nb)), "no test cell should have run"


def test_untouched_release_reaches_every_exercise_and_shows_each_failure(tmp_path, covered):
    nb = nbformat.read(RELEASE, as_version=4)
    assert any(TAG in c.metadata.get("tags", []) for c in nb.cells), "release/ lacks the tags: ./course generate"
    execute(nb, tmp_path)
    for cell in graded_cells(nb):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert errors and errors[0].ename in ("NotImplementedError", "NameError"), cell.metadata.nbgrader.grade_id
    covered(f"untouched release of 01_tensors: all {len(graded_cells(nb))} test cells ran, each showing its error")


def test_tags_from_the_first_answer_on_and_only_code_cells():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import torch"),
        nbformat.v4.new_markdown_cell("# Q1"),
        nbformat.v4.new_code_cell("def f(): raise NotImplementedError()",
                                  metadata={"nbgrader": {"solution": True}}),
        nbformat.v4.new_code_cell("f()", metadata={"tags": ["keep"]}),
        nbformat.v4.new_markdown_cell("# Q2"),
    ])
    before = copy.deepcopy(nb)
    tag_cells(nb)
    tag_cells(nb)  # twice: no duplicate tag
    assert [c.metadata.get("tags") for c in nb.cells] == [None, None, [TAG], ["keep", TAG], None]
    assert [c.source for c in nb.cells] == [c.source for c in before.cells]
