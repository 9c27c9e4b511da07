"""The students' lessons as a git repository, the way JupyterHub deployments hand out course
material: nbgitpuller clones it into each student's `lessons/` at their first start and merges
each later commit into their copy, keeping what they changed (hub/user_start.py).

The repository holds the lessons (notebooks/NN_name_lesson.ipynb, at its root) and nothing else:
no source/, no release/, no grading code, no tests. It is built from the checkout with git's
plumbing (no working copy), one commit per change, on branch `main`; publishing the same lessons
again makes no commit. Made world-readable: every student's server clones it as that student.

    python3 hub/lessons.py REPO      (make or update the bare repository REPO from this checkout)

./course hub builds it at STATE/lessons.git at every set-up and with --publish; on Kubernetes the
instructor pushes it where the cluster can reach it (hub/z2jh/README.md)."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
BRANCH = "main"
AUTHOR = {"GIT_AUTHOR_NAME": "course hub", "GIT_AUTHOR_EMAIL": "course-hub@localhost",
          "GIT_COMMITTER_NAME": "course hub", "GIT_COMMITTER_EMAIL": "course-hub@localhost"}


def lesson_files(checkout: Path = CHECKOUT) -> dict[str, Path]:
    """What students get: each lesson notebook, by its name in the repository. A list of what is
    allowed (never "everything but the secrets"), so nothing added to the checkout leaks by default."""
    return {path.name: path for path in sorted((checkout / "notebooks").glob("[0-9][0-9]_*_lesson.ipynb"))}


def git(repo: Path, *args: str, stdin: bytes | None = None, env: dict | None = None) -> str:
    done = subprocess.run(["git", "--git-dir", str(repo), *args], input=stdin, capture_output=True,
                          env=dict(os.environ, LANG="C", **(env or {})))
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode().strip()


def publish(repo: Path, checkout: Path = CHECKOUT) -> str | None:
    """Commit the checkout's lessons to REPO's main branch (made if missing); the new commit's id,
    or None when the lessons are already what main holds."""
    old_umask = os.umask(0o022)  # every student reads it
    try:
        if not (repo / "HEAD").exists():
            repo.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "--quiet", "--bare", f"--initial-branch={BRANCH}", str(repo)], check=True)
        with tempfile.TemporaryDirectory() as scratch:
            index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            for name, path in lesson_files(checkout).items():
                blob = git(repo, "hash-object", "-w", "--stdin", stdin=path.read_bytes())
                git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}", env=index)
            tree = git(repo, "write-tree", env=index)
        parent = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "--verify", "-q", f"refs/heads/{BRANCH}"],
                                capture_output=True, text=True).stdout.strip()
        if parent and git(repo, "rev-parse", f"{parent}^{{tree}}") == tree:
            return None
        commit = git(repo, "commit-tree", tree, *(["-p", parent] if parent else []),
                     "-m", "The course's lessons, as published", env=AUTHOR)
        git(repo, "update-ref", f"refs/heads/{BRANCH}", commit, *([parent] if parent else []))
        # Served to students over file:// (nbgitpuller's shallow clone and fetch): git's dumb
        # transport is not used, but the files must be theirs to read.
        for folder, _, files in os.walk(repo):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        return commit
    finally:
        os.umask(old_umask)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 hub/lessons.py REPO   (a bare git repository, made if missing)")
    made = publish(Path(sys.argv[1]).resolve())
    print(f"lessons: {'published as ' + made[:12] if made else 'unchanged'} in {sys.argv[1]} (branch {BRANCH})")
