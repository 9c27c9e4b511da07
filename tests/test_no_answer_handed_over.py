"""Nothing a student can read in a release notebook answers an exercise.

Every function, class and lambda the release shows (setup and read-only cells, Try-its, the
visible part of test cells, code in the task's text, nested definitions included, whatever
their names) is put in place of each name an answer cell defines, and the exercise's test
cells, hidden parts included, must then fail. The source notebook runs in-process: its setup
cells and reference answers once per assignment, then, per candidate, the candidate under the
answer's name and the exercise's test cells, in a copy of that namespace."""
import ast
import contextlib
import io
import re
import sys
import tempfile
import types
import warnings

import pytest

from coursekit import ASSIGNMENTS, ROOT, nbgrader_meta, read_notebook, source_text
from mutation import exercise_of, notebook_cells

FENCE = re.compile(r"```python\n(.*?)```", re.S)


SOLUTION_BLOCK = re.compile(r"### BEGIN SOLUTION\n.*?### END SOLUTION", re.S)


def answer_names(source_cell_text: str) -> list[str]:
    """The names an answer cell's top level defines with code the student writes: definitions
    that reach into its solution block (given helpers around it are not the answer)."""
    lines = source_cell_text.splitlines()
    block = SOLUTION_BLOCK.search(source_cell_text)
    first = source_cell_text[:block.start()].count("\n") + 1
    last = source_cell_text[:block.end()].count("\n") + 1
    names = []
    for node in ast.parse("\n".join(lines)).body:
        if node.lineno <= last and node.end_lineno >= first:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(node.name)
            elif isinstance(node, ast.Assign):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def readable_definitions(assignment: str) -> list[tuple[str, ast.AST]]:
    """(where, node) for every def, class and lambda the release notebook shows outside its answer cells."""
    nb = read_notebook(ROOT / "release" / assignment / f"{assignment}.ipynb")
    found = []
    for index, cell in enumerate(nb["cells"]):
        if nbgrader_meta(cell).get("solution"):
            continue
        text = source_text(cell)
        pieces = [text] if cell["cell_type"] == "code" else FENCE.findall(text)
        for piece in pieces:
            try:
                tree = ast.parse(piece)
            except SyntaxError:  # a fragment in the task's prose, or IPython syntax
                continue
            found.extend((f"cell {index}", node) for node in ast.walk(tree)
                         if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))
    return found


def as_answer(node: ast.AST, name: str) -> str:
    """The definition's code, bound to the answer's name."""
    if isinstance(node, ast.Lambda):
        return f"{name} = {ast.unparse(node)}\n"
    node = ast.parse(ast.unparse(node)).body[0]  # a copy, so renaming leaves the tree alone
    node.name = name
    return ast.unparse(node) + "\n"


def quiet_exec(code: str, namespace: dict, label: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, label, "exec"), namespace)


def graded_with(assignment: str, cells: list[dict], answer_id: str, substitute: str | None, tests: list[dict]) -> bool:
    """Whether the exercise's test cells pass in a fresh kernel-like namespace (a __main__
    module, as pickling a notebook's classes needs) where every setup cell and reference answer
    has run, `substitute` right after the answer cell `answer_id`."""
    main = types.ModuleType("__main__")
    namespace, kept = main.__dict__, sys.modules["__main__"]
    sys.modules["__main__"] = main
    try:
        for cell in cells:
            if cell["kind"] == "test":
                continue
            quiet_exec(cell["code"], namespace, cell["grade_id"])
            if cell["grade_id"] == answer_id and substitute is not None:
                try:
                    quiet_exec(substitute, namespace, f"in place of {answer_id}")
                except Exception:
                    return False
        for cell in tests:
            quiet_exec(cell["code"], namespace, cell["grade_id"])
    except Exception:
        return False
    finally:
        sys.modules["__main__"] = kept
    return True


@pytest.fixture(scope="module", autouse=True)
def scratch_in_the_tests_folder(tmp_path_factory):
    """The folders the notebooks' own code makes (a checkpoint's) in pytest's temporary folder,
    which it clears, not in the machine's /tmp."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("scratch")))
        yield


@pytest.fixture(scope="module")
def torch_quiet():
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small tensors: threads only cost
    yield
    torch.set_num_threads(threads)


def exercise_tests(cells: list[dict], answer_id: str) -> list[dict]:
    exercise = exercise_of(answer_id)
    return [c for c in cells if c["kind"] == "test" and exercise_of(c["grade_id"]) == exercise]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_readable_definition_passes_an_exercise(assignment, torch_quiet, covered):
    cells = notebook_cells(assignment)
    sources = {nbgrader_meta(c).get("grade_id"): source_text(c)
               for c in read_notebook(ROOT / "source" / assignment / f"{assignment}.ipynb")["cells"]}
    candidates = readable_definitions(assignment)
    answers = [c["grade_id"] for c in cells if c["kind"] == "answer" and not c["grade_id"].startswith("quiz")]
    passing, tried = [], 0
    for answer_id in answers:
        tests = exercise_tests(cells, answer_id)
        assert tests, f"{assignment} {answer_id}: no test cell found"
        assert graded_with(assignment, cells, answer_id, None, tests), (
            f"{assignment} {answer_id}: the reference answer fails its own tests")
        for name in answer_names(sources[answer_id]):
            for where, node in candidates:
                tried += 1
                if graded_with(assignment, cells, answer_id, as_answer(node, name), tests):
                    passing.append(f"{getattr(node, 'name', 'a lambda')} ({where}) as {name}")
    assert not passing, f"{assignment}: readable definitions that pass an exercise: {passing}"
    covered(f"{assignment}: {tried} readable definitions tried as answers, none passes")


def test_the_check_finds_a_definition_that_answers():
    """Guards the test above: a reference answer shown in the release would be found, a wrong one not."""
    cells = notebook_cells("03_broadcasting_views")
    tests = exercise_tests(cells, "q4_flat_copy_answer")
    shown = ast.parse("def reference_flat_copy(t):\n    return t.reshape(-1).clone()\n").body[0]
    assert graded_with("03_broadcasting_views", cells, "q4_flat_copy_answer", as_answer(shown, "flat_copy"), tests)
    wrong = ast.parse("lambda t: t.reshape(-1)").body[0].value
    assert not graded_with("03_broadcasting_views", cells, "q4_flat_copy_answer", as_answer(wrong, "flat_copy"), tests)
