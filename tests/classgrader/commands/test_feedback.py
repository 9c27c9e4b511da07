"""Tests for classgrader/commands/feedback.py: remove_hidden_tests replaces each hidden-test block
(one or two, indented or not) with the one-line note and keeps the visible code; the
HideHiddenTests preprocessor strips hidden code from test cells (nbgrader grade=True,
solution=False) and reduces their error tracebacks to "Ename: evalue", and leaves solution
cells, non-grade cells and markdown cells untouched."""
import copy

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from classgrader.commands.feedback import HIDDEN_NOTE, HideHiddenTests, remove_hidden_tests

ONE_BLOCK = """\
check_tensor(x, expected)
### BEGIN HIDDEN TESTS
check_tensor(secret_case(), SECRET_EXPECTED)
### END HIDDEN TESTS
print("done")
"""

INDENTED = """\
for case in cases:
    check_tensor(f(case), g(case))
    ### BEGIN HIDDEN TESTS
    pitfall_if(len(f(case)) == 3, "len-as-numel")
    ### END HIDDEN TESTS
print("done")
"""

TWO_BLOCKS = """\
visible_one()
### BEGIN HIDDEN TESTS
hidden_one()
### END HIDDEN TESTS
visible_two()
    ### BEGIN HIDDEN TESTS
    hidden_two()
    ### END HIDDEN TESTS
visible_three()
"""


def test_note_is_one_comment_line():
    assert HIDDEN_NOTE.startswith("# ") and HIDDEN_NOTE.endswith("\n")
    assert HIDDEN_NOTE.count("\n") == 1


def test_one_block():
    assert remove_hidden_tests(ONE_BLOCK) == (
        'check_tensor(x, expected)\n' + HIDDEN_NOTE + 'print("done")\n')


def test_indented_block_hides_code_and_keeps_visible_lines():
    out = remove_hidden_tests(INDENTED)
    assert "pitfall_if" not in out and "HIDDEN TESTS" not in out
    assert out.count(HIDDEN_NOTE.strip()) == 1
    lines = out.splitlines()
    assert lines[0] == "for case in cases:"
    assert lines[1] == "    check_tensor(f(case), g(case))"
    assert lines[2].strip() == HIDDEN_NOTE.strip()
    assert lines[3] == 'print("done")'
    assert len(lines) == 4
    compile(out, "<feedback>", "exec")  # what the student sees is still valid Python


def test_indented_block_note_keeps_the_indentation():
    assert remove_hidden_tests(INDENTED) == (
        "for case in cases:\n"
        "    check_tensor(f(case), g(case))\n"
        "    " + HIDDEN_NOTE +
        'print("done")\n')


def test_each_block_keeps_its_own_indentation():
    assert remove_hidden_tests(TWO_BLOCKS) == (
        "visible_one()\n" + HIDDEN_NOTE + "visible_two()\n" + "    " + HIDDEN_NOTE
        + "visible_three()\n")


def test_two_blocks_each_replaced_and_code_between_kept():
    out = remove_hidden_tests(TWO_BLOCKS)
    assert "hidden_one" not in out and "hidden_two" not in out and "HIDDEN TESTS" not in out
    assert out.count(HIDDEN_NOTE.strip()) == 2
    assert [line.strip() for line in out.splitlines()] == [
        "visible_one()", HIDDEN_NOTE.strip(), "visible_two()", HIDDEN_NOTE.strip(),
        "visible_three()"]


def test_block_at_end_without_newline():
    out = remove_hidden_tests("a = 1\n### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS")
    assert out.startswith("a = 1\n" + HIDDEN_NOTE.strip())
    assert "b = 2" not in out


def test_source_without_hidden_tests_is_unchanged():
    source = "check_tensor(x, expected)\n# ### BEGIN is only mentioned here\n"
    assert remove_hidden_tests(source) == source


# --- HideHiddenTests -----------------------------------------------------------------------

TRACEBACK = [
    "\x1b[0;31m---------------------------------------------------------------\x1b[0m",
    "\x1b[0;31mGradingError\x1b[0m  Traceback (most recent call last)",
    "Cell \x1b[0;32mIn[3], line 3\x1b[0m\n      1 check_tensor(x, expected)\n"
    "      2 ### BEGIN HIDDEN TESTS\n----> 3 check_tensor(secret_case(), SECRET_EXPECTED)",
    "\x1b[0;31mGradingError\x1b[0m: x: wrong shape. Expected (2, 4), got (3, 4).",
]


def make_cell(nbgrader, *, kind="code"):
    if kind == "markdown":
        cell = new_markdown_cell(ONE_BLOCK)
    else:
        cell = new_code_cell(ONE_BLOCK, outputs=[
            new_output("stream", name="stdout", text="Graded on: cpu (no accelerator found)\n"),
            new_output("error", ename="GradingError",
                       evalue="x: wrong shape. Expected (2, 4), got (3, 4).",
                       traceback=list(TRACEBACK)),
        ])
    if nbgrader is not None:
        cell.metadata["nbgrader"] = nbgrader
    return cell


TEST_CELL = {"grade": True, "solution": False, "locked": True, "grade_id": "test-shape",
             "points": 2, "schema_version": 3}


