"""The real `./course lab` and `./course submit`, run from a copy of the course (sharing this
checkout's .venv): a student's lab serves their own folder, work/, with a copy of every lesson and
assignment and nothing of the checkout (no source/, classgrader/); it opens on the first lesson and
its assignment side by side (the course's workspace, written once), switches off the instructor's
panels and the news prompt, and answers Validate with the checklist; `--instructor` serves the
whole checkout with the panels. Running a lesson's copy changes no file git tracks. nbgrader's own
submit sends a corrupt notebook to the exchange; `./course submit` refuses it first, and neither
the exchange nor the file changes."""
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest
from nbclient import NotebookClient

from coursekit import LAB_TOKEN as TOKEN, ROOT, free_port, nbgrader

INSTRUCTOR_ONLY = {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"}
NEWS = "@jupyterlab/apputils-extension:announcements"


# The copy shares this checkout's .venv: ./course there must use it as it is, never rebuild it
# for the copy (that would point its editable install at a folder about to be deleted).
SHARED_ENV = {**os.environ, "COURSE_KEEP_ENV": "1"}


@pytest.fixture
def course(tmp_path):
    for name in ("course", "requirements.txt", "pyproject.toml", "nbgrader_config.py"):
        shutil.copy2(ROOT / name, tmp_path / name)
    for folder in ("lab", "autograder", "classgrader"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "release").mkdir()
    shutil.copytree(ROOT / "release" / "01_tensors", tmp_path / "release" / "01_tensors")
    (tmp_path / "notebooks").mkdir()
    shutil.copy2(ROOT / "notebooks" / "01_tensors_lesson.ipynb", tmp_path / "notebooks")
    os.symlink(ROOT / ".venv", tmp_path / ".venv")
    return tmp_path


def get(url: str) -> str:
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read().decode()


@contextlib.contextmanager
def course_lab(course, *args):
    """./course lab ARGS started, answering; yields its address; stopped after."""
    port = free_port()
    server = subprocess.Popen(["./course", "lab", *args, "--no-browser", "--port", str(port), "--ip", "127.0.0.1",
                               "--", f"--IdentityProvider.token={TOKEN}"], cwd=course, env=SHARED_ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(600):
            try:
                get(f"http://127.0.0.1:{port}/api/status")
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise AssertionError("./course lab did not answer")
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # its own session: the server, its worker and kernels
        server.wait(timeout=60)


def page_config(base) -> dict:
    return json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                get(f"{base}/lab"), re.S).group(1))


def opens_on(base) -> str:
    with urllib.request.urlopen(f"{base}/?token={TOKEN}", timeout=60) as response:
        return response.geturl()


def listing(base) -> set[str]:
    """What the lab's file browser shows at its root (dot files aside, as it hides them)."""
    return {item["name"] for item in json.loads(get(f"{base}/api/contents/"))["content"]}


def dock(course, role) -> dict:
    [workspace] = (course / "runtime" / "lab-workspaces" / role).glob("course-*.jupyterlab-workspace")
    return json.loads(workspace.read_text())["data"]["layout-restorer:data"]["main"]["dock"]


