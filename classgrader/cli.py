"""Every ./course command in one table: its arguments, checked before anything heavy loads,
and what it runs.

    python3 -P classgrader/cli.py check COMMAND [ARGS...]   exit 0 and "env" or "bare" on stdout
                                                             (whether it needs .venv), or one line
                                                             on stderr and exit 2
    python3 -P classgrader/cli.py run COMMAND [ARGS...]     check again, then run it (exec)

./course (bash) runs `check` with any Python 3.11, builds .venv when the command needs it, then
`run` with .venv's Python. A bad argument gets one line on what is wrong and what to do, exit 2,
nothing changed. Standard library only, and run as a file: importing the package's neighbours
would load nbgrader. The hub's `course-autograde` runs `python -I -m classgrader.cli run autograde`.
"""
import argparse
import hashlib
import importlib.util
import json
import os
import re
import shlex
import sys
import zipfile
from dataclasses import dataclass, field
from types import ModuleType
from typing import NoReturn

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _load(name: str, path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The student's checks (autograder/arguments.py), by path: importing the package imports torch.
# classgrader/arguments.py finds it under the same name: one BadArguments for both.
student = sys.modules["course_arguments"] = _load("course_arguments", os.path.join(REPO, "autograder", "arguments.py"))
BadArguments = student.BadArguments


def instructor():
    """The instructor's checks; the student bundle has no grading pipeline, so no such commands."""
    if not os.path.exists(os.path.join(HERE, "class_run", "classroom.py")):
        return None
    return _load("course_instructor_arguments", os.path.join(HERE, "arguments.py"))


@dataclass
class Command:
    usage: str             # after the command's name
    what: str              # one line for ./course help
    options: list = field(default_factory=list)   # (flags, argparse keywords)
    env: bool = True       # needs .venv (the pinned environment) built first
    role: str = ""         # "instructor" or "student" (its checks), "" for the course itself


def student_name(text: str) -> str:
    """A student id as nbgrader keys folders and gradebook rows on it: no path, no space."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a student name (letters, digits, _ . -)")
    return text


AS_STUDENT = ("--student", {"type": student_name, "metavar": "NAME"})  # several students on one machine

COMMANDS = {
    "lab": Command("[--instructor] [--port N] [--ip IP] [--no-browser] [-- JUPYTER-LAB-ARGS]",
                   "open the course in JupyterLab (a student's, or with nbgrader's instructor tools)",
                   [("--instructor", {"action": "store_true"}), ("--port", {"type": int}), ("--ip", {}),
                    ("--no-browser", {"action": "store_true"})]),
    "test": Command("[PYTEST-ARGS]", "run every test (the arguments are pytest's own)"),
    "setup": Command("", "only build .venv (uv, else pip; COURSE_INSTALLER=pip forces pip)"),
    "generate": Command("[ID ...]", "make release/ from source/ (every assignment by default)",
                        [("ids", {"nargs": "*"})], role="instructor"),
    "autograde": Command("ID [ID ...] [--workers N] [--force]",
                         "grade every submission of each ID (resumable)",
                         [("ids", {"nargs": "*"}), ("--workers", {}), ("--force", {"action": "store_true"})],
                         role="instructor"),
    "feedback": Command("ID [--force]", "make the feedback students get back for ID",
                        [("ids", {"nargs": "*"}), ("--force", {"action": "store_true"})], role="instructor"),
    "export": Command("[--format nbgrader|canvas|moodle] [--to PATH]",
                      "every grade to runtime/grades.csv, or as Canvas's or Moodle's gradebook import takes them",
                      [("--format", {"choices": ["nbgrader", "canvas", "moodle"], "default": "nbgrader"}),
                       ("--to", {})], role="instructor"),
    "roster": Command("FILE [--login COLUMN] [--strip-domain] [--assignment NAME=ID ...]",
                      "the class as the LMS exported it (Canvas or Moodle) into the gradebook: docs/lms.md",
                      [("file", {"metavar": "FILE"}), ("--login", {"metavar": "COLUMN"}),
                       ("--strip-domain", {"action": "store_true"}),
                       ("--assignment", {"action": "append", "default": [], "metavar": "NAME=ID"})],
                      role="instructor"),
    "report": Command("ID [ID ...] [--all] [--below PERCENT]",
                      "what the class got wrong, one page per assignment (runtime/reports/)",
                      [("ids", {"nargs": "*"}), ("--all", {"action": "store_true"}),
                       ("--below", {"type": float, "metavar": "PERCENT"})],
                      role="instructor"),
    "similarity": Command("ID [ID ...]", "which students wrote the same code, ranked for your review "
                          "(runtime/reports/similarity-ID.html)", [("ids", {"nargs": "*"})], role="instructor"),
    "release": Command("ID [--force]", "put release/ID in the exchange for students to fetch",
                       [("ids", {"nargs": "*"}), ("--force", {"action": "store_true"})], role="instructor"),
    "collect": Command("ID", "copy every submission of ID from the exchange to runtime/submitted",
                       [("ids", {"nargs": "*"})], role="instructor"),
    "return": Command("ID", "put each student's feedback for ID in the exchange",
                      [("ids", {"nargs": "*"})], role="instructor"),
    "bundle": Command("[OUT.zip]", "the student bundle, for courses without a hub",
                      [("out", {"nargs": "?"})], role="instructor"),
    "hub": Command("[--instructor NAME --students A,B,C ...]", "(root) run the class on a JupyterHub here "
                   "(the options are hub/install.py's)", env=False),
    "validate": Command("NOTEBOOK", "Validate's checklist of the visible checks (exit 1 unless all pass)",
                        [("paths", {"nargs": "*"})], role="student"),
    "fetch": Command("ID [--student NAME]", "(student) fetch ID from the exchange into work/ID",
                     [("ids", {"nargs": "*"}), AS_STUDENT], role="student"),
    "submit": Command("ID [--student NAME]", "(student) submit work/ID (--student: as another, on a "
                      "machine several share)", [("ids", {"nargs": "*"}), AS_STUDENT], role="student"),
    "fetch-feedback": Command("ID [--student NAME]", "(student) fetch your feedback for ID into work/ID/feedback",
                              [("ids", {"nargs": "*"}), AS_STUDENT], role="student"),
    "help": Command("", "this list", env=False),
}
PASS_THROUGH = {"test", "hub"}  # their arguments are another program's own


def help_text() -> str:
    width = max(len(f"{name} {c.usage}") for name, c in COMMANDS.items() if len(c.usage) < 40)
    lines = ["./course COMMAND [ARGS]: the course's one entry point (./course COMMAND -h: its arguments)", ""]
    for name, c in COMMANDS.items():
        head = f"{name} {c.usage}".strip()
        lines.append(f"  {head:<{width}}  {c.what}" if len(head) <= width else f"  {head}\n  {'':<{width}}  {c.what}")
    return "\n".join(lines)


class OneLineParser(argparse.ArgumentParser):
    """argparse, whose complaints are one line: what is wrong, then the command's usage."""

    def error(self, message):
        raise BadArguments(f"{self.prog.removeprefix('./course ')}: {message}; usage: {self.usage}")


def parser_for(name: str) -> OneLineParser:
    command = COMMANDS[name]
    parser = OneLineParser(prog=f"./course {name}", usage=f"./course {name} {command.usage}".strip(),
                           description=command.what, allow_abbrev=False)
    for flags, keywords in command.options:
        parser.add_argument(flags, **keywords)
    return parser


def parse(name: str, args: list[str]) -> argparse.Namespace:
    """The arguments of ./course NAME, checked: BadArguments (one line) when they are wrong."""
    if name not in COMMANDS:
        raise BadArguments(f"unknown command '{name}' (try ./course help)")
    if name in PASS_THROUGH:
        parsed = argparse.Namespace(command=name, rest=args)
        CHECKS.get(name, lambda _: None)(parsed)
        return parsed
    rest = []
    if name == "lab" and "--" in args:  # what follows goes to jupyter lab as it is
        args, rest = args[:args.index("--")], args[args.index("--") + 1:]
    parsed = parser_for(name).parse_args(args)
    parsed.command, parsed.rest = name, rest
    CHECKS.get(name, lambda _: None)(parsed)
    return parsed


def parse_or_exit(name: str, args: list[str]) -> argparse.Namespace:
    """parse, for a command's own module (python -m classgrader.commands.report ...): one line and
    exit 2 when the arguments are wrong, so every command's are parsed by this table alone."""
    try:
        return parse(name, args)
    except BadArguments as problem:
        refuse(str(problem))


def refuse(line: str) -> NoReturn:
    """What every command says to a bad argument: one line on stderr, exit 2, nothing changed."""
    print(f"course: {line}", file=sys.stderr)
    raise SystemExit(2)


# ---- what each command's values must be, beyond their syntax ----

def _one_id(name: str, parsed) -> list[str]:
    """The command's assignment ids, which must be at most one."""
    if len(parsed.ids) > 1:
        raise BadArguments(f"{name} takes one assignment id, not {len(parsed.ids)} ({' '.join(parsed.ids)})")
    return parsed.ids


def _instructor(check):
    def checked(parsed):
        checks = instructor()
        if checks is None:
            raise BadArguments(f"{parsed.command} is an instructor's command; this copy of the course is the "
                               f"student bundle, which has no grading pipeline")
        check(checks, parsed)
    return checked


def _check_autograde(checks, parsed) -> None:
    if parsed.workers is not None and not (parsed.workers.isdigit() and int(parsed.workers) > 0):
        raise BadArguments(f"--workers needs a positive whole number, got '{parsed.workers}'")
    parsed.workers = int(parsed.workers) if parsed.workers is not None else None
    checks.check_autograde(parsed.ids)


def _check_report(checks, parsed) -> None:
    if parsed.all == bool(parsed.ids):
        raise BadArguments("report needs assignment ids or --all, e.g. ./course report 01_tensors")
    if parsed.below is not None and not 0 <= parsed.below <= 100:
        raise BadArguments(f"--below takes a percentage from 0 to 100, not {parsed.below:g}")
    for assignment in parsed.ids:
        checks.known("report", [assignment])
        if not os.path.isdir(os.path.join(checks.GRADING, assignment, "outcomes")):
            raise BadArguments(f"no grading records for {assignment} ({checks.GRADING}/{assignment}/outcomes/ is "
                               f"missing); run ./course autograde {assignment} first")
    if parsed.all and not checks.graded():
        raise BadArguments("nothing has been graded yet; run ./course autograde ID first")


def _check_export(checks, parsed) -> None:
    if parsed.format != "nbgrader" and not os.path.exists(checks.GRADEBOOK):
        raise BadArguments(f"no gradebook yet ({checks.GRADEBOOK}); run ./course generate, then grade, first")


def _check_similarity(checks, parsed) -> None:
    checks.known("similarity", parsed.ids)  # at least one
    for assignment in parsed.ids:
        checks.known("similarity", [assignment])
        if not checks.students_with(checks.SUBMITTED, assignment):
            raise BadArguments(f"nobody has submitted {assignment} yet ({checks.SUBMITTED}/*/{assignment}/ is empty); "
                               f"collect submissions first: ./course collect {assignment}")
        if not os.path.isdir(os.path.join(checks.RELEASE, assignment)):
            raise BadArguments(f"{checks.RELEASE}/{assignment} does not exist (the release is what students were "
                               f"given, left out of the comparison); run ./course generate {assignment} first")


def _check_roster(checks, parsed) -> None:
    """The LMS's file itself, read as the command will read it (lms_files.py: standard library only)."""
    for value in parsed.assignment:
        if not re.fullmatch(r"[^=\s]+=\d+", value):
            raise BadArguments(f"roster: --assignment takes NAME=CANVAS_ID (e.g. 01_tensors=4471), not '{value}'")
    files = _load("course_lms_files", os.path.join(HERE, "commands", "lms_files.py"))
    try:
        files.read(parsed.file, parsed.file, parsed.login, parsed.strip_domain)
    except files.BadRoster as problem:
        raise BadArguments(f"roster: {problem}") from None


def _check_bundle(checks, parsed) -> None:
    """Where the zip goes: a .zip in a folder that exists, replacing at most a zip (a bundle made
    before), never a file of another kind that a slip of the argument names."""
    if parsed.out is None:
        return
    if not parsed.out.endswith(".zip"):
        raise BadArguments(f"bundle writes a zip: give a name ending in .zip, not '{parsed.out}'")
    folder = os.path.dirname(os.path.abspath(parsed.out))
    if not os.path.isdir(folder):
        raise BadArguments(f"bundle: the folder {folder} does not exist")
    if os.path.lexists(parsed.out) and not (os.path.isfile(parsed.out) and not os.path.islink(parsed.out)
                                            and zipfile.is_zipfile(parsed.out)):
        raise BadArguments(f"bundle: {parsed.out} exists and is not a zip; name a new file or an old bundle")


def _check_hub(parsed) -> None:
    """hub/install.py's own arguments, with its parser where it offers one (parser()), so that a
    bad one is one line here too; otherwise its parser answers when it runs."""
    path = os.path.join(REPO, "hub", "install.py")
    if not os.path.exists(path):
        raise BadArguments("hub needs hub/install.py, which this copy of the course does not have")
    if os.path.dirname(path) not in sys.path:  # its neighbours (hub/machine.py), as when it runs as a script
        sys.path.insert(0, os.path.dirname(path))
    make = getattr(_load("course_hub_install", path), "parser", None)
    if make is None or {"-h", "--help"} & set(parsed.rest):
        return
    parser = make()

    def error(message):
        raise BadArguments(f"hub: {message}; usage: ./course hub -h")
    parser.error = error
    parser.parse_args(parsed.rest)


CHECKS = {
    "setup": lambda parsed: None,
    "hub": _check_hub,
    "generate": _instructor(lambda checks, parsed: checks.check_generate(parsed.ids)),
    "autograde": _instructor(_check_autograde),
    "feedback": _instructor(lambda checks, parsed: checks.check_feedback(_one_id("feedback", parsed))),
    "return": _instructor(lambda checks, parsed: checks.check_return(_one_id("return", parsed))),
    "release": _instructor(lambda checks, parsed: checks.check_release(_one_id("release", parsed))),
    "collect": _instructor(lambda checks, parsed: checks.check_collect(_one_id("collect", parsed))),
    "report": _instructor(_check_report),
    "export": _instructor(_check_export),
    "roster": _instructor(_check_roster),
    "similarity": _instructor(_check_similarity),
    "bundle": _instructor(_check_bundle),
    "validate": lambda parsed: student.check_validate(parsed.paths),
    "submit": lambda parsed: student.check_submit(_one_id("submit", parsed)),
    "fetch": lambda parsed: student.STUDENT_CHECKS["fetch"](_one_id("fetch", parsed)),
    "fetch-feedback": lambda parsed: student.STUDENT_CHECKS["fetch-feedback"](_one_id("fetch-feedback", parsed)),
}


# ---- what each command runs, once its arguments are right ----

def python(*args: str) -> list[str]:
    """This interpreter, isolated as it was started (the hub's root run is -I)."""
    return [sys.executable, *(["-I"] if sys.flags.isolated else []), *args]


def _flag(value, flag: str) -> list[str]:
    return [flag] if value else []


def _lab(parsed) -> list[str]:
    # A student's lab serves their own folder, work/ (autograder/student_folder.py): their copies of
    # the lessons (lessons/) and of each assignment (ID/, where the Assignment List's Fetch and
    # ./course fetch also put it), so no file of the checkout is edited and source/ is out of sight.
    # An instructor's serves the whole checkout, with nbgrader's instructor panels (lab/ROLE/).
    # Each opens on the first lesson and its assignment side by side (start_page).
    role = "instructor" if parsed.instructor else "student"
    here = os.getcwd()
    folder = _load("course_student_folder", os.path.join(REPO, "autograder", "student_folder.py"))
    for line in folder.prepare(here, os.path.join(here, student.WORK)):
        print(line, file=sys.stderr)
    config = os.path.join(here, "lab", role)
    os.environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join(filter(None, [config, os.environ.get("JUPYTER_CONFIG_PATH")]))
    workspaces = os.path.join(here, "runtime", "lab-workspaces", role)
    root = here if parsed.instructor else os.path.join(here, student.WORK)
    start_page(workspaces, config, "work/" if parsed.instructor else "")
    return ["jupyter", "lab", f"--ServerApp.root_dir={root}", f"--LabApp.app_settings_dir={config}",
            f"--LabApp.workspaces_dir={workspaces}", f"--LabApp.default_url=/lab/workspaces/{START}",
            *(["--allow-root"] if os.geteuid() == 0 else []),
            *([f"--port={parsed.port}"] if parsed.port else []), *([f"--ip={parsed.ip}"] if parsed.ip else []),
            *_flag(parsed.no_browser, "--no-browser"), *parsed.rest]


START = "course"  # the lab's workspace: what it opens on, then as the student leaves it


def start_page(workspaces: str, config: str, prefix: str) -> None:
    """The role's start page (lab/ROLE/start-page.jupyterlab-workspace: the first lesson and its
    assignment side by side, paths from the student's folder), with `prefix` before each path where
    the lab serves a folder above it; written once, so the lab then keeps the student's own layout.
    jupyterlab_server names the file slugify(START)."""
    path = os.path.join(workspaces, f"{START}-{hashlib.sha256(START.encode()).hexdigest()[:4]}.jupyterlab-workspace")
    if os.path.exists(path):
        return
    with open(os.path.join(config, "start-page.jupyterlab-workspace"), encoding="utf-8") as handle:
        data = _below(json.load(handle), prefix)
    data["metadata"] = {"id": START}
    os.makedirs(workspaces, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)


def _below(value, prefix: str):
    """A workspace's notebook paths (in "notebook:PATH" ids and "path" entries), each with `prefix`."""
    def moved(text):
        return (f"notebook:{prefix}{text.removeprefix('notebook:')}" if text.startswith("notebook:")
                else prefix + text if text.endswith(".ipynb") else text)
    if isinstance(value, dict):
        return {moved(k): _below(v, prefix) for k, v in value.items()}
    if isinstance(value, list):
        return [_below(v, prefix) for v in value]
    return moved(value) if isinstance(value, str) else value


def _test(parsed) -> list[str]:
    # Test files run in parallel (COURSE_TEST_WORKERS=0: none), each file whole in one worker: nbval
    # runs a notebook's cells in order in one kernel, and a module's expensive fixture (a graded
    # class, a JupyterLab) is made once. One worker per core and one more: the long files wait on
    # kernels, labs and browsers, and with one per core the suite used 60% of a 2-core machine's
    # CPU, 70% with the spare worker (benchmarks/README.md).
    workers = os.environ.get("COURSE_TEST_WORKERS", str(len(os.sched_getaffinity(0)) + 1))  # as nproc counts, +1
    parallel = workers != "0" and importlib.util.find_spec("xdist") is not None
    return python("-m", "pytest", *(["-n", workers, "--dist", "loadfile"] if parallel else []), *parsed.rest)


def _exchange(nbgrader_command: str):
    def run(parsed) -> list[str]:
        # A student's side of the exchange works in work/, their own folder.
        os.makedirs(student.WORK, exist_ok=True)
        return ["nbgrader", nbgrader_command, *parsed.ids, *(["--student", parsed.student] if getattr(
            parsed, "student", None) else []), f"--Exchange.assignment_dir={os.path.abspath(student.WORK)}"]
    return run


def _export(parsed) -> list[str]:
    if parsed.format == "nbgrader":
        return ["nbgrader", "export", *([f"--to={parsed.to}"] if parsed.to else [])]
    to = ["--to", parsed.to] if parsed.to else []
    return python("-m", "classgrader.commands.lms_export", "--format", parsed.format, *to)


def _roster(parsed) -> list[str]:
    login = ["--login", parsed.login] if parsed.login else []
    return python("-m", "classgrader.commands.roster", parsed.file, *login,
                  *_flag(parsed.strip_domain, "--strip-domain"),
                  *[part for value in parsed.assignment for part in ("--assignment", value)])


RUNS = {
    "lab": _lab,
    "test": _test,
    "setup": lambda parsed: None,
    "generate": lambda parsed: python("-m", "classgrader.commands.generate", *parsed.ids),
    # The whole class: triage, parallel sandboxed workers, progress, resumable (classroom.py).
    "autograde": lambda parsed: python("-m", "classgrader.class_run.classroom", *parsed.ids,
                                       *(["--workers", str(parsed.workers)] if parsed.workers else []),
                                       *_flag(parsed.force, "--force")),
    "feedback": lambda parsed: ["nbgrader", "generate_feedback", *parsed.ids, *_flag(parsed.force, "--force")],
    "export": _export,
    "roster": _roster,
    "report": lambda parsed: python("-m", "classgrader.commands.report", *parsed.ids, *_flag(parsed.all, "--all"),
                                    *(["--below", f"{parsed.below:g}"] if parsed.below is not None else [])),
    "similarity": lambda parsed: python("-m", "classgrader.commands.similarity", *parsed.ids),
    "release": lambda parsed: ["nbgrader", "release_assignment", *parsed.ids, *_flag(parsed.force, "--force")],
    "collect": lambda parsed: ["nbgrader", "collect", *parsed.ids],
    "return": lambda parsed: ["nbgrader", "release_feedback", *parsed.ids],
    "bundle": lambda parsed: python("-m", "classgrader.commands.bundle", *([parsed.out] if parsed.out else [])),
    # A class on this machine (root): system users, JupyterHub, the shared exchange.
    "hub": lambda parsed: python(os.path.join(REPO, "hub", "start.py"), *parsed.rest),
    # Run as a file: importing the autograder package would import torch (seconds) for nothing.
    "validate": lambda parsed: python("-P", os.path.join(REPO, "autograder", "validate.py"), *parsed.paths),
    "fetch": _exchange("fetch_assignment"),
    # nbgrader's own submit, comparing with the release only what it sends (no checkpoints).
    "submit": lambda parsed: python("-P", os.path.join(REPO, "autograder", "submit.py"),
                                    *_exchange("submit")(parsed)[2:]),
    "fetch-feedback": _exchange("fetch_feedback"),
    "help": lambda parsed: print(help_text()),
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("check", "run"):
        print("usage: cli.py check|run COMMAND [ARGS...]", file=sys.stderr)
        return 2
    mode, name, args = argv[0], (argv[1:] or ["help"])[0], argv[2:]
    if name in ("-h", "--help"):
        name = "help"
    try:
        asks_help = name in COMMANDS and name not in PASS_THROUGH and bool({"-h", "--help"} & set(args))
        parsed = None if asks_help else parse(name, args)
    except BadArguments as problem:
        print(f"course: {problem}", file=sys.stderr)
        return 2
    if mode == "check":
        # A command's own help needs nothing built.
        print("env" if COMMANDS[name].env and parsed is not None else "bare")
        return 0
    if parsed is None:
        parser_for(name).parse_args(args)  # prints the help, exits 0
    command = RUNS[name](parsed)
    if command is None:
        return 0
    sys.stdout.flush()
    try:
        os.execvp(command[0], command)
    except OSError as error:
        print(f"course: cannot run {shlex.join(command)}: {error.strerror}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
