"""reference_run: the grader's own run of the source notebook decides, test by test, what every
student's run is judged against, and says what it could not establish. Its decisions are checked
here in-process, on a real source plan and judge; its whole run of a course notebook is in
test_isolated_execute.py."""
import asyncio

import nbformat
import pytest
from nbformat.notebooknode import NotebookNode
from traitlets.config import Config

from classgrader import time_limits
from classgrader.in_kernel import protocol
from classgrader.judging import isolated_execute, judge, reference_run
from classgrader.judging.routing import Observed, Route
from classgrader.judging.source_plan import SourcePlan

SOURCE = [
    ("setup", {"locked": True}, "import torch"),
    ("answer", {"solution": True}, "def double(t):\n    return 2 * t"),
    ("values", {"grade": True, "grade_id": "values"}, "check_tensor(double(torch.ones(2)), torch.full((2,), 2.0))"),
    ("storage", {"grade": True, "grade_id": "storage"},
     "t = torch.ones(2)\nassert double(t).data_ptr() != t.data_ptr()"),
]


def own_run() -> isolated_execute.OwnRun:
    """The reference's part, as OwnRun runs it, with its plan and judge, before any kernel."""
    cells = [nbformat.v4.new_code_cell(code, metadata={"nbgrader": meta}) for _, meta, code in SOURCE]
    plan = SourcePlan(nbformat.v4.new_notebook(cells=cells))
    run = isolated_execute.OwnRun(config=Config())
    run.plan, run.flags, run.lost_kernels, run.given_up = plan, [], 0, None
    run.outside, run.records, run.shadows, run.incomplete, run.observed = set(), {}, {}, {}, {}
    run.judge = judge.Judge(plan.setup, plan.answers, ask=None)
    return run


def error(ename="AssertionError", evalue="no"):
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[])


def test_only_a_test_that_looks_at_values_alone_is_tried_outside_the_kernel():
    run = own_run()
    assert run._route("values") is Route.OUTSIDE and run._route("storage") is Route.SHADOWED  # .data_ptr
    assert run._route("not a test of the source") is Route.KERNEL


def test_a_test_the_solution_passes_outside_is_judged_there_and_one_it_fails_runs_in_the_kernel():
    run = own_run()
    run._take_outside("values", [NotebookNode(output_type="stream", name="stdout", text="ok")], None)
    assert run._route("values") is Route.OUTSIDE and run.outside == {"values"}
    run = own_run()
    run._take_outside("values", [error()], None)
    assert run._route("values") is Route.SHADOWED and run.outside == set() and run.incomplete == {}
    run._take_shadow(NotebookNode(outputs=[]), "values", [], ["AssertionError: no"], None)
    assert run._route("values") is Route.KERNEL, "a shadow that checks nothing is not run for students"


def test_a_students_run_takes_each_tests_route_from_what_the_reference_saw():
    reference = reference_run.Reference(outside={"values"}, records={"storage": []},
                                        shadows={"storage": ([("value", "x")], [])}, incomplete={})
    assert reference.observed("values") == Observed(passed_outside=True, shadow_checks=0)
    assert reference.observed("storage") == Observed(passed_outside=False, shadow_checks=1)
    assert reference.observed("never run") == Observed(passed_outside=False, shadow_checks=0)


def test_what_a_lost_kernel_cost_is_a_test_the_reference_could_not_establish():
    run = own_run()
    lost = protocol.KernelLost("TimeoutError", "slow")
    run._take_outside("values", [error(*lost.args)], lost)
    run._take_shadow(NotebookNode(outputs=[]), "storage", [], ["TimeoutError: slow"], lost)
    assert run.incomplete == {"values": "the solution's test in the grader ended with TimeoutError: slow",
                              "storage": "the solution's shadow ended with TimeoutError: slow"}
    assert run.outside == set() and run.shadows == {}


def test_the_kernels_records_and_the_shadows_checks_are_kept_and_a_failing_solution_is_named():
    run, entries = own_run(), [{"kind": "value", "name": "x"}]
    run._judge(NotebookNode(outputs=[]), "storage", entries)
    run._take_shadow(NotebookNode(outputs=[]), "storage", [("value", "x")], [], None)
    assert run.records == {"storage": entries} and run.shadows == {"storage": ([("value", "x")], [])}
    run._judge(NotebookNode(outputs=[error("ValueError", "bad")]), "values", entries)
    assert run.incomplete == {"values": "the solution failed it (ValueError: bad)"}
    assert "values" not in run.records


def test_its_cells_may_take_longer_than_a_students():
    run, student = own_run(), isolated_execute.IsolatedExecute(config=Config())
    run.timeout = student.timeout = 30
    assert student._cell_timeout() == 30 and run._cell_timeout() == 30 * time_limits.REFERENCE_TIMEOUTS
    run.timeout = None  # nbclient's no limit: the grader refuses it rather than wait forever
    with pytest.raises(ValueError, match=r"needs a cell timeout in seconds \(c.Execute.timeout"):
        run._cell_timeout()


class Replaced:
    """A run whose kernel replacement is counted instead of made (it starts real kernels)."""

    async def _recover(self, kept):
        self.recovered += 1


def test_the_reference_replaces_a_lost_kernel_however_often_where_a_student_is_given_up_on():
    lost = protocol.KernelLost("KernelDied", "gone")
    reference = type("Reference", (Replaced, isolated_execute.OwnRun), {})(config=Config())
    student = type("Student", (Replaced, isolated_execute.IsolatedExecute), {})(config=Config())
    for run in (reference, student):
        run.flags, run.lost_kernels, run.given_up, run.recovered = [], 0, None, 0
        for _ in range(isolated_execute.MAX_LOST_KERNELS + 1):
            asyncio.run(run._lost(lost, []))
    assert reference.given_up is None and reference.recovered == isolated_execute.MAX_LOST_KERNELS + 1
    assert student.given_up is not None and student.recovered == isolated_execute.MAX_LOST_KERNELS - 1
