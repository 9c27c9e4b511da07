"""Tests for classgrader/bundle.py: the student bundle holds what a student needs and no
solution, hidden test or instructor file."""
import json
import re
import zipfile

from classgrader.bundle import make_bundle
from coursekit import HIDDEN_BLOCK, LESSONS, RELEASE_NOTEBOOKS, ROOT, SOURCE_NOTEBOOKS, read_notebook, source_text

SOLUTION_BLOCK = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def public_text() -> str:
    """What students are given anyway: lessons, student versions and the helper packages
    they import (a hidden test that calls a helper shares lines with it)."""
    notebooks = "".join(source_text(c) for p in LESSONS + RELEASE_NOTEBOOKS for c in read_notebook(p)["cells"])
    packages = "".join(p.read_text() for folder in ("utils", "autograder") for p in (ROOT / folder).rglob("*.py"))
    return squeeze(notebooks + packages)


def secret_lines() -> list[str]:
    """Substantial lines of solutions and hidden tests that the student versions do not show."""
    public = public_text()
    lines = []
    for path in SOURCE_NOTEBOOKS:
        for cell in read_notebook(path)["cells"]:
            text = source_text(cell)
            for block in SOLUTION_BLOCK.findall(text) + HIDDEN_BLOCK.findall(text):
                lines += [line.strip() for line in block.splitlines()
                          if len(line.strip()) >= 30 and squeeze(line) not in public]
    return lines


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
    for needed in ["course", "requirements.txt", "nbgrader_config.py", "notebooks/01_tensors.ipynb",
                   "release/01_tensors/01_tensors.ipynb", "utils/claims.py", "autograder/checks.py"]:
        assert f"pytorch-course/{needed}" in names, f"the bundle lacks {needed}"
    assert mode & 0o111, "./course must stay executable"
    # The grading pipeline is the instructor's: students get the check library, not the grader.
    for folder in ("source/", "tests/", "runtime/", ".venv/", "classgrader/", "benchmarks/"):
        assert not any(n.startswith(f"pytorch-course/{folder}") for n in names), f"{folder} is in the bundle"
    for marker in ("BEGINSOLUTION", "BEGINHIDDENTESTS"):  # (the feedback filter's code names them)
        assert marker not in notebooks, f"a notebook in the bundle contains {marker}"
    secrets = secret_lines()
    assert len(secrets) > 100  # the check below has something to find
    leaked = [line for line in secrets if squeeze(line) in text]
    assert not leaked, f"solution or hidden-test code in the bundle: {leaked[:3]}"
    covered(f"student bundle: {len(names)} files, none of {len(secrets)} solution/hidden-test lines")
