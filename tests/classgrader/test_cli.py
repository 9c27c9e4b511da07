"""cli: every ./course command is in one table, and each answers a bad argument in one line,
exit 2, before anything heavy: run for real through ./course in a copy of the course that has
no .venv (reaching the environment would build one, which the check below sees)."""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from classgrader import cli
from coursekit import ROOT, argument_course, refused_in_one_line, run_course, run_module

USAGE = {name: f"usage: ./course {name} {command.usage}".rstrip() for name, command in cli.COMMANDS.items()}
BAD = {  # one bad call of every command whose arguments are the course's own -> its line on stderr
    "lab": ("lab --bogus", f"course: lab: unrecognized arguments: --bogus; {USAGE['lab']}"),
    "setup": ("setup now", f"course: setup: unrecognized arguments: now; {USAGE['setup']}"),
    "help": ("help me", f"course: help: unrecognized arguments: me; {USAGE['help']}"),
    "generate": ("generate 01_tensors 03_nope", "course: no assignment '03_nope'; the assignments are: "
                                                "01_tensors, 02_devices"),
    "autograde": ("autograde 02_devices --workers", f"course: autograde: argument --workers: expected one argument; "
                                                    f"{USAGE['autograde']}"),
    "feedback": ("feedback 01_tensors 02_devices", "course: feedback takes one assignment id, not 2 "
                                                   "(01_tensors 02_devices)"),
    "export": ("export --format excel", "course: export: argument --format: invalid choice: 'excel' (choose from "
                                        f"'nbgrader', 'canvas', 'moodle'); {USAGE['export']}"),
    "roster": ("roster class.csv --login", f"course: roster: argument --login: expected one argument; "
                                           f"{USAGE['roster']}"),
    "report": ("report", "course: report needs assignment ids or --all, e.g. ./course report 01_tensors"),
    "similarity": ("similarity 01_tensors", "course: nobody has submitted 01_tensors yet (runtime/submitted/*/"
                                            "01_tensors/ is empty); collect submissions first: ./course collect "
                                            "01_tensors"),
    "release": ("release", "course: release needs an assignment id, e.g. ./course release 01_tensors "
                           "(assignments: 01_tensors, 02_devices)"),
    "collect": ("collect 02_devices --force", f"course: collect: unrecognized arguments: --force; {USAGE['collect']}"),
    "return": ("return 01_tensor", "course: no assignment '01_tensor'; did you mean 01_tensors?"),
    "bundle": ("bundle a.zip b.zip", f"course: bundle: unrecognized arguments: b.zip; {USAGE['bundle']}"),
    "validate": ("validate work/01_tensors/01_tensors.ipynb --fast",
                 f"course: validate: unrecognized arguments: --fast; {USAGE['validate']}"),
    "fetch": ("fetch 01_tensors 02_devices", "course: fetch takes one assignment id, not 2 (01_tensors 02_devices)"),
    "submit": ("submit 01_tensors --student", f"course: submit: argument --student: expected one argument; "
                                              f"{USAGE['submit']}"),
    "fetch-feedback": ("fetch-feedback 01_tensors --student ../ana", "course: fetch-feedback: argument --student: "
                       f"'../ana' is not a student name (letters, digits, _ . -); {USAGE['fetch-feedback']}"),
}


@pytest.fixture
def course(tmp_path):
    return argument_course(tmp_path)


def test_every_command_of_the_table_has_its_bad_argument_case():
    """A command added to the table without a case here fails; test and hub alone pass their
    arguments on (to pytest, and to hub/install.py)."""
    assert set(BAD) == set(cli.COMMANDS) - cli.PASS_THROUGH


@pytest.mark.parametrize("name", BAD)
def test_a_bad_argument_gets_one_line_exit_2_before_anything_heavy(course, name, covered):
    args, line = BAD[name]
    started = time.perf_counter()
    refused_in_one_line(course, args, line)  # and never got as far as building the environment
    seconds = time.perf_counter() - started
    covered(f"./course {args}: one line, exit 2, no .venv, {seconds:.2f} s")


def test_the_hubs_arguments_are_checked_with_its_own_parser_where_it_offers_one(course):
    (course / "hub").mkdir()
    (course / "hub" / "install.py").write_text(
        "import argparse\n"
        "def parser():\n"
        "    made = argparse.ArgumentParser(prog='course hub')\n"
        "    made.add_argument('--students', default='a,b')\n"
        "    return made\n")
    refused_in_one_line(course, "hub --studnets a,b",
                        "course: hub: unrecognized arguments: --studnets a,b; usage: ./course hub -h")


def test_a_commands_module_can_parse_with_the_table(course, monkeypatch, capsys):
    monkeypatch.chdir(course)
    parsed = cli.parse_or_exit("autograde", ["02_devices", "--workers", "2"])
    assert (parsed.ids, parsed.workers, parsed.force) == (["02_devices"], 2, False)
    with pytest.raises(SystemExit) as exit:
        cli.parse_or_exit("autograde", ["02_device"])
    assert exit.value.code == 2
    assert capsys.readouterr().err == "course: no assignment '02_device'; did you mean 02_devices?\n"


# Each command's own module, as ./course runs it (python -m MODULE): it parses with the table too.
MODULES = {"autograde": "classgrader.class_run.classroom", "generate": "classgrader.commands.generate",
           "report": "classgrader.commands.report", "export": "classgrader.commands.lms_export",
           "roster": "classgrader.commands.roster", "similarity": "classgrader.commands.similarity",
           "bundle": "classgrader.commands.bundle"}


