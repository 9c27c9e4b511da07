"""What a student's JupyterLab does, against a real server started the way ./course lab
starts it: the page loads the nbgrader and widgets extensions, and the Validate button's
endpoint gives the verdict the autograder's visible tests give."""
import json
import re
import urllib.request

import pytest

from coursekit import LAB_TOKEN as TOKEN, ROOT, build_submission, read_notebook, running_lab, write_notebook
from scenarios import unit01

# Scenarios whose mistakes the visible tests catch, so Validate, which runs only those,
# must agree with the autograder: pass exactly when the scenario loses nothing.
# ("warns" prints to stderr: stock nbgrader's Validate would fail it.)
STUDENTS = ["solution", "alternative_a", "alternative_b", "warns", "untouched", "len_as_numel",
            "size_not_called"]
SCENARIOS = {s.student: s for s in unit01.SCENARIOS if s.student in STUDENTS}


def request(url, data=None, timeout=120):
    req = urllib.request.Request(url, data=data, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(req, timeout=timeout) as response:
        return response.read().decode()


@pytest.fixture(scope="module")
def lab(course):
    """JupyterLab on loopback with a token, in a course folder holding student notebooks."""
    source = read_notebook(ROOT / "source" / unit01.ASSIGNMENT / unit01.NOTEBOOK)
    release = read_notebook(course / "release" / unit01.ASSIGNMENT / unit01.NOTEBOOK)
    for scenario in SCENARIOS.values():
        write_notebook(build_submission(source, release, scenario.answers),
                       course / "students" / f"{scenario.student}.ipynb")
    with running_lab(course) as base:
        yield base


def test_lab_page_loads_the_nbgrader_and_widget_extensions(lab, covered):
    page = request(f"{lab}/lab")
    config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                  page, re.S).group(1))
    names = {ext["name"] for ext in config["federated_extensions"]}
    assert "@jupyter/nbgrader" in names, f"nbgrader's lab extension is not served: {sorted(names)}"
    assert "@jupyter-widgets/jupyterlab-manager" in names, "the widgets extension is not served"
    covered(f"JupyterLab serves {len(names)} extensions, nbgrader and widgets among them")


@pytest.mark.parametrize("student", STUDENTS)
def test_validate_button_gives_the_autograders_verdict(lab, student, covered):
    reply = json.loads(request(f"{lab}/assignments/validate",
                               data=f"path=students/{student}.ipynb".encode()))
    assert reply["success"], f"the Validate handler itself failed: {reply['value']}"
    passed = reply["value"] == {}
    full_marks = not SCENARIOS[student].loses
    assert passed == full_marks, f"Validate on {student}: {reply['value']}"
    covered(f"Validate on {student}: {'passes' if passed else 'fails'}; the autograder gives "
            f"{'full marks' if full_marks else 'less than full marks'}")
