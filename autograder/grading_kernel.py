"""Imported once by every grading kernel (see nbgrader_config.py, Execute.extra_arguments).

nbgrader scores a test cell zero if anything appears on stderr, so a correct answer that
happens to trigger a PyTorch warning would lose its points. Sending stderr to stdout keeps
the warning visible in feedback without costing anything; only exceptions fail a cell.
The Validate button runs the same kernels, so it agrees with the autograder.

Warnings are shown as "Category: message", without the file and source line Python
normally adds: raised from a hidden test, that line would show hidden-test code.
"""
import os
import sys
import warnings

sys.stderr = sys.stdout


def _format_warning(message, category, filename, lineno, line=None):
    return f"{category.__name__}: {message}\n"


warnings.formatwarning = _format_warning

# In a grading kernel (the grader sets COURSE_TRACE_DIR), every cell ends with an integrity
# audit and its checks' records written out (autograder/integrity.py).
if os.environ.get("COURSE_TRACE_DIR"):
    from IPython import get_ipython

    from autograder import integrity
    get_ipython().events.register("post_run_cell", integrity.after_cell)
