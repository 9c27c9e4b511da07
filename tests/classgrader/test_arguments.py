"""classgrader/arguments.py: every bad input to an instructor's ./course command gets one line
on what to do, exit code 2, and changes nothing, before torch, nbgrader or the environment is
loaded (run for real through ./course in a copy of the course without a .venv; the syntax is
classgrader/cli.py's, tests/classgrader/test_cli.py)."""
import subprocess
import sys

import pytest

from coursekit import ROOT, argument_course, imports_of_check, refused_in_one_line

BAD = {  # arguments -> the exact line on stderr
    "autograde 01_tensor": "course: no assignment '01_tensor'; did you mean 01_tensors?",
    "autograde": "course: autograde needs an assignment id, e.g. ./course autograde 01_tensors "
                 "(assignments: 01_tensors, 02_devices)",
    "autograde 01_tensors": "course: nobody has submitted 01_tensors yet (runtime/submitted/*/01_tensors/ is empty); "
                            "collect submissions from the exchange first: ./course collect 01_tensors",
    "autograde 02_devices --workers 0": "course: --workers needs a positive whole number, got '0'",
    "autograde 02_devices --wrokers 2": "course: autograde: unrecognized arguments: --wrokers 2; "
                                        "usage: ./course autograde ID [ID ...] [--workers N] [--force]",
    "autograde 02_devices 01_tensor": "course: no assignment '01_tensor'; did you mean 01_tensors?",
    "generate 09_capstone": "course: no assignment '09_capstone'; the assignments are: 01_tensors, 02_devices",
    "feedback 02_devices": "course: 02_devices has not been autograded yet; run ./course autograde 02_devices first",
    "return 02_devices": "course: no feedback for 02_devices yet; run ./course feedback 02_devices first",
    "collect 02_devices": "course: no submissions of 02_devices in the exchange yet; students submit with "
                          "./course submit 02_devices (or the Assignment List's Submit)",
    "release 2_devices": "course: no assignment '2_devices'; did you mean 02_devices?",
    "report 02_devices": "course: no grading records for 02_devices (runtime/grading/02_devices/outcomes/ is "
                         "missing); run ./course autograde 02_devices first",
    "report --all": "course: nothing has been graded yet; run ./course autograde ID first",
    "report --all --below 150": "course: --below takes a percentage from 0 to 100, not 150",
    "export --format canvas": "course: no gradebook yet (runtime/gradebook.db); run ./course generate, then grade, "
                              "first",
    "bundle README.md": "course: bundle writes a zip: give a name ending in .zip, not 'README.md'",
    "bundle gone/student.zip": "course: bundle: the folder {course}/gone does not exist",
    "bundle notes.zip": "course: bundle: notes.zip exists and is not a zip; name a new file or an old bundle",
}


@pytest.fixture
def course(tmp_path):
    return argument_course(tmp_path)


@pytest.mark.parametrize("args", BAD)
def test_bad_input_gets_one_line_exit_2_and_changes_nothing(course, args, covered):
    (course / "notes.zip").write_text("a file of the instructor's, named like a zip\n")  # kept, not overwritten
    refused_in_one_line(course, args, BAD[args].replace("{course}", str(course)))
    covered(f"./course {args}: exit 2, '{BAD[args][:70]}...', nothing changed")


def test_good_arguments_pass_the_check(course):
    """The checks let through what is right (otherwise the tests above could pass by refusing everything)."""
    (course / "runtime" / "autograded" / "alice" / "02_devices").mkdir(parents=True)
    for args in ("autograde 02_devices --workers 2 --force", "generate 01_tensors 02_devices",
                 "feedback 02_devices", "release 01_tensors --force", "bundle student.zip"):
        done = subprocess.run([sys.executable, "-P", "classgrader/cli.py", "check", *args.split()], cwd=course,
                              capture_output=True, text=True, timeout=30)
        assert (done.returncode, done.stdout, done.stderr) == (0, "env\n", ""), f"{args}: {done.stderr}"


def test_the_check_imports_neither_torch_nor_nbgrader(course):
    assert imports_of_check(course, "classgrader/cli.py", "check", "autograde") == []


def test_folders_match_nbgrader_config():
    """The checks know nbgrader's folders without loading nbgrader: they must be the config's."""
    from classgrader import arguments
    from classgrader.commands.course import load_course
    course = load_course(str(ROOT))
    assert (course.source_directory, course.release_directory, course.submitted_directory,
            course.autograded_directory, course.feedback_directory) == (
        arguments.SOURCE, arguments.RELEASE, arguments.SUBMITTED, arguments.AUTOGRADED, arguments.FEEDBACK)
    from traitlets.config.loader import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    student = arguments.arguments  # autograder/arguments.py, as the checks load it
    assert (config.Exchange.root, config.Exchange.assignment_dir) == (
        str(ROOT / student.EXCHANGE), str(ROOT / student.WORK))
