"""Imported once by every grading kernel (see nbgrader_config.py, Execute.extra_arguments).

nbgrader scores a test cell zero if anything appears on stderr, so a correct answer that
happens to trigger a PyTorch warning would lose its points. Sending stderr to stdout keeps
the warning visible in feedback without costing anything; only exceptions fail a cell.
The Validate button runs the same kernels, so it agrees with the autograder. In a class run
the grader also hooks its integrity audit into the kernel (classgrader/kernels/kernel_zygote.py).

Warnings are shown as "Category: message", without the file and source line Python
normally adds: raised from a hidden test, that line would show hidden-test code.
"""
import sys
import warnings

sys.stderr = sys.stdout


def _format_warning(message, category, filename, lineno, line=None):
    return f"{category.__name__}: {message}\n"


warnings.formatwarning = _format_warning
