"""Run All reaches every exercise of a release, even with some left unanswered.

An untouched stub raises NotImplementedError, and JupyterLab's Run All stops at the first
error, so the checks of every later exercise would never show. nbgrader's generate step
(nbgrader_config.py) runs this preprocessor, which tags every code cell from the first
answer cell on `raises-exception`: JupyterLab and nbclient then carry on past it, still
showing its error. The tag changes no score: grading reads a test cell's error output either
way. Cells before the first answer (the setup) stay untagged: if they fail, nothing after
them can work, and Run All should stop there."""
from nbgrader.preprocessors import NbGraderPreprocessor

TAG = "raises-exception"


def tag_cells(nb) -> None:
    answered = False
    for cell in nb.cells:
        answered = answered or cell.metadata.get("nbgrader", {}).get("solution", False)
        if answered and cell.cell_type == "code":
            tags = cell.metadata.setdefault("tags", [])
            if TAG not in tags:
                tags.append(TAG)


class LetRunAllContinue(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        tag_cells(nb)
        return nb, resources
