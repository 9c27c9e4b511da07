"""isolated_execute: the kernel works in a work area of its own, never nbgrader's folder; the grader's
own run of the solution decides which tests it judges itself, and a test it could not establish fails
closed."""
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from traitlets.config import Config

from classgrader.judging import isolated_execute
from classgrader.judging.source_plan import SourcePlan
from classgrader.kernels import sandbox
from coursekit import ROOT

PLANT = """
import os
os.symlink({target!r}, "graded.ipynb")  # where nbgrader once wrote the graded notebook, as root
for place in [{folder!r}, os.path.join({folder!r}, "planted.txt")]:
    try:
        open(place, "w").write("from the kernel")
    except OSError as error:
        print(type(error).__name__)
"""


@pytest.mark.skipif(sandbox.unavailable_reason() is not None, reason="needs a sandbox (root on Linux)")
def test_root_never_writes_where_the_kernel_could(tmp_path, covered):
    """The route: a folder the kernel owns, a link it plants there, root writing by name."""
    target = tmp_path / "precious.txt"
    target.write_text("untouched")
    uid = int(sandbox.private_user()[1:])
    route = Path(tempfile.mkdtemp(dir="/var/tmp"))  # pytest's tmp_path is closed to other users
    route.chmod(0o755)
    owned = route / "kernel-owned"
    owned.mkdir()
    os.chown(owned, uid, uid)
    child = os.fork()
    if child == 0:
        try:
            os.setgid(uid), os.setuid(uid)
            os.symlink(target, owned / "graded.ipynb")
        finally:
            os._exit(0)  # never back into the test runner as that uid
    os.waitpid(child, 0)
    with open(owned / "graded.ipynb", "w") as handle:  # what nbgrader's writer does
        handle.write("graded notebook")
    shutil.rmtree(route)
    assert target.read_text() == "graded notebook"  # root wrote through the kernel's link
    target.write_text("untouched")

    # The defence: the kernel works in a work area of its own, never in nbgrader's folder.
    import nbformat
    folder = tmp_path / "autograded"
    folder.mkdir()
    (folder / "data.csv").write_text("a,b\n")
    planting = nbformat.v4.new_code_cell(PLANT.format(target=str(target), folder=str(folder)))
    nb = nbformat.v4.new_notebook(cells=[planting])
    execute = isolated_execute.IsolatedExecute(config=Config())
    execute.preprocess(nb, {"metadata": {"path": str(folder)}})
    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert printed.split() == ["FileNotFoundError", "FileNotFoundError"], nb.cells[0].outputs
    assert sorted(p.name for p in folder.iterdir()) == ["data.csv"]
    assert all(p.stat().st_uid == 0 for p in [folder, *folder.iterdir()])
    (folder / "graded.ipynb").write_text("graded notebook")  # nbgrader's write, after grading
    assert target.read_text() == "untouched" and not (folder / "graded.ipynb").is_symlink()
    covered("root writing by name into a kernel-owned folder follows a planted link; the kernel's "
            "work area is its own, and nbgrader's folder is never seen by it")


def _plan_for(assignment: str) -> SourcePlan:
    import nbformat
    path = ROOT / "source" / assignment / f"{assignment}.ipynb"
    data = path.read_bytes()
    plan = SourcePlan(nbformat.reads(data.decode("utf-8"), as_version=4))
    plan.key, plan.path, plan.data = (str(path), hash(data)), str(path), data
    return plan


def test_the_graders_own_runs_decide_which_tests_it_judges_itself(covered):
    """Tests that only look at values are judged in the grader (judge.py); those that look at
    storage or the graph, or fail for the solution when judged outside, stay in the kernel."""
    config = Config()
    config.IsolatedExecute.use_sandbox = sandbox.unavailable_reason() is None
    outside, observed, shadows, incomplete = isolated_execute.IsolatedExecute(config=config)._reference(
        _plan_for("03_broadcasting_views"))
    assert incomplete == {}, "the grader's own run of the solution established every test"
    assert {"quiz_q1_tests", "quiz_q2_tests", "quiz_q3_tests"} <= outside
    # It watches what the student's function asks of PyTorch while it runs: only the kernel sees that.
    assert "q1_broadcast_shape_tests" in observed and "q1_broadcast_shape_tests" in shadows
    assert "q4_flat_copy_tests" not in outside and "q4_flat_copy_tests" in observed  # it looks at data_ptr
    # The solution fails it outside (a view read as another dtype does not cross as the same memory):
    # the grader's own run sends it into the kernel, where its records are re-checked and it is shadowed.
    assert "q3_shares_storage_tests" in observed and "q3_shares_storage_tests" in shadows
    assert not outside & set(observed), "a test judged in both places"
    # Each test left in the kernel is paired with the value checks the grader can make itself.
    assert set(shadows) <= set(observed) and {"q2_mse_loss_safe_tests", "q4_flat_copy_tests"} <= set(shadows)
    passed, _ = shadows["q4_flat_copy_tests"]
    assert len(passed) >= 10 and all(kind in ("tensor", "value", "pitfall", "keys") for kind, _ in passed)
    covered(f"03: {len(outside)} tests judged by the grader, {len(observed)} in the kernel, "
            f"{len(shadows)} of them shadowed by the grader's own value checks")


def test_a_test_the_graders_own_run_could_not_establish_fails_closed():
    """However fast or slow the machine: a test whose reference the grader's own run of the
    solution could not complete (a timeout, a crash) earns nothing on the kernel's word alone,
    and says so for review; one whose reference is complete is judged on its records."""
    from nbformat.notebooknode import NotebookNode

    from classgrader.judging.reference_run import Reference
    grader = isolated_execute.IsolatedExecute(config=Config())
    grader.flags, grader.plan = [], None
    record = {"kind": "value", "name": "x", "got": {"plain": 1}, "expected": {"plain": 1}, "options": {}}
    for incomplete, records in (({"t": "the solution's shadow ended with TimeoutError: slow"}, {"t": [record]}),
                                ({}, {})):
        grader.reference = Reference(outside=set(), records=records, shadows={}, incomplete=incomplete)
        cell = NotebookNode(outputs=[])
        grader._judge(cell, "t", [record])
        assert [o.ename for o in cell.outputs] == ["UnverifiedResult"]
        assert "could not establish this test" in grader.flags[-1][1]
    grader.reference = Reference(outside=set(), records={"t": [record]}, shadows={}, incomplete={})
    cell = NotebookNode(outputs=[])
    grader._judge(cell, "t", [record])
    assert cell.outputs == []
