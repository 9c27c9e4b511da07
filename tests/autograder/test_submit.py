"""autograder/submit.py, the submit ./course submit runs: nbgrader's own submit, whose comparison
with the release leaves out what it does not send. Stock nbgrader warns that JupyterLab's
checkpoint is an EXTRA notebook though it never sends it; this one sends the same and says
nothing, and still warns of a notebook that is really extra. Real nbgrader, a real exchange."""
import shutil
import subprocess
import sys

import pytest

from coursekit import ROOT, nbgrader, tool_env

ASSIGNMENT = "01_tensors"


@pytest.fixture
def course(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    shutil.copytree(ROOT / "release" / ASSIGNMENT, tmp_path / "release" / ASSIGNMENT)
    nbgrader(tmp_path, "release_assignment", ASSIGNMENT)
    work = tmp_path / "work" / ASSIGNMENT
    shutil.copytree(tmp_path / "release" / ASSIGNMENT, work)
    (work / ".ipynb_checkpoints").mkdir()  # what JupyterLab saves beside a notebook it opened
    shutil.copy(work / f"{ASSIGNMENT}.ipynb", work / ".ipynb_checkpoints" / f"{ASSIGNMENT}-checkpoint.ipynb")
    return tmp_path


def submit(course, *command) -> subprocess.CompletedProcess:
    done = subprocess.run([*command, ASSIGNMENT, f"--Exchange.assignment_dir={course / 'work'}"], cwd=course,
                          env=tool_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def sent(course) -> list[str]:
    inbound = course / "runtime" / "exchange" / "pytorch-fundamentals" / "inbound"
    return sorted(str(p.relative_to(d)) for d in inbound.iterdir() for p in d.rglob("*.ipynb"))


def test_a_checkpoint_is_neither_sent_nor_reported(course, covered):
    stock = submit(course, sys.executable, "-m", "nbgrader", "submit")
    assert ".ipynb_checkpoints/01_tensors-checkpoint.ipynb: EXTRA" in stock.stderr  # the control
    ours = submit(course, sys.executable, "-P", str(ROOT / "autograder" / "submit.py"))
    assert "EXTRA" not in ours.stderr and "extra" not in ours.stderr, ours.stderr
    assert sent(course) == [f"{ASSIGNMENT}.ipynb"] * 2  # both sent the notebook alone
    covered("submit: nbgrader's own warns '.ipynb_checkpoints/...: EXTRA' for a file it never sent; "
            "the course's sends the same and says nothing")


def test_a_notebook_really_extra_is_still_said(course):
    shutil.copy(course / "work" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", course / "work" / ASSIGNMENT / "scratch.ipynb")
    ours = submit(course, sys.executable, "-P", str(ROOT / "autograder" / "submit.py"))
    assert "extra: scratch.ipynb" in ours.stderr and ".ipynb_checkpoints" not in ours.stderr, ours.stderr
