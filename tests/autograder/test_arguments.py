"""autograder/arguments.py: every bad input to a student's ./course command gets one line on
what to do, exit code 2, and changes nothing, before torch, nbgrader or even the environment
is loaded. Each case runs the real ./course script in a copy of the course that has no .venv
at all: reaching anything heavy would fail there, so a passing case proves the check came first."""
import subprocess
import sys

import pytest

from coursekit import ROOT, argument_course, imports_of_check, refused_in_one_line, run_course, snapshot

sys.path.insert(0, str(ROOT / "autograder"))  # the module runs as a file; so do its tests
import arguments

sys.path.pop(0)

BAD = {  # arguments -> the exact line on stderr
    "validate README.md": "course: README.md is not a notebook (.ipynb file); give the path of a notebook, "
                          "e.g. work/01_tensors/01_tensors.ipynb",
    "validate work/missing.ipynb": "course: work/missing.ipynb does not exist; give the path of a notebook, "
                                   "e.g. work/01_tensors/01_tensors.ipynb",
    "validate work/truncated.ipynb": "course: work/truncated.ipynb is not a readable notebook (broken JSON at line "
                                     "1, column 26); open it in JupyterLab and use File > Revert Notebook to "
                                     "Checkpoint, or fetch a fresh copy",
    "validate": "course: validate needs one notebook, e.g. ./course validate work/01_tensors/01_tensors.ipynb",
    "fetch 01_tensros": "course: no assignment '01_tensros'; did you mean 01_tensors?",
    "submit 02_devices": "course: nothing to submit: work/02_devices/ does not exist; fetch it first: "
                         "./course fetch 02_devices",
    "submit 01_tensors": "course: 01_tensors has not been released yet; ask your instructor to release it",
    "fetch 02_devices": "course: 02_devices has not been released yet; ask your instructor to release it",
    "fetch-feedback": "course: fetch-feedback needs an assignment id, e.g. ./course fetch-feedback 01_tensors "
                      "(assignments: 01_tensors, 02_devices)",
}


@pytest.fixture
def course(tmp_path):
    return argument_course(tmp_path)


@pytest.mark.parametrize("args", BAD)
def test_bad_input_gets_one_line_exit_2_and_changes_nothing(course, args, covered):
    refused_in_one_line(course, args, BAD[args])
    covered(f"./course {args}: exit 2, '{BAD[args][:70]}...', nothing changed")


def test_submit_refuses_a_corrupt_notebook_and_keeps_it_as_it_is(course, covered):
    notebook = course / "work" / "01_tensors" / "01_tensors.ipynb"
    corrupt = notebook.read_bytes()[:-7]  # an editor crashed mid-save
    notebook.write_bytes(corrupt)
    before = snapshot(course)
    done = run_course(course, "submit", "01_tensors")
    assert done.returncode == 2
    assert done.stderr == ("course: not submitted: work/01_tensors/01_tensors.ipynb is not a readable notebook "
                           "(broken JSON at line 1, column 46); open it in JupyterLab and use File > Revert "
                           "Notebook to Checkpoint, then submit again (your file is unchanged)\n")
    assert snapshot(course) == before and notebook.read_bytes() == corrupt
    covered("./course submit of a truncated notebook: refused in one line, exit 2, file byte-identical")


def test_good_arguments_pass_the_check(course):
    """The checks let through what is right (otherwise the tests above could pass by refusing everything)."""
    for assignment in ("01_tensors", "02_devices"):  # released: in the exchange's outbound folder
        (course / "runtime" / "exchange" / "pytorch-fundamentals" / "outbound" / assignment).mkdir(parents=True)
    for args in ("validate work/01_tensors/01_tensors.ipynb", "submit 01_tensors", "fetch 02_devices"):
        done = subprocess.run([sys.executable, "-P", "autograder/arguments.py", *args.split()], cwd=course,
                              capture_output=True, text=True, timeout=30)
        assert (done.returncode, done.stderr) == (0, ""), f"{args}: {done.stderr}"


def test_the_check_imports_neither_torch_nor_nbgrader(course):
    assert imports_of_check(course, "autograder/arguments.py", "validate") == []


@pytest.mark.parametrize(("text", "why"), [
    ("{}", "no nbformat 4 cells"),
    ('{"cells": [], "nbformat": 3}', "no nbformat 4 cells"),
    ("\xff\xfe", "not UTF-8 text"),
])
def test_notebook_problem_names_what_is_wrong(tmp_path, text, why):
    path = tmp_path / "x.ipynb"
    path.write_bytes(text.encode("latin-1"))
    assert arguments.notebook_problem(str(path)) == f"{path} is not a readable notebook ({why})"
