"""Validate as a checklist: one line per exercise, in notebook order, from the visible checks.

    ./course validate NOTEBOOK           (or python -m autograder.validate NOTEBOOK)

Every code cell runs, top to bottom, in a fresh kernel configured exactly as the autograder's
(nbgrader_config.py's Execute.extra_arguments and timeout), errors and all, as nbgrader's
Validator does. Then each test cell becomes a line: passed; failed, with the one-line reason
its check gave; or not answered yet (the stub raised NotImplementedError). A quiz question's
visible check sees only that a letter was given, so its line says "answered, checked at
grading", never "passed". Exit 0 when every exercise passes and every question is answered,
else 1. The JupyterLab button shows the same lines (validate_button.py), run
in a fork of a worker that imported torch and the autograder before the press; while a course lab
runs, this command asks it.
"""
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

COURSE_ROOT = Path(__file__).resolve().parent.parent
CANNOT_SEE = ("Validate runs only the visible checks: grading adds hidden checks on fresh inputs and on "
              "other devices, and checks which quiz answers are right.")
COURSE_VALIDATE = "/course/validate"  # the Validate button's checklist, asked for by ./course validate
MARKS = {"passed": "✓", "answered": "○", "failed": "✗", "unanswered": "·"}
SAID = {"passed": "passed", "answered": "answered, checked at grading", "unanswered": "not answered yet"}
DONE = ("passed", "answered")  # what Validate can say of an item at its best
# What the kernel runs before a student's first cell, so that a warm kernel (or worker) has paid for it.
WARM_UP = "import torch, autograder"


@dataclass(frozen=True)
class Line:
    exercise: str
    status: str  # "passed" (exercises), "answered" (questions), "failed" or "unanswered"
    reason: str = ""
    kind: str = "exercise"  # or "question": a quiz question, whose answer only grading checks
    heading: str = ""  # the exercise a line belongs to, when it has several test cells

    def said(self, escape=str) -> str:
        """What the checklist says of this item; `escape` makes the check's reason safe to show."""
        return SAID.get(self.status, f"failed: {escape(self.reason)}")

    def text(self) -> str:
        return f"{MARKS[self.status]} {self.exercise}: {self.said()}"


# ---- the notebook, read as plain JSON (nbformat costs a second to import) ----

