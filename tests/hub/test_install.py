"""hub/install.py's refusals come first: `sudo ./course hub ...`, run as docs/hub.md says (Debian's
python3 first on PATH), refuses in one line, exit 2, before making any user, folder or environment,
when a student could read the checkout's solutions, when a port it needs is taken, and when the
only Python at hand is older than the pins allow. On small checkouts made here (the ./course script
and its checks, hub/, two assignments), never this tree. Needs root (skipped without, saying why)."""
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from coursekit import ROOT, argument_course

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


def refused(done: subprocess.CompletedProcess, before: dict, checkout: Path, words: str) -> str:
    assert (done.returncode, done.stderr.count("\n"), done.stdout) == (2, 1, ""), done.stdout + done.stderr
    assert words in done.stderr, done.stderr
    assert machine() == before, "the refused set-up changed the machine"
    assert not (checkout.parent / "state").exists() and not (checkout.parent / "exchange").exists()
    return done.stderr.strip()


@pytest.fixture
def readable_checkout():
    """A checkout as cloned where everyone may enter (under /srv, mode 755)."""
    top = Path("/srv/pthub-preflight")
    shutil.rmtree(top, ignore_errors=True)
    top.mkdir(mode=0o755)
    os.chmod(top, 0o755)
    checkout = hub_checkout(top / "checkout")
    for folder, _, files in os.walk(checkout):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o755 if name == "course" else 0o644)
    yield checkout
    shutil.rmtree(top, ignore_errors=True)


def test_a_readable_checkout_is_refused_before_anything_is_made(readable_checkout, covered):
    before = machine()
    said = refused(sudo_hub(readable_checkout), before, readable_checkout, f"chmod 700 {readable_checkout}")
    covered(f"sudo ./course hub on a checkout students could read: one line, exit 2, nothing made: {said}")


def test_a_taken_port_is_refused_before_anything_is_made(tmp_path, covered):
    checkout = hub_checkout(tmp_path / "checkout")  # under pytest's 0700 folder: students cannot enter
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        before = machine()
        said = refused(sudo_hub(checkout, "--ip", "127.0.0.1", "--port", str(port)), before, checkout,
                       f"port {port} on 127.0.0.1 is in use")
    covered(f"a port in use: one line, exit 2, nothing made: {said}")


def test_a_python_older_than_the_pins_is_refused_before_anything_is_made(tmp_path, covered):
    debian = subprocess.run(["python3", "-c", "import sys; print(sys.version_info >= (3, 11, 5))"],
                            env=dict(os.environ, PATH=DEBIAN_PATH), capture_output=True, text=True).stdout.strip()
    if debian != "False":
        pytest.skip("Debian's python3 here is new enough for the pins: nothing to refuse")
    checkout = hub_checkout(tmp_path / "checkout")  # no .venv: Debian's Python is all there is
    before = machine()
    said = refused(sudo_hub(checkout), before, checkout, "need Python 3.11.5")
    covered(f"only Debian's old python3 (no .venv): one line, exit 2, nothing made: {said}")


def test_with_a_venv_its_python_is_chosen_over_debians(tmp_path):
    import sys
    sys.path.insert(0, str(ROOT / "hub"))
    import install
    prefix, version = install.describe(ROOT / ".venv" / "bin" / "python")
    if version < install.OLDEST_PYTHON:
        pytest.skip(".venv's Python is older than the pins")
    checkout = hub_checkout(tmp_path / "checkout")
    (checkout / ".venv").symlink_to(ROOT / ".venv")
    probe = (f"import sys; sys.path.insert(0, {str(checkout / 'hub')!r}); import install; "
             "print(*install.choose_python(), sep='|')")
    done = subprocess.run(["/usr/bin/python3", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == f"{prefix}|{version}", done.stdout + done.stderr
