"""What a student's JupyterLab does, against real servers started the way ./course lab starts
them (lab/student, lab/instructor): the page loads the nbgrader and widgets extensions; a
student's has no formgrader or create-assignment and no news prompt, an instructor's has
them; the Validate button's endpoint answers with the checklist, whose verdict is the
autograder's on the visible checks; and an untouched release, executed top to bottom as
Run All does, reaches every exercise and still shows each failure; the lab's own server extensions
import neither torch nor nbgrader, and nbgrader's Assignment List is served once the lab is up; the
Validate worker ends with its lab, however the lab ends."""
import json
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from coursekit import LAB_TOKEN as TOKEN, ROOT, build_submission, read_notebook, running_lab, write_notebook
from scenarios import unit01

# Scenarios whose mistakes the visible tests catch, so Validate, which runs only those,
# must agree with the autograder: pass exactly when the scenario loses nothing.
# ("warns" prints to stderr: stock nbgrader's Validate would fail it.)
STUDENTS = ["solution", "alternative_a", "alternative_b", "warns", "untouched", "len_as_numel",
            "size_not_called"]
SCENARIOS = {s.student: s for s in unit01.SCENARIOS if s.student in STUDENTS}
INSTRUCTOR_ONLY = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"]
NEWS = "@jupyterlab/apputils-extension:announcements"


def request(url, data=None, timeout=180):
    req = urllib.request.Request(url, data=data, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(req, timeout=timeout) as response:
        return response.read().decode()


def page_config(base) -> dict:
    page = request(f"{base}/lab")
    return json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                page, re.S).group(1))


@pytest.fixture(scope="module")
def lab(course):
    """A student's JupyterLab on loopback with a token, in a course folder holding student notebooks."""
    source = read_notebook(ROOT / "source" / unit01.ASSIGNMENT / unit01.NOTEBOOK)
    release = read_notebook(course / "release" / unit01.ASSIGNMENT / unit01.NOTEBOOK)
    for scenario in SCENARIOS.values():
        write_notebook(build_submission(source, release, scenario.answers),
                       course / "students" / f"{scenario.student}.ipynb")
    with running_lab(course) as base:
        yield base


def test_lab_page_loads_the_nbgrader_and_widget_extensions(lab, covered):
    names = {ext["name"] for ext in page_config(lab)["federated_extensions"]}
    assert "@jupyter/nbgrader" in names, f"nbgrader's lab extension is not served: {sorted(names)}"
    assert "@jupyter-widgets/jupyterlab-manager" in names, "the widgets extension is not served"
    covered(f"JupyterLab serves {len(names)} extensions, nbgrader and widgets among them")


def test_students_lab_has_no_instructor_panels_and_no_news(lab, covered):
    disabled = page_config(lab)["disabledExtensions"]
    assert {*INSTRUCTOR_ONLY, NEWS} <= set(disabled), disabled
    with pytest.raises(urllib.error.HTTPError) as refused:  # the formgrader's server side is off too
        request(f"{lab}/formgrader")
    assert refused.value.code == 404
    covered(f"a student's lab: {', '.join(sorted(disabled))} switched off; /formgrader answers 404")


def test_instructors_lab_has_its_panels(tmp_path, covered):
    (tmp_path / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text())
    with running_lab(tmp_path, role="instructor") as base:
        disabled = page_config(base)["disabledExtensions"]
        assert not set(INSTRUCTOR_ONLY) & set(disabled) and NEWS in disabled, disabled
        assert "<title>nbgrader formgrade</title>" in request(f"{base}/formgrader")
    covered("an instructor's lab (./course lab --instructor): formgrader and create-assignment on, no news prompt")


def alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE  # a zombie has ended, whoever reaps it
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_the_validate_worker_ends_with_its_lab_however_the_lab_ends(tmp_path, stop, covered):
    """The lab is stopped as soon as it answers, so its worker is most likely still importing torch;
    SIGTERM is how the tests stop a lab (the server's own shutdown), SIGKILL runs none of it."""
    (tmp_path / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text())
    with running_lab(tmp_path) as base:
        port = base.rpartition(":")[2]
        [server] = [p for p in psutil.Process().children() if f"--port={port}" in p.cmdline()]
        [worker] = [p for p in server.children() if "autograder.validate_button" in " ".join(p.cmdline())]
        folder = Path(worker.cmdline()[-2]).parent
        importing = not (folder / "worker").exists()  # the worker listens once its imports are done
        server.send_signal(stop)
        server.wait(timeout=60)
    deadline = time.monotonic() + 60  # a killed process is gone at once; the bound is for a busy machine
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(worker), f"the Validate worker outlived its lab ({stop.name}): {worker.cmdline()}"
    if stop == signal.SIGTERM:
        assert not folder.exists(), f"a stopped lab left its Validate socket's folder {folder}"
    else:  # a killed lab runs no clean-up of its own: the test removes what it left in /tmp
        shutil.rmtree(folder, ignore_errors=True)
    covered(f"a lab ended by {stop.name} {'while' if importing else 'after'} its Validate worker imported torch: "
            f"the worker ended with it")


