"""routing: each test's route decided in one place, from the source's test cell and what the
grader's own run of the solution saw; one line of the source cell's metadata changes it."""
import copy

import nbformat
import pytest
from traitlets.config import Config

from classgrader.judging import isolated_execute, routing
from classgrader.judging.remote import JUDGE_MODULE
from classgrader.judging.routing import Observed, Route
from classgrader.judging.source_plan import SourcePlan
from classgrader.kernels import sandbox

SETUP = "import torch\nfrom autograder import check_tensor, check_value"
ANSWER = "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION"
VALUES = '"""double doubles."""\nprint("judged in", __name__)\ncheck_value(double(2), 4, name="double(2)")'
IDENTITY = ('"""double returns a new tensor."""\nprint("judged in", __name__)\nt = torch.ones(2)\n'
            'check_tensor(double(t), torch.full((2,), 2.0), name="double(t)")\nassert double(t) is not t')


def source(routes=None) -> nbformat.NotebookNode:
    """A source notebook: a setup cell, an answer, a test of values and one that compares
    identities; `routes` (grade id -> route) is what an author sets in the test cells' metadata."""
    cells = [nbformat.v4.new_code_cell(SETUP, metadata={"nbgrader": {"locked": True, "grade_id": "setup"}}),
             nbformat.v4.new_code_cell(ANSWER, metadata={"nbgrader": {"solution": True, "grade_id": "answer"}})]
    for grade_id, code in (("values", VALUES), ("identity", IDENTITY)):
        meta = {"nbgrader": {"grade": True, "grade_id": grade_id, "points": 1}}
        if grade_id in (routes or {}):
            meta["course"] = {"route": routes[grade_id]}
        cells.append(nbformat.v4.new_code_cell(code, metadata=meta))
    return nbformat.v4.new_notebook(cells=cells)


def test_a_test_of_values_is_tried_outside_and_stays_there_only_if_the_solution_passes_it():
    values, identity = source().cells[2:]
    assert routing.route(values, frozenset({"double"})) is Route.OUTSIDE
    assert routing.route(values, frozenset({"double"}), Observed(passed_outside=True)) is Route.OUTSIDE
    assert routing.route(values, frozenset({"double"}), Observed(passed_outside=False)) is Route.SHADOWED
    assert routing.route(identity, frozenset({"double"})) is Route.SHADOWED  # it compares identities
    assert routing.route(identity, frozenset({"double"}), Observed(False, shadow_checks=3)) is Route.SHADOWED
    assert routing.route(identity, frozenset({"double"}), Observed(False, shadow_checks=0)) is Route.KERNEL


def test_the_source_cells_metadata_decides_over_what_the_grader_saw():
    values, identity = source({"values": "kernel", "identity": "outside"}).cells[2:]
    assert routing.route(values, frozenset({"double"}), Observed(passed_outside=True)) is Route.SHADOWED
    assert routing.route(identity, frozenset({"double"}), Observed(passed_outside=False)) is Route.OUTSIDE


def test_a_route_there_is_not_is_one_error_naming_the_cell_before_any_kernel():
    with pytest.raises(routing.BadRoute, match=r"test cell 'values': metadata course.route is 'grader'; "
                                               r"it may be 'outside' or 'kernel'"):
        SourcePlan(source({"values": "grader"}))


def plan_of(nb, folder) -> SourcePlan:
    path = folder / "routes.ipynb"
    nbformat.write(nb, path)
    data = path.read_bytes()
    plan = SourcePlan(nbformat.reads(data.decode(), as_version=4))
    plan.key, plan.path, plan.data = (str(path), hash(data)), str(path), data
    return plan


def graded(plan, submission, folder):
    """The grader's own run of `plan`'s source, then `submission` graded against it, both in
    real sandboxed kernels: (the reference, the graded notebook, its flags)."""
    config = Config()
    config.IsolatedExecute.use_sandbox = sandbox.unavailable_reason() is None
    own = isolated_execute.OwnRun(config=config)
    reference = own.establish(plan)
    student = isolated_execute.IsolatedExecute(config=config)
    nb, resources = student.grade(copy.deepcopy(submission), {"metadata": {"path": str(folder)}}, plan, reference)
    return reference, nb, resources["course_flags"]


def judged_in(nb) -> dict[str, str]:
    """grade id -> the module its test printed it ran in (the kernel's __main__, or the grader's)."""
    found = {}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found[grade_id] = f"failed: {output['ename']}"
            elif "judged in" in output.get("text", ""):
                found.setdefault(grade_id, output["text"].split()[-1])
    return found


def test_one_line_of_a_source_cells_metadata_flips_a_tests_route(tmp_path, covered):
    """The same solution graded twice through the real execute step: each test's route as the
    grader decides it, then with each test cell's route set the other way in the source. A
    student who sets it in their own notebook changes nothing."""
    flipped = source({"values": "kernel", "identity": "outside"})
    reference, nb, flags = graded(plan_of(source(), tmp_path), flipped, tmp_path)  # the student's metadata
    assert reference.outside == {"values"} and set(reference.shadows) == {"identity"}
    assert judged_in(nb) == {"values": JUDGE_MODULE, "identity": "__main__"} and flags == []

    reference, nb, flags = graded(plan_of(flipped, tmp_path), source(), tmp_path)
    assert reference.outside == {"identity"} and set(reference.shadows) == {"values"}
    assert reference.incomplete == {}
    assert judged_in(nb) == {"values": "__main__", "identity": JUDGE_MODULE} and flags == []
    covered("a test of values judged in the grader and one that compares identities in the kernel swap routes "
            "when the source's test cells say so (metadata course.route); the same in a student's notebook does not")
