"""The Validate button's worker: one process that imports torch, IPython and the autograder once,
then forks a child for each press; the child runs the notebook's code cells top to bottom in an
IPython shell set up as the autograder's kernel is (nbgrader_config.py's exec line, imported
before any student code), errors and all, and answers with the checklist.

    python -m autograder.validate_button SOCKET SETTINGS    (the lab's server extension,
                                                             lab/server/course_validate_button.py,
                                                             starts it beside the lab, and ties
                                                             its life to the lab's)

SETTINGS is the folder whose nbgrader_config.py the lab's nbgrader reads (the course's, where there
is none there), for the kernel's arguments and the per-cell timeout.

A press costs a fork and the notebook's own cells: no kernel start, no `import torch`. Each child
starts from the same untouched image, so nothing one press ran reaches the next, and presses at
once run side by side. The worker itself never runs student code.

Protocol, one Unix-socket connection per press:
  server -> worker   one JSON line: {"path": the notebook's absolute path}
  worker -> server   one JSON line: {"checklist": [Line as a dict, ...], "all_passed": bool,
                     "html": what nbgrader's dialog shows}, or {"error": "what went wrong"}

The socket listens before the imports: a press while torch is still loading waits in the backlog.
"""
import contextlib
import gc
import html
import json
import os
import signal
import socket
import sys
from pathlib import Path

from .validate import (
    CANNOT_SEE,
    COURSE_ROOT,
    MARKS,
    WARM_UP,
    Line,
    _source,
    all_done,
    kernel_settings,
    lines_from,
    read_notebook,
    summary,
)

# Hides the stock heading and the empty source block; only inside a dialog that has a checklist.
STYLE = ("<style>#validation-message:has(.course-checklist) > div:not(:has(.course-checklist)) {display: none}"
         " .course-checklist {white-space: normal; font-family: var(--jp-ui-font-family); margin: 0}"
         " .course-checklist li {list-style: none; margin: 0.3em 0}"
         " .course-checklist li[data-status=passed] .mark {color: var(--jp-success-color1)}"
         " .course-checklist li[data-status=failed] .mark {color: var(--jp-error-color1)}"
         " .course-checklist li[data-status=answered] .mark {color: var(--jp-info-color1)}"
         " .course-checklist .mark {display: inline-block; width: 1.5em; font-weight: bold}</style>")


def as_html(lines) -> str:
    items = "".join(
        f'<li data-status="{line.status}" data-kind="{line.kind}"><span class="mark">{MARKS[line.status]}</span>'
        f"<b>{html.escape(line.exercise)}</b>: "
        + line.said(html.escape)
        + "</li>" for line in lines)
    return (f'{STYLE}<div class="course-checklist"><p class="course-summary">{html.escape(summary(lines))}</p>'
            f'<ul>{items}</ul><p class="course-cannot-see">{html.escape(CANNOT_SEE)}</p></div>')


def reply_for(lines: list[Line]) -> dict:
    return {"checklist": [vars(line) for line in lines], "all_passed": all_done(lines), "html": as_html(lines)}


class CellTimeout(Exception):
    """A cell ran past nbgrader_config.py's per-cell timeout (the autograder stops it too)."""


class Shell:
    """An IPython shell as the autograder's kernel starts: its exec lines run (stderr to stdout,
    warnings without their source line), torch and the autograder imported and warmed up. No
    history thread: a process with other threads is not safe to fork."""

    def __init__(self, course_root: Path):
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config
        extra, self.timeout = kernel_settings(course_root)
        config = Config()
        config.HistoryManager.enabled = False
        self.shell = InteractiveShell.instance(config=config)
        # A reply needs only the error's name and message: formatting each traceback (source read,
        # highlighted), to show or to keep with the cell's history, would cost a press about a
        # third of a second per failing cell. These methods are replaced on this one shell only,
        # which mypy's method-assign refuses by rule.
        self.shell.showtraceback = lambda *args, **kwargs: None  # type: ignore[method-assign]
        self.shell.showsyntaxerror = lambda *args, **kwargs: None  # type: ignore[method-assign]
        self.shell._format_exception_for_storage = lambda error, *args, **kwargs: {  # type: ignore[method-assign]
            "ename": type(error).__name__, "evalue": str(error), "traceback": []}
        for argument in extra:
            if argument.startswith("--IPKernelApp.exec_lines="):
                self.shell.run_cell(argument.partition("=")[2], store_history=False)
        self.shell.run_cell(WARM_UP, store_history=False)
        warm_up(self.shell)

    def run(self, sources: list[str], cwd: str) -> list[dict]:
        """Each source's reply as a kernel gives it ({"status"}, with "ename" and "evalue" on an
        error); every one runs whatever the others did. Only ever called in a forked child."""
        os.chdir(cwd)
        sys.path.insert(0, "")  # a kernel imports from its notebook's folder

        def stop(signum, frame):
            raise CellTimeout(f"the cell ran longer than {self.timeout:g} s")
        signal.signal(signal.SIGALRM, stop)
        replies = []
        for source in sources:
            signal.setitimer(signal.ITIMER_REAL, self.timeout)
            try:
                result = self.shell.run_cell(source, store_history=True)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            error = result.error_before_exec or result.error_in_exec
            replies.append({"status": "ok"} if error is None else
                           {"status": "error", "ename": type(error).__name__, "evalue": str(error)})
        return replies


def warm_up(shell) -> None:
    """autograder.warm_up's torch, then the shell's first cell and the first tensor it shows,
    paid before the fork, not by each press."""
    import io

    from autograder.warm_up import exercise_torch
    exercise_torch()
    shell.run_cell("from autograder import check_tensor; import torch\n"
                   "check_tensor(torch.zeros(2), torch.ones(2), name='warm-up')", store_history=False)
    with contextlib.redirect_stdout(io.StringIO()):  # a cell's last value shown: a tensor's repr, first paid here
        shell.run_cell("torch.zeros(2, 3, dtype=torch.float16)", store_history=False)


def press(shell: Shell, request: dict) -> dict:
    """The reply to one press, computed in this (forked) process."""
    path = Path(request["path"])
    nb = read_notebook(path)
    code = [i for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"]
    replies = shell.run([_source(nb["cells"][i]) for i in code], cwd=str(path.parent))
    return reply_for(lines_from(nb, dict(zip(code, replies))))


def _answer(shell: Shell, connection: socket.socket) -> None:
    """In the child: read the request, run the notebook with the student's output out of sight,
    answer, exit without running the parent's clean-ups."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # student code may wait for its own children
        stream = connection.makefile("rwb")
        request = json.loads(stream.readline())
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            reply = press(shell, request)
        except Exception as error:  # an unreadable notebook: said to the student, not raised
            reply = {"error": f"{type(error).__name__}: {error}"}
        stream.write(json.dumps(reply).encode() + b"\n")
        stream.flush()
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def serve(socket_path: str, course_root: Path) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(16)
    shell = Shell(course_root)
    # Children share the worker's memory until they write to it. A garbage collection touches
    # every object it tracks, copying each page it is on: frozen objects are never scanned.
    gc.collect()
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
    print("validate worker: ready", flush=True)
    while True:
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            _answer(shell, connection)
        connection.close()


def settings_folder(folder: str) -> Path:
    return Path(folder) if (Path(folder) / "nbgrader_config.py").is_file() else COURSE_ROOT


if __name__ == "__main__":
    serve(sys.argv[1], settings_folder(sys.argv[2]))
