"""Tests for hub/user_start.py's start page, in a temporary home: the first lesson on the left and
the start assignment on the right (the workspace ./course lab opens on), written once and then the
student's; a page written before the assignment was released gains it later unless the student
rearranged it. The pull and the fetch run for real in tests/hub/test_hub.py."""
import json
import sys

from coursekit import ROOT

sys.path.insert(0, str(ROOT / "hub"))
import user_start  # noqa: E402 (hub/ is not a package)

LESSON, ASSIGNMENT = "01_tensors_lesson.ipynb", "01_tensors"


def home_with(tmp_path, assignment: bool):
    home = tmp_path / "home"
    (home / "lessons").mkdir(parents=True)
    (home / "lessons" / LESSON).write_text("{}")
    if assignment:
        (home / ASSIGNMENT).mkdir()
        (home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text("{}")
    return home, home / ".jupyter" / "lab" / "workspaces"


def opened(workspaces) -> list[list[str]]:
    """The dock's tab areas, left to right, each as the notebooks it holds."""
    [path] = workspaces.glob("course-*.jupyterlab-workspace")
    dock = json.loads(path.read_text())["data"]["layout-restorer:data"]["main"]["dock"]
    areas = dock["children"] if dock["type"] == "split-area" else [dock]
    return [area["widgets"] for area in areas]


def test_lesson_left_assignment_right_written_once(tmp_path, covered):
    home, workspaces = home_with(tmp_path, assignment=True)
    user_start.start_page(home, workspaces, LESSON, ASSIGNMENT)
    assert opened(workspaces) == [[f"notebook:lessons/{LESSON}"], [f"notebook:{ASSIGNMENT}/{ASSIGNMENT}.ipynb"]]
    [path] = workspaces.glob("*")
    rearranged = path.read_text().replace(f"lessons/{LESSON}", "lessons/02_devices_lesson.ipynb")
    path.write_text(rearranged)
    user_start.start_page(home, workspaces, LESSON, ASSIGNMENT)
    assert path.read_text() == rearranged, "a later start overwrote the student's own layout"
    covered("the hub's start page: lessons/01 on the left, 01_tensors/01_tensors.ipynb on the right; kept as the "
            "student leaves it")


def test_a_page_without_its_assignment_gains_it_once_fetched(tmp_path, covered):
    home, workspaces = home_with(tmp_path, assignment=False)
    user_start.start_page(home, workspaces, LESSON, None)
    assert opened(workspaces) == [[f"notebook:lessons/{LESSON}"]]
    (home / ASSIGNMENT).mkdir()
    (home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text("{}")
    user_start.start_page(home, workspaces, LESSON, ASSIGNMENT)
    assert len(opened(workspaces)) == 2
    covered("before the release the start page is the lesson alone; it gains the assignment at the start after")


def test_nothing_released_nothing_fetched(tmp_path, capsys):
    home, _ = home_with(tmp_path, assignment=False)
    assert not user_start.fetch(ASSIGNMENT, tmp_path / "outbound", home)
    assert "not released yet" in capsys.readouterr().err
