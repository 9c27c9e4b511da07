"""The Validate button's server side, as a Jupyter server extension: nbgrader's dialog asks
/assignments/validate, and the answer is the course's checklist (autograder/validate.py), from
the Validate worker (autograder/validate_button.py), which this starts beside the lab.

Light on purpose: a server extension is imported before the lab answers, so this imports neither
torch nor nbgrader (the autograder package imports torch). The worker loads them in a process of
its own while the lab is already serving; a press made before it is ready waits for it.

nbgrader 0.9.6's lab extension draws the reply as it always does: under "The following cell
failed:", a <pre> with the cell's source (set as text) and one with its error (set as HTML). The
reply puts the whole checklist in one such entry and hides the other two parts with a style of its
own, so the dialog shows the checklist and nothing else; `checklist` and `all_passed` carry the
same verdict as data. ./course validate asks COURSE_VALIDATE, an address a stock server does not
have (it answers 404 at once instead of validating in full)."""
import asyncio
import atexit
import contextlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web

COURSE_VALIDATE = "/course/validate"  # autograder/validate.py's (tests/test_student_experience.py asks it here)
PRESS_TIMEOUT = 600  # s: a notebook of slow cells; each cell has nbgrader_config.py's own timeout
START_TIMEOUT = 600  # s: importing torch from a cold disk on a busy machine
# The worker's first lines, before it imports anything (the autograder package imports torch, which
# takes seconds): from here the kernel kills the worker when the thread that started it (the
# server's main thread) ends, however the lab ends, SIGKILL included. The server has no stop hook
# for a module extension to rely on. A lab gone before the prctl shows as a changed parent.
LAUNCH = """import ctypes, os, runpy, signal, sys
lab = int(sys.argv.pop(1))
if sys.platform == "linux":
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != lab:
    sys.exit("the lab that started this Validate worker has ended")
runpy.run_module("autograder.validate_button", run_name="__main__", alter_sys=True)"""


class Worker:
    """The Validate worker process, started now, started again if it died. It reads the kernel's
    settings from `settings`, the folder of the nbgrader_config.py the server's nbgrader reads."""

    process: subprocess.Popen[bytes]  # set by start(), from __init__ on

    def __init__(self, settings: Path, log):
        self.settings, self.log = settings, log
        self.folder = tempfile.mkdtemp(prefix="course-validate-")  # private (0700): only this user connects
        self.socket = os.path.join(self.folder, "worker")
        self.start()

    def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket)
        self.process = subprocess.Popen([sys.executable, "-c", LAUNCH, str(os.getpid()), self.socket,
                                         str(self.settings)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL)

    async def press(self, path: Path) -> dict:
        """The worker's reply for the notebook at `path`."""
        if self.process.poll() is not None:
            self.log.warning("course: the Validate worker had ended (exit %s); starting it again",
                             self.process.returncode)
            self.start()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while True:  # the socket appears within a moment of the worker's start
            try:
                reader, writer = await asyncio.open_unix_connection(self.socket, limit=1 << 24)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if loop.time() > deadline or self.process.poll() is not None:
                    raise RuntimeError("the Validate worker did not start") from None
                await asyncio.sleep(0.05)
        try:
            writer.write(json.dumps({"path": str(path)}).encode() + b"\n")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), START_TIMEOUT + PRESS_TIMEOUT)
        finally:
            writer.close()
        if not line:
            raise RuntimeError("the notebook's run ended before it answered (did a cell end the process?)")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


class ValidateHandler(JupyterHandler):
    @web.authenticated
    async def post(self):
        try:
            path = self.get_argument("path")
        except web.MissingArgumentError:
            path = json.loads(self.request.body)["path"]
        root = Path(self.settings["server_root_dir"]).expanduser().resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            raise web.HTTPError(403, "Access denied: path outside allowed directory")
        try:
            reply = await self.settings["course_validate_worker"].press(target)
        except Exception as error:
            self.log.exception("Validate failed")
            self.finish(json.dumps({"success": False, "value": f"Validate could not run: {error}"}))
            return
        value = {"failed": [{"source": "", "error": reply["html"]}], "checklist": reply["checklist"],
                 # not "passed": nbgrader's dialog has a branch for that key, and it throws
                 "all_passed": reply["all_passed"]}
        self.finish(json.dumps({"success": True, "value": value}))


class VersionHandler(JupyterHandler):
    """nbgrader's lab extension checks the server's nbgrader version before its first Validate."""

    @web.authenticated
    def get(self):
        theirs, ours = self.get_argument("version"), importlib.metadata.version("nbgrader")
        self.finish(json.dumps({"success": True} if theirs == ours else {
            "success": False, "message": f"nbgrader's lab extension is {theirs}, the server's nbgrader {ours}: "
                                         f"rebuild the course's environment (./course setup)"}))


def _load_jupyter_server_extension(serverapp):
    webapp = serverapp.web_app
    worker = webapp.settings["course_validate_worker"] = Worker(Path.cwd(), serverapp.log)
    atexit.register(worker.stop)  # a stopped lab removes the socket's folder too
    base = webapp.settings["base_url"]
    webapp.add_handlers(".*$", [(url_path_join(base, r"/assignments/validate"), ValidateHandler),
                                (url_path_join(base, COURSE_VALIDATE), ValidateHandler),
                                (url_path_join(base, r"/nbgrader_version"), VersionHandler)])
    serverapp.log.info("course: Validate shows a checklist, from a warm worker")


def _jupyter_server_extension_points():
    return [{"module": "course_validate_button"}]