# A server extension of the test's own: a task that lives as long as the server, having used one
# of AnyIO's worker threads (as a websocket's handler does that reads a file). AnyIO stops that
# worker only when the task ends, and it never does.
LONG_TASK_PROBE = """
import asyncio

import anyio


async def lives_as_long_as_the_server():
    await anyio.to_thread.run_sync(len, "x")
    open("probe-ready", "w").close()
    await asyncio.Event().wait()


def _load_jupyter_server_extension(serverapp):
    serverapp.web_app.settings["long_task_probe"] = asyncio.get_event_loop().create_task(lives_as_long_as_the_server())
"""


@pytest.mark.parametrize("role", ["student", "instructor"])
def test_a_lab_stopped_with_a_worker_thread_idle_ends(tmp_path, role, covered):
    """Python's exit joins AnyIO's idle worker threads for ever unless they are told to stop
    (lab/server/course_clean_exit.py): a lab would then never end on SIGTERM or Ctrl-C."""
    (tmp_path / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text())
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "long_task_probe.py").write_text(LONG_TASK_PROBE)
    with running_lab(tmp_path, "--ServerApp.jpserver_extensions=long_task_probe=True", role=role,
                     env={"PYTHONPATH": str(tmp_path / "probe")}) as base:
        port = base.rpartition(":")[2]
        [server] = [p for p in psutil.Process().children() if f"--port={port}" in p.cmdline()]
        log = (tmp_path / "lab.log").read_text()
        assert "long_task_probe | extension was successfully loaded" in log, log[-2000:]
        assert "course_clean_exit | extension was successfully loaded" in log, log[-2000:]
        deadline = time.monotonic() + 120  # the probe's thread starts once the server serves
        while not (tmp_path / "probe-ready").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=120)  # seconds when it ends at all; the bound is for a busy machine
        except psutil.TimeoutExpired:
            server.kill()
            raise AssertionError(f"a {role}'s lab was still running 120 s after SIGTERM") from None
    covered(f"a {role}'s lab with an idle AnyIO worker thread ended on SIGTERM")


@pytest.mark.parametrize("student", STUDENTS)
def test_validate_button_gives_the_autograders_verdict(lab, student, covered):
    reply = json.loads(request(f"{lab}/assignments/validate", data=f"path=students/{student}.ipynb".encode()))
    assert reply["success"], f"the Validate handler itself failed: {reply['value']}"
    value = reply["value"]
    full_marks = not SCENARIOS[student].loses
    assert value["all_passed"] == full_marks, f"Validate on {student}: {value['checklist']}"
    # What the dialog draws: one entry, no cell source, the checklist as HTML with no traceback.
    [entry] = value["failed"]
    assert entry["source"] == "" and 'class="course-checklist"' in entry["error"]
    assert "Traceback" not in entry["error"] and "check_value(" not in entry["error"]
    assert entry["error"].count("<li ") == len(value["checklist"]) == 9
    covered(f"Validate on {student}: {'passes' if value['all_passed'] else 'fails'}; the autograder gives "
            f"{'full marks' if full_marks else 'less than full marks'}")


def test_course_validate_asks_the_running_lab_at_the_course_address(lab, course, covered):
    """./course validate takes the button's checklist from a running course lab, at an address
    a stock Jupyter server does not have (so it never sets a stock server validating in full)."""
    from autograder.validate import COURSE_VALIDATE, from_running_lab
    lines = from_running_lab(course / "students" / "untouched.ipynb")
    assert lines is not None, "no running course lab answered"
    assert len(lines) == 9 and all(line.status != "passed" for line in lines)
    reply = json.loads(request(f"{lab}{COURSE_VALIDATE}", data=b"path=students/solution.ipynb"))
    assert reply["value"]["all_passed"]
    covered(f"./course validate got the lab's checklist from {COURSE_VALIDATE}")


def test_validate_button_refuses_a_path_outside_the_course(lab):
    with pytest.raises(urllib.error.HTTPError) as refused:
        request(f"{lab}/assignments/validate", data=b"path=../../etc/passwd")
    assert refused.value.code == 403


def test_the_labs_server_extensions_import_neither_torch_nor_nbgrader(covered):
    """What a lab imports before it answers: the course's own extensions load nothing heavy (the
    Validate worker imports torch in a process of its own; nbgrader's panels load once it serves)."""
    probe = ("import sys; sys.path.insert(0, 'lab/server'); import course_validate_button, course_late_extensions; "
             "print(sorted(m for m in ('torch', 'nbgrader', 'nbformat', 'nbclient') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
    covered("the lab's server extensions import none of torch, nbgrader, nbformat, nbclient")


def test_nbgraders_assignment_list_is_served_once_the_lab_is_up(lab, covered):
    for _ in range(600):
        try:
            reply = json.loads(request(f"{lab}/assignments?course_id=pytorch-fundamentals"))
            break
        except urllib.error.HTTPError as error:
            if error.code != 404:  # 404: not loaded yet; anything else fails the test
                raise
            time.sleep(0.5)
    assert reply["success"], reply
    covered("nbgrader's Assignment List answers, loaded after the lab started serving")
