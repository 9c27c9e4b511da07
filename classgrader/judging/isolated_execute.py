"""nbgrader's Execute step, made safe for a class of hostile or broken notebooks.

- Each notebook runs in a kernel forked from the warm zygote, in a sandbox jail, in a work area
  of its own (work_area.py): a size-limited copy of the student's files that the grader never
  writes to and only reads without following links. nbgrader's own folder (runtime/autograded),
  where root writes the graded notebook, is never seen by the kernel.
- A cell that kills the kernel, times out or is caught tampering costs only what depends on
  it: the kernel is replaced by a fresh one, the student's earlier cells are re-run, and
  grading goes on without that cell.
- Every cell ends with `integrity.audit()` in the kernel (an IPython post_run_cell hook); if it
  finds the grader's tools replaced, or never reports (the hook was removed), the culprit
  cell is dropped and the notebook is flagged for review with the reason.
- Each test cell's route is routing.route's, from the source's test cell and what the grader's
  own run of the solution (reference_run.py) saw of it. A test judged outside the student's
  process (judge.py) runs here, in the grader, and the student's kernel only answers with data
  what its names hold and what its functions return for the test's inputs; expected values
  never enter it.
- A test cell run in the kernel (identities, storage, the autograd graph) that passed there only
  counts if the records its checks wrote hold up when re-checked here, outside the kernel
  (verify.py), and, where it is shadowed, if its value checks run here pass as the solution's
  do; where its records part from the same cell's in the grader's own run of the solution
  (other checks, other expected values), it is flagged for review.

Flags go to resources["course_flags"] (saved by flags.SaveFlags) as (grade id or None, reason).
"""
import asyncio
import copy
import os
import time

from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from traitlets import Bool, Dict, Float

from classgrader import time_limits
from classgrader.in_kernel import protocol
from classgrader.judging import answer_channel, judge, reference_run, routing, source_plan, verify
from classgrader.judging.routing import Route
from classgrader.judging.source_plan import SourcePlan
from classgrader.judging.work_area import WorkArea
from classgrader.kernels import kernel_memory, sandbox
from classgrader.kernels.warm_kernel import WarmKernelManager

AUDIT = "import classgrader.in_kernel.integrity as _course_integrity; _course_integrity.audit()"


def _findings(entries):
    """What the last audit among `entries` found (empty: nothing), or None when none ran."""
    audits = [e for e in entries if e["kind"] == "audit"]
    return [item["plain"] for item in audits[-1]["got"]["list"]] if audits else None


