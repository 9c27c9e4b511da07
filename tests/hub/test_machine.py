"""hub/machine.py: what install.py and remove.py share, so neither imports the other, and each
loads without the other (./course loads install.py by path to check the hub's arguments)."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit import ROOT

sys.path.insert(0, str(ROOT / "hub"))
import machine

HUB = ROOT / "hub"


def imports_of(path: Path) -> set[str]:
    """The hub's own modules a file imports, anywhere in it (at the top or inside a function)."""
    ours = {p.stem for p in HUB.glob("*.py")}
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names & ours


def test_no_module_of_the_hub_is_in_an_import_circle():
    graph = {p.stem: imports_of(p) for p in HUB.glob("*.py")}

    def reaches(start, goal, seen=()):
        return any(n == goal or (n not in seen and reaches(n, goal, (*seen, n))) for n in graph.get(start, ()))
    circles = sorted(name for name in graph if reaches(name, name))
    assert circles == [], f"in an import circle: {circles} ({graph})"
    assert graph["remove"] == {"machine"} and "machine" in graph["install"] and graph["machine"] == set()


def test_remove_loads_without_install():
    probe = (f"import sys; sys.path.insert(0, {str(HUB)!r}); import remove; "
             "print(sorted(m for m in ('install', 'machine') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["['machine']"]


def test_a_failure_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        machine.fail("no class at /srv/x")
    assert stop.value.code == 2
    assert capsys.readouterr().err == "course hub: no class at /srv/x\n"


def test_a_failed_command_says_what_failed(capsys):
    with pytest.raises(SystemExit) as stop:
        machine.run(sys.executable, "-c", "import sys; sys.exit('broken pipe dream')")
    assert stop.value.code == 2
    said = capsys.readouterr().err
    assert said.startswith("course hub: ") and said.rstrip().endswith("failed: broken pipe dream")


def test_each_class_has_its_own_sudo_rule():
    assert machine.sudoers_file(Path("/srv/pytorch-course")) == Path("/etc/sudoers.d/course-hub-pytorch-course")
    assert machine.sudoers_file(Path("/srv/a.b c")).name == "course-hub-a_b_c"  # sudo skips names with a dot
