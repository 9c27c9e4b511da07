"""A student's server start on the hub, run as the student before their JupyterLab (the spawner's
command: `python user_start.py jupyterhub-singleuser ARGS...`):

1. nbgitpuller pulls the published lessons (COURSE_LESSONS_REPO, hub/lessons.py) into ~/lessons:
   a clone at the first start, then a merge that keeps what the student changed (nbgitpuller's
   own rules: their edits win a conflict, a lesson they deleted comes back).
2. The start page's assignment (COURSE_START_ASSIGNMENT), once released, is fetched into ~/ID as
   the Assignment List's Fetch would (nbgrader fetch_assignment), if the student has no copy yet.
3. The start page: the role's own (COURSE_START_PAGE, lab/student/start-page.jupyterlab-workspace,
   the one ./course lab opens on), the first lesson on the left, that assignment on the right,
   written as the lab's workspace `course` once both are there, and kept as the student leaves it
   after. Until then the lab opens on the lesson alone.

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
    # jupyterlab_server names a workspace's file after its id and a hash of it (as ./course lab's start_page).
    return workspaces / f"{WORKSPACE}-{hashlib.sha256(WORKSPACE.encode()).hexdigest()[:4]}.jupyterlab-workspace"


def start_page(home: Path, workspaces: Path, template: Path) -> str | None:
    """The role's start page (lab/student/start-page.jupyterlab-workspace, the one ./course lab opens
    on: paths from the student's folder, here their home), written once its notebooks are all there,
    and never again: the lab then keeps the student's own layout. None when it is (or was) written;
    else the notebook the lab should open alone, the first of them that is there."""
    path = workspace_file(workspaces)
    if path.exists():
        return None
    data = json.loads(template.read_text())
    wanted = [v["data"]["path"] for k, v in data["data"].items() if k.startswith("notebook:")]
    there = [p for p in wanted if (home / p).is_file()]
    if there != wanted:
        return there[0] if there else None
    data["metadata"] = {"id": WORKSPACE}
    workspaces.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return None


def prepare(home: Path, env: dict) -> None:
    """Steps 1-3, each reported and none fatal; the lab's first page set in `env`."""
    repo, assignment = env.get("COURSE_LESSONS_REPO"), env.get("COURSE_START_ASSIGNMENT")
    if repo:
        try:
            say(f"pulling the lessons from {repo} into {home / LESSONS}")
            pull_lessons(repo, home)
        except Exception as problem:  # the lab starts with what the student has
            say(f"pulling the lessons failed: {problem}")
    if assignment and env.get("COURSE_OUTBOUND"):
        fetch(assignment, Path(env["COURSE_OUTBOUND"]), home)
    if env.get("COURSE_START_PAGE") and env.get("COURSE_WORKSPACES"):
        try:
            alone = start_page(home, Path(env["COURSE_WORKSPACES"]), Path(env["COURSE_START_PAGE"]))
        except (OSError, ValueError, KeyError) as problem:
            say(f"writing the start page failed: {problem}")
            return
        if alone:  # until the start page can show both, the lesson alone (JupyterHub's default URL for the server)
            say(f"opening {alone} alone: the start page waits for its assignment (Assignment List, once released)")
            env["JUPYTERHUB_DEFAULT_URL"] = f"/lab/tree/{alone}"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python user_start.py COMMAND [ARGS...]   (run as the student, in their home)")
    env = dict(os.environ)
    prepare(Path.home(), env)
    os.execvpe(sys.argv[1], sys.argv[1:], env)
