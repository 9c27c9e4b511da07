"""nbgrader's submit, saying only what it sends: `./course submit ID` runs this.

    python -P autograder/submit.py ID [NBGRADER-SUBMIT-ARGS...]

nbgrader 0.9.6 copies a submission without what CourseDirectory.ignore names (JupyterLab's
.ipynb_checkpoints among them), but compares every notebook under the folder, ignored ones too,
with the release: each checkpoint is reported as "EXTRA", though it was never sent. Here the
comparison leaves out what the copy leaves out; everything else is nbgrader's own submit.

Run as a file: importing the autograder package would import torch, which submitting never needs.
"""
import os
import sys

from nbgrader.apps.submitapp import SubmitApp
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import find_all_files
from traitlets.config import Config


def sent_notebooks(folder: str, ignore: list[str]) -> list[str]:
    """The notebooks under `folder` that a submission copies, relative to it."""
    root = os.path.abspath(folder)
    return sorted(os.path.relpath(path, root) for path in find_all_files(root, ignore) if path.endswith(".ipynb"))


class SubmitWhatIsSent(ExchangeSubmit):
    def check_filename_diff(self):
        released = sent_notebooks(self.release_path, self.coursedir.ignore)
        sent = sent_notebooks(self.src_path, self.coursedir.ignore)
        missing, extra = sorted(set(released) - set(sent)), sorted(set(sent) - set(released))
        if not (missing or extra):
            return
        said = f"expected {', '.join(released)}; sent {', '.join(sent) or 'no notebook'}" + "".join(
            f"; {what}: {', '.join(names)}" for what, names in (("missing", missing), ("extra", extra)) if names)
        if missing and self.strict:
            self.fail(f"Assignment {self.coursedir.assignment_id} not submitted: {said}")
        self.log.warning(f"Possible missing or extra notebooks in {self.coursedir.assignment_id}: {said}")


def main(argv: list[str]) -> None:
    config = Config()
    config.ExchangeFactory.submit = SubmitWhatIsSent
    SubmitApp.launch_instance(argv=argv, config=config)


if __name__ == "__main__":
    main(sys.argv[1:])
