"""The grader's own run of the source notebook: the reference each student's run is judged
against (isolated_execute.py). The solution runs in a clean kernel, with the sandbox, restarts
and audits a student's gets, and establishes

- what decides each test's route (routing.py): whether the solution passes it judged outside
  the kernel, and how many of its checks the solution's shadow passes;
- the records the tests run in the kernel write there (verify.py compares a student's);
- each such test's shadow: the value checks of it the grader can make itself (judge.Judge.shadow);
- test by test, what it could not establish, and why. A student's test the reference could not
  establish is flagged for review and scores 0 (IsolatedExecute._judge): never a pass.

It never races the machine: a cell, or a question to its kernel, may take
time_limits.REFERENCE_TIMEOUTS times what a student's may; and it never gives up on the notebook (a lost
kernel is replaced, and what it was doing is a test it could not establish)."""
import os
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from classgrader import time_limits
from classgrader.judging import routing
from classgrader.judging.routing import Observed


class Reference(NamedTuple):
    """What a student's run takes from the reference."""
    outside: set  # grade ids of the tests the solution passes judged outside the student's process
    records: dict  # grade id -> what its checks recorded in the kernel, for the tests run there
    shadows: dict  # grade id -> (the checks its shadow passes, the failures it reported)
    incomplete: dict  # grade id -> why the reference could not establish it

    def observed(self, grade_id) -> Observed:
        """What the grader's own run saw of a test (routing.Observed); a test it never ran, as
        one that passed nowhere and whose shadow checked nothing (it then earns nothing)."""
        passed, _ = self.shadows.get(grade_id, ((), ()))
        return Observed(passed_outside=grade_id in self.outside, shadow_checks=len(passed))


if TYPE_CHECKING:
    class _Host(Protocol):
        """What ReferenceRun uses of the run it is mixed into (isolated_execute.IsolatedExecute),
        named here, not imported: that module imports this one."""
        log: Any
        flags: list
        plan: Any  # source_plan.SourcePlan, or None for a notebook without one
        timeout: int | None
        lost_kernels: int

        def _execute(self, nb, resources, km, plan) -> None: ...

        def _route(self, grade_id) -> routing.Route: ...

        async def _recover(self, kept) -> None: ...
else:
    _Host = object


class ReferenceRun(_Host):
    """The reference's part of a notebook run. It runs on IsolatedExecute's kernels, sandbox
    and judge (isolated_execute.OwnRun mixes it in before them); where a student's run is judged
    against the reference, this one records what it saw (each method here stands for
    IsolatedExecute's own). Which route each test takes is routing.route's, in both runs."""

    def establish(self, plan) -> Reference:
        """Run the source notebook `plan` (source_plan.SourcePlan) was read from."""
        import nbformat
        self.outside: set[str] = set()
        self.records: dict[str, list] = {}
        self.shadows: dict[str, tuple] = {}
        self.incomplete: dict[str, str] = {}
        self.observed: dict[str, Observed] = {}  # filled as it goes: each test's route is decided on what it saw so far
        nb = nbformat.reads(plan.data.decode("utf-8"), as_version=4)
        self._execute(nb, {"metadata": {"path": os.path.dirname(plan.path)}}, None, plan)
        if self.flags:
            self.log.warning("The grader's own run of %s was flagged: %s", plan.path, self.flags)
        for grade_id, why in self.incomplete.items():
            self.log.warning("The grader's own run of %s could not establish %s: %s", plan.path, grade_id, why)
        return Reference(set(self.outside), self.records, self.shadows, self.incomplete)

    def _cell_timeout(self):
        return time_limits.reference_cell(self.timeout)

    def _take_outside(self, grade_id, outputs, lost) -> None:
        """Whether the solution passes the test judged outside the kernel (routing.route then
        says where it goes on: a test it fails runs in the kernel, as it will for students,
        unless its cell asks for outside). A failed try may have changed the kernel's random
        state: each test run in a kernel is seeded first."""
        if lost is not None:
            self.incomplete[grade_id] = f"the solution's test in the grader ended with {lost.args[0]}: {lost.args[1]}"
        passed = not any(o.output_type == "error" for o in outputs)
        self.observed[grade_id] = Observed(passed_outside=passed)
        if passed:
            self.outside.add(grade_id)
        elif self._route(grade_id) is routing.Route.OUTSIDE:
            error = next(o for o in outputs if o.output_type == "error")
            self.incomplete.setdefault(grade_id, f"the solution fails it judged outside, where its cell's metadata "
                                                 f"sends it ({error.ename}: {error.evalue[:200]})")

    def _judge(self, cell, grade_id, entries) -> None:
        if any(o.output_type == "error" for o in cell.outputs):
            if self.plan is not None and grade_id in self.plan.tests:
                error = next(o for o in cell.outputs if o.output_type == "error")
                self.incomplete.setdefault(grade_id, f"the solution failed it ({error.ename}: {error.evalue[:200]})")
            return
        self.records[grade_id] = entries

    def _take_shadow(self, cell, grade_id, passed, failed, lost) -> None:
        if lost is not None:
            self.incomplete[grade_id] = f"the solution's shadow ended with {lost.args[0]}: {lost.args[1]}"
        self.observed[grade_id] = self.observed.get(grade_id, Observed())._replace(shadow_checks=len(passed))
        if passed:
            self.shadows[grade_id] = (passed, failed)

    async def _lost(self, lost, kept) -> None:
        """A kernel lost while the grader asked it is replaced, however often."""
        if getattr(lost, "kernel_alive", False):
            return
        self.lost_kernels += 1
        await self._recover(kept)
