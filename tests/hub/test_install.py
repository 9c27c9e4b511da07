"""hub/install.py's refusals come first: `sudo ./course hub ...`, run as docs/hub.md says (Debian's
python3 first on PATH), refuses in one line, exit 2, before making any user, folder or environment,
when a student could read the checkout's solutions, when a port it needs is taken, and when the
only Python at hand is older than the pins allow. On small checkouts made here (the ./course script
and its checks, hub/, two assignments), never this tree. Needs root (skipped without, saying why).

Then the hub's environment, in folders root alone may write: built with uv, exactly the pins; uv
taken only from where root alone could have put it (never a path another user may change); pip
building it when uv cannot be installed or fails, saying so in one line."""
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from coursekit import ROOT, argument_course, machine_held

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the hub's set-up runs as root (sudo ./course hub)")
PEOPLE = ["pthub-pf-teacher", "pthub-pf-ana"]
DEBIAN_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"


def machine() -> dict:
    names = sorted(line.split(":")[0] for line in Path("/etc/passwd").read_text().splitlines() if line)
    return {"users": names, "srv": sorted(os.listdir("/srv")), "opt": sorted(os.listdir("/opt")),
            "sudoers.d": sorted(os.listdir("/etc/sudoers.d"))}


def hub_checkout(root: Path) -> Path:
    argument_course(root)
    shutil.copytree(ROOT / "hub", root / "hub", ignore=shutil.ignore_patterns("__pycache__", "z2jh"))
    (root / "notebooks").mkdir()
    shutil.copy2(ROOT / "notebooks" / "01_tensors_lesson.ipynb", root / "notebooks")
    return root


def sudo_hub(checkout: Path, *extra: str) -> subprocess.CompletedProcess:
    if not shutil.which("sudo"):
        pytest.skip("sudo is not installed (tests/hub/test_hub.py installs it)")
    state = checkout.parent / "state"
    return subprocess.run(["sudo", str(checkout / "course"), "hub", "--instructor", PEOPLE[0], "--students", PEOPLE[1],
                           "--state", str(state), "--exchange", str(checkout.parent / "exchange"), *extra],
                          cwd=checkout, env=dict(os.environ, PATH=DEBIAN_PATH), capture_output=True, text=True,
                          timeout=120)


def refused(set_up, checkout: Path, words: str) -> str:
    """Run `set_up` (a `sudo ./course hub` that must refuse) with the machine held (machine_held),
    so that the machine after it is compared with the machine before it and nothing else."""
    with machine_held():
        before = machine()
        done = set_up()
        after = machine()
    assert (done.returncode, done.stderr.count("\n"), done.stdout) == (2, 1, ""), done.stdout + done.stderr
    assert words in done.stderr, done.stderr
    assert after == before, "the refused set-up changed the machine"
    assert not (checkout.parent / "state").exists() and not (checkout.parent / "exchange").exists()
    return done.stderr.strip()


@pytest.fixture
def readable_checkout():
    """A checkout as cloned where everyone may enter (under /srv, mode 755)."""
    top = Path("/srv/pthub-preflight")
    with machine_held():  # a folder in /srv, which the tear-down's tests compare
        shutil.rmtree(top, ignore_errors=True)
        top.mkdir(mode=0o755)
        os.chmod(top, 0o755)
    checkout = hub_checkout(top / "checkout")
    for folder, _, files in os.walk(checkout):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o755 if name == "course" else 0o644)
    yield checkout
    with machine_held():
        shutil.rmtree(top, ignore_errors=True)


def test_a_readable_checkout_is_refused_before_anything_is_made(readable_checkout, covered):
    said = refused(lambda: sudo_hub(readable_checkout), readable_checkout, f"chmod 700 {readable_checkout}")
    covered(f"sudo ./course hub on a checkout students could read: one line, exit 2, nothing made: {said}")


def test_a_taken_port_is_refused_before_anything_is_made(tmp_path, covered):
    checkout = hub_checkout(tmp_path / "checkout")  # under pytest's 0700 folder: students cannot enter
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        said = refused(lambda: sudo_hub(checkout, "--ip", "127.0.0.1", "--port", str(port)), checkout,
                       f"port {port} on 127.0.0.1 is in use")
    covered(f"a port in use: one line, exit 2, nothing made: {said}")


