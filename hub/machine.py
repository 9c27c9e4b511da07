"""What setting a class up (install.py) and taking it down (remove.py) share: where the hub keeps
its things on this machine, and how each step speaks, fails and runs a command. Standard library
only, so ./course can load install.py by path to check its arguments."""
import re
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

STATE = Path("/srv/pytorch-course")  # the class's own files (root only): --state
OPT = Path("/opt/pytorch-course")  # the environment every class's servers share, kept by --remove
CHP = Path("/usr/local/bin/configurable-http-proxy")  # the proxy JupyterHub drives, kept too


def say(message: str) -> None:
    print(f"course hub: {message}", flush=True)


def fail(message: str) -> NoReturn:
    print(f"course hub: {message}", file=sys.stderr)
    sys.exit(2)


def run(*cmd, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} failed: {(done.stderr or done.stdout).strip()[-800:]}")
    return done


def sudoers_file(state: Path) -> Path:
    """One rule per class state folder, so a test's class never replaces a real one's."""
    return Path("/etc/sudoers.d") / ("course-hub-" + re.sub(r"[^A-Za-z0-9_-]", "_", state.name))
