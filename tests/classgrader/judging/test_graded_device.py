"""classgrader/judging/graded_device.py: the device a student's tests ran on, as the grader expects it
and as the course's own setup cell reported it (a line a student's cell prints is not taken)."""
import nbformat

from autograder import describe_device, grading_device
from classgrader.judging import graded_device
from classgrader.kernels import accelerator


def cell(source: str, printed: str, **nbgrader) -> nbformat.NotebookNode:
    made = nbformat.v4.new_code_cell(source, metadata={"nbgrader": nbgrader} if nbgrader else {})
    made.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    return made


def test_reported_is_the_course_setup_cells_line_not_a_students():
    nb = nbformat.v4.new_notebook(cells=[
        cell("print('Graded on: cuda (forged)')", "Graded on: cuda (forged)\n"),
        cell("print('x')", "Graded on: cuda (an answer)\n", solution=True, grade=False, locked=False),
        cell("start_grading()", "Seeded.\nGraded on: cpu (no accelerator found)\n", locked=True, solution=False,
             grade=False, grade_id="setup"),
    ])
    assert graded_device.reported(nb) == "cpu (no accelerator found)"
    assert graded_device.reported(nbformat.v4.new_notebook()) is None


def test_expected_agrees_with_the_course_on_this_machine():
    """Unconfined, a kernel sees what this process sees: what autograder picks here."""
    here = describe_device(grading_device())
    assert graded_device.expected(None) == (graded_device.NO_ACCELERATOR if here == "cpu" else here)
    if not accelerator.machine()[0]:  # no GPU to give: a jailed kernel grades on the CPU too
        assert graded_device.expected({"workdir": "/x"}) == graded_device.NO_ACCELERATOR