def test_test_cell_is_stripped_and_error_reduced():
    cell = make_cell(dict(TEST_CELL))
    out, resources = HideHiddenTests().preprocess_cell(cell, {"keep": 1}, 0)
    assert resources == {"keep": 1}
    assert "secret_case" not in out.source and HIDDEN_NOTE.strip() in out.source
    assert "check_tensor(x, expected)" in out.source
    error = next(o for o in out.outputs if o.output_type == "error")
    assert error.traceback == ["GradingError: x: wrong shape. Expected (2, 4), got (3, 4)."]
    assert error.ename == "GradingError"
    stream = next(o for o in out.outputs if o.output_type == "stream")
    assert stream.text == "Graded on: cpu (no accelerator found)\n"
    nbformat.validate(new_notebook(cells=[out]))


def test_test_cell_without_outputs():
    cell = make_cell(dict(TEST_CELL))
    cell.outputs = []
    out, _ = HideHiddenTests().preprocess_cell(cell, {}, 0)
    assert "secret_case" not in out.source


@pytest.mark.parametrize("nbgrader", [
    None,
    {"grade": False, "solution": True, "locked": False, "grade_id": "answer", "schema_version": 3},
    {"grade": True, "solution": True, "locked": False, "grade_id": "graded-answer",
     "points": 1, "schema_version": 3},
    {"grade": False, "solution": False, "locked": True, "grade_id": "setup", "schema_version": 3},
    {},
], ids=["no-nbgrader", "solution", "graded-solution", "read-only", "empty-nbgrader"])
def test_other_code_cells_untouched(nbgrader):
    cell = make_cell(nbgrader)
    before = copy.deepcopy(cell)
    out, _ = HideHiddenTests().preprocess_cell(cell, {}, 0)
    assert out == before


def test_graded_markdown_cell_untouched():
    cell = make_cell({"grade": True, "solution": False, "grade_id": "written", "points": 1,
                      "schema_version": 3}, kind="markdown")
    before = copy.deepcopy(cell)
    out, _ = HideHiddenTests().preprocess_cell(cell, {}, 0)
    assert out == before


def test_preprocess_whole_notebook():
    nb = new_notebook(cells=[make_cell(None), make_cell(dict(TEST_CELL))])
    nb, _ = HideHiddenTests().preprocess(nb, {})
    assert "secret_case" in nb.cells[0].source
    assert nb.cells[0].outputs[1].traceback == TRACEBACK
    assert "secret_case" not in nb.cells[1].source
    assert len(nb.cells[1].outputs[1].traceback) == 1


def test_enabled_by_default_and_runs_when_called_as_nbconvert_does():
    # nbconvert registers configured preprocessors with enabled=False unless they say
    # otherwise; called through __call__, a disabled one would silently do nothing.
    preprocessor = HideHiddenTests()
    assert preprocessor.enabled is True
    nb = new_notebook(cells=[make_cell(dict(TEST_CELL))])
    nb, _ = preprocessor(nb, {})
    assert "secret_case" not in nb.cells[0].source


# --- NameQuestions -------------------------------------------------------------------------

from classgrader.commands.feedback import NOT_ANSWERED, NameQuestions  # noqa: E402


def graded_notebook(*, answered: bool, comment: str):
    error = (new_output("error", ename="NotImplementedError", evalue="", traceback=["NotImplementedError: "])
             if not answered else new_output("error", ename="GradingError", evalue="x: wrong shape.",
                                             traceback=["GradingError: x: wrong shape."]))
    answer = new_code_cell("def f(): ...", metadata={"nbgrader": {
        "solution": True, "grade": False, "grade_id": "q1_answer", "comment": comment}})
    test = new_code_cell("check(f())", outputs=[error], metadata={"nbgrader": dict(TEST_CELL, grade_id="q1_tests")})
    return new_notebook(cells=[new_markdown_cell("## Q1 · Shapes (2 points)\n\ntext"), answer, test])


def test_names_each_question_on_its_answer_and_test_cells():
    nb, _ = NameQuestions().preprocess(graded_notebook(answered=True, comment="Good."), {})
    assert [c.metadata.get("nbgrader", {}).get("exercise") for c in nb.cells] == [None, "Q1 · Shapes", "Q1 · Shapes"]
    assert nb.cells[1].metadata.nbgrader.comment == "Good."  # a grader's comment stays
    assert nb.cells[2].outputs[0].traceback == ["GradingError: x: wrong shape."]  # a real failure stays


def test_unanswered_says_not_answered_and_drops_the_automatic_comment():
    nb, _ = NameQuestions().preprocess(graded_notebook(answered=False, comment="No response."), {})
    assert nb.cells[2].outputs[0].traceback == [NOT_ANSWERED]
    assert "comment" not in nb.cells[1].metadata.nbgrader
    nbformat.validate(nb)


@pytest.mark.parametrize("comment", ["", "  ", None])
def test_empty_comments_are_left_out(comment):
    nb, _ = NameQuestions().preprocess(graded_notebook(answered=True, comment=comment), {})
    assert "comment" not in nb.cells[1].metadata.nbgrader
