"""A student's server start on the hub, run as the student before their JupyterLab (the spawner's
command: `python user_start.py jupyterhub-singleuser ARGS...`):

1. nbgitpuller pulls the published lessons (COURSE_LESSONS_REPO, hub/lessons.py) into ~/lessons:
   a clone at the first start, then a merge that keeps what the student changed (nbgitpuller's
   own rules: their edits win a conflict, a lesson they deleted comes back).
2. The start page's assignment (COURSE_START_ASSIGNMENT), once released, is fetched into ~/ID as
   the Assignment List's Fetch would (nbgrader fetch_assignment), if the student has no copy yet.
3. The start page (the lab's workspace `course`, as ./course lab's): the first lesson on the
   left, that assignment on the right; written once, so the lab then keeps the student's own
   layout. A page written while the assignment was not released yet shows the lesson alone, and
   gains the assignment at a later start, unless the student has rearranged it meanwhile.

Nothing here may stop the server from starting: a failed step is reported in the server's log
and the lab starts anyway. The same script starts a student's server on Kubernetes (hub/z2jh)."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

LESSONS = "lessons"  # in the student's home, beside their assignments (~/ID/ID.ipynb)
WORKSPACE = "course"  # the workspace ./course lab opens on (classgrader/cli.py's START)
BRANCH = "main"


def say(message: str) -> None:
    print(f"course start: {message}", file=sys.stderr, flush=True)


def pull_lessons(repo: str, home: Path) -> None:
    from nbgitpuller.pull import GitPuller
    for line in GitPuller(repo, str(home / LESSONS), branch=BRANCH).pull():
        if line.strip():
            say(f"  {line.rstrip()}")


def fetch(assignment: str, outbound: Path, home: Path) -> bool:
    """The assignment in the student's home, fetched now if it is released and not there yet."""
    if (home / assignment).is_dir():
        return True
    if not (outbound / assignment).is_dir():
        say(f"{assignment} is not released yet: the Assignment List fetches it once it is")
        return False
    done = subprocess.run(["nbgrader", "fetch_assignment", assignment], cwd=home, capture_output=True, text=True)
    if done.returncode != 0:
        say(f"fetching {assignment} failed: {(done.stderr or done.stdout).strip()[-500:]}")
    return (home / assignment).is_dir()


def workspace_file(workspaces: Path) -> Path:
    # jupyterlab_server names a workspace's file after its id and a hash of it (as classgrader/cli.py's start_page).
    return workspaces / f"{WORKSPACE}-{hashlib.sha256(WORKSPACE.encode()).hexdigest()[:4]}.jupyterlab-workspace"


def layout(opened: list[str]) -> dict:
    """The lab's workspace with `opened` side by side, left to right, the file browser on the home."""
    areas = [{"type": "tab-area", "currentIndex": 0, "widgets": [f"notebook:{p}"]} for p in opened]
    dock = ({"type": "split-area", "orientation": "horizontal", "sizes": [0.5, 0.5], "children": areas}
            if len(areas) == 2 else areas[0] if areas else {"type": "tab-area", "currentIndex": 0, "widgets": []})
    main = dict(dock=dock, **({"current": f"notebook:{opened[-1]}"} if opened else {}))
    data = {"layout-restorer:data": {"main": main, "left": {"collapsed": False, "visible": True,
                                                            "current": "filebrowser", "widgets": ["filebrowser"]}},
            "file-browser-filebrowser:cwd": {"path": ""},
            **{f"notebook:{p}": {"data": {"path": p, "factory": "Notebook"}} for p in opened}}
    return {"data": data, "metadata": {"id": WORKSPACE}}


def lesson_alone(path: Path, lesson: str) -> bool:
    """The page as written without its assignment, not rearranged since."""
    try:
        dock = json.loads(path.read_text())["data"]["layout-restorer:data"]["main"]["dock"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return dock.get("type") == "tab-area" and dock.get("widgets") == [f"notebook:{lesson}"]


def start_page(home: Path, workspaces: Path, lesson: str, assignment: str | None) -> None:
    path = workspace_file(workspaces)
    lesson = f"{LESSONS}/{lesson}"
    if path.exists() and not (assignment and lesson_alone(path, lesson)):
        return
    opened = [p for p in (lesson, assignment and f"{assignment}/{assignment}.ipynb") if p and (home / p).exists()]
    workspaces.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(layout(opened), indent=1))


def prepare(home: Path, env: dict) -> None:
    """Steps 1-3, each reported and none fatal."""
    repo, assignment = env.get("COURSE_LESSONS_REPO"), env.get("COURSE_START_ASSIGNMENT")
    fetched = False
    if repo:
        try:
            say(f"pulling the lessons from {repo} into {home / LESSONS}")
            pull_lessons(repo, home)
        except Exception as problem:  # the lab starts with what the student has
            say(f"pulling the lessons failed: {problem}")
    if assignment and env.get("COURSE_OUTBOUND"):
        fetched = fetch(assignment, Path(env["COURSE_OUTBOUND"]), home)
    if env.get("COURSE_START_LESSON") and env.get("COURSE_WORKSPACES"):
        try:
            start_page(home, Path(env["COURSE_WORKSPACES"]), env["COURSE_START_LESSON"],
                       assignment if fetched else None)
        except OSError as problem:
            say(f"writing the start page failed: {problem}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python user_start.py COMMAND [ARGS...]   (run as the student, in their home)")
    prepare(Path.home(), dict(os.environ))
    os.execvp(sys.argv[1], sys.argv[1:])
