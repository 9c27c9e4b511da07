"""Check a student command's arguments before anything heavy loads (torch, nbgrader: seconds).

    python -P autograder/arguments.py COMMAND [ARGS...]     (classgrader/cli.py loads it by path)

Exits 0 when the arguments are fine; otherwise prints one line saying what is wrong and what
to do, and exits 2, having changed nothing. Standard library only, and run as a file, not as
`autograder.arguments`: importing the package would import torch. The instructor's commands
are checked by classgrader/arguments.py, which reuses the helpers here.
"""
import difflib
import json
import os
import sys

# Where things live, as nbgrader_config.py sets them (tests/test_arguments.py keeps them equal).
WORK = "work"                       # a student's own copies: work/ID/
RELEASE = "release"
EXCHANGE = os.path.join("runtime", "exchange")
EXAMPLE = "work/01_tensors/01_tensors.ipynb"
LESSONS = "lessons"                 # work/lessons/: the student's copies of the lessons, not an assignment


class BadArguments(Exception):
    """One line for the person at the terminal: what is wrong, then what to do."""


def folders(path: str) -> list[str]:
    return sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d))
                  and not d.startswith(".")) if os.path.isdir(path) else []


def check_assignment(command: str, args: list[str], known: list[str]) -> str:
    """The one assignment id in `args`, known to the course, else BadArguments naming close matches."""
    listed = ", ".join(known) or "none yet"
    if not args or args[0].startswith("-"):
        raise BadArguments(f"{command} needs an assignment id, e.g. ./course {command} "
                           f"{known[0] if known else 'ID'} (assignments: {listed})")
    wanted = args[0]
    if wanted in known:
        return wanted
    close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else f"the assignments are: {listed}"
    raise BadArguments(f"no assignment '{wanted}'; {hint}")


def notebook_problem(path: str) -> str | None:
    """Why `path` is not a readable notebook, in a few words, or None if it is one."""
    if not os.path.exists(path):
        return f"{path} does not exist"
    if os.path.isdir(path) or not path.endswith(".ipynb"):
        return f"{path} is not a notebook (.ipynb file)"
    try:
        with open(path, encoding="utf-8") as handle:
            nb = json.load(handle)
    except UnicodeDecodeError:
        return f"{path} is not a readable notebook (not UTF-8 text)"
    except json.JSONDecodeError as error:
        return f"{path} is not a readable notebook (broken JSON at line {error.lineno}, column {error.colno})"
    # Not the full schema (that is nbformat's, seconds to import): enough to tell a notebook.
    if not (isinstance(nb, dict) and isinstance(nb.get("cells"), list) and nb.get("nbformat") == 4):
        return f"{path} is not a readable notebook (no nbformat 4 cells)"
    return None


def check_validate(args: list[str]) -> None:
    paths = [a for a in args if not a.startswith("-")]
    if len(paths) != 1:
        raise BadArguments(f"validate needs one notebook, e.g. ./course validate {EXAMPLE}")
    problem = notebook_problem(paths[0])
    if problem:
        what_to_do = ("give the path of a notebook, e.g. " + EXAMPLE if "readable" not in problem
                      else "open it in JupyterLab and use File > Revert Notebook to Checkpoint, or fetch a fresh copy")
        raise BadArguments(f"{problem}; {what_to_do}")


def student_assignments() -> list[str]:
    """What a student can name: what the course ships, what the exchange offers, what they have."""
    own = [name for name in folders(WORK) if name != LESSONS]
    return sorted(set(folders(RELEASE) + own).union(*map(folders, _outbound())))


def _outbound() -> list[str]:
    return [os.path.join(EXCHANGE, course, "outbound") for course in folders(EXCHANGE)]


def check_released(assignment: str) -> None:
    """nbgrader's exchange offers `assignment`: the instructor released it (./course release ID)."""
    if not any(os.path.isdir(os.path.join(outbound, assignment)) for outbound in _outbound()):
        raise BadArguments(f"{assignment} has not been released yet; ask your instructor to release it")


def check_submit(args: list[str]) -> None:
    """Refuse before anything reaches the exchange: every notebook in work/ID must parse."""
    assignment = check_assignment("submit", args, student_assignments())
    folder = os.path.join(WORK, assignment)
    if not os.path.isdir(folder):
        raise BadArguments(f"nothing to submit: {folder}/ does not exist; fetch it first: ./course fetch {assignment}")
    notebooks = sorted(f for f in os.listdir(folder) if f.endswith(".ipynb"))
    if not notebooks:
        raise BadArguments(f"nothing to submit: {folder}/ holds no notebook")
    for name in notebooks:
        problem = notebook_problem(os.path.join(folder, name))
        if problem:
            raise BadArguments(f"not submitted: {problem}; open it in JupyterLab and use File > Revert Notebook "
                               f"to Checkpoint, then submit again (your file is unchanged)")
    check_released(assignment)


STUDENT_CHECKS = {
    "validate": check_validate,
    "submit": check_submit,
    "fetch": lambda args: check_released(check_assignment("fetch", args, student_assignments())),
    "fetch-feedback": lambda args: check_assignment("fetch-feedback", args, student_assignments()),
}


def run(checks: dict, argv: list[str]) -> int:
    command, args = argv[0], argv[1:]
    if any(a in ("-h", "--help", "--help-all") for a in args):
        return 0  # the command's own help
    try:
        checks[command](args)
    except BadArguments as problem:
        print(f"course: {problem}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(run(STUDENT_CHECKS, sys.argv[1:]))
