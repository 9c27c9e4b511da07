"""The hub's tear-down and its refusals, on this machine for real, without starting a hub:
`./course hub --remove` takes away the users hub/install.py made (their processes, homes and
groups), the folders it made, the sudo rule and the state folder, and leaves the machine as
it was (/etc/passwd, /etc/group, /etc/sudoers.d, /srv, /home); install refuses to serve while
a student could read the solutions or the hub's database. Users are made with install's own
ensure_user and the rule with its own sudo_rule. Needs root (skipped without, saying why)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coursekit import ROOT, machine_held

sys.path.insert(0, str(ROOT / "hub"))
import install
import remove

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the tear-down makes and removes system users: run as root")
STATE = Path("/srv/pytorch-course-teardowntest")
EXCHANGE = Path("/srv/pytorch-course-teardowntest-exchange")
PEOPLE = ["pthub-rm-teacher", "pthub-rm-ana"]


def machine() -> dict:
    """What a class adds to a machine: user and group names, sudo rules, folders in /srv and /home."""
    def names(path):
        return sorted(line.split(":")[0] for line in Path(path).read_text().splitlines() if line)
    return {"users": names("/etc/passwd"), "groups": names("/etc/group"),
            "sudoers.d": sorted(os.listdir("/etc/sudoers.d")), "srv": sorted(os.listdir("/srv")),
            "home": sorted(os.listdir("/home"))}


@pytest.fixture
def a_class():
    """A class as install.main leaves it (its users, one running a process, the folders, the
    rule), made with install's own pieces; removed by hand afterwards if the test failed."""
    # Held from the snapshot to the clean-up: no other test changes the machine meanwhile.
    with machine_held():
        assert not STATE.exists() and not any(install.user_exists(n) for n in PEOPLE), \
            "a run killed midway left its class"
        before = machine()
        made, passwords = [], {}
        folders = [str(install.topmost_missing(STATE)), str(install.topmost_missing(EXCHANGE))]
        STATE.mkdir()
        EXCHANGE.mkdir()
        for name in PEOPLE:
            install.ensure_user(name, made, passwords)
        install.sudo_rule(PEOPLE[0], STATE)
        (STATE / "class.json").write_text(json.dumps({"made": made, "folders": folders, "exchange": str(EXCHANGE)}))
        sleeper = subprocess.Popen(["runuser", "-u", PEOPLE[1], "--", "sleep", "600"])  # a server left behind
        time.sleep(0.5)
        yield before, sleeper
        sleeper.kill()
        uids = {install.pwd.getpwnam(n).pw_uid for n in PEOPLE if install.user_exists(n)}
        for pid in remove.processes_of(uids):  # runuser's child outlives it; userdel refuses a user with processes
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while remove.processes_of(uids) and time.monotonic() < deadline:
            time.sleep(0.1)
        for name in PEOPLE:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        for folder in (STATE, EXCHANGE):
            subprocess.run(["rm", "-rf", str(folder)])
        install.sudoers_file(STATE).unlink(missing_ok=True)


def test_remove_leaves_the_machine_as_before(a_class, covered):
    before, sleeper = a_class
    assert machine() != before
    done = subprocess.run([str(ROOT / "course"), "hub", "--remove", "--state", str(STATE)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sleeper.wait(timeout=10) is not None  # the user's process was ended before the user went
    assert machine() == before
    assert not STATE.exists() and not EXCHANGE.exists() and not install.sudoers_file(STATE).exists()
    again = subprocess.run([str(ROOT / "course"), "hub", "--remove", "--state", str(STATE)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    assert (again.returncode, again.stderr.count("\n")) == (2, 1), again.stderr
    covered("./course hub --remove: the class's users (a process of one ended first), homes, groups, folders, "
            "sudo rule and state gone; /etc/passwd, /etc/group, /etc/sudoers.d, /srv, /home unchanged; "
            f"a second --remove says in one line: {again.stderr.strip()}")


def test_refuses_while_a_student_could_read_the_solutions_or_the_database(a_class, monkeypatch, capsys, covered):
    checkout = STATE / "checkout"  # a checkout as cloned somewhere everyone may enter
    (checkout / "source" / "01_tensors").mkdir(parents=True, mode=0o755)
    (checkout / "source" / "01_tensors" / "01_tensors.ipynb").write_text("{}")
    for folder in (STATE, checkout, checkout / "source", checkout / "source" / "01_tensors"):
        os.chmod(folder, 0o755)
    monkeypatch.setattr(install, "CHECKOUT", checkout)
    student = PEOPLE[1]
    assert install.readable_by(student, checkout / "source")
    with pytest.raises(SystemExit) as refused:
        install.keep_private(student, STATE)
    said = capsys.readouterr().err
    assert refused.value.code == 2 and said.count("\n") == 1 and f"chmod 700 {checkout}" in said, said
    os.chmod(checkout, 0o700)  # what the line says to do
    database = STATE / "jupyterhub.sqlite"
    database.write_text("")
    os.chmod(database, 0o644)  # as JupyterHub makes it under a usual umask
    install.keep_private(student, STATE)  # goes on, and the database is the hub's alone again
    assert oct(database.stat().st_mode & 0o777) == "0o600" and not install.readable_by(student, database)
    covered(f"the hub refuses in one line while a student can read source/ ({said.strip()}); "
            "after chmod 700 it goes on, and the database is made 0600")
