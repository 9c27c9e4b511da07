"""What a student's feedback may show, and how it reads (both configured in nbgrader_config.py
for generate_feedback).

HideHiddenTests: nbgrader restores hidden tests at autograde and would print them, and
IPython tracebacks quote the lines around a failure; it removes both. NameQuestions: names
each answer and test cell by its exercise, as Validate does (the template in
templates/course_feedback shows the names in the contents and the headings), says "not
answered" where the stub still raised, and drops comments that say nothing."""
import importlib.util
import os
import re
import sys

from nbconvert.preprocessors import Preprocessor
from nbgrader import utils
from traitlets import Bool


def _validate():
    """autograder.validate, which needs only the standard library: loaded from its file where the
    autograder package (which imports torch, 2.5 s) is not loaded yet, as in generate_feedback."""
    if "autograder" in sys.modules:
        from autograder import validate
        return validate
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(repo, "autograder", "validate.py")
    spec = importlib.util.spec_from_file_location("_course_validate", path)
    module = sys.modules["_course_validate"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HIDDEN_BLOCK = re.compile(r"^([ \t]*)### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S | re.M)
HIDDEN_NOTE = "# (hidden tests ran here; their code is not shown)\n"


def remove_hidden_tests(source: str) -> str:
    """The cell's source with every hidden-test block replaced by a one-line note."""
    return HIDDEN_BLOCK.sub(lambda block: block.group(1) + HIDDEN_NOTE, source)


def _is_test_cell(cell) -> bool:
    """A code cell nbgrader grades that is not also an answer: what autograded tests live in."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


class HideHiddenTests(Preprocessor):
    """Strip hidden-test code from test cells and reduce their errors to the message."""

    # nbconvert registers configured preprocessors disabled; this one must always run.
    enabled = Bool(True)

    def preprocess_cell(self, cell, resources, index):
        if _is_test_cell(cell):
            cell.source = remove_hidden_tests(cell.source)
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


NOT_ANSWERED = "Not answered: the answer still raises NotImplementedError."
EMPTY_COMMENTS = {"", "No response."}  # nbgrader's automatic comment on an unchanged answer


def _raised_not_implemented(cell) -> bool:
    return any(o.output_type == "error" and o.ename == "NotImplementedError" for o in cell.get("outputs", []))


class NameQuestions(Preprocessor):
    """After GetGrades: metadata.nbgrader.exercise on answer and test cells, "not answered"
    for an exercise whose stub raised, and no empty comment."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        for name, answers, test in _validate().exercises(nb):
            unanswered = any(_raised_not_implemented(nb.cells[i]) for i in [*answers, test])
            for i in [*answers, test]:
                cell = nb.cells[i]
                cell.metadata.nbgrader["exercise"] = name
                if unanswered and cell.cell_type == "code":
                    for output in cell.get("outputs", []):
                        if output.output_type == "error":
                            output.ename, output.evalue, output.traceback = "", NOT_ANSWERED, [NOT_ANSWERED]
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if (meta.get("comment") or "").strip() in EMPTY_COMMENTS:
                meta.pop("comment", None)
        return nb, resources
