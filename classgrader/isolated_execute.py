"""nbgrader's Execute step, made safe for a class of hostile or broken notebooks.

- Each notebook runs in a kernel forked from the warm zygote, in a sandbox jail.
- A cell that kills the kernel, times out or is caught tampering costs only what depends on
  it: the kernel is replaced by a fresh one, the student's earlier cells are re-run, and
  grading goes on without that cell.
- Every cell ends with `integrity.audit()` in the kernel (an IPython post_run_cell hook); if it
  finds the grader's tools replaced, or never reports (the hook was removed), the culprit
  cell is dropped and the notebook is flagged for review with the reason.
- A test cell that passed in the kernel only counts if the records its checks wrote hold up
  when re-checked here, outside the kernel (verify.py). Otherwise it fails and is flagged.

Flags go to resources["course_flags"] (saved by flags.SaveFlags) as (grade id or None, reason).
"""
import copy
import glob
import os
import shutil
import sys

from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from traitlets import Bool, Dict

from . import sandbox, verify
from .warm_kernel import WarmKernelManager

AUDIT = "import classgrader.integrity as _course_integrity; _course_integrity.audit()"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SandboxUnavailable(RuntimeError):
    pass


def _findings(entries):
    """What the last audit among `entries` found (empty: nothing), or None when none ran."""
    audits = [e for e in entries if e["kind"] == "audit"]
    return [item["plain"] for item in audits[-1]["got"]["list"]] if audits else None


def _error_output(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def jail_spec(workdir: str, hide=(), limits=None) -> dict:
    """The jail for a grading kernel, as the zygote takes it: `hide` plus the repository's own
    private folders and the grader's home hidden; the code kernels run exposed read-only."""
    hide = list(hide) + [os.path.join(REPO, d) for d in ("source", "runtime", "work", ".git")]
    # The grader's home is private; Python itself may live there (pyenv), so it is exposed
    # again, read-only, through an otherwise empty home.
    hide.append(os.path.expanduser("~"))
    expose = {REPO, os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    jail = sandbox.Jail(workdir=workdir, expose=tuple(sorted(expose)), hide=tuple(sorted(set(hide))),
                        limits=sandbox.Limits(**(limits or {})), user=sandbox.private_user())
    sandbox.prepare(jail)
    return {"workdir": jail.workdir, "expose": list(jail.expose), "hide": list(jail.hide),
            "limits": dict(limits or {}), "user": jail.user}


class IsolatedExecute(Execute):
    use_sandbox = Bool(True, help="Confine kernels (classgrader.sandbox). Turning this off is an "
                                  "explicit, insecure choice for machines that cannot sandbox.").tag(config=True)
    limits = Dict({}, help="sandbox.Limits fields, e.g. {'memory_bytes': 4 * 2**30}").tag(config=True)

    def preprocess(self, nb, resources, km=None):
        NotebookClient.__init__(self, nb, km)
        self.interrupt_on_timeout = False  # a stuck kernel is replaced, not coaxed
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self.cwd = os.path.abspath(resources.get("metadata", {}).get("path") or ".")
        self.trace_dir = os.path.join(self.cwd, ".grading-trace")
        os.makedirs(self.trace_dir, exist_ok=True)
        self.jail = self._jail()
        self.flags = [(None, reason) for reason in nb.metadata.pop("course_flags", [])]
        try:
            run_sync(self._run_notebook)()
        finally:
            run_sync(self._stop)()
            shutil.rmtree(self.trace_dir, ignore_errors=True)
            for leftover in glob.glob(os.path.join(self.cwd, ".k-*")) + glob.glob(os.path.join(self.cwd, ".kernel-*.json")):
                os.remove(leftover)
        resources["course_flags"] = self.flags
        return self.nb, self.resources

    # -- the sandbox ------------------------------------------------------------------------
    def _jail(self):
        if not self.use_sandbox:
            self.log.warning("Grading WITHOUT a sandbox: student code runs with the grader's rights.")
            return None
        reason = sandbox.unavailable_reason()
        if reason:
            raise SandboxUnavailable(
                f"Cannot grade safely: {reason} Grade as root on Linux, or opt out explicitly with "
                "COURSE_SANDBOX=off (student code then runs with your rights).")
        course = CourseDirectory(config=self.config)
        root = course.root
        hide = [os.path.join(root, d) for d in (course.source_directory, course.submitted_directory,
                                                 course.autograded_directory, course.feedback_directory,
                                                 course.solution_directory, "runtime", "work", ".git")]
        return jail_spec(self.cwd, hide, self.limits)

    # -- kernels ----------------------------------------------------------------------------
    def create_kernel_manager(self):
        self.km = WarmKernelManager(config=self.config, jail=self.jail, trace_dir=self.trace_dir)
        return self.km

    async def _start(self):
        self.create_kernel_manager()
        await self.async_start_new_kernel(cwd=self.cwd)
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
                before = set(os.listdir(self.trace_dir))
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
        before = set(os.listdir(self.trace_dir))
        try:
            msg_id = await ensure_async(self.kc.execute(AUDIT, silent=True, store_history=False))
            await self.async_wait_for_reply(msg_id)
        except (DeadKernelError, CellTimeoutError, RuntimeError):
            return None
        return _findings(self._new_records(before))

    def _new_records(self, before):
        fresh = [os.path.join(self.trace_dir, name) for name in os.listdir(self.trace_dir) if name not in before]
        try:
            return verify.read_records(fresh)
        except Exception as error:  # an unreadable record is itself a reason to distrust
            return [{"kind": "unreadable", "name": str(error), "got": {}, "expected": {}, "options": {}}]

    # -- the notebook -----------------------------------------------------------------------
    async def _run_notebook(self):
        await self._start()
        kept = []  # student and setup cells that ran cleanly, re-run after a restart
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            is_test = utils.is_grade(cell)
            before = set(os.listdir(self.trace_dir))
            failure = await self._run(cell, index)
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
            else:
                kept.append(index)

    async def _recover(self, kept):
        for index in await self._restart(kept):
            self.nb.cells[index].outputs.append(_error_output(
                "Dropped", "this cell failed when re-run after a restart and was left out"))

    def _judge(self, cell, grade_id, entries):
        if any(o.output_type == "error" for o in cell.outputs):
            return  # failed in the kernel: nbgrader scores it 0 as usual
        problems = verify.judge(entries)
        if problems:
            self.flags.append((grade_id, "tampering: a passing test did not hold up outside the kernel: "
                               + "; ".join(problems)))
            cell.outputs.append(_error_output(
                "UnverifiedResult", "this test passed inside your notebook but not when the grader "
                "re-checked its results on its own; it scores 0 and was flagged for review"))
