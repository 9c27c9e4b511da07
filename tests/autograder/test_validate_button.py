"""validate_button: the checklist as the JupyterLab dialog shows it, and the warm worker that
answers each press from a fork of itself (the button itself, pressed in a real lab, is in
tests/test_student_experience.py and the browser tests). One real worker for the module."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from autograder.validate import CANNOT_SEE, Line
from autograder.validate_button import as_html
from coursekit import ROOT, build_submission, read_notebook, tool_env, write_notebook

UNIT01 = ROOT / "source" / "01_tensors" / "01_tensors.ipynb"
RELEASE01 = ROOT / "release" / "01_tensors" / "01_tensors.ipynb"


def test_one_item_per_exercise_in_order_with_its_status_and_nothing_unescaped():
    lines = [Line("Q1 · Describe a tensor", "passed"),
             Line("Q2 · Which property broke?", "failed", "classify_error('<b>x</b>'): expected 'shape'"),
             Line("Q3 · Fix a dtype bug", "unanswered"),
             Line("Check yourself · q1", "answered", kind="question")]
    page = as_html(lines)
    items = re.findall(r'<li data-status="(\w+)" data-kind="\w+">.*?<b>(.*?)</b>: (.*?)</li>', page)
    assert items == [("passed", "Q1 · Describe a tensor", "passed"),
                     ("failed", "Q2 · Which property broke?",
                      "failed: classify_error(&#x27;&lt;b&gt;x&lt;/b&gt;&#x27;): expected &#x27;shape&#x27;"),
                     ("unanswered", "Q3 · Fix a dtype bug", "not answered yet"),
                     ("answered", "Check yourself · q1", "answered, checked at grading")]
    assert CANNOT_SEE.split(":")[0] in page and "<b>x</b>" not in page


@pytest.fixture(scope="module")
def worker():
    """The worker as the lab's server extension starts it; yields a press function."""
    folder = tempfile.mkdtemp(prefix="vb-")
    path = os.path.join(folder, "worker")
    process = subprocess.Popen([sys.executable, "-m", "autograder.validate_button", path, str(ROOT)],
                               env=tool_env(), stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "validate worker: ready"

    def press(notebook) -> dict:
        with socket.socket(socket.AF_UNIX) as connection:
            connection.connect(path)
            stream = connection.makefile("rwb")
            stream.write(json.dumps({"path": str(notebook)}).encode() + b"\n")
            stream.flush()
            return json.loads(stream.readline())
    yield press
    process.terminate()
    process.wait(timeout=30)


def notebook(folder, name, cells: list[str]):
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                     "source": source} for i, source in enumerate(cells)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return write_notebook(nb, folder / name)


def test_each_press_starts_from_the_workers_image_and_runs_past_errors(worker, tmp_path, covered):
    """A press's child runs every cell whatever the others did, in the notebook's folder, configured
    as the autograder's kernel; the next press sees nothing of it. Read through a notebook whose
    cells write down what they saw (a file beside it: the checklist of a notebook with no test cells
    is empty)."""
    seen = tmp_path / "seen.json"
    cells = ["import json, os, sys, torch\nrecord = {'cwd': os.getcwd(), 'stderr_to_stdout': sys.stderr is sys.stdout,"
             " 'left_before': 'left_behind' in globals()}",
             "raise ValueError('boom')",
             "left_behind = 1\nrecord['after_error'] = True",
             "json.dump(record, open('seen.json', 'w'))"]
    first = notebook(tmp_path, "first.ipynb", cells)
    assert worker(first) == {"checklist": [], "all_passed": True, "html": as_html([])}
    assert json.loads(seen.read_text()) == {"cwd": str(tmp_path), "stderr_to_stdout": True, "left_before": False,
                                            "after_error": True}
    seen.unlink()
    worker(first)
    assert json.loads(seen.read_text())["left_before"] is False, "a name from the press before was seen"
    covered("Validate's worker: each press a fork, in the notebook's folder, stderr sent to stdout as the "
            "autograder's kernel does, every cell run after an error, nothing passed from one press to the next")


def test_a_press_gives_the_checklist_of_the_visible_checks(worker, tmp_path, covered):
    half = {"q1_describe_answer": "def describe(t):\n    return {'shape': tuple(t.shape), 'dtype': t.dtype, "
                                  "'device': t.device, 'numel': len(t)}\n"}
    path = write_notebook(build_submission(read_notebook(UNIT01), read_notebook(RELEASE01), half),
                          tmp_path / "01_tensors" / "01_tensors.ipynb")
    start = time.perf_counter()
    reply = worker(path)
    seconds = time.perf_counter() - start
    assert [line["status"] for line in reply["checklist"]] == ["failed"] + ["passed"] * 4 + ["answered"] * 4
    assert reply["checklist"][0]["reason"] == 'describe(torch.zeros(2, 3))["numel"]: wrong value. Expected 6, got 2.'
    assert reply["all_passed"] is False and 'class="course-checklist"' in reply["html"]
    covered(f"a press of a half-right 01_tensors: one failed with its check's reason, the rest passed or answered "
            f"({seconds:.2f} s)")


def test_a_cell_that_ends_the_process_answers_nothing_and_the_worker_stays(worker, tmp_path):
    with pytest.raises(json.JSONDecodeError):  # the connection closes with no reply: the server says so
        worker(notebook(tmp_path, "exits.ipynb", ["import os; os._exit(3)"]))
    assert worker(notebook(tmp_path, "fine.ipynb", ["x = 1"]))["all_passed"] is True
