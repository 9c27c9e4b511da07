"""The house's layout holds: two wings (autograder/, the check library students get;
classgrader/, the instructor's grading pipeline) plus utils/, with imports that only run
down the floors, no import circle anywhere, and a test module beside every module. Inside
classgrader/, the code a student's kernel runs (in_kernel/) imports none of the rest."""
import ast
from pathlib import Path

import pytest

from coursekit import ROOT

PACKAGES = ["utils", "autograder", "classgrader"]
# Who may import whom: the widgets stand alone, the check library may use their formatting,
# the pipeline may use both. Nothing runs back up.
MAY_IMPORT = {"utils": {"utils"}, "autograder": {"utils", "autograder"},
              "classgrader": {"utils", "autograder", "classgrader", "classgrader.in_kernel"},
              # The sandbox shows a kernel this sub-package alone (tests/classgrader/kernels/test_sandbox.py).
              "classgrader.in_kernel": {"utils", "autograder", "classgrader.in_kernel"}}


def modules() -> dict[str, Path]:
    """Every module of the three packages, sub-packages included, by its dotted name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = [package, *path.relative_to(ROOT / package).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def floor(name: str) -> str:
    """The entry of MAY_IMPORT a module or an imported name belongs to."""
    return "classgrader.in_kernel" if name.startswith("classgrader.in_kernel") else name.split(".")[0]


def course_imports(name: str, path: Path) -> set[str]:
    """The course modules `name` imports, at any depth of its code (lazy imports count)."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1],
                                 *([node.module] if node.module else [])])
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    known = modules()
    return {n for n in names if n in known and n != name}


def test_imports_only_run_down_the_floors(covered):
    wrong = [f"{name} imports {target}" for name, path in modules().items()
             for target in course_imports(name, path)
             if floor(target) not in MAY_IMPORT[floor(name)] and not name.startswith(target + ".")]
    assert not wrong, "; ".join(wrong)
    covered(f"{len(modules())} modules: utils <- autograder <- classgrader, never back up; "
            "classgrader.in_kernel imports none of the rest of classgrader")


def test_the_floor_check_sees_a_kernel_module_reaching_the_grader():
    """Not vacuous: a kernel-side module importing the judge is a wrong floor."""
    assert "classgrader.judging" not in MAY_IMPORT[floor("classgrader.in_kernel.answer_server")]
    assert floor("classgrader.judging.judge") == "classgrader"


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle in `graph` as the trail that closes it, or None."""
    state = {}

    def visit(node, trail):
        if state.get(node) == "open":
            return [*trail, node]
        if state.get(node) == "done":
            return None
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if circle := visit(target, [*trail, node]):
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
    circle = {"classgrader.class_run.classroom": {"classgrader.class_run.grade_worker"},
              "classgrader.class_run.grade_worker": {"classgrader.class_run.classroom"}}
    assert find_circle(circle) == ["classgrader.class_run.classroom", "classgrader.class_run.grade_worker",
                                   "classgrader.class_run.classroom"]


@pytest.mark.parametrize("name", [n for n, path in modules().items() if "." in n and path.stem != "__init__"])
def test_every_module_has_a_test_module_beside_its_twin(name):
    *folders, module = name.split(".")
    twin = Path("tests", *folders, f"test_{module}.py")
    assert (ROOT / twin).exists(), f"{twin} is missing"
