"""Tests for hub/user_start.py's start page, in a temporary home: the student role's own start page
(lab/student/start-page.jupyterlab-workspace, the one ./course lab opens on), written as the lab's
workspace once its lesson and assignment are both there, then the student's to rearrange; until
then the lab opens on the lesson alone. The pull and the fetch run for real in tests/hub/test_hub.py."""
import json
import sys

from coursekit import ROOT

sys.path.insert(0, str(ROOT / "hub"))
import user_start

TEMPLATE = ROOT / "lab" / "student" / "start-page.jupyterlab-workspace"
LESSON, ASSIGNMENT = "lessons/01_tensors_lesson.ipynb", "01_tensors/01_tensors.ipynb"


def home_with(tmp_path, *notebooks: str):
    home = tmp_path / "home"
    for notebook in notebooks:
        (home / notebook).parent.mkdir(parents=True, exist_ok=True)
        (home / notebook).write_text("{}")
    return home, home / ".jupyter" / "lab" / "workspaces"


def opened(workspaces) -> list[list[str]]:
    """The dock's tab areas, left to right, each as the notebooks it holds."""
    [path] = workspaces.glob("course-*.jupyterlab-workspace")
    dock = json.loads(path.read_text())["data"]["layout-restorer:data"]["main"]["dock"]
    areas = dock["children"] if dock["type"] == "split-area" else [dock]
    return [area["widgets"] for area in areas]


def test_lesson_left_assignment_right_written_once(tmp_path, covered):
    home, workspaces = home_with(tmp_path, LESSON, ASSIGNMENT)
    assert user_start.start_page(home, workspaces, TEMPLATE) is None
    assert opened(workspaces) == [[f"notebook:{LESSON}"], [f"notebook:{ASSIGNMENT}"]]
    [path] = workspaces.glob("*")
    assert json.loads(path.read_text())["data"] == json.loads(TEMPLATE.read_text())["data"]
    rearranged = path.read_text().replace(LESSON, "lessons/02_devices_lesson.ipynb")
    path.write_text(rearranged)
    assert user_start.start_page(home, workspaces, TEMPLATE) is None
    assert path.read_text() == rearranged, "a later start overwrote the student's own layout"
    covered("the hub's start page is the student role's own: lessons/01 on the left, 01_tensors on the right; "
            "kept as the student leaves it")


def test_without_its_assignment_the_lesson_opens_alone_until_it_is_there(tmp_path, covered):
    home, workspaces = home_with(tmp_path, LESSON)
    assert user_start.start_page(home, workspaces, TEMPLATE) == LESSON
    assert not workspaces.exists(), "a start page written without its assignment would be kept without it"
    env = {"COURSE_START_PAGE": str(TEMPLATE), "COURSE_WORKSPACES": str(workspaces)}
    user_start.prepare(home, env)
    assert env["JUPYTERHUB_DEFAULT_URL"] == f"/lab/tree/{LESSON}"
    (home / ASSIGNMENT).parent.mkdir()
    (home / ASSIGNMENT).write_text("{}")
    env = {"COURSE_START_PAGE": str(TEMPLATE), "COURSE_WORKSPACES": str(workspaces)}
    user_start.prepare(home, env)
    assert "JUPYTERHUB_DEFAULT_URL" not in env and len(opened(workspaces)) == 2
    covered("before the release the lab opens on the lesson alone; the start after, on the start page with both")


def test_nothing_released_nothing_fetched(tmp_path, capsys):
    home, _ = home_with(tmp_path, LESSON)
    assert not user_start.fetch("01_tensors", tmp_path / "outbound", home)
    assert "not released yet" in capsys.readouterr().err
