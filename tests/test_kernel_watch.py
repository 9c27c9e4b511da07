"""kernel_watch: a child taking a sandbox's private uid is seen (so a test file that starts
sandboxed kernels without the `kernels` mark fails, tests/conftest.py); an ordinary child, or
another family's process, is not."""
import os
import subprocess

import pytest

from coursekit import ROOT
from kernel_watch import KernelWatch

pytestmark = pytest.mark.kernels  # it starts processes as a sandbox's uid, as kernels run
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root starts a process as another uid")


@needs_root
def test_a_private_uid_child_is_seen():
    with KernelWatch() as watch:
        child = subprocess.Popen(["sleep", "1"], user=250_000, group=250_000)
        child.wait()
    assert watch.seen.startswith(f"pid {child.pid}, uid 250000")


def test_an_ordinary_child_is_not_seen():
    with KernelWatch() as watch:
        subprocess.run(["sleep", "0.3"], check=True)
    assert watch.seen == ""


@needs_root
def test_a_private_uid_process_of_another_family_is_not_seen():
    """Started by a process that is gone: the machine's init adopts it, as another file's kernel."""
    with KernelWatch() as watch:
        subprocess.run(["setsid", "-f", "setpriv", "--reuid=250001", "--regid=250001", "--clear-groups",
                        "sleep", "0.5"], check=True)
    assert watch.seen == ""


def test_the_files_that_grade_in_sandboxed_kernels_are_marked():
    """Those that grade through a class run, nbgrader's autograde or the lab's Validate."""
    for name in ("test_class_grading.py", "test_exchange_flow.py", "test_autograde_e2e_a.py",
                 "classgrader/class_run/test_classroom.py", "browser/test_browser.py", "hub/test_hub.py"):
        text = (ROOT / "tests" / name).read_text()
        assert "pytest.mark.kernels" in text or "pytest.mark.exclusive_kernels" in text, name