def _source(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _heading(markdown: str) -> str | None:
    """A markdown cell's first heading without its points, "Q1 · Describe a tensor"."""
    for line in markdown.splitlines():
        if line.startswith("#"):
            return re.sub(r"\s*\([^)]*points?[^)]*\)\s*$", "", line.lstrip("#").strip())
    return None


def exercises(nb: dict) -> list[tuple[str, list[int], int]]:
    """(name, indices of its answer cells, index of its test cell) for every test cell, in order."""
    return [(name, answers, test) for name, answers, test, _ in _test_cells(nb)]


def _test_cells(nb: dict) -> list[tuple[str, list[int], int, str]]:
    """exercises(), each with the heading it sits under: an exercise with two test cells is one."""
    found: list[tuple[str, list[int], int, str]] = []  # heading, answer cells, test cell, grade id
    heading, answers = "Exercise", []
    under: dict[str, int] = {}  # heading: how many test cells sit under it
    for i, cell in enumerate(nb["cells"]):
        meta = _nbgrader(cell)
        if cell["cell_type"] == "markdown":
            heading = _heading(_source(cell)) or heading
        elif meta.get("solution"):
            answers.append(i)
        elif meta.get("grade"):
            found.append((heading, answers, i, meta.get("grade_id", f"cell {i + 1}")))
            under[heading] = under.get(heading, 0) + 1
            answers = []
    # Several test cells under one heading (a quiz): tell them apart by their grade id.
    return [(name if under[name] == 1 else f"{name} · {gid.removesuffix('_tests').split('_')[-1]}", a, t, name)
            for name, a, t, gid in found]


def is_question(cell) -> bool:
    """A quiz question's test cell: its grade id says so (quiz_q1_tests), as the sources name them."""
    return _nbgrader(cell).get("grade_id", "").startswith("quiz_")


def read_notebook(path) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


# ---- running it ----

def kernel_settings(course_root: Path = COURSE_ROOT) -> tuple[list[str], float]:
    """(the kernel's extra arguments, the per-cell timeout) from the course's nbgrader_config.py,
    the same lines the autograder and stock Validate read."""
    from traitlets.config.loader import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    return list(config.Execute.get("extra_arguments", [])), float(cell_timeout(config))


def cell_timeout(config):
    """The per-cell timeout nbgrader runs a notebook with under `config`: the course's
    c.Execute.timeout (nbgrader_config.py, its one source), else nbgrader's own default."""
    if "timeout" in config.Execute:
        return config.Execute.timeout
    from nbgrader.preprocessors import Execute  # only for a course that sets none
    return Execute.timeout.default_value


def course_config(course_root: Path = COURSE_ROOT):
    """The traitlets config nbgrader would load when run from `course_root`."""
    from nbgrader.apps import NbGrader
    app = NbGrader()
    app.config_file_paths.insert(0, str(course_root))
    app.load_config_file()
    return app.config


def validate(notebook, *, invert: bool = False, course_root: Path = COURSE_ROOT) -> dict:
    """Stock nbgrader's Validator, as its own button would run it: {} when the notebook passes
    (with invert: when every graded test fails), else a dict naming the failing cells. The
    tests hold the checklist to it."""
    from nbgrader.validator import Validator
    return Validator(config=course_config(course_root), invert=invert).validate(os.fspath(notebook))


class Kernel:
    """One fresh kernel, the autograder's kind, warmed up before any student code, used once."""

    def __init__(self, course_root: Path = COURSE_ROOT):
        from jupyter_client.manager import KernelManager
        extra, self.timeout = kernel_settings(course_root)
        # ipc: Unix sockets in a private folder, no TCP port (and no warning about one).
        import tempfile
        self._folder = tempfile.mkdtemp(prefix="validate-")
        # The notebook's own scratch folders (tempfile.mkdtemp, a checkpoint's folder) go in a /tmp
        # of this kernel's, removed with it: a Validate leaves nothing in the machine's /tmp.
        scratch = os.path.join(self._folder, "tmp")
        os.mkdir(scratch)
        self.manager = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(self._folder, "k"))
        self.manager.start_kernel(extra_arguments=extra, cwd=str(course_root), env={**os.environ, "TMPDIR": scratch})
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.run([WARM_UP])

    def run(self, sources: list[str], cwd: str | None = None) -> list[dict]:
        """Each source's execute_reply content, in order: all are sent at once and every one
        runs whatever the others did (stop_on_error off, like nbgrader's allow_errors)."""
        if cwd:
            sources = [f"import os; os.chdir({cwd!r}); del os", *sources]
        ids = [self.client.execute(src, store_history=True, stop_on_error=False) for src in sources]
        replies: dict[str, dict] = {}  # msg_id: its reply's content
        wanted = set(ids)
        while wanted - replies.keys():  # other replies (kernel_info's) may come first
            msg = self.client.get_shell_msg(timeout=self.timeout)
            replies[msg["parent_header"].get("msg_id")] = msg["content"]
        return [replies[i] for i in ids][1 if cwd else 0:]

    def close(self) -> None:
        import shutil
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
        shutil.rmtree(self._folder, ignore_errors=True)


def _one_line(text: str) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text).strip()
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 240 else first[:237] + "..."


