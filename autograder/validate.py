"""The verdict nbgrader's Validate button gives, from the command line or Python.

    python -m autograder.validate NOTEBOOK [--invert]     (or ./course validate NOTEBOOK)

Loads the course's nbgrader_config.py exactly as the JupyterLab Validate button does, so
this, the button and the autograder run test cells in identically configured kernels.
Exits 1 when the notebook fails (nbgrader's own `validate` exits 0 even then)."""
import argparse
import html
import os
import re
import sys
from pathlib import Path

from nbgrader.apps import NbGrader
from nbgrader.validator import Validator

COURSE_ROOT = Path(__file__).resolve().parent.parent


def course_config(course_root: Path = COURSE_ROOT):
    """The traitlets config nbgrader would load when run from `course_root`."""
    app = NbGrader()
    app.config_file_paths.insert(0, str(course_root))
    app.load_config_file()
    return app.config


def validate(notebook, *, invert: bool = False, course_root: Path = COURSE_ROOT) -> dict:
    """nbgrader's Validator result: {} when the notebook passes (with invert: when every
    graded test fails), else a dict naming the failing cells."""
    validator = Validator(config=course_config(course_root), invert=invert)
    return validator.validate(os.fspath(notebook))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook")
    parser.add_argument("--invert", action="store_true",
                        help="pass only if every graded test fails (an untouched release)")
    args = parser.parse_args(argv)
    result = validate(args.notebook, invert=args.invert)
    if not result:
        print(f"{args.notebook}: passed" + (" (every graded test fails, as expected)" if args.invert else ""))
        return 0
    print(f"{args.notebook}: FAILED")
    for kind, cells in result.items():
        for cell in cells if isinstance(cells, list) else [cells]:
            text = cell.get("error") or cell.get("source") if isinstance(cell, dict) else str(cell)
            # nbgrader formats errors as HTML for the Validate dialog; a terminal wants text.
            print(f"--- {kind} ---\n{html.unescape(re.sub(r'<[^>]+>', '', text))}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