def test_every_module_that_runs_a_command_is_one_the_table_runs(course, monkeypatch):
    monkeypatch.chdir(course)
    (course / "runtime" / "gradebook.db").touch()
    (course / "runtime" / "grading" / "02_devices" / "outcomes").mkdir(parents=True)
    args = {"autograde": ["02_devices"], "generate": [], "report": ["02_devices"], "export": ["--format", "canvas"],
            "roster": None, "similarity": None, "bundle": []}
    for name, module in MODULES.items():
        if args[name] is not None:
            assert module in cli.RUNS[name](cli.parse(name, args[name])), name


@pytest.mark.parametrize("name", MODULES)
def test_each_commands_module_parses_with_the_table_before_anything_heavy(course, name):
    """One parser, one BadArguments: a command's module run by itself answers a bad argument as
    ./course does, in the same words, exit 2, before torch or nbgrader loads."""
    shutil.rmtree(course / "classgrader")  # ./course's copy of the table, which would shadow the package here
    done, loaded = run_module(course, MODULES[name], *(["class.csv"] if name == "roster" else []), "--bogus")
    assert (done.returncode, done.stdout, loaded) == (2, "", [])
    assert done.stderr == f"course: {name}: unrecognized arguments: --bogus; {USAGE[name]}\n"


def test_an_unknown_command_gets_one_line(course):
    refused_in_one_line(course, "grade 01_tensors", "course: unknown command 'grade' (try ./course help)")


def test_the_student_bundle_has_no_instructor_commands(course):
    (course / "classgrader" / "class_run" / "classroom.py").unlink()
    refused_in_one_line(course, "autograde 02_devices", "course: autograde is an instructor's command; this copy "
                        "of the course is the student bundle, which has no grading pipeline")


def test_a_copy_sharing_an_environment_never_rebuilds_it(course):
    """COURSE_KEEP_ENV (what a test's copy of the course sets): an environment built from other
    requirements is refused in one line, and nothing is built."""
    for name in ("requirements.txt", "pyproject.toml"):
        shutil.copy2(ROOT / name, course / name)
    done = subprocess.run(["./course", "lab"], cwd=course, capture_output=True, text=True, timeout=30,
                          env={**os.environ, "COURSE_KEEP_ENV": "1"})
    assert (done.returncode, done.stderr) == (1, "course: .venv was built from other requirements; "
                                                 "run ./course setup where it belongs\n"), done.stderr
    assert not (course / ".venv").exists()


def test_help_lists_every_command_and_needs_nothing_built(course):
    done = run_course(course, "help")
    assert done.returncode == 0 and not (course / ".venv").exists()
    listed = re.findall(r"^  (\S+)", done.stdout, re.M)
    assert listed == list(cli.COMMANDS)
    done = run_course(course, "autograde", "-h")
    assert done.returncode == 0 and "--workers" in done.stdout and not (course / ".venv").exists()


def test_the_bootstrap_lists_no_command():
    """Commands live in the table only: the bash script names none of them."""
    script = (ROOT / "course").read_text()
    named = [name for name in cli.COMMANDS if re.search(rf"^\s*{re.escape(name)}[|)]", script, re.M)]
    assert named == [] and "case " not in script


def test_what_good_arguments_run(course, monkeypatch):
    def runs(*args):
        return cli.RUNS[args[0]](cli.parse(args[0], list(args[1:])))
    monkeypatch.chdir(course)
    (course / "runtime" / "exchange" / "pytorch-fundamentals" / "outbound" / "01_tensors").mkdir(parents=True)
    (course / "runtime" / "gradebook.db").touch()  # what an LMS's export reads
    (course / "runtime" / "grading" / "02_devices" / "outcomes").mkdir(parents=True)  # and the report
    assert runs("autograde", "02_devices", "--workers", "3", "--force")[-5:] == [
        "classgrader.class_run.classroom", "02_devices", "--workers", "3", "--force"]
    monkeypatch.setenv("COURSE_TEST_WORKERS", "0")
    assert runs("test", "-x", "tests/test_layout.py")[-4:] == ["-m", "pytest", "-x", "tests/test_layout.py"]
    assert runs("export") == ["nbgrader", "export"]
    assert runs("export", "--format", "moodle")[-3:] == ["classgrader.commands.lms_export", "--format", "moodle"]
    assert runs("report", "--all")[-2:] == ["classgrader.commands.report", "--all"]
    submit = runs("submit", "01_tensors", "--student", "bob")  # nbgrader's submit, saying only what it sends
    assert submit[-5].endswith("autograder/submit.py") and submit[-4:-1] == ["01_tensors", "--student", "bob"]
    for command, nbgrader_command in [("fetch", "fetch_assignment"), ("fetch-feedback", "fetch_feedback")]:
        assert runs(command, "01_tensors", "--student", "bob")[:5] == ["nbgrader", nbgrader_command, "01_tensors",
                                                                       "--student", "bob"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the hub's wrapper runs as root")
def test_the_hubs_wrapper_checks_as_course_autograde_does(course):
    wrapper = course / "course-autograde"
    wrapper.write_text((ROOT / "hub" / "course-autograde").read_text().replace("@VENV@", str(ROOT / ".venv")))
    wrapper.chmod(0o755)
    (course / "nbgrader_config.py").write_text("")
    path = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"
    done = subprocess.run([str(wrapper), "01_tensor"], cwd=course, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, SUDO_USER="root", PATH=path))
    assert (done.returncode, done.stderr) == (2, "course: no assignment '01_tensor'; did you mean 01_tensors?\n")
