"""Tests for hub/lessons.py: the repository students pull their lessons from holds every lesson and
nothing else (no solution, hidden test, source/ or grading file: the student bundle's leak check,
tests/classgrader/commands/test_bundle.py, is the model), is readable by everyone, gets one commit
per change and none for the same lessons again. Real git, in a temporary folder."""
import os
import shutil
import subprocess
import sys

import pytest

from coursekit import LESSONS, ROOT, read_notebook, secret_lines, source_text, squeeze

sys.path.insert(0, str(ROOT / "hub"))
import lessons


def git(*args, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def checkout(tmp_path):
    """A checkout as an instructor has it: lessons beside source/, release/ and the grading code."""
    root = tmp_path / "checkout"
    for folder in ("notebooks", "source", "release", "classgrader", "tests"):
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def test_the_repository_holds_every_lesson_and_no_secret(checkout, tmp_path, covered):
    repo = tmp_path / "lessons.git"
    commit = lessons.publish(repo, checkout)
    assert commit and git("--git-dir", str(repo), "rev-parse", "main").strip() == commit
    clone = tmp_path / "clone"
    git("clone", "--quiet", f"file://{repo}", str(clone))
    names = sorted(p.relative_to(clone).as_posix() for p in clone.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert names == sorted(p.name for p in LESSONS), names
    for path in LESSONS:
        assert (clone / path.name).read_bytes() == path.read_bytes(), f"{path.name} differs from the checkout's"
    text = squeeze("".join(source_text(c) for n in names for c in read_notebook(clone / n)["cells"]))
    history = git("--git-dir", str(repo), "log", "--all", "--name-only", "--format=")
    assert set(history.split()) == set(names), f"a commit names another file: {set(history.split()) - set(names)}"
    for marker in ("BEGINSOLUTION", "BEGINHIDDENTESTS"):
        assert marker not in text, f"a lesson in the repository contains {marker}"
    secrets = secret_lines()
    assert len(secrets) > 100  # the check below has something to find
    leaked = [line for line in secrets if squeeze(line) in text]
    assert not leaked, f"solution or hidden-test code in the lessons' repository: {leaked[:3]}"
    for folder, _, files in os.walk(repo):
        assert os.stat(folder).st_mode & 0o005 == 0o005, f"{folder} is not readable by everyone"
        for name in files:
            assert os.stat(os.path.join(folder, name)).st_mode & 0o004, f"{folder}/{name} is not readable by everyone"
    covered(f"the lessons' repository: exactly the {len(names)} lessons, none of {len(secrets)} solution/hidden-test "
            "lines, no other file in any commit, readable by everyone")


def test_a_correction_is_one_commit_and_the_same_lessons_none(checkout, tmp_path, covered):
    repo = tmp_path / "lessons.git"
    first = lessons.publish(repo, checkout)
    assert lessons.publish(repo, checkout) is None, "publishing the same lessons again made a commit"
    lesson = checkout / "notebooks" / LESSONS[0].name
    lesson.write_text(lesson.read_text().replace("PyTorch", "PyTorch (corrected)", 1))
    second = lessons.publish(repo, checkout)
    assert second and git("--git-dir", str(repo), "rev-parse", f"{second}^").strip() == first
    shown = git("--git-dir", str(repo), "show", f"main:{LESSONS[0].name}")
    assert "PyTorch (corrected)" in shown
    covered("publishing: the same lessons make no commit; a corrected lesson is one commit on main after the first")


def test_only_numbered_lessons_are_published(checkout, tmp_path):
    (checkout / "notebooks" / "scratch.ipynb").write_text("{}")
    (checkout / "notebooks" / "answers_lesson.ipynb").write_text("{}")
    assert sorted(lessons.lesson_files(checkout)) == sorted(p.name for p in LESSONS)
