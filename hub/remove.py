"""`./course hub --remove [--state DIR]`: take down the class hub/install.py set up at DIR, so
that the machine is as it was: the users it made (their processes first, each by its
id, then the user, their home and mail spool), the exchange, the sudo rule, the state folder
(passwords, database, roles, the wrapper). Only what STATE/class.json records the hub making
is removed; a user it found already there is never touched. The hub must be stopped first
(Ctrl-C). The shared environment (/opt/pytorch-course, the proxy, Debian's packages) is kept for
the next class; `--remove` says where it is."""
import contextlib
import json
import os
import pwd
import shutil
import signal
import sys
import time
from pathlib import Path

import machine


def uid(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def processes_of(uids: set[int]) -> list[int]:
    """The ids of processes whose real user is one of `uids` (read from /proc: no psutil here)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    found.append(int(entry.name))
            except OSError:  # it ended meanwhile
                pass
    return found


def hub_running(state: Path) -> bool:
    try:
        os.kill(int((state / "jupyterhub.pid").read_text()), 0)
        return True
    except (OSError, ValueError):
        return False


def remove(state: Path) -> None:
    record = state / "class.json"
    if not record.exists():
        machine.fail(f"no class at {state} (no class.json): nothing to remove")
    if hub_running(state):
        machine.fail(f"the hub of {state} is running: stop it (Ctrl-C) and run --remove again")
    klass = json.loads(record.read_text())
    made = [name for name in klass.get("made", []) if uid(name) is not None]
    uids = {number for number in map(uid, made) if number is not None}  # one may go meanwhile
    for pid in processes_of(uids):  # userdel refuses a user with processes
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while processes_of(uids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for name in made:
        machine.run("userdel", "--remove", name)
        machine.say(f"removed user {name} and their home")
    # The folders it made (/srv/pytorch-course, /srv/nbgrader for the exchange), the state always.
    for folder in [*klass.get("folders", []), str(state)]:
        if Path(folder).exists():
            shutil.rmtree(folder)
            machine.say(f"removed {folder}")
    machine.sudoers_file(state).unlink(missing_ok=True)
    machine.say(f"removed the sudo rule {machine.sudoers_file(state)}; kept for the next class: {machine.OPT}, "
                f"{machine.CHP} (remove them by hand if no class will run here again)")


if __name__ == "__main__":
    remove(Path(sys.argv[1]) if len(sys.argv) > 1 else machine.STATE)
