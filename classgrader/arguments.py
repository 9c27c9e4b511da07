"""The instructor's commands' checks, beyond their syntax (classgrader/cli.py parses that):
each assignment id must be the course's, and what a command works on must be there already.
A failed check raises BadArguments: one line on what is wrong and what to do.

Standard library only, loaded by path (classgrader/cli.py): importing the package's
neighbours would load nbgrader."""
import glob
import importlib.util
import os
import sys
from types import ModuleType

# The shared helpers, loaded by path (`import autograder.arguments` would run the package's
# __init__, which imports torch), or as classgrader/cli.py loaded them.
arguments: ModuleType
if "course_arguments" in sys.modules:
    arguments = sys.modules["course_arguments"]
else:
    _path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "autograder", "arguments.py")
    _spec = importlib.util.spec_from_file_location("course_arguments", _path)
    if _spec is None or _spec.loader is None:
        raise ImportError(f"cannot load {_path} as a module")
    arguments = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(arguments)
BadArguments, check_assignment, folders = arguments.BadArguments, arguments.check_assignment, arguments.folders

# As nbgrader_config.py sets them (tests/classgrader/test_arguments.py keeps them equal).
SOURCE, RELEASE = "source", "release"
SUBMITTED, AUTOGRADED, FEEDBACK = (os.path.join("runtime", d) for d in ("submitted", "autograded", "feedback"))
GRADEBOOK = os.path.join("runtime", "gradebook.db")
GRADING = os.path.join("runtime", "grading")  # what a class run recorded (classgrader/class_run/outcomes.py)


def graded(root: str = ".") -> list[str]:
    """The assignments with grading records (runtime/grading/ID/outcomes/), which ./course report reads."""
    grading = os.path.join(root, GRADING)
    return [name for name in folders(grading) if os.path.isdir(os.path.join(grading, name, "outcomes"))]


def known(command: str, ids: list[str]) -> str:
    """The first of `ids`, which must be one of the course's assignments."""
    return check_assignment(command, ids, folders(SOURCE))


def students_with(folder: str, assignment: str) -> list[str]:
    return glob.glob(os.path.join(folder, "*", assignment))


def check_generate(ids: list[str]) -> None:
    for assignment in ids:
        known("generate", [assignment])


def check_autograde(ids: list[str]) -> None:
    known("autograde", ids)  # at least one
    for assignment in ids:
        known("autograde", [assignment])
    for assignment in ids:
        if not students_with(SUBMITTED, assignment):
            raise BadArguments(f"nobody has submitted {assignment} yet ({SUBMITTED}/*/{assignment}/ is empty); "
                               f"collect submissions from the exchange first: ./course collect {assignment}")


def check_feedback(ids: list[str]) -> None:
    assignment = known("feedback", ids)
    if not students_with(AUTOGRADED, assignment):
        raise BadArguments(f"{assignment} has not been autograded yet; run ./course autograde {assignment} first")


def check_return(ids: list[str]) -> None:
    assignment = known("return", ids)
    if not students_with(FEEDBACK, assignment):
        raise BadArguments(f"no feedback for {assignment} yet; run ./course feedback {assignment} first")


def check_release(ids: list[str]) -> None:
    assignment = known("release", ids)
    if not os.path.isdir(os.path.join(RELEASE, assignment)):
        raise BadArguments(f"{RELEASE}/{assignment} does not exist; run ./course generate {assignment} first")


def check_collect(ids: list[str]) -> None:
    assignment = known("collect", ids)
    inbound = glob.glob(os.path.join(arguments.EXCHANGE, "*", "inbound", f"*+{assignment}+*"))
    if not inbound:
        raise BadArguments(f"no submissions of {assignment} in the exchange yet; students submit with "
                           f"./course submit {assignment} (or the Assignment List's Submit)")