def checklist(path, kernel: Kernel | None = None) -> list[Line]:
    """The checklist for the notebook at `path`, from `kernel` (closed afterwards) or a new one."""
    nb = read_notebook(path)
    code = [i for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"]
    kernel = kernel or Kernel()
    try:
        replies = dict(zip(code, kernel.run([_source(nb["cells"][i]) for i in code],
                                            cwd=str(Path(path).resolve().parent))))
    finally:
        kernel.close()
    return lines_from(nb, replies)


def lines_from(nb: dict, replies: dict) -> list[Line]:
    """The checklist of `nb` from each code cell's execute_reply content, by cell index."""
    lines = []
    for name, answers, test, heading in _test_cells(nb):
        kind = "question" if is_question(nb["cells"][test]) else "exercise"
        errors = [replies[i] for i in [*answers, test] if replies[i]["status"] == "error"]
        if any(e["ename"] == "NotImplementedError" for e in errors):
            lines.append(Line(name, "unanswered", kind=kind, heading=heading))
        elif replies[test]["status"] != "error":
            lines.append(Line(name, "answered" if kind == "question" else "passed", kind=kind, heading=heading))
        else:
            first = errors[0]
            # The course's checks word their message for the student; anything else keeps its name.
            said = (first["evalue"] if first["ename"] in ("GradingError", "PitfallError")
                    else f"{first['ename']}: {first['evalue']}")
            where = "your answer cell raised " if first is not replies[test] else ""
            lines.append(Line(name, "failed", _one_line(where + said), kind=kind, heading=heading))
    return lines


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def summary(lines: list[Line]) -> str:
    """The checklist's first line, counting exercises and questions apart, as the notebook does."""
    exercises_: dict[str, bool] = {}  # heading: does every test cell under it pass
    for line in lines:
        if line.kind == "exercise":
            key = line.heading or line.exercise
            exercises_[key] = exercises_.get(key, True) and line.status == "passed"
    questions = [line for line in lines if line.kind == "question"]
    passed = sum(exercises_.values())
    answered = sum(line.status == "answered" for line in questions)
    parts = []
    if exercises_:
        many = _count(len(exercises_), "exercise")
        parts.append(f"{'All' if passed == len(exercises_) else f'{passed} of'} {many} pass their visible checks")
    if questions:
        many = _count(len(questions), "question")
        parts.append(f"{'all' if answered == len(questions) else f'{answered} of'} {many} answered, checked at grading")
    text = "; ".join(parts) or "No exercises found"
    return text[0].upper() + text[1:] + "."


def all_done(lines: list[Line]) -> bool:
    """Every exercise passes its visible checks and every question has an answer."""
    return all(line.status in DONE for line in lines)


def as_text(lines: list[Line]) -> str:
    return "\n".join([summary(lines)] + ["  " + line.text() for line in lines] + [CANNOT_SEE])


def from_running_lab(path) -> list[Line] | None:
    """The checklist from a running course lab's Validate button (its kernel is warm), if a
    lab of this user serves the folder `path` is in; else None."""
    import urllib.request

    from jupyter_core.paths import jupyter_runtime_dir
    target = Path(path).resolve()
    for info_file in sorted(Path(jupyter_runtime_dir()).glob("jpserver-*.json")):
        try:
            info = json.loads(info_file.read_text())
            os.kill(info["pid"], 0)  # a server that died leaves its file behind
            root = Path(info["root_dir"]).resolve()
            if not target.is_relative_to(root):
                continue
            request = urllib.request.Request(
                info["url"].rstrip("/") + COURSE_VALIDATE,
                data=json.dumps({"path": str(target.relative_to(root))}).encode(),
                headers={"Authorization": f"token {info['token']}", "Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=300) as response:
                reply = json.loads(response.read())
            return [Line(**line) for line in reply["value"]["checklist"]]
        except Exception:  # not ours, not answering, an older server: the next, else our own kernel
            continue
    return None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:  # ./course checked the path already (autograder/arguments.py)
        print("usage: python -m autograder.validate NOTEBOOK", file=sys.stderr)
        return 2
    lines = from_running_lab(argv[0]) or checklist(argv[0])
    print(as_text(lines))
    return 0 if all_done(lines) else 1


if __name__ == "__main__":
    sys.exit(main())
