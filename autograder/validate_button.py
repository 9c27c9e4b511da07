"""The Validate button's server side: the checklist of autograder/validate.py, from a kernel
that was started (and had torch imported) before the button was pressed.

A Jupyter server extension, enabled for the course's lab in place of nbgrader's own
validate_assignment extension (lab/*/jupyter_server_config.json). nbgrader 0.9.6's lab
extension draws the reply as it always does: under "The following cell failed:", a <pre>
with the cell's source (set as text) and one with its error (set as HTML). The reply puts
the whole checklist in one such entry and hides the other two parts with a style of its own,
so the dialog shows the checklist and nothing else; `checklist` and `all_passed` carry the same
verdict as data. A kernel is used once; KEPT of them wait started, and each one taken is
replaced as soon as its press is done."""
import asyncio
import html
import json
import threading
from collections import deque
from pathlib import Path

from jupyter_server.utils import url_path_join
from nbgrader.server_extensions.validate_assignment.handlers import NbGraderVersionHandler, ValidateAssignmentHandler
from tornado import web

from .validate import CANNOT_SEE, COURSE_VALIDATE, MARKS, Kernel, all_done, checklist, summary

# Hides the stock heading and the empty source block; only inside a dialog that has a checklist.
STYLE = ("<style>#validation-message:has(.course-checklist) > div:not(:has(.course-checklist)) {display: none}"
         " .course-checklist {white-space: normal; font-family: var(--jp-ui-font-family); margin: 0}"
         " .course-checklist li {list-style: none; margin: 0.3em 0}"
         " .course-checklist li[data-status=passed] .mark {color: var(--jp-success-color1)}"
         " .course-checklist li[data-status=failed] .mark {color: var(--jp-error-color1)}"
         " .course-checklist li[data-status=answered] .mark {color: var(--jp-info-color1)}"
         " .course-checklist .mark {display: inline-block; width: 1.5em; font-weight: bold}</style>")
# Two: a student who presses again right after the checklist appears finds the second ready, while
# the first's replacement starts; each idle kernel holds about 0.3 GB (torch imported).
KEPT = 2


def as_html(lines) -> str:
    items = "".join(
        f'<li data-status="{line.status}" data-kind="{line.kind}"><span class="mark">{MARKS[line.status]}</span>'
        f"<b>{html.escape(line.exercise)}</b>: "
        + line.said(html.escape)
        + "</li>" for line in lines)
    return (f'{STYLE}<div class="course-checklist"><p class="course-summary">{html.escape(summary(lines))}</p>'
            f'<ul>{items}</ul><p class="course-cannot-see">{html.escape(CANNOT_SEE)}</p></div>')


class WarmKernels:
    """`kept` kernels kept started, so that presses in quick succession each find one ready
    (a start costs seconds; a press that finds none waits for the oldest still starting).
    A kernel taken is replaced once its press is done, so the start does not slow that press."""

    def __init__(self, course_root: Path, kept: int = KEPT):
        self.course_root, self._lock = course_root, threading.Lock()
        self._ready = deque(Starting(course_root) for _ in range(kept))

    def wait_ready(self) -> None:
        for starting in list(self._ready):
            starting.join()

    def ready(self) -> int:
        """How many kernels are started and waiting for a press."""
        return sum(not starting.is_alive() for starting in list(self._ready))

    def take(self, refill: bool = True) -> Kernel:
        """The oldest kernel (waits if it is still starting; a cold start if it failed). With
        `refill`, its replacement starts when the kernel is closed, that is when its press is done."""
        with self._lock:
            starting = self._ready.popleft()
        try:
            kernel = starting.result()
        except Exception:
            if refill:  # the pool keeps its size for the next press
                self.refill()
            raise
        if refill:
            kernel.closed = self.refill
        return kernel

    def refill(self) -> None:
        with self._lock:
            self._ready.append(Starting(self.course_root))

    def close(self) -> None:
        while self._ready:
            self.take(refill=False).close()


class Starting(threading.Thread):
    def __init__(self, course_root: Path):
        super().__init__(daemon=True)
        self.course_root, self.kernel, self.error = course_root, None, None
        self.start()

    def run(self) -> None:
        try:
            self.kernel = Kernel(self.course_root)
        except Exception as error:  # reported when taken, by starting afresh
            self.error = error

    def result(self) -> Kernel:
        self.join()
        return self.kernel if self.kernel is not None else Kernel(self.course_root)


class ChecklistValidateHandler(ValidateAssignmentHandler):
    @web.authenticated
    async def post(self):
        try:
            path = self.get_argument("path")
        except web.MissingArgumentError:
            path = self.get_json_body()["path"]
        root = Path(self.root_dir).resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            raise web.HTTPError(403, "Access denied: path outside allowed directory")
        pool = self.settings["course_warm_kernels"]
        try:  # a kernel's work blocks: off the server's event loop
            lines = await asyncio.to_thread(lambda: checklist(target, pool.take()))
        except Exception as error:
            self.log.exception("Validate failed")
            self.finish(json.dumps({"success": False, "value": f"Validate could not run: {error}"}))
            return
        value = {"failed": [{"source": "", "error": as_html(lines)}],
                 "checklist": [vars(line) for line in lines],
                 # not "passed": nbgrader's dialog has a branch for that key, and it throws
                 "all_passed": all_done(lines)}
        self.finish(json.dumps({"success": True, "value": value}))


def _load_jupyter_server_extension(serverapp):
    webapp = serverapp.web_app
    webapp.settings["root_dir"] = serverapp.root_dir
    webapp.settings["course_warm_kernels"] = WarmKernels(Path(serverapp.root_dir))
    base = webapp.settings["base_url"]
    # nbgrader's dialog posts to /assignments/validate; ./course validate asks COURSE_VALIDATE, an
    # address a stock server does not have (it answers 404 at once instead of validating in full).
    webapp.add_handlers(".*$", [(url_path_join(base, r"/assignments/validate"), ChecklistValidateHandler),
                                (url_path_join(base, COURSE_VALIDATE), ChecklistValidateHandler),
                                (url_path_join(base, r"/nbgrader_version"), NbGraderVersionHandler)])
    serverapp.log.info("course: Validate shows a checklist, from a warm kernel")


def _unload_jupyter_server_extension(serverapp):
    serverapp.web_app.settings["course_warm_kernels"].close()


def _jupyter_server_extension_points():
    return [{"module": "autograder.validate_button"}]
