"""Every bad input to ./course gets one line on what to do, exit code 2, and changes nothing,
before torch, nbgrader or even the environment is loaded (autograder/arguments.py for the
student's commands, classgrader/arguments.py for the instructor's). Each case runs the real
./course script in a copy of the course that has no .venv at all: reaching anything heavy
would fail there, so a passing case proves the check came first."""
import hashlib
import json
import shutil
import subprocess
import sys

import pytest

from coursekit import ROOT

sys.path.insert(0, str(ROOT / "autograder"))  # the module runs as a file; so do its tests
import arguments  # noqa: E402
sys.path.pop(0)

NOTEBOOK = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def course(tmp_path):
    """The ./course script and its checks, a source/ and release/ of two assignments, a
    student's work/ and an instructor's runtime/ with one submission and no grades."""
    for path in ("course", "autograder/arguments.py", "classgrader/arguments.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, tmp_path / path)
    for assignment in ("01_tensors", "02_devices"):
        for folder in ("source", "release"):
            (tmp_path / folder / assignment).mkdir(parents=True)
            (tmp_path / folder / assignment / f"{assignment}.ipynb").write_text(json.dumps(NOTEBOOK))
    (tmp_path / "work" / "01_tensors").mkdir(parents=True)
    (tmp_path / "work" / "01_tensors" / "01_tensors.ipynb").write_text(json.dumps(NOTEBOOK))
    (tmp_path / "runtime" / "submitted" / "alice" / "02_devices").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# not a notebook\n")
    (tmp_path / "work" / "truncated.ipynb").write_text(json.dumps(NOTEBOOK)[:25])
    return tmp_path


def snapshot(root) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*")) if "__pycache__" not in p.parts}


BAD = {  # arguments -> the exact line on stderr
    "autograde 01_tensor": "course: no assignment '01_tensor'; did you mean 01_tensors?",
    "autograde": "course: autograde needs an assignment id, e.g. ./course autograde 01_tensors "
                 "(assignments: 01_tensors, 02_devices)",
    "autograde 01_tensors": "course: nobody has submitted 01_tensors yet (runtime/submitted/*/01_tensors/ is empty); "
                            "collect submissions from the exchange first: ./course collect 01_tensors",
    "autograde 02_devices --workers 0": "course: --workers needs a positive whole number, got '0'",
    "autograde 02_devices --wrokers 2": "course: autograde takes ID [--workers N] [--force], not --wrokers 2",
    "generate 09_capstone": "course: no assignment '09_capstone'; the assignments are: 01_tensors, 02_devices",
    "feedback 02_devices": "course: 02_devices has not been autograded yet; run ./course autograde 02_devices first",
    "return 02_devices": "course: no feedback for 02_devices yet; run ./course feedback 02_devices first",
    "collect 02_devices": "course: no submissions of 02_devices in the exchange yet; students submit with "
                          "./course submit 02_devices (or the Assignment List's Submit)",
    "release 2_devices": "course: no assignment '2_devices'; did you mean 02_devices?",
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
    "fetch-feedback": "course: fetch-feedback needs an assignment id, e.g. ./course fetch-feedback 01_tensors "
                      "(assignments: 01_tensors, 02_devices)",
}


@pytest.mark.parametrize("args", BAD)
def test_bad_input_gets_one_line_exit_2_and_changes_nothing(course, args, covered):
    before = snapshot(course)
    done = subprocess.run(["./course", *args.split()], cwd=course, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr, done.stdout) == (2, BAD[args] + "\n", "")
    assert snapshot(course) == before
    assert not (course / ".venv").exists()  # the check came before the environment
    covered(f"./course {args}: exit 2, '{BAD[args][:70]}...', nothing changed")


def test_submit_refuses_a_corrupt_notebook_and_keeps_it_as_it_is(course, covered):
    notebook = course / "work" / "01_tensors" / "01_tensors.ipynb"
    corrupt = notebook.read_bytes()[:-7]  # an editor crashed mid-save
    notebook.write_bytes(corrupt)
    before = snapshot(course)
    done = subprocess.run(["./course", "submit", "01_tensors"], cwd=course, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 2
    assert done.stderr == ("course: not submitted: work/01_tensors/01_tensors.ipynb is not a readable notebook "
                           "(broken JSON at line 1, column 46); open it in JupyterLab and use File > Revert "
                           "Notebook to Checkpoint, then submit again (your file is unchanged)\n")
    assert snapshot(course) == before and notebook.read_bytes() == corrupt
    covered("./course submit of a truncated notebook: refused in one line, exit 2, file byte-identical")


def test_good_arguments_pass_the_check(course):
    """The checks let through what is right (otherwise the tests above could pass by refusing everything)."""
    (course / "runtime" / "autograded" / "alice" / "02_devices").mkdir(parents=True)
    for script, args in [("classgrader/arguments.py", "autograde 02_devices --workers 2 --force"),
                         ("classgrader/arguments.py", "generate 01_tensors 02_devices"),
                         ("classgrader/arguments.py", "feedback 02_devices"),
                         ("classgrader/arguments.py", "release 01_tensors --force"),
                         ("autograder/arguments.py", "validate work/01_tensors/01_tensors.ipynb"),
                         ("autograder/arguments.py", "submit 01_tensors"),
                         ("autograder/arguments.py", "fetch 02_devices")]:
        done = subprocess.run([sys.executable, "-P", script, *args.split()], cwd=course, capture_output=True,
                              text=True, timeout=30)
        assert (done.returncode, done.stderr) == (0, ""), f"{script} {args}: {done.stderr}"


def test_the_checks_import_neither_torch_nor_nbgrader(course):
    probe = ("import runpy, sys; sys.argv = ['x', {!r}, 'README.md']\n"
             "try: runpy.run_path({!r}, run_name='__main__')\n"
             "except SystemExit: pass\n"
             "print(sorted(m for m in ('torch', 'nbgrader', 'nbformat', 'traitlets') if m in sys.modules))")
    for script, command in (("autograder/arguments.py", "validate"), ("classgrader/arguments.py", "autograde")):
        done = subprocess.run([sys.executable, "-P", "-c", probe.format(command, script)], cwd=course, capture_output=True,
                              text=True, timeout=30)
        assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize("text,why", [
    ("{}", "no nbformat 4 cells"),
    ('{"cells": [], "nbformat": 3}', "no nbformat 4 cells"),
    ("\xff\xfe", "not UTF-8 text"),
])
def test_notebook_problem_names_what_is_wrong(tmp_path, text, why):
    path = tmp_path / "x.ipynb"
    path.write_bytes(text.encode("latin-1"))
    assert arguments.notebook_problem(str(path)) == f"{path} is not a readable notebook ({why})"


def test_folders_match_nbgrader_config():
    """The checks know nbgrader's folders without loading nbgrader: they must be the config's."""
    config = (ROOT / "nbgrader_config.py").read_text()
    for folder in ('"runtime/submitted"', '"runtime/autograded"', '"runtime/feedback"', '"source"', '"release"',
                   'os.path.join(runtime, "exchange")'):
        assert folder in config, folder
    assert "Exchange.assignment_dir" not in config or 'os.path.join(here, "work")' in config