def _error_output(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


# Kernels a student's answers may lose while the grader asks them (a function that hangs past
# an interrupt, or kills its kernel): each costs a fresh kernel and a re-run of every kept cell,
# so after this many the rest of the notebook is left ungraded (flagged) instead.
MAX_LOST_KERNELS = 2
# A source plan's key (source_plan.read's) -> the grader's own run of that source, per process.
_references: dict[tuple[str, int], reference_run.Reference] = {}


# The cell nbclient is told it waits on while the kernel answers a test judged in the grader.
ANSWERING = NotebookNode(cell_type="code", source="(the grader's questions)", metadata={}, outputs=[])


class IsolatedExecute(Execute):
    use_sandbox = Bool(True, help="Confine kernels (classgrader.kernels.sandbox). Turning this off is an "
                                  "explicit, insecure choice for machines that cannot sandbox.").tag(config=True)
    limits = Dict({}, help="sandbox.Limits fields, e.g. {'memory_bytes': 4 * 2**30}").tag(config=True)

    student_budget = Float(0, help="Seconds one student's notebook may take in all before its remaining "
                                   "cells are left ungraded and flagged (0: time_limits.STUDENT_TIMEOUTS cell "
                                   "timeouts)").tag(config=True)

    area: WorkArea  # the notebook's work area, while it runs (_execute)

    def preprocess(self, nb, resources, km=None):
        """Grade a student's notebook against the grader's own run of its source (the reference)."""
        plan = self._plan(resources)
        return self.grade(nb, resources, plan, self._reference(plan), km)

    def grade(self, nb, resources, plan, reference, km=None):
        """Grade a student's notebook against `reference`, the grader's own run of `plan`'s source."""
        self.reference = reference
        self.observed = {} if plan is None else {grade_id: reference.observed(grade_id) for grade_id in plan.tests}
        self._execute(nb, resources, km, plan)
        self._note_device(resources)
        resources["course_flags"] = self.flags
        return self.nb, self.resources

    def _execute(self, nb, resources, km, plan) -> None:
        """Run `nb` cell by cell in a kernel of its own (self.flags: what it showed); the part
        a student's run and the grader's own share."""
        NotebookClient.__init__(self, nb, km)
        self.timeout = self._cell_timeout()
        self.plan, self.started, self.lost_kernels = plan, time.monotonic(), 0
        self.given_up: str | None = None  # why the rest of the notebook is left ungraded, once it is
        self.judge: judge.Judge | None = None
        if plan is not None and any(self._route(grade_id) is not Route.KERNEL for grade_id in plan.tests):
            self.judge = judge.Judge(plan.setup, plan.answers, self._ask_from_thread, self._kernel_meter)
        self.interrupt_on_timeout = False  # a stuck kernel is replaced, not coaxed
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self.flags = [(None, reason) for reason in nb.metadata.pop("course_flags", [])]
        self.area = WorkArea(self.use_sandbox, self.limits, self.log)
        try:
            self.area.fill(os.path.abspath(resources.get("metadata", {}).get("path") or "."))
            run_sync(self._run_notebook)()
        finally:
            run_sync(self._stop)()
            if self.judge is not None:
                self.judge.close()
            self.area.close()

    def _cell_timeout(self):
        return self.timeout

    def _route(self, grade_id) -> Route:
        """Where a test cell is judged (routing.route); a grade cell the source does not have runs
        in the kernel, as nbgrader runs it."""
        if self.plan is None or grade_id not in self.plan.tests:
            return Route.KERNEL
        return routing.route(self.plan.cells[grade_id], frozenset(self.plan.answers), self.observed.get(grade_id))

    def _note_device(self, resources) -> None:
        """Where this student's tests ran, as the grader expects it from what the sandbox gave
        (graded_device.py), for flags.csv and the class report; a kernel that reported another
        device (a student's cell rewrote the course's line, or the kernel saw another) is flagged."""
        from classgrader.judging import graded_device
        device = graded_device.expected(self.area.jail)
        resources["course_device"] = device
        said = graded_device.reported(self.nb)
        if said is not None and said.split()[0] != device.split()[0]:
            self.flags.append((None, f"review: the notebook says it was graded on {said}, where the grader gave "
                                     f"it {device}"))

    def _plan(self, resources) -> SourcePlan | None:
        return source_plan.read(self.config, resources)

    def _reference(self, plan) -> reference_run.Reference | None:
        """The grader's own run of the source notebook (reference_run.py): once per course,
        source, grader and machine (reference_store.py), kept in memory by each worker; None
        without a source."""
        if plan is None:
            return None
        if plan.key not in _references:
            from classgrader.class_run import progress
            from classgrader.judging import reference_store
            root = CourseDirectory(config=self.config).root
            key = reference_store.digest(plan.data, os.path.join(root, "nbgrader_config.py"), {
                "timeout": self.timeout, "sandbox": self.use_sandbox, "limits": dict(self.limits),
                "reference_timeouts": time_limits.REFERENCE_TIMEOUTS})
            store = reference_store.Store(os.path.join(root, "runtime", "grading", "references"), key)
            progress.preparing(f"the grader's own run of {os.path.basename(plan.path)}")
            try:
                with store.locked():  # another worker computing it: wait for it, then read it
                    reference = store.load()
                    if reference is None:
                        own = OwnRun(config=self.config)
                        own.log = self.log
                        reference = own.establish(plan)
                        store.save(reference)
                _references[plan.key] = reference
            finally:
                progress.prepared()
        return _references[plan.key]

    def _check_disk(self, grade_id) -> None:
        """Flag, once, a kernel that filled its work area: only its own cells could suffer."""
        if self.area.newly_full():
            limits = sandbox.Limits(**self.limits)
            self.flags.append((grade_id, f"disk quota: the notebook filled its working area "
                                         f"({limits.disk_bytes // 2**20} MiB, {limits.disk_files} files)"))

    # -- kernels ----------------------------------------------------------------------------
    def create_kernel_manager(self):
        self.km = WarmKernelManager(config=self.config, jail=self.area.jail, trace_dir=self.area.trace_dir)
        return self.km

    async def _start(self):
        self.area.new_trace_dir()
        self.create_kernel_manager()
        await self.async_start_new_kernel(cwd=self.area.path)
        await self.async_start_new_kernel_client()
        reply = await self.async_wait_for_reply(await ensure_async(self.kc.kernel_info()))
        self.nb.metadata["language_info"] = reply["content"]["language_info"]
        if await self._audit() is None:  # also fixes the baseline before any student code
            raise RuntimeError("the grading kernel does not answer integrity audits")

    async def _stop(self):
        if self.km is not None:
            self.shutdown_kernel = "immediate"
            await self._async_cleanup_kernel()
        self.km = self.kc = None

    async def _restart(self, kept):
        """A fresh kernel with the student's kept cells re-run; a kept cell that now fails
        the same way is dropped too (returned), so the loop always ends."""
        dropped = []
        while True:
            await self._stop()
            await self._start()
            for index in kept:
                if self._out_of_budget():
                    return dropped
                before = set(os.listdir(self.area.trace_fd))
                outcome = await self._run(copy.deepcopy(self.nb.cells[index]), index)
                if outcome is not None or _findings(self._new_records(before)) != []:
                    dropped.append(index)
                    kept.remove(index)
                    break
            else:
                return dropped

    async def _run(self, cell, index):
        """Execute one cell; None when the kernel survived it, else why it did not."""
        try:
            await self.async_execute_cell(cell, index, store_history=True)
        except DeadKernelError:
            return "KernelDied", ("the kernel stopped while running this cell (it crashed, exited, "
                                  "or ran out of memory); later cells were graded in a fresh kernel")
        except CellTimeoutError:
            return "TimeoutError", (f"this cell ran longer than {self.timeout} s and was stopped; "
                                    "later cells were graded in a fresh kernel")
        return None

    async def _audit(self):
        """What integrity.audit() found (a list, empty when clean), or None when it never reported."""
        before = set(os.listdir(self.area.trace_fd))
        try:
            msg_id = await ensure_async(self.kc.execute(AUDIT, silent=True, store_history=False))
            await self.async_wait_for_reply(msg_id)
        except (DeadKernelError, CellTimeoutError, RuntimeError):
            return None
        return _findings(self._new_records(before))

    async def _seed_before_test(self, grade_id) -> None:
        """Every test run in the kernel starts from the same random state in the grader's own
        run and the student's, whatever ran before it (a test that failed halfway, a Try-it
        cell): their records then part only where the answers do."""
        try:
            seeding = f'__import__("autograder").seed_everything({judge.seed_of(grade_id)})'
            msg_id = await ensure_async(self.kc.execute(seeding, silent=True, store_history=False))
            await self.async_wait_for_reply(msg_id)
        except (DeadKernelError, CellTimeoutError):
            pass  # the test cell meets the same kernel next, and says what happened

    def _new_records(self, before):
        fresh = [name for name in os.listdir(self.area.trace_fd) if name not in before]
        try:
            return verify.read_records(fresh, dir_fd=self.area.trace_fd)
        except Exception as error:  # an unreadable record is itself a reason to distrust
            return [{"kind": "unreadable", "name": str(error), "got": {}, "expected": {}, "options": {}}]

    # -- the notebook -----------------------------------------------------------------------
    def _out_of_budget(self) -> bool:
        """Whether this notebook has had all the grading it gets (flagged once, with why): its
        kernels were lost too often while the grader asked them, or it took too long in all."""
        if self.given_up is None:
            budget = time_limits.student_budget(self.timeout, self.student_budget)
            if time.monotonic() - self.started > budget:
                self._give_up(f"grading this notebook took longer than its {budget:.0f} s in all")
        return self.given_up is not None

    def _give_up(self, why: str) -> None:
        self.given_up = why
        self.flags.append((None, f"not graded in full: {why}; the cells after that were left ungraded"))

    async def _run_notebook(self):
        await self._start()
        kept = []  # student and setup cells that ran cleanly, re-run after a restart
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            is_test = utils.is_grade(cell)
            if self._out_of_budget():
                if is_test:
                    cell.outputs.append(_error_output("NotGraded", f"{self.given_up}: this test was not run"))
                continue
            if is_test and self._route(grade_id) is Route.OUTSIDE and await self._judge_outside(cell, grade_id, kept):
                continue
            if is_test:
                await self._seed_before_test(grade_id)
            before = set(os.listdir(self.area.trace_fd))
            failure = await self._run(cell, index)
            self._check_disk(grade_id)
            if failure:
                cell.outputs.append(_error_output(*failure))
                await self._recover(kept)
                continue
            entries = self._new_records(before)  # the cell's checks, then its audit (integrity.after_cell)
            found = _findings(entries)
            if found is None or found:
                why = ("the grader's integrity check did not run: something (an input transformer, "
                       "a custom exception handler) changes how cells run") if found is None else "; ".join(found)
                self.flags.append((grade_id, f"tampering: {why} (cell {index + 1}, dropped and the rest re-graded)"))
                cell.outputs.append(_error_output("Tampering", f"{why}. This cell was left out of grading."))
                await self._recover(kept)
                continue
            if is_test:
                self._judge(cell, grade_id, entries)
                await self._shadow(cell, grade_id, kept)
            else:
                kept.append(index)

    # -- tests judged outside the kernel (judge.py) -----------------------------------------
    async def _judge_outside(self, cell, grade_id, kept) -> bool:
        """Run the source's test here (judge.py), in a thread, while the student's kernel
        answers its questions (answer_channel.py); whether the cell is done with: its outputs
        are the cell's, whatever they say, unless what the try showed sends the test into the
        kernel after all (routing.route: the grader's own run, when the solution fails it here)."""
        if self.judge is None:
            raise RuntimeError(f"{grade_id} is judged outside the kernel, but this notebook's run has no judge")
        lost = None
        try:
            outputs = await self._in_grader(self.judge.run, self.plan.tests[grade_id])
        except protocol.KernelLost as error:
            lost, outputs = error, [_error_output(*error.args)]
            await self._lost(lost, kept)
        self._take_outside(grade_id, outputs, lost)
        if self._route(grade_id) is not Route.OUTSIDE:
            return False
        cell.outputs = outputs
        return True

    def _take_outside(self, grade_id, outputs, lost) -> None:
        """A student's test judged outside: what it showed is its verdict, and changes no route."""

    def _grader_seconds(self) -> float:
        return time_limits.grader_test(self.timeout)

    def _get_timeout(self, cell):
        if cell is ANSWERING:  # the kernel's end of a test judged here: open while the grader works on it
            return self._answering_seconds()
        return super()._get_timeout(cell)

    def _answering_seconds(self) -> float:
        """How long the kernel's end of a test may stay open, the grader's own work on the test
        included: the student's whole allowance. Its answers are bounded by the channel (each, and
        all together); this only ends a conversation the grader never closes."""
        return time_limits.student_budget(self.timeout, self.student_budget)

    async def _in_grader(self, work, code, seed=None):
        """work(code), a judge.Judge method, in a thread, while the student's kernel answers
        its questions (seeded first, given a seed); protocol.KernelLost when the kernel died or hung
        meanwhile. A kernel that hung is interrupted first: if it comes back, its state is
        intact and only this test is lost (the KernelLost says so: kernel_alive)."""
        seconds = self._grader_seconds()
        self._channel = channel = answer_channel.AnswerChannel(
            self.area.records_fd, self.area.records_path, seconds, seed,
            per_answer=time_limits.seconds(self.timeout))
        serving = asyncio.ensure_future(self._serve(channel))
        testing = asyncio.ensure_future(asyncio.to_thread(work, code))
        try:
            await asyncio.wait({serving, testing}, return_when=asyncio.FIRST_COMPLETED)
            if not testing.done():  # the kernel's end is gone (the kernel died): unblock the test
                channel.interrupt()
            try:  # bounded even if the test's own work here never ends: the run goes on
                result = await asyncio.wait_for(asyncio.shield(testing), 2 * seconds)
            except TimeoutError:
                raise protocol.KernelLost(
                    "TimeoutError", f"the grader's own work on this test went on past {2 * seconds:.0f} s "
                    "and was abandoned; later cells were graded in a fresh kernel") from None
            channel.close()
            await serving
            return result
        except protocol.KernelLost as lost:
            lost.kernel_alive = lost.args[0] == "TimeoutError" and not serving.done() \
                and testing.done() and await self._interrupted(serving, channel)
            if not serving.done():
                serving.cancel()
            raise
        finally:
            channel.close()

    async def _interrupted(self, serving, channel) -> bool:
        """Whether the kernel, hung in the student's code while answering, ends its answering
        cell once interrupted (as a student's own interrupt would stop it): then nothing it
        holds is lost, and no restart is needed."""
        try:
            await ensure_async(self.km.interrupt_kernel())
        except Exception:
            return False
        channel.close()  # the kernel's loop, once back, reads the end of the conversation
        try:
            await asyncio.wait_for(asyncio.shield(serving), time_limits.seconds(self.timeout))
            return True
        except (TimeoutError, protocol.KernelLost):
            return False

    async def _lost(self, lost, kept) -> None:
        """A kernel lost while the grader asked it: replaced (kept cells re-run), unless the
        interrupt brought it back; after MAX_LOST_KERNELS replacements the rest is not graded."""
        if getattr(lost, "kernel_alive", False):
            return
        self.lost_kernels += 1
        if self.lost_kernels >= MAX_LOST_KERNELS:
            self._give_up(f"the kernel was lost {self.lost_kernels} times while the grader asked it "
                          f"({lost.args[0]}: {lost.args[1]})")
            return
        await self._recover(kept)

    async def _shadow(self, cell, grade_id, kept) -> None:
        """A test run in the kernel, paired with what the grader can establish itself: its
        value checks, run here (judge.Judge.shadow) against the student's kernel. A check the
        solution's shadow passes and this one does not, while the kernel's test passed, is a
        disagreement: the kernel's observation alone earns nothing (0, flagged). A test that
        failed in the kernel scores 0 already and is not shadowed (the next test is seeded anew,
        so later cells meet the same kernel either way)."""
        if self._route(grade_id) is not Route.SHADOWED or any(o.output_type == "error" for o in cell.outputs):
            return
        if self.judge is None:
            raise RuntimeError(f"{grade_id} is shadowed, but this notebook's run has no judge")
        lost = None
        try:
            passed, failed = await self._in_grader(self.judge.shadow, self.plan.tests[grade_id],
                                                   judge.seed_of(f"{grade_id} (shadow)"))
        except protocol.KernelLost as error:
            lost, passed, failed = error, [], [f"{error.args[0]}: {error.args[1]}"]
            await self._lost(lost, kept)
        self._take_shadow(cell, grade_id, passed, failed, lost)

    def _take_shadow(self, cell, grade_id, passed, failed, lost) -> None:
        """The student's shadow against the solution's: a check the solution's passes and this
        one does not fails the test (0, flagged)."""
        expected_passes, expected_failures = self.reference.shadows[grade_id]
        missing = judge.missing_checks(expected_passes, passed)
        if not missing:
            return
        new = [message for message in failed if message not in expected_failures]
        why = new[0] if new else f"{missing[0]} was not checked"
        self.flags.append((grade_id, f"tampering: this test passed in the notebook, but the grader's own check "
                                     f"of its values failed: {why}"))
        cell.outputs.append(_error_output(
            "UnverifiedResult", "this test passed inside your notebook, but the grader's own check of your "
            f"answer's values failed ({why}); it scores 0 and was flagged for review"))

    async def _serve(self, channel) -> None:
        """The kernel's end, as one cell execution; KernelLost if the kernel dies or hangs."""
        try:
            msg_id = await ensure_async(self.kc.execute(channel.code, silent=True, store_history=False))
            await self.async_wait_for_reply(msg_id, ANSWERING)
        except DeadKernelError:
            raise protocol.KernelLost("KernelDied", "the kernel stopped while answering this test (it crashed, exited, "
                                      "or ran out of memory); later cells were graded in a fresh kernel") from None
        except CellTimeoutError:
            raise answer_channel.timed_out(self._answering_seconds()) from None

    def _kernel_meter(self):
        """A meter of the running kernel's memory, read from outside it (autograder.memory_probe)."""
        return kernel_memory.KernelMemory.of(self.km.kernel_process() if self.km is not None else {})

    def _ask_from_thread(self, request: dict):
        """judge.Judge's way to the student's kernel, from the thread the test runs in."""
        return self._channel.ask(request)

    async def _recover(self, kept):
        for index in await self._restart(kept):
            self.nb.cells[index].outputs.append(_error_output(
                "Dropped", "this cell failed when re-run after a restart and was left out"))

    def _judge(self, cell, grade_id, entries):
        if any(o.output_type == "error" for o in cell.outputs):
            return  # failed in the kernel: nbgrader scores it 0 as usual
        own = self.reference.records.get(grade_id) if self.reference is not None else None
        if self.reference is not None and (own is None or grade_id in self.reference.incomplete):
            # Fail closed: without the grader's own account of this test, the kernel's word is all
            # there is, and that earns nothing.
            why = self.reference.incomplete.get(grade_id, "it recorded nothing there")
            self.flags.append((grade_id, f"review: the grader's own run of the solution could not establish this "
                                         f"test ({why}); it scores 0 until reviewed"))
            cell.outputs.append(_error_output(
                "UnverifiedResult", "this test passed inside your notebook, but the grader could not check it on its "
                "own this time; it scores 0 and was flagged for your instructor to review"))
            return
        problems, review = verify.judge(entries, own)
        if review:
            self.flags.append((grade_id, "review: this test's records part from the grader's own run of the "
                               "solution: " + "; ".join(review[:3])))
        if problems:
            self.flags.append((grade_id, "tampering: a passing test did not hold up outside the kernel: "
                               + "; ".join(problems)))
            cell.outputs.append(_error_output(
                "UnverifiedResult", "this test passed inside your notebook but not when the grader "
                "re-checked its results on its own; it scores 0 and was flagged for review"))


class OwnRun(reference_run.ReferenceRun, IsolatedExecute):
    """The grader's own run of a source notebook: IsolatedExecute's kernels, sandbox and judge,
    with the reference's decisions (reference_run.py) in place of a student's."""