def test_course_lab_student_and_instructor(course, covered):
    with course_lab(course) as base:
        student = page_config(base)
        assert opens_on(base).split("?")[0].endswith("/lab/workspaces/course"), opens_on(base)
        shown = listing(base)
        request = urllib.request.Request(f"{base}/assignments/validate", data=b"path=01_tensors/01_tensors.ipynb",
                                         headers={"Authorization": f"token {TOKEN}"})
        with urllib.request.urlopen(request, timeout=900) as response:
            validated = json.loads(response.read())
    assert shown == {"lessons", "01_tensors"}, f"a student's file browser shows {sorted(shown)}"
    work = course / "work"
    assert (work / "01_tensors" / "01_tensors.ipynb").read_bytes() == (
        course / "release" / "01_tensors" / "01_tensors.ipynb").read_bytes()
    assert (work / "lessons" / "01_tensors_lesson.ipynb").read_bytes() == (
        course / "notebooks" / "01_tensors_lesson.ipynb").read_bytes()
    assert {line["status"] for line in validated["value"]["checklist"]} == {"unanswered"}, validated
    assert INSTRUCTOR_ONLY | {NEWS} <= set(student["disabledExtensions"]), student["disabledExtensions"]
    layout = dock(course, "student")
    assert (layout["type"], layout["orientation"]) == ("split-area", "horizontal")
    assert [area["widgets"] for area in layout["children"]] == [["notebook:lessons/01_tensors_lesson.ipynb"],
                                                                 ["notebook:01_tensors/01_tensors.ipynb"]]
    [workspace] = (course / "runtime" / "lab-workspaces" / "student").glob("course-*.jupyterlab-workspace")
    workspace.write_text(workspace.read_text().replace("lessons/01_tensors_lesson.ipynb", "lessons/moved.ipynb"))
    with course_lab(course, "--instructor") as base:
        instructor, shown = page_config(base), listing(base)
    sys.path.insert(0, str(course / "classgrader"))  # as ./course runs it: a file, not the package
    try:
        import cli
        cli.start_page(str(workspace.parent), str(course / "lab" / "student"), "")  # what the next ./course lab does
    finally:
        sys.path.pop(0)
    assert "moved.ipynb" in workspace.read_text(), "the lab overwrote the student's own layout"
    assert {"classgrader", "notebooks", "release", "work"} <= shown, f"an instructor's lab shows {sorted(shown)}"
    assert [area["widgets"] for area in dock(course, "instructor")["children"]] == [
        ["notebook:work/lessons/01_tensors_lesson.ipynb"], ["notebook:work/01_tensors/01_tensors.ipynb"]]
    assert not INSTRUCTOR_ONLY & set(instructor["disabledExtensions"]) and NEWS in instructor["disabledExtensions"]
    covered("./course lab: the file browser shows work/ alone (lessons and 01_tensors, no source/ or "
            "classgrader/), the lesson and assignment copied there, opens on "
            "lessons/01_tensors_lesson.ipynb and 01_tensors/01_tensors.ipynb side by side (written once: a layout "
            "of the student's own is kept), Validate answers on work/'s assignment, no formgrader, create-assignment "
            "or news; ./course lab --instructor: the whole checkout, the panels, still no news")


def test_running_a_lesson_copy_leaves_the_checkout_clean(course, covered):
    """A student runs their copy of a lesson in a real kernel, in its folder, and saves it with its
    outputs: git sees no change (work/ is git-ignored, and nothing outside it was written)."""
    shutil.copy2(ROOT / ".gitignore", course / ".gitignore")
    git = ["git", "-c", "user.name=course", "-c", "user.email=course@localhost"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the course"]):
        subprocess.run(git + command, cwd=course, check=True, capture_output=True)
    subprocess.run([sys.executable, "-P", "autograder/student_folder.py", ".", "work"], cwd=course, check=True)
    copy = course / "work" / "lessons" / "01_tensors_lesson.ipynb"
    nb = nbformat.read(copy, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(copy.parent)}}).execute()
    nbformat.write(nb, copy)
    assert sum(bool(cell.get("outputs")) for cell in nb.cells) > 5  # it ran, and was saved with what it showed
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=course,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", status
    covered("lessons/01_tensors_lesson.ipynb run in a real kernel from work/ and saved with its outputs: "
            "git status of the checkout stays clean")


def test_course_submit_refuses_what_nbgrader_would_send(course, covered):
    nbgrader(course, "release_assignment", "01_tensors")
    nbgrader(course, "fetch_assignment", "01_tensors")  # into work/, the course's Exchange.assignment_dir
    notebook = course / "work" / "01_tensors" / "01_tensors.ipynb"
    corrupt = notebook.read_bytes()[: len(notebook.read_bytes()) // 2]
    notebook.write_bytes(corrupt)
    inbound = course / "runtime" / "exchange" / "pytorch-fundamentals" / "inbound"
    # Without the check: nbgrader's own submit sends the half notebook to the exchange.
    nbgrader(course, "submit", "01_tensors")
    sent = sorted(inbound.iterdir())
    assert len(sent) == 1 and (sent[0] / "01_tensors.ipynb").read_bytes() == corrupt
    done = subprocess.run(["./course", "submit", "01_tensors"], cwd=course, env=SHARED_ENV, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith(
        "course: not submitted: work/01_tensors/01_tensors.ipynb is not a readable notebook (broken JSON"), done.stderr
    assert sorted(inbound.iterdir()) == sent and notebook.read_bytes() == corrupt
    covered("nbgrader submit sends a half-written notebook to the exchange; ./course submit refuses it, exit 2, "
            "the exchange and the file unchanged")
