"""Tests for classgrader/commands/bundle.py: the student bundle holds what a student needs and no
solution, hidden test or instructor file."""
import json
import os
import shutil
import subprocess
import zipfile

import pytest

from classgrader.commands.bundle import make_bundle
from coursekit import ROOT, secret_lines, source_text, squeeze

pytestmark = pytest.mark.early(9)  # it builds an environment of its own

def readable(archive, name: str) -> str:
    """A file's text as a reader sees it: a notebook's cell sources, not its escaped JSON."""
    raw = archive.read(name).decode("utf-8", "replace")
    if name.endswith(".ipynb"):
        return "".join(source_text(c) for c in json.loads(raw)["cells"])
    return raw


def test_bundle_has_what_students_need_and_no_secrets(tmp_path, covered):
    out = make_bundle(tmp_path / "student.zip")
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        text = squeeze("".join(readable(archive, n) for n in names))
        notebooks = squeeze("".join(readable(archive, n) for n in names if n.endswith(".ipynb")))
        mode = archive.getinfo("pytorch-course/course").external_attr >> 16
    for needed in ["course", "requirements.txt", "nbgrader_config.py", "notebooks/01_tensors_lesson.ipynb",
                   "release/01_tensors/01_tensors.ipynb", "utils/claims.py", "autograder/checks.py"]:
        assert f"pytorch-course/{needed}" in names, f"the bundle lacks {needed}"
    assert mode & 0o111, "./course must stay executable"
    # The grading pipeline is the instructor's: students get the check library, not the grader;
    # of classgrader/ only the command table ./course runs.
    for folder in ("source/", "tests/", "runtime/", ".venv/", "benchmarks/"):
        assert not any(n.startswith(f"pytorch-course/{folder}") for n in names), f"{folder} is in the bundle"
    assert [n for n in names if n.startswith("pytorch-course/classgrader/")] == ["pytorch-course/classgrader/cli.py"]
    for marker in ("BEGINSOLUTION", "BEGINHIDDENTESTS"):  # (the feedback filter's code names them)
        assert marker not in notebooks, f"a notebook in the bundle contains {marker}"
    secrets = secret_lines()
    assert len(secrets) > 100  # the check below has something to find
    leaked = [line for line in secrets if squeeze(line) in text]
    assert not leaked, f"solution or hidden-test code in the bundle: {leaked[:3]}"
    covered(f"student bundle: {len(names)} files, none of {len(secrets)} solution/hidden-test lines")


def test_the_bundle_installs_validates_and_submits(tmp_path, covered):
    """Unzipped in an empty folder, as a student without a hub would: ./course setup builds its
    environment, Validate answers on the untouched assignment, and the submission reaches the
    exchange (a folder of the course's own here, which an instructor's release filled)."""
    with zipfile.ZipFile(make_bundle(tmp_path / "student.zip")) as archive:
        archive.extractall(tmp_path)
        for info in archive.infolist():  # zipfile drops the modes: ./course must run
            os.chmod(tmp_path / info.filename, info.external_attr >> 16 or 0o644)
    course = tmp_path / "pytorch-course"
    ours = str(ROOT / ".venv" / "bin")
    # A student's shell: not this checkout's environment, nor CI's UV_COMPILE_BYTECODE (compiling all
    # of torch at install took most of this test's time in CI; a student's Python compiles what it imports).
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV_COMPILE_BYTECODE")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != ours)

    def course_command(*args, timeout=600):
        return subprocess.run(["./course", *args], cwd=course, env=env, capture_output=True, text=True,
                              timeout=timeout)
    try:
        done = course_command("setup")
        assert done.returncode == 0, done.stderr[-3000:]
        assert (course / ".venv" / "bin" / "python").exists()
        # The installer this checkout's own set-up used: a bundle missing what uv needs falls back to pip.
        ours_installer = (ROOT / ".venv" / ".installer").read_text().strip()
        assert (course / ".venv" / ".installer").read_text().strip() == ours_installer, done.stdout + done.stderr
        shutil.copytree(course / "release" / "01_tensors", course / "work" / "01_tensors")
        done = course_command("validate", "work/01_tensors/01_tensors.ipynb")
        assert done.returncode == 1 and "not answered yet" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
        exchange = course / "runtime" / "exchange" / "pytorch-fundamentals"
        shutil.copytree(course / "release" / "01_tensors", exchange / "outbound" / "01_tensors")
        (exchange / "inbound").mkdir()
        done = course_command("submit", "01_tensors")
        assert done.returncode == 0, done.stderr[-3000:]
        [sent] = (exchange / "inbound").iterdir()
        submitted = (sent / "01_tensors.ipynb").read_bytes()
        assert submitted == (course / "work" / "01_tensors" / "01_tensors.ipynb").read_bytes()
        done = course_command("autograde", "01_tensors")
        assert done.returncode == 2 and "student bundle" in done.stderr
    finally:
        shutil.rmtree(course / ".venv", ignore_errors=True)  # a gigabyte of torch
    covered("the student bundle, unzipped in an empty folder: ./course setup, validate and submit work; "
            "autograde is refused in one line")
