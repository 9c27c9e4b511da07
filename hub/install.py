"""Set up a class on this machine for the course hub, idempotently (run again, it changes only
what is missing or out of date). Needs root, Debian and Python 3.11.

    python3 hub/install.py --instructor NAME --students A,B,C [--state DIR] [--exchange DIR]
                           [--ip IP] [--port N] [--assignments ID,...]
    python3 hub/install.py --remove [--state DIR]      (tear down the class: hub/remove.py)

What it makes, and why:
- Node and npm from Debian, configurable-http-proxy from npm (the proxy JupyterHub drives), sudo.
- One Python environment for every user's server, outside the checkout (VENV, world-readable, from the
  Python ./course uses, copied out of /root when it lives there):
  requirements.txt and hub/requirements.txt, exactly pinned, and a copy of autograder/, utils/
  and classgrader/ (OPT/code). Students never need to read the checkout, which holds the solutions.
- Real system users, one per person, each with a random password (STATE/passwords.txt, root
  only) and a private home (700). nbgrader keys a student's submissions and feedback on the OS
  user, so one user per person is what gives each student exactly their own feedback.
- nbgrader's exchange, world-writable with the sticky bit (1777), as nbgrader's multi-user docs say.
- The course folder in the instructor's home (source/, release/, the gradebook), theirs alone.
- Each user's nbgrader_config.py (hub/user_config.py: course, exchange, Validate's kernel) and the
  lab settings of their role (../lab/ROLE: a student's lab has no Formgrader, no Create Assignment).
- A sudo rule letting the instructor grade as root: the sandbox needs root (hub/course-autograde).
The users it made are recorded in STATE/class.json; a name that already belongs to someone else
is refused, never taken over. It refuses to go on while a student could read the checkout's
source/ (the solutions) or the hub's database, saying what to do."""
import argparse
import hashlib
import json
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import uv_installer  # hub/uv_installer.py: the uv release, and pip's sources as uv's flags
from machine import CHP, OPT, STATE, fail, run, say, sudoers_file

CHECKOUT = Path(__file__).resolve().parent.parent
EXCHANGE = Path("/srv/nbgrader/exchange")  # nbgrader's own default
VENV = Path("/opt/pytorch-course/venv")
LD_CONF = Path("/etc/ld.so.conf.d/pytorch-course-python.conf")
CHP_VERSION = "5.3.0"
APT = {"node": "nodejs", "npm": "npm", "sudo": "sudo", "git": "git"}  # command -> Debian package
NAME = re.compile(r"[a-z][a-z0-9-]{0,30}")
COURSE_FOLDER = "pytorch-course"  # in the instructor's home
PACKAGES = ("autograder", "classgrader", "utils")
# The lab's own server extensions (Validate's), found beside autograder/ (lab/ROLE/jupyter_server_config.py).
LAB_SERVER = Path("lab", "server")
OLDEST_PYTHON = (3, 11, 5)  # the pins' oldest (soupsieve 4.1.3 needs 3.11.5); 3.12 is not theirs


def as_user(user: str, *cmd, cwd) -> subprocess.CompletedProcess:
    """Run cmd as `user` (runuser: no password, root only), with the hub's environment first on PATH."""
    env = {"PATH": f"{VENV}/bin:/usr/bin:/bin", "HOME": str(Path(pwd.getpwnam(user).pw_dir)), "LANG": "C.UTF-8"}
    return run(shutil.which("runuser") or "/usr/sbin/runuser", "-u", user, "--", *cmd, cwd=cwd, env=env)


# ---- system software ----

def system_packages() -> None:
    missing = [pkg for cmd, pkg in APT.items() if shutil.which(cmd) is None]
    if missing:
        say(f"installing {', '.join(missing)} from Debian")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run("apt-get", "update", env=env)
        run("apt-get", "install", "-y", "--no-install-recommends", *missing, env=env)
    have = subprocess.run([CHP, "--version"], capture_output=True, text=True).stdout.strip() if CHP.exists() else ""
    if have != CHP_VERSION:
        say(f"installing configurable-http-proxy {CHP_VERSION} from npm")
        run("npm", "install", "--global", "--prefix", "/usr/local", f"configurable-http-proxy@{CHP_VERSION}")


