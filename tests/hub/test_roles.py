"""The labs' settings per role (lab/ROLE, as ./course lab and hub/install.py's roles use them), read
in-process: the instructor's Formgrader on the hub opens in a browser tab of its own from the Course
menu, and no lab panel frames it (each server sends frame-ancestors 'none'); a student's settings are
./course lab's own; nbgrader's Assignment List, reading its settings again in work/, finds the
course's through the role's folder, and work/ holds nothing but assignments. The clicks themselves,
in Chromium, are in tests/hub/test_hub.py and tests/browser/test_browser.py."""
import json
import shutil
import sys

import pytest

from coursekit import ROOT

sys.path.insert(0, str(ROOT / "hub"))
import install


def test_the_formgrader_opens_in_a_tab_of_its_own(tmp_path, covered):
    install.roles(tmp_path, "teacher")
    teacher, student = tmp_path / "roles" / "instructor", tmp_path / "roles" / "student"
    page = json.loads((teacher / "page_config.json").read_text())
    assert page["disabledExtensions"]["@jupyter/nbgrader:formgrader"] is True
    [menu] = json.loads((teacher / "overrides.json").read_text())["@jupyterlab/mainmenu-extension:plugin"]["menus"]
    [item] = menu["items"]
    assert (menu["label"], item["command"]) == ("Course", "help:open")
    assert item["args"]["url"] == "/user/teacher/formgrader" and item["args"]["newBrowserTab"] is True
    for name in ("page_config.json", "overrides.json"):
        assert (student / name).read_text() == (ROOT / "lab" / "student" / name).read_text()
    covered("hub roles: the instructor's Course -> Formgrader opens /user/teacher/formgrader in a new browser tab, "
            "no Formgrader panel in the lab; a student's settings are ./course lab's")


@pytest.mark.parametrize("role", ["student", "instructor"])
def test_every_roles_python_settings_are_one_file_and_the_hubs_copy_holds_it(tmp_path, role):
    """lab/ROLE's .py settings are links to lab/common's (one source for both roles); the hub's
    copy of the role (hub/install.py) is a plain file with the same text, so it needs no lab/common."""
    install.roles(tmp_path, "teacher")
    for name in ("jupyter_server_config.py", "nbgrader_config.py"):
        linked = ROOT / "lab" / role / name
        assert linked.is_symlink() and linked.resolve() == ROOT / "lab" / "common" / name
        copied = tmp_path / "roles" / role / name
        assert not copied.is_symlink() and copied.read_text() == (ROOT / "lab" / "common" / name).read_text()


@pytest.mark.parametrize("role", ["student", "instructor"])
def test_the_assignment_list_finds_the_course_and_work_holds_only_assignments(tmp_path, monkeypatch, role, covered):
    """nbgrader's own Assignment List, as the lab's server runs it (JUPYTER_CONFIG_PATH=lab/ROLE,
    the lab serving the course folder): it lists the released assignment, fetches it into work/,
    submits it and fetches its feedback; work/ holds that assignment's folder and nothing else."""
    from nbgrader.server_extensions.assignment_list.handlers import AssignmentList
    from nbgrader.utils import notebook_hash
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    exchange = course / "runtime" / "exchange" / "pytorch-fundamentals"
    released = exchange / "outbound" / "01_tensors"
    shutil.copytree(ROOT / "release" / "01_tensors", released)  # what release_assignment makes there
    (exchange / "inbound").mkdir()
    (exchange / "feedback").mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(ROOT / "lab" / role))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.jupyter of this machine's user
    monkeypatch.delenv("JUPYTER_DATA_DIR", raising=False)  # nor the submissions other tests record
    monkeypatch.chdir(tmp_path)
    assignments = AssignmentList()
    assignments.root_dir = str(course)
    listed = assignments.list_assignments()
    assert listed["success"], listed["value"]
    assert [(a["assignment_id"], a["status"]) for a in listed["value"]] == [("01_tensors", "released")]
    fetched = assignments.fetch_assignment("pytorch-fundamentals", "01_tensors")
    assert fetched["success"], fetched["value"]
    assert [(a["assignment_id"], a["status"]) for a in assignments.list_assignments()["value"]] == [
        ("01_tensors", "fetched")]
    assert (course / "work" / "01_tensors" / "01_tensors.ipynb").read_bytes() == (
        released / "01_tensors.ipynb").read_bytes()
    submitted = assignments.submit_assignment("pytorch-fundamentals", "01_tensors")
    assert submitted["success"], submitted["value"]
    [inbound] = (exchange / "inbound").iterdir()
    # The instructor's side, as release_feedback names a page: by the submission's secret.
    secret = (inbound / "submission_secret.txt").read_text()
    page = exchange / "feedback" / f"{notebook_hash(secret=secret, notebook_id='01_tensors')}.html"
    page.write_text("<p>feedback</p>")
    got = assignments.fetch_feedback("pytorch-fundamentals", "01_tensors")
    assert got["success"], got["value"]
    assert [p.read_text() for p in (course / "work" / "01_tensors" / "feedback").rglob("*.html")] == [
        "<p>feedback</p>"]
    work = sorted(p.name for p in (course / "work").iterdir())
    assert work == ["01_tensors"], f"work/ holds more than the fetched assignment: {work}"
    covered(f"{role}'s lab: nbgrader's Assignment List lists, fetches into work/, submits and fetches feedback "
            f"with the course's settings from lab/{role}; work/ holds only 01_tensors")
