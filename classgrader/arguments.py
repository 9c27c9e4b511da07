"""Check an instructor command's arguments before nbgrader or torch loads (seconds each).

    python -P classgrader/arguments.py COMMAND [ARGS...]    (./course runs this first)

Exits 0 when the command can go ahead; otherwise one line on what is wrong and what to do,
exit 2, nothing changed. Standard library only."""
import glob
import importlib.util
import os
import sys

# The shared helpers, loaded by path: `import autograder.arguments` would run the package's
# __init__, which imports torch.
_spec = importlib.util.spec_from_file_location(
    "course_arguments", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                     "autograder", "arguments.py"))
arguments = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(arguments)
BadArguments, check_assignment, folders = arguments.BadArguments, arguments.check_assignment, arguments.folders

# As nbgrader_config.py sets them (tests/classgrader/test_arguments.py keeps them equal).
SOURCE, RELEASE = "source", "release"
SUBMITTED, AUTOGRADED, FEEDBACK = (os.path.join("runtime", d) for d in ("submitted", "autograded", "feedback"))


def known(command: str, args: list[str]) -> str:
    return check_assignment(command, args, folders(SOURCE))


def students_with(folder: str, assignment: str) -> list[str]:
    return glob.glob(os.path.join(folder, "*", assignment))


def check_generate(args: list[str]) -> None:
    for assignment in (a for a in args if not a.startswith("-")):
        known("generate", [assignment])


def check_autograde(args: list[str]) -> None:
    known("autograde", args)  # at least one id, first
    ids = []
    for arg in args:
        if arg.startswith("-"):
            break
        ids.append(known("autograde", [arg]))
    rest = args[len(ids):]
    if "--workers" in rest:
        value = rest[rest.index("--workers") + 1] if rest.index("--workers") + 1 < len(rest) else ""
        if not (value.isdigit() and int(value) > 0):
            raise BadArguments(f"--workers needs a positive whole number, got '{value}'")
    unknown = [a for i, a in enumerate(rest) if a not in ("--workers", "--force")
               and not (i > 0 and rest[i - 1] == "--workers")]
    if unknown:
        raise BadArguments(f"autograde takes ID [ID ...] [--workers N] [--force], not {' '.join(unknown)}")
    for assignment in ids:
        if not students_with(SUBMITTED, assignment):
            raise BadArguments(f"nobody has submitted {assignment} yet ({SUBMITTED}/*/{assignment}/ is empty); "
                               f"collect submissions from the exchange first: ./course collect {assignment}")


def check_feedback(args: list[str]) -> None:
    assignment = known("feedback", args)
    if not students_with(AUTOGRADED, assignment):
        raise BadArguments(f"{assignment} has not been autograded yet; run ./course autograde {assignment} first")


def check_return(args: list[str]) -> None:
    assignment = known("return", args)
    if not students_with(FEEDBACK, assignment):
        raise BadArguments(f"no feedback for {assignment} yet; run ./course feedback {assignment} first")


def check_release(args: list[str]) -> None:
    assignment = known("release", args)
    if not os.path.isdir(os.path.join(RELEASE, assignment)):
        raise BadArguments(f"{RELEASE}/{assignment} does not exist; run ./course generate {assignment} first")


def check_collect(args: list[str]) -> None:
    assignment = known("collect", args)
    inbound = glob.glob(os.path.join(arguments.EXCHANGE, "*", "inbound", f"*+{assignment}+*"))
    if not inbound:
        raise BadArguments(f"no submissions of {assignment} in the exchange yet; students submit with "
                           f"./course submit {assignment} (or the Assignment List's Submit)")


INSTRUCTOR_CHECKS = {
    "generate": check_generate,
    "autograde": check_autograde,
    "feedback": check_feedback,
    "return": check_return,
    "release": check_release,
    "collect": check_collect,
}

if __name__ == "__main__":
    sys.exit(arguments.run(INSTRUCTOR_CHECKS, sys.argv[1:]))