def test_a_python_older_than_the_pins_is_refused_before_anything_is_made(tmp_path, covered):
    debian = subprocess.run(["python3", "-c", "import sys; print(sys.version_info >= (3, 11, 5))"],
                            env=dict(os.environ, PATH=DEBIAN_PATH), capture_output=True, text=True).stdout.strip()
    if debian != "False":
        pytest.skip("Debian's python3 here is new enough for the pins: nothing to refuse")
    checkout = hub_checkout(tmp_path / "checkout")  # no .venv: Debian's Python is all there is
    said = refused(lambda: sudo_hub(checkout), checkout, "need Python 3.11.5")
    covered(f"only Debian's old python3 (no .venv): one line, exit 2, nothing made: {said}")


def test_with_a_venv_its_python_is_chosen_over_debians(tmp_path):
    install = hub_install()
    prefix, version = install.describe(ROOT / ".venv" / "bin" / "python")
    if version < install.OLDEST_PYTHON:
        pytest.skip(".venv's Python is older than the pins")
    checkout = hub_checkout(tmp_path / "checkout")
    (checkout / ".venv").symlink_to(ROOT / ".venv")
    probe = (f"import sys; sys.path.insert(0, {str(checkout / 'hub')!r}); import install; "
             "print(*install.choose_python(), sep='|')")
    done = subprocess.run(["/usr/bin/python3", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == f"{prefix}|{version}", done.stdout + done.stderr


# ---- the hub's environment: uv, which uv root may run, and pip when uv fails ----

def hub_install():
    sys.path.insert(0, str(ROOT / "hub"))
    import install
    return install


@pytest.fixture
def root_dir():
    """A folder root alone may write, as /opt/pytorch-course is (pytest's tmp_path is under /tmp,
    which everyone may write)."""
    with machine_held():  # a folder in /opt, which the refusals compare
        top = Path(tempfile.mkdtemp(prefix="pthub-uv-", dir="/opt"))
    os.chmod(top, 0o755)
    yield top
    with machine_held():
        shutil.rmtree(top, ignore_errors=True)


def script(path: Path, text: str, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{text}\n")
    os.chmod(path, mode)
    return path


def test_root_runs_only_what_root_alone_may_change(root_dir, tmp_path):
    install = hub_install()
    mine = script(root_dir / "bin" / "uv", "exit 0")
    assert install.root_only(mine)
    for mode in (0o775, 0o757):  # group- or other-writable
        os.chmod(mine, mode)
        assert not install.root_only(mine), oct(mode)
    os.chmod(mine, 0o755)
    os.chown(mine, pwd.getpwnam("nobody").pw_uid, -1)
    assert not install.root_only(mine), "a file another user owns"
    os.chown(mine, 0, -1)
    os.chmod(root_dir / "bin", 0o775)
    assert not install.root_only(mine), "a folder above it that others may write"
    os.chmod(root_dir / "bin", 0o755)
    link = root_dir / "link-to-tmp"
    link.symlink_to(script(tmp_path / "uv", "exit 0"))  # under /tmp: anyone may replace it
    assert install.root_only(mine) and not install.root_only(link)


def test_a_uv_on_path_that_is_not_roots_alone_is_passed_over(root_dir, monkeypatch, capsys):
    install = hub_install()
    theirs = script(root_dir / "theirs" / "uv", "exit 0", mode=0o777)
    ours = script(root_dir / f"uv-{install.uv_installer.VERSION}" / "bin" / "uv", "exit 0")
    monkeypatch.setattr(install, "OPT", root_dir)
    monkeypatch.setenv("PATH", f"{theirs.parent}:/usr/bin:/bin")
    assert install.find_uv() == (ours, "")
    assert f"not running {theirs}" in capsys.readouterr().out
    os.chmod(theirs, 0o755)
    assert install.find_uv() == (theirs, ""), "root's own uv on PATH is used"


def test_a_uv_root_cannot_install_says_why(root_dir, monkeypatch):
    install = hub_install()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", root_dir / "venv"], check=True, timeout=60)
    monkeypatch.setattr(install, "OPT", root_dir)
    monkeypatch.setattr(install, "VENV", root_dir / "venv")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    uv, why = install.find_uv()
    assert uv is None and why.startswith(f"pip could not install uv {install.uv_installer.VERSION}: "), why
    assert not list(root_dir.glob("uv-*")), "a failed install left its folder"


def small_checkout(root: Path) -> Path:
    """A checkout whose pins are one small package (six, as pip finds it here), with utils/."""
    checkout = root / "checkout"
    (checkout / "hub").mkdir(parents=True)
    (checkout / "utils").mkdir()
    (checkout / "utils" / "__init__.py").write_text("")
    (checkout / "requirements.txt").write_text("six==1.16.0\n")
    (checkout / "hub" / "requirements.txt").write_text("")
    (checkout / "pyproject.toml").write_text("")
    return checkout


def build(install, root_dir: Path, monkeypatch, path: str) -> str:
    """environment() in root_dir for small_checkout, with PATH as given; what it said."""
    monkeypatch.setattr(install, "OPT", root_dir)
    monkeypatch.setattr(install, "VENV", root_dir / "venv")
    monkeypatch.setattr(install, "CHECKOUT", small_checkout(root_dir))
    monkeypatch.setattr(install, "interpreter", lambda base, version: Path(sys.base_prefix, "bin", "python3.11"))
    monkeypatch.setenv("PATH", path)
    install.environment(Path(sys.base_prefix), tuple(sys.version_info[:3]))
    done = subprocess.run([root_dir / "venv" / "bin" / "python", "-c", "import six; print(six.__version__)"],
                          capture_output=True, text=True)
    assert done.stdout.strip() == "1.16.0", done.stderr
    return done.stdout


def test_when_uv_fails_pip_builds_the_environment_saying_so_in_one_line(root_dir, monkeypatch, capsys, covered):
    install = hub_install()
    failing = script(root_dir / "bin" / "uv", "echo 'error: no route to the index' >&2; exit 2")
    build(install, root_dir, monkeypatch, f"{failing.parent}:/usr/bin:/bin")
    said = [line for line in capsys.readouterr().out.splitlines() if "uv failed" in line]
    assert len(said) == 1 and "no route to the index" in said[0] and "with pip instead" in said[0], said
    covered(f"uv failing, the hub's environment is built by pip, saying so: {said[0][:160]}")


def test_the_environment_is_built_with_uv_and_exactly_the_pins(root_dir, monkeypatch, capsys, covered):
    install = hub_install()
    cached = Path.home() / ".cache" / "pytorch-course" / f"uv-{install.uv_installer.VERSION}" / "bin" / "uv"
    found = shutil.which("uv") or cached
    if not Path(found).exists():
        pytest.skip("no uv on this machine to copy (./course setup installs one)")
    ours = root_dir / f"uv-{install.uv_installer.VERSION}" / "bin" / "uv"
    ours.parent.mkdir(parents=True)
    shutil.copy(found, ours)
    build(install, root_dir, monkeypatch, "/usr/bin:/bin")
    said = capsys.readouterr().out
    assert f"with uv ({ours})" in said and "with pip instead" not in said and "  pip: " not in said, said
    listed = subprocess.run([ours, "pip", "freeze", "--python", root_dir / "venv" / "bin" / "python"],
                            capture_output=True, text=True, check=True).stdout.split()
    listed = [p for p in listed if not p.startswith(("pip==", "setuptools=="))]  # the venv's own, which sync keeps
    assert listed == ["six==1.16.0"], listed
    covered(f"the hub's environment built with root's uv, exactly the pins: {listed}")


def test_every_users_nbgrader_settings_come_from_one_process(monkeypatch):
    """The course's nbgrader_config.py loads nbgrader (seconds): read once for the course's id, a
    student's and the instructor's settings, each what hub/user_config.py prints for them."""
    install = hub_install()
    import user_config
    from traitlets.config.loader import PyFileConfigLoader
    monkeypatch.setattr(install, "VENV", ROOT / ".venv")
    runs, real_run = [], install.run
    monkeypatch.setattr(install, "run", lambda *cmd, **kw: runs.append(cmd) or real_run(*cmd, **kw))
    settings = install.nbgrader_settings(Path("/srv/x/exchange"), Path("/home/teacher/course"))
    course_id = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config().CourseDirectory.course_id
    assert settings == {"course_id": course_id, "student": user_config.user_config("/srv/x/exchange"),
                        "instructor": user_config.user_config("/srv/x/exchange", "/home/teacher/course")}
    assert len(runs) == 1
