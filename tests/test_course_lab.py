"""The real `./course lab` and `./course submit`, run from a copy of the course (sharing this
checkout's .venv): a student's lab makes work/ with a copy of every assignment, opens on the
first lesson and its assignment side by side (the course's workspace, written once),
switches off the instructor's panels and the news prompt, and answers Validate with the
checklist; `--instructor` keeps the panels. nbgrader's own submit sends a corrupt notebook to
the exchange; `./course submit` refuses it first, and neither the exchange nor the file changes."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request

import pytest

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


def lab_config(course, *args) -> tuple[dict, str]:
    """Start ./course lab ARGS, read its page config and where / leads, stop it."""
    port = free_port()
    server = subprocess.Popen(["./course", "lab", *args, "--no-browser", "--port", str(port), "--ip", "127.0.0.1",
                               "--", f"--IdentityProvider.token={TOKEN}"], cwd=course, env=SHARED_ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(240):
            try:
                page = get(f"http://127.0.0.1:{port}/lab")
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise AssertionError("./course lab did not answer")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?token={TOKEN}", timeout=60) as response:
            opens_on = response.geturl()
        return json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                    page, re.S).group(1)), opens_on
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # its own session: the server and the kernels it started
        server.wait(timeout=60)


def test_course_lab_student_and_instructor(course, covered):
    student, opens_on = lab_config(course)
    assert (course / "work" / "01_tensors" / "01_tensors.ipynb").read_bytes() == (
        course / "release" / "01_tensors" / "01_tensors.ipynb").read_bytes()
    assert INSTRUCTOR_ONLY | {NEWS} <= set(student["disabledExtensions"]), student["disabledExtensions"]
    assert opens_on.split("?")[0].endswith("/lab/workspaces/course"), opens_on
    [workspace] = (course / "runtime" / "lab-workspaces").glob("course-*.jupyterlab-workspace")
    layout = json.loads(workspace.read_text())["data"]["layout-restorer:data"]["main"]["dock"]
    assert (layout["type"], layout["orientation"]) == ("split-area", "horizontal")
    assert [area["widgets"] for area in layout["children"]] == [["notebook:notebooks/01_tensors_lesson.ipynb"],
                                                                 ["notebook:work/01_tensors/01_tensors.ipynb"]]
    workspace.write_text(workspace.read_text().replace("notebooks/01_tensors_lesson.ipynb", "notebooks/moved.ipynb"))
    instructor, _ = lab_config(course, "--instructor")
    assert "moved.ipynb" in workspace.read_text(), "the lab overwrote the student's own layout"
    assert not INSTRUCTOR_ONLY & set(instructor["disabledExtensions"]) and NEWS in instructor["disabledExtensions"]
    covered("./course lab: work/ made with the release's copy, opens on lesson 01 and work/01_tensors side by side "
            "(written once: a layout of the student's own is kept), no formgrader, create-assignment or news; "
            "./course lab --instructor: the panels, still no news")


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
