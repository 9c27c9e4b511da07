"""The hub's lab settings per role (hub/install.py's roles), read in-process: the instructor's
Formgrader opens in a browser tab of its own from the Course menu, and no lab panel frames it
(each server sends frame-ancestors 'none'); a student's settings are ./course lab's own. The
click itself, in Chromium on a real hub, is in tests/hub/test_hub.py."""
import json
import sys

from coursekit import ROOT

sys.path.insert(0, str(ROOT / "hub"))
import install  # noqa: E402 (hub/ is not a package)


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
