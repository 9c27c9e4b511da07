"""What a student's feedback may show: nbgrader restores hidden tests at autograde and
would print them, and IPython tracebacks quote the lines around a failure. This
preprocessor (configured in nbgrader_config.py for generate_feedback) removes both."""
import re

from nbconvert.preprocessors import Preprocessor
from nbgrader import utils
from traitlets import Bool

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