def everyone_can_run(prefix: Path) -> bool:
    return all(os.stat(p).st_mode & 0o001 for p in [prefix, *prefix.parents])


def describe(python: Path) -> tuple[Path, tuple[int, ...]] | None:
    """A Python's base installation (a venv's is the interpreter it was made from) and version."""
    done = subprocess.run([python, "-I", "-c", "import sys; print(sys.base_prefix); print(*sys.version_info[:3])"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    prefix, version = done.stdout.split("\n", 1)
    return Path(prefix), tuple(map(int, version.split()))


def choose_python() -> tuple[Path, tuple[int, ...]]:
    """The Python the hub's environment is built from, by path, never whatever `python3` is on
    PATH (under sudo, Debian's own, older than the pins allow): the one ./course built .venv with,
    else the one running this, if it is a 3.11 new enough for the pins. Its base prefix and version."""
    candidates = (CHECKOUT / ".venv" / "bin" / "python", Path(sys.executable))
    found = [(python, described) for python in candidates
             if python.exists() and (described := describe(python)) is not None]
    fits = [(prefix, version) for _, (prefix, version) in found if version[:2] == OLDEST_PYTHON[:2]
            and version >= OLDEST_PYTHON and (prefix / "bin" / "python3.11").exists()]
    if not fits:
        seen = [f"{'.'.join(map(str, version))} at {python}" for python, (_, version) in found]
        fail(f"the hub's packages need Python {'.'.join(map(str, OLDEST_PYTHON))} or a later 3.11 (found "
             f"{'; '.join(seen) or 'none'}): run `./course setup` with one first on PATH (it builds .venv, "
             "whose Python the hub uses), then `sudo ./course hub ...` again")
    return fits[0]


def interpreter(base: Path, version: tuple[int, ...]) -> Path:
    """The chosen Python (the one ./course uses, so the same release), if every user may run it;
    else a copy of it under OPT. pyenv's lives under /root, which nobody else may enter."""
    if everyone_can_run(base):
        return base / "bin" / "python3.11"
    copy = OPT / f"python-{'.'.join(map(str, version))}"
    if not (copy / "bin" / "python3.11").exists():
        say(f"copying Python {'.'.join(map(str, version))} from {base} to {copy}, where every user may run it")
        staging = copy.with_name(copy.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(base / "lib" / "python3.11", staging / "lib" / "python3.11", symlinks=True,
                        ignore=lambda d, names: {"site-packages", "test"} & set(names))
        (staging / "lib" / "python3.11" / "site-packages").mkdir()
        for lib in (base / "lib").glob("libpython3.11*.so*"):
            shutil.copy2(lib, staging / "lib", follow_symlinks=False)
        (staging / "bin").mkdir()
        shutil.copy2(base / "bin" / "python3.11", staging / "bin")
        staging.rename(copy)
    # Its library's built-in search path is under /root: tell the loader where the copy is.
    if list((copy / "lib").glob("libpython3.11*.so*")) and (
            not LD_CONF.exists() or LD_CONF.read_text().strip() != str(copy / "lib")):
        LD_CONF.write_text(f"{copy / 'lib'}\n")
        run("ldconfig")
    return copy / "bin" / "python3.11"


def digest(paths) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path.relative_to(CHECKOUT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def root_env() -> dict[str, str]:
    """This environment with root's own home: pip and uv read their configuration and keep their
    caches under HOME and XDG_*, and a sudo that kept the invoking user's would have root follow
    paths that user controls."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    return dict(env, HOME=pwd.getpwuid(os.geteuid()).pw_dir)


def installer(cmd: list, name: str, shown: tuple[str, ...]) -> list[str]:
    """Run an installer, its lines that start with `shown` said as progress (a first build takes
    a while); its last lines if it failed, else []."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=root_env())
    tail: list[str] = []
    for line in proc.stdout or ():
        tail = [*tail, line.rstrip()][-30:]
        if line.strip().startswith(shown):
            say(f"  {name}: {line.strip()[:150]}")
    return tail if proc.wait() != 0 else []


def root_only(path: Path) -> bool:
    """Whether path (resolved) and every folder above it are root's and writable by root alone:
    what root may run without following a path another user could change."""
    real = path.resolve()
    return all((st := os.stat(p)).st_uid == 0 and not st.st_mode & 0o022 for p in [real, *real.parents])


def install_uv(home: Path) -> str:
    """uv_installer.VERSION installed at `home` with the environment's pip (once); why not, or ""."""
    staging = home.with_name(home.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    done = subprocess.run([VENV / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--target", staging, f"uv=={uv_installer.VERSION}"],
                          capture_output=True, text=True, env=root_env())
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        return f"pip could not install uv {uv_installer.VERSION}: {(done.stderr or done.stdout).strip()[-300:]}"
    shutil.rmtree(home, ignore_errors=True)
    staging.rename(home)
    return ""


def find_uv() -> tuple[Path | None, str]:
    """A uv root may run: one on PATH if it is root_only, else uv_installer.VERSION, installed
    under OPT (root's, never a user's cache). It, or None and why not."""
    on_path = shutil.which("uv")
    if on_path and root_only(Path(on_path)):
        return Path(on_path).resolve(), ""
    if on_path:
        say(f"not running {on_path}: it or a folder above it is writable by a user other than root")
    home = OPT / f"uv-{uv_installer.VERSION}"
    why = "" if (home / "bin" / "uv").exists() else install_uv(home)
    if not why and not root_only(home / "bin" / "uv"):
        why = f"{home / 'bin' / 'uv'} or a folder above it is not root's alone"
    return (None, why) if why else (home / "bin" / "uv", "")


def build_with_uv(requirements: list[Path]) -> str:
    """VENV made exactly the pins (uv pip sync) from the sources pip would use; "" when done, else
    why uv could not be had or failed (then pip builds it)."""
    uv, why = find_uv()
    if uv is None:
        return why
    python = VENV / "bin" / "python"
    sources = uv_installer.sources(str(python), root_env())
    say(f"building {VENV} from requirements.txt and hub/requirements.txt with uv ({uv}), "
        f"from pip's sources: {' '.join(sources)}")
    # --no-config: no uv.toml of anyone's; bytecode compiled now, as pip does, since users'
    # servers cannot write it into root's environment. The cache is root's (root_env).
    failed = installer([uv, "--no-config", "pip", "sync", "--python", python, "--compile-bytecode",
                        *sources, *requirements],
                       "uv", ("Resolved ", "Prepared ", "Uninstalled ", "Installed ", "Bytecode "))
    return f"uv failed: {' | '.join(failed)[-300:]}" if failed else ""


def environment(python_base: Path, version: tuple[int, ...]) -> None:
    """VENV with the pinned packages and a copy of the course's code; rebuilt when either changes."""
    sources = sorted(p for pkg in (*PACKAGES, LAB_SERVER) for p in (CHECKOUT / pkg).rglob("*") if p.is_file()
                     and "__pycache__" not in p.parts)
    requirements = [CHECKOUT / "requirements.txt", CHECKOUT / "hub" / "requirements.txt"]
    want_pins, want_code = digest([*requirements, CHECKOUT / "pyproject.toml"]), digest(sources)
    stamp = VENV / ".course-hub.json"
    python = interpreter(python_base, version)
    if (VENV / "bin" / "python").resolve() != python.resolve():  # missing, or made from another Python
        shutil.rmtree(VENV, ignore_errors=True)
        VENV.parent.mkdir(parents=True, exist_ok=True)
        say(f"making {VENV} with Python {'.'.join(map(str, version))}")
        run(python, "-m", "venv", VENV)
    have = json.loads(stamp.read_text()) if stamp.exists() else {}
    if have.get("pins") != want_pins and (why := build_with_uv(requirements)):
        say(f"{why}; building {VENV} from requirements.txt and hub/requirements.txt with pip instead "
            "(a few minutes, once)")
        # --no-deps: the requirements are the whole environment, as uv's sync takes them.
        failed = installer([VENV / "bin" / "python", "-m", "pip", "install", "--disable-pip-version-check",
                            "--progress-bar", "off", "--no-deps", *(a for r in requirements for a in ("-r", r))],
                           "pip", ("Collecting ", "Installing collected", "Successfully installed"))
        if failed:
            fail(f"pip install failed: {' | '.join(failed)[-800:]}")
    if have.get("pins") != want_pins or have.get("code") != want_code:
        # A copy, not the checkout (users' servers must not need to read it, it holds the
        # solutions), with every file (templates, vendored scripts), found through a .pth file as
        # an editable install would be.
        say(f"copying {', '.join(PACKAGES)} to {OPT / 'code'}")
        code = OPT / "code"
        staging = OPT / "code.partial"
        shutil.rmtree(staging, ignore_errors=True)
        for pkg in (*PACKAGES, LAB_SERVER):
            if (CHECKOUT / pkg).is_dir():
                shutil.copytree(CHECKOUT / pkg, staging / pkg, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.rmtree(code, ignore_errors=True)
        staging.rename(code)
        site = run(VENV / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout
        Path(site.strip(), "pytorch_course.pth").write_text(f"{code}\n")
        # An installed copy would come first on sys.path and hide this one.
        subprocess.run([VENV / "bin" / "python", "-m", "pip", "uninstall", "-y", "-q", "pytorch-fundamentals-course"],
                       capture_output=True)
        stamp.write_text(json.dumps({"pins": want_pins, "code": want_code}))


# ---- people ----

def user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def ensure_user(name: str, made: list, passwords: dict) -> None:
    if user_exists(name) and name not in made:
        fail(f"a system user '{name}' already exists and was not made by the course hub; choose another name")
    if not user_exists(name):
        run("useradd", "--create-home", "--shell", "/bin/bash", "--user-group", name)
        made.append(name)
    if name not in passwords:
        passwords[name] = secrets.token_urlsafe(12)
        run("chpasswd", input=f"{name}:{passwords[name]}\n")
    os.chmod(pwd.getpwnam(name).pw_dir, 0o700)  # nobody else may even list it


# ---- nbgrader ----

# The course's nbgrader_config.py loads nbgrader (about 3 s): one process reads it for every user.
SETTINGS = """import json, sys
sys.path.insert(0, sys.argv[1])
from traitlets.config.loader import PyFileConfigLoader
from user_config import user_config
course = PyFileConfigLoader("nbgrader_config.py", path=sys.argv[2]).load_config()
print(json.dumps({"course_id": course.CourseDirectory.course_id, "student": user_config(sys.argv[3]),
                  "instructor": user_config(sys.argv[3], sys.argv[4])}))"""


def nbgrader_settings(exchange: Path, course_root: Path) -> dict[str, str]:
    """The course's id, and a student's and the instructor's nbgrader_config.py (hub/user_config.py),
    read in the hub's environment (it needs traitlets), in one process."""
    done = run(VENV / "bin" / "python", "-P", "-c", SETTINGS, CHECKOUT / "hub", CHECKOUT, exchange, course_root,
               cwd=CHECKOUT)
    return json.loads(done.stdout)


def write_root_owned(path: Path, text: str, mode=0o644) -> None:
    """A file root owns inside a user's home: read by their server, not theirs to rewrite.
    Replaced, never written through, so a link the user put there is never followed."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


EXCHANGE_OVERRIDE = ("\n# The course hub: the exchange every user's server shares (hub/install.py).\n"
                     "c.Exchange.root = {!r}\n")


def course_folder(instructor: str, exchange: Path, assignments: list[str]) -> Path:
    """The instructor's copy of the course (never overwritten once made), its gradebook made by them."""
    home = Path(pwd.getpwnam(instructor).pw_dir)
    root = home / COURSE_FOLDER
    if not root.exists():
        say(f"copying the course into {root}")
        staging = Path(tempfile.mkdtemp(dir=home))
        for name in ("source", "release", "notebooks"):
            shutil.copytree(CHECKOUT / name, staging / name, symlinks=True)
        shutil.copy(CHECKOUT / "nbgrader_config.py", staging)
        run("chown", "-R", f"{instructor}:{instructor}", staging)
        staging.rename(root)
    config = root / "nbgrader_config.py"
    override = EXCHANGE_OVERRIDE.format(str(exchange))
    if override not in config.read_text():
        as_user(instructor, "sh", "-c", f"cat >> nbgrader_config.py <<'EOF'{override}EOF\n", cwd=root)
    os.chmod(root, 0o700)
    for assignment in assignments:
        if not (root / "release" / assignment).is_dir():
            fail(f"no assignment '{assignment}' in {root / 'release'}")
    # Records each (and its grade cells) in the instructor's gradebook, all in one process
    # (./course generate's), once: a marker says it was done, so a second start skips it.
    missing = [a for a in assignments if not (root / "runtime" / f".generated-{a}").exists()]
    if missing:
        say(f"recording {', '.join(missing)} in the gradebook")
        as_user(instructor, str(VENV / "bin" / "python"), "-m", "classgrader.commands.generate", *missing, cwd=root)
        as_user(instructor, "touch", *(str(root / "runtime" / f".generated-{a}") for a in missing), cwd=root)
    return root


def formgrader_in_a_tab(settings: Path, instructor: str) -> None:
    """On the hub the Formgrader opens in a browser tab of its own, from the lab's Course menu,
    instead of in a lab panel: every single-user server sends frame-ancestors 'none' (JupyterHub's
    default), and allowing 'self' would let one user's page frame another's on this one origin."""
    page = json.loads((settings / "page_config.json").read_text())
    page.setdefault("disabledExtensions", {})["@jupyter/nbgrader:formgrader"] = True  # its panel stays blank
    (settings / "page_config.json").write_text(json.dumps(page, indent=2))
    overrides = json.loads((settings / "overrides.json").read_text())
    overrides["@jupyterlab/mainmenu-extension:plugin"] = {"menus": [{
        "id": "jp-mainmenu-course", "label": "Course", "rank": 1000,
        "items": [{"command": "help:open", "args": {"url": f"/user/{instructor}/formgrader",
                                                    "text": "Formgrader (opens in a new tab)",
                                                    "newBrowserTab": True}}]}]}
    (settings / "overrides.json").write_text(json.dumps(overrides, indent=2))


def roles(state: Path, instructor: str) -> None:
    """Each role's lab settings: the ones ./course lab uses (lab/ROLE), copied where every server can read them."""
    for role in ("student", "instructor"):
        target = state / "roles" / role
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(CHECKOUT / "lab" / role, target)
        if role == "instructor":
            formgrader_in_a_tab(target, instructor)
        # Terminals run a plain (not login) shell: a login shell's /etc/profile resets PATH, and
        # nbgrader and Python would no longer be found in them.
        server = target / "jupyter_server_config.json"
        config = json.loads(server.read_text())
        config.setdefault("ServerApp", {})["terminado_settings"] = {"shell_command": ["/bin/bash"]}
        server.write_text(json.dumps(config, indent=2))


def sudo_rule(instructor: str, state: Path) -> None:
    wrapper = state / "bin" / "course-autograde"
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    text = (CHECKOUT / "hub" / "course-autograde").read_text().replace("@VENV@", str(VENV))
    write_root_owned(wrapper, text, 0o755)
    rule = sudoers_file(state)
    content = (f"# The course hub (hub/install.py): the instructor grades as root, in a sandbox.\n"
               f"{instructor} ALL=(root) NOPASSWD: {wrapper}\n")
    tmp = rule.with_name(f".{rule.name}.tmp")  # sudo skips names with a dot
    tmp.write_text(content)
    os.chmod(tmp, 0o440)
    run("visudo", "-cqf", tmp)
    os.replace(tmp, rule)


def topmost_missing(path: Path) -> Path | None:
    """The outermost folder that making `path` creates (None when it exists)."""
    missing = None
    while not path.exists():
        missing, path = path, path.parent
    return missing


def readable_by(user: str, *paths: Path) -> list[str]:
    """Those of `paths` (and the files under them) that `user` can read, as the kernel decides
    for that user (find -readable, run as them): what a student's terminal could open."""
    done = subprocess.run([shutil.which("runuser") or "/usr/sbin/runuser", "-u", user, "--", "find", *map(str, paths),
                           "-readable", "-type", "f", "-print", "-quit"], capture_output=True, text=True)
    return done.stdout.split()


def keep_private(student: str, state: Path) -> None:
    """Refuse to serve the class while a student could read the solutions or the hub's database."""
    db = state / "jupyterhub.sqlite"
    if db.exists():
        os.chmod(db, 0o600)  # made by JupyterHub with the umask's mode; jupyterhub_config.py makes it so too
    if readable_by(student, CHECKOUT / "source"):
        fail(f"{CHECKOUT}/source (the solutions) is readable by the students: run `chmod 700 {CHECKOUT}` "
             "(or keep the checkout under /root) and start again")
    if db.exists() and readable_by(student, db):
        fail(f"{db} (the hub's database) is readable by the students: run `chmod 600 {db}` and start again")


def parser() -> argparse.ArgumentParser:
    """The hub's arguments (./course hub checks them with this parser before anything runs)."""
    parser = argparse.ArgumentParser(prog="course hub", description=__doc__.split("\n\n")[0])
    parser.add_argument("--instructor", default="instructor")
    parser.add_argument("--students", default="student1,student2,student3", help="comma-separated user names")
    parser.add_argument("--state", type=Path, default=STATE, help="the hub's own files (root only)")
    parser.add_argument("--exchange", type=Path, default=EXCHANGE)
    parser.add_argument("--ip", default="0.0.0.0", help="where the hub listens (0.0.0.0: the whole room)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--assignments", default="", help="comma-separated ids to record in the gradebook "
                        "now (default: all)")
    parser.add_argument("--publish", action="store_true", help="publish the checkout's lessons to the class set up "
                        "at --state (students get them at their next start or pull), and nothing else")
    parser.add_argument("--remove", action="store_true", help="remove the class this made: its users and their "
                        "homes, the course, the exchange, the sudo rule, the state folder (hub/remove.py)")
    return parser


def port_free(ip: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("" if ip == "0.0.0.0" else ip, port))
            return True
        except OSError:
            return False


def preflight(args, students: list[str], assignments: list[str], serve: bool) -> tuple[Path, tuple[int, ...]]:
    """Everything that can refuse, checked before anything is built, made or copied: each refusal
    one line, exit 2. Returns the Python the environment is built from."""
    for name in [args.instructor, *students]:
        if not NAME.fullmatch(name):
            fail(f"'{name}' is not a usable user name (lower-case letters, digits and '-', starting with a letter)")
    missing = [a for a in assignments if not (CHECKOUT / "release" / a).is_dir()]
    if missing:
        fail(f"no assignment {', '.join(missing)} in {CHECKOUT / 'release'} (./course generate makes it)")
    record = args.state.resolve() / "class.json"
    made = json.loads(record.read_text()).get("made", []) if record.exists() else []
    for name in [args.instructor, *students]:
        if user_exists(name) and name not in made:
            fail(f"a system user '{name}' already exists and was not made by the course hub; choose another name")
    # A student made later is in no group of the checkout's: what user `nobody` may read, they may.
    for reader in ["nobody", *(s for s in students if user_exists(s))]:
        if user_exists(reader) and readable_by(reader, CHECKOUT / "source"):
            fail(f"{CHECKOUT}/source (the solutions) is readable by the students: run `chmod 700 {CHECKOUT}` "
                 "(or keep the checkout under /root) and start again")
    if serve:
        taken = [p for p in (args.port, args.port + 1, args.port + 2) if not port_free(args.ip, p)]
        if taken:
            fail(f"port {taken[0]} on {args.ip} is in use (the hub needs {args.port} and the next two): "
                 "stop what uses it (a hub already running?) or choose another --port")
    return choose_python()


def publish_lessons(state: Path) -> str:
    """The lessons' repository (hub/lessons.py) at STATE/lessons.git, and the git setting that lets
    students clone it though root owns it (git refuses a repository another user owns unless it is
    a safe.directory, and ignores that setting from the environment for a local clone): a system
    configuration of the servers' own (GIT_CONFIG_SYSTEM), which includes the machine's. Its URL."""
    import lessons  # hub/lessons.py; here, not at the top: ./course loads this file by path for parser()
    repo = state / "lessons.git"
    say(f"publishing the lessons ({len(lessons.lesson_files(CHECKOUT))} notebooks) to {repo}")
    commit = lessons.publish(repo, CHECKOUT)
    link = (f"/hub/user-redirect/git-pull?repo=file://{repo}&branch={lessons.BRANCH}&targetpath=lessons"
            "&urlpath=lab/workspaces/course")
    say(f"lessons {'published as ' + commit[:12] if commit else 'unchanged'}: students get them at their next "
        f"start, or at once from the hub's address followed by {link}")
    write_root_owned(state / "gitconfig", f"[include]\n\tpath = /etc/gitconfig\n[safe]\n\tdirectory = {repo}\n")
    return f"file://{repo}"


def main(argv=None, serve: bool = False) -> Path | None:
    """Set the class up (serve: ./course hub, which then starts JupyterHub, so its ports must be
    free too); the state folder, or None after --remove or --publish."""
    args = parser().parse_args(argv)
    if sys.platform != "linux" or os.geteuid() != 0:
        fail("the hub makes system users and serves them: run it as root on Linux (sudo ./course hub)")
    if args.remove:
        import remove
        remove.remove(args.state.resolve())
        return None
    state = args.state.resolve()
    if args.publish:
        if not (state / "class.json").exists():
            fail(f"no class at {state} (no class.json): set it up first (sudo ./course hub ...)")
        publish_lessons(state)
        return None
    students = [s for s in args.students.split(",") if s]
    if not students or args.instructor in students or len(set(students)) != len(students):
        fail("give one instructor and one or more different students (--instructor NAME --students A,B,C)")
    released = sorted(p.name for p in (CHECKOUT / "release").iterdir() if p.is_dir())
    assignments = [a for a in args.assignments.split(",") if a] or released
    python_base, version = preflight(args, students, assignments, serve)

    say("checked: names, ports, the checkout's permissions, Python "
        f"{'.'.join(map(str, version))} ({python_base}); setting up")
    made_folders = [str(topmost_missing(state)), str(topmost_missing(args.exchange.resolve()))]
    state.mkdir(parents=True, exist_ok=True)
    os.chmod(state, 0o711)  # users' servers read roles/ and the lessons inside it; nothing else
    OPT.mkdir(parents=True, exist_ok=True)
    os.chmod(OPT, 0o755)  # every user's server runs the environment in it
    system_packages()
    environment(python_base, version)

    record = state / "class.json"
    old = json.loads(record.read_text()) if record.exists() else {}
    made = old.get("made", [])
    # Folders this class made (for --remove): a first run's, kept by every later run.
    old["folders"] = old.get("folders") or [f for f in made_folders if f != "None"]
    secret = state / "passwords.txt"
    passwords = dict(line.split(":", 1) for line in secret.read_text().split()) if secret.exists() else {}
    say(f"users: {args.instructor}, {', '.join(students)}")
    for name in [args.instructor, *students]:
        ensure_user(name, made, passwords)
        record.write_text(json.dumps(dict(old, made=made), indent=1))  # as each is made: never lose one
    secret.write_text("".join(f"{n}:{p}\n" for n, p in sorted(passwords.items())))
    os.chmod(secret, 0o600)

    exchange = args.exchange.resolve()
    exchange.mkdir(parents=True, exist_ok=True)
    os.chown(exchange, 0, 0)
    os.chmod(exchange, 0o1777)  # anyone may create, nobody may remove what another made

    course_root = course_folder(args.instructor, exchange, assignments)
    settings = nbgrader_settings(exchange, course_root)
    for name in [args.instructor, *students]:
        home = Path(pwd.getpwnam(name).pw_dir)
        write_root_owned(home / "nbgrader_config.py", settings["instructor" if name == args.instructor else "student"])
    roles(state, args.instructor)
    sudo_rule(args.instructor, state)
    lessons_repo = publish_lessons(state)
    write_root_owned(state / "bin" / "user_start.py", (CHECKOUT / "hub" / "user_start.py").read_text())
    cid = settings["course_id"]
    record.write_text(json.dumps({
        "made": made, "folders": old["folders"], "course_id": cid, "instructor": args.instructor, "students": students,
        "ip": args.ip, "port": args.port,
        "exchange": str(exchange), "venv": str(VENV), "proxy": str(CHP), "course_root": str(course_root),
        "roles": str(state / "roles"), "state": str(state),
        # A student's start (hub/user_start.py): the lessons to pull, the assignment to fetch, the start page.
        "lessons_repo": lessons_repo, "gitconfig": str(state / "gitconfig"),
        "user_start": str(state / "bin" / "user_start.py"), "start_assignment": released[0] if released else None,
        "start_page": str(state / "roles" / "student" / "start-page.jupyterlab-workspace"),
        "outbound": str(exchange / cid / "outbound")}, indent=1))
    keep_private(students[0], state)
    say(f"ready: {args.instructor} (instructor), {', '.join(students)}; passwords in {secret}")
    return state


if __name__ == "__main__":
    main()
