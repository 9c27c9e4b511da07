"""JupyterHub for a class on one machine (./course hub): the people and paths come from the class
hub/install.py set up (STATE/class.json, STATE from $COURSE_HUB_STATE).

Log-in is PAM, with the password of each person's own system user. A workshop room could make do
with one shared password (JupyterHub's SharedPasswordAuthenticator), but then any student could
log in as any other and read their work: per-person passwords keep each student's work, and
feedback, theirs. Every server runs as its person's system user (LocalProcessSpawner), so the
file system enforces what nbgrader's exchange assumes."""
import json
import os
import pwd
from pathlib import Path
from typing import TYPE_CHECKING

state = Path(os.environ.get("COURSE_HUB_STATE", "/srv/pytorch-course"))
klass = json.loads((state / "class.json").read_text())
venv = Path(klass["venv"])

if TYPE_CHECKING:  # traitlets defines it in this file's namespace when JupyterHub loads it
    from traitlets.config import Config

    def get_config() -> Config: ...

c = get_config()

c.JupyterHub.ip = klass["ip"]
c.JupyterHub.port = klass["port"]
# The hub's and proxy's own ports, next to the public one, so two hubs (a class and a test) can run.
c.JupyterHub.hub_port = klass["port"] + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{klass['port'] + 2}"
c.ConfigurableHTTPProxy.command = [klass["proxy"]]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
# The database holds every user's tokens: root's alone, made so before JupyterHub opens it
# (SQLite gives its journal the same mode).
database = state / "jupyterhub.sqlite"
os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
os.chmod(database, 0o600)
c.JupyterHub.db_url = f"sqlite:///{database}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
# Stopping the hub stops every server and the proxy it started: nothing is left running.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = {klass["instructor"], *klass["students"]}
c.PAMAuthenticator.open_sessions = False  # no login session bookkeeping; the servers are plain processes

c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(venv / "bin" / "jupyterhub-singleuser")]
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = "/lab"
# Seconds a user's server may take to start and to answer: a 2-core machine starts a class's servers
# at once. (A number of the hub's own, unrelated to the course's cell timeout.)
SERVER_START_SECONDS = 120
c.Spawner.start_timeout = c.Spawner.http_timeout = SERVER_START_SECONDS


def by_role(spawner):
    """A student's lab (no Formgrader, no Create Assignment) or the instructor's, as ./course lab
    gives them (lab/ROLE, copied to STATE/roles/ROLE), and the hub's environment first on PATH so
    terminals find nbgrader and Python."""
    role = "instructor" if spawner.user.name == klass["instructor"] else "student"
    settings = os.path.join(klass["roles"], role)
    spawner.environment.update(JUPYTER_CONFIG_PATH=settings, PATH=f"{venv}/bin:/usr/bin:/bin",
                               GIT_CONFIG_SYSTEM=klass["gitconfig"])  # lets them clone the lessons (hub/install.py)
    # expose_app_in_browser: the hub's browser test drives the lab through window.jupyterapp
    # (the page's own scripts can reach it anyway; it grants nothing).
    spawner.args = [f"--LabApp.app_settings_dir={settings}", "--LabApp.expose_app_in_browser=True"]
    if role == "student":
        # The student's course (hub/user_start.py, run as them first): the lessons pulled into
        # ~/lessons, the first assignment fetched once released, and the start page ./course lab
        # opens on (lab/student's), the two side by side, as the lab's workspace `course`.
        workspaces = os.path.join(pwd.getpwnam(spawner.user.name).pw_dir, ".jupyter", "lab", "workspaces")
        spawner.cmd = [str(venv / "bin" / "python"), klass["user_start"], str(venv / "bin" / "jupyterhub-singleuser")]
        spawner.environment.update(
            COURSE_LESSONS_REPO=klass["lessons_repo"], COURSE_START_ASSIGNMENT=klass["start_assignment"] or "",
            COURSE_OUTBOUND=klass["outbound"], COURSE_START_PAGE=klass["start_page"], COURSE_WORKSPACES=workspaces)
        spawner.args.append(f"--LabApp.workspaces_dir={workspaces}")
        spawner.default_url = "/lab/workspaces/course"


c.Spawner.pre_spawn_hook = by_role
