"""source_plan: what the grader takes from a source notebook (its setup, the names its answers
define, each test's code and cell) comes from the source itself, and is read once per process and
content; outside nbgrader, or without the source, there is none."""
import os

import nbformat
from traitlets.config import Config

from classgrader.judging import source_plan


def cell(kind, source, grade_id=None, **nbgrader):
    new = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
    if nbgrader or grade_id:
        new.metadata["nbgrader"] = {"grade_id": grade_id, **nbgrader}
    return new


NOTEBOOK = nbformat.v4.new_notebook(cells=[
    cell("markdown", "# Unit", "intro", locked=True),
    cell("code", "import torch\ndef helper(x):\n    return x", "setup", locked=True),
    cell("code", "### BEGIN SOLUTION\ndef double(x):\n    return 2 * x\n### END SOLUTION\nhelper = 1",
         "q1_answer", solution=True),
    cell("code", "assert double(2) == 4", "q1_tests", grade=True, points=1),
    cell("code", "double(3)"),  # a Try-it: no nbgrader metadata, not the grader's
])


def test_the_plan_holds_setup_answers_and_tests_from_the_source():
    plan = source_plan.SourcePlan(NOTEBOOK)
    assert plan.setup == ["import torch\ndef helper(x):\n    return x"]
    # `helper` is the course's own (its setup defines it): never a name the student answers with.
    assert plan.answers == {"double"}
    assert plan.tests == {"q1_tests": "assert double(2) == 4"} and plan.cells["q1_tests"] is NOTEBOOK.cells[3]


def test_it_is_read_once_per_content_and_only_inside_nbgrader(tmp_path):
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    folder = tmp_path / "source" / "01_unit"
    folder.mkdir(parents=True)
    nbformat.write(NOTEBOOK, folder / "01_unit.ipynb")
    resources = {"nbgrader": {"assignment": "01_unit", "notebook": "01_unit"}}
    first = source_plan.read(config, resources)
    assert first is not None and os.path.samefile(first.path, folder / "01_unit.ipynb")
    assert source_plan.read(config, resources) is first  # each student of a worker: the same plan
    changed = nbformat.v4.new_notebook(cells=[*NOTEBOOK.cells, cell("code", "assert True", "q2_tests", grade=True)])
    nbformat.write(changed, folder / "01_unit.ipynb")
    assert set(source_plan.read(config, resources).tests) == {"q1_tests", "q2_tests"}  # new bytes, read anew
    assert source_plan.read(config, {}) is None  # not a conversion of nbgrader's
    assert source_plan.read(config, {"nbgrader": {"assignment": "02_none", "notebook": "02_none"}}) is None
