"""The house's layout holds: two wings (autograder/, the check library students get;
classgrader/, the instructor's grading pipeline) plus utils/, with imports that only run
down the floors, no import circle anywhere, and a test module beside every module."""
import ast
from pathlib import Path

import pytest

from coursekit import ROOT

PACKAGES = ["utils", "autograder", "classgrader"]
# Who may import whom: the widgets stand alone, the check library may use their formatting,
# the pipeline may use both. Nothing runs back up.
MAY_IMPORT = {"utils": {"utils"}, "autograder": {"utils", "autograder"},
              "classgrader": {"utils", "autograder", "classgrader"}}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            found[name] = path
    return found


def course_imports(name: str, path: Path) -> set[str]:
    """The course modules `name` imports, at any depth of its code (lazy imports count)."""
    package = name.split(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package if node.level else (node.module or "")
            if node.level and node.module:
                base = f"{package}.{node.module}"
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    known = modules()
    return {n for n in names if n in known and n != name}


def test_imports_only_run_down_the_floors(covered):
    wrong = [f"{name} imports {target}" for name, path in modules().items()
             for target in course_imports(name, path)
             if target.split(".")[0] not in MAY_IMPORT[name.split(".")[0]]]
    assert not wrong, "; ".join(wrong)
    covered(f"{len(modules())} modules: utils <- autograder <- classgrader, never back up")


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle in `graph` as the trail that closes it, or None."""
    state = {}

    def visit(node, trail):
        if state.get(node) == "open":
            return trail + [node]
        if state.get(node) == "done":
            return None
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if circle := visit(target, trail + [node]):
                return circle
        state[node] = "done"
        return None
    return next(filter(None, (visit(name, []) for name in sorted(graph))), None)


def test_no_import_circle():
    graph = {name: course_imports(name, path) - {name.split(".")[0]} for name, path in modules().items()}
    circle = find_circle(graph)
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_circle_check_sees_a_circle():
    """Not vacuous: two modules that import each other are caught."""
    circle = {"classgrader.classroom": {"classgrader.grade_worker"},
              "classgrader.grade_worker": {"classgrader.classroom"}}
    assert find_circle(circle) == ["classgrader.classroom", "classgrader.grade_worker", "classgrader.classroom"]


@pytest.mark.parametrize("name", [n for n in modules() if "." in n])
def test_every_module_has_a_test_module_beside_its_twin(name):
    package, module = name.split(".")
    assert (ROOT / "tests" / package / f"test_{module}.py").exists(), f"tests/{package}/test_{module}.py is missing"
