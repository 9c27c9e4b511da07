"""Tests for autograder/grading_kernel.py and the nbgrader configuration that loads it: a
real kernel started with nbgrader_config.py's extra_arguments sends warnings and stderr to
stdout (and without them, stderr does appear: the control), warnings are printed as
"Category: message" without the source line, and nbgrader_config.py, as
autograder.validate.course_config() loads it, sets the kernel arguments, timeout, course id,
the feedback preprocessor and keeps every working folder under runtime/."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from autograder.validate import course_config

ROOT = Path(__file__).resolve().parents[2]
EXTRA_ARGUMENTS = ["--IPKernelApp.exec_lines=import autograder.grading_kernel"]
CELL = """\
import sys, warnings
warnings.warn('x')
print('to-stderr', file=sys.stderr)
print('to-stdout')
"""


def run_cell(extra_arguments):
    nb = new_notebook(cells=[new_code_cell(CELL)])
    NotebookClient(nb, timeout=60, kernel_name="python3", extra_arguments=extra_arguments,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb.cells[0].outputs


def streams(outputs, name):
    return "".join(o.text for o in outputs if o.output_type == "stream" and o.name == name)


def test_grading_kernel_sends_stderr_and_warnings_to_stdout():
    outputs = run_cell(EXTRA_ARGUMENTS)
    assert all(o.output_type == "stream" for o in outputs), outputs
    assert not any(o.name == "stderr" for o in outputs), outputs
    stdout = streams(outputs, "stdout")
    assert "UserWarning: x\n" in stdout
    assert "to-stderr" in stdout and "to-stdout" in stdout
    # Warnings come without the source line, which from a hidden test would be hidden code.
    assert "warnings.warn(" not in stdout


def test_control_without_grading_kernel_stderr_appears():
    # Shows the test above can tell: a plain kernel puts both on stderr.
    outputs = run_cell([])
    stderr = streams(outputs, "stderr")
    assert "UserWarning: x" in stderr and "to-stderr" in stderr


def test_import_redirects_stderr_in_a_plain_interpreter():
    code = "import autograder.grading_kernel, sys; print('to-stderr', file=sys.stderr)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("to-stderr\n", "")


def test_warnings_show_category_and_message_only():
    code = ("import autograder.grading_kernel, warnings\n"
            "warnings.warn('beware', RuntimeWarning)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("RuntimeWarning: beware\n", "")


# --- nbgrader_config.py --------------------------------------------------------------------

@pytest.fixture(scope="module")
def config():
    return course_config(ROOT)


def test_kernel_arguments_load_the_grading_kernel(config):
    assert config.Execute.extra_arguments == EXTRA_ARGUMENTS


def test_timeout(config):
    assert config.Execute.timeout == 120


def test_course_id_and_root(config):
    assert config.CourseDirectory.course_id == "pytorch-fundamentals"
    assert Path(config.CourseDirectory.root) == ROOT


def test_committed_directories(config):
    assert config.CourseDirectory.source_directory == "source"
    assert config.CourseDirectory.release_directory == "release"


@pytest.mark.parametrize("folder", ["submitted", "autograded", "feedback", "solution"])
def test_working_directories_live_under_runtime(config, folder):
    path = config.CourseDirectory[f"{folder}_directory"]
    assert path.startswith("runtime/"), path


def test_gradebook_exchange_and_export_live_under_runtime(config):
    runtime = os.path.join(str(ROOT), "runtime")
    db_url = config.CourseDirectory.db_url
    assert db_url == "sqlite:///" + os.path.join(runtime, "gradebook.db")
    assert os.path.dirname(config.Exchange.root) == runtime
    assert os.path.dirname(config.CsvExportPlugin.to) == runtime


def test_runtime_is_git_ignored():
    assert "/runtime/" in (ROOT / ".gitignore").read_text().splitlines()


def test_feedback_hides_hidden_tests(config):
    preprocessors = config.GenerateFeedback.preprocessors
    assert "classgrader.commands.feedback.HideHiddenTests" in preprocessors
    assert preprocessors[0] == "nbgrader.preprocessors.GetGrades"
