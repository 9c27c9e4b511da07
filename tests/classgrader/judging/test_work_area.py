"""work_area: grading refuses to run unconfined unless told to, and says how; the kernel gets an
allow-list and a work area of its own, holding the student's regular files and never a notebook."""
import logging
import os

import pytest

from classgrader.judging import work_area
from classgrader.kernels import sandbox
from coursekit import IN_CI

LOG = logging.getLogger("test_work_area")


def test_refuses_without_a_sandbox(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "unavailable_reason", lambda: "not running as root.")
    with pytest.raises(work_area.SandboxUnavailable) as refused:
        work_area.WorkArea(use_sandbox=True, limits={}, log=LOG)
    assert "not running as root." in str(refused.value) and "COURSE_SANDBOX=off" in str(refused.value)


def test_an_explicit_opt_out_runs_unconfined():
    area = work_area.WorkArea(use_sandbox=False, limits={}, log=LOG)
    assert area.user is None and os.path.isdir(area.path)
    area.close()
    assert not os.path.exists(area.path)


def test_the_kernel_sees_an_allow_list():
    allowed = work_area.allowed_paths()
    repo = work_area.REPO
    assert os.path.join(repo, "autograder") in allowed and os.path.realpath(os.sys.prefix) in allowed
    assert repo not in allowed and not any(p.startswith(os.path.join(repo, d)) for p in allowed
                                           for d in ("source", "runtime", ".git", "release"))
    assert os.path.expanduser("~") not in allowed and "/" not in allowed and "/home" not in allowed


def test_the_work_area_gets_regular_files_only_and_no_notebook(tmp_path):
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "data.csv").write_text("a,b\n")
    (tmp_path / "src" / "sub" / "notes.txt").write_text("n")
    (tmp_path / "src" / "01_tensors.ipynb").write_text("{hidden tests}")
    (tmp_path / "src" / "link").symlink_to("/etc/passwd")
    (tmp_path / "dst").mkdir()
    work_area.copy_regular_files(str(tmp_path / "src"), str(tmp_path / "dst"))
    found = sorted(str(p.relative_to(tmp_path / "dst")) for p in (tmp_path / "dst").rglob("*"))
    assert found == ["data.csv", "sub", "sub/notes.txt"]


@pytest.mark.skipif(sandbox.unavailable_reason() is not None and not IN_CI, reason="needs a sandbox (root on Linux)")
def test_each_kernel_gets_a_fresh_record_folder_of_its_own_and_the_area_goes_with_close(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n")
    (tmp_path / "01_tensors.ipynb").write_text("{hidden tests}")
    area = work_area.WorkArea(use_sandbox=True, limits={}, log=LOG)
    try:
        with pytest.raises(RuntimeError, match="before the work area was filled"):
            area.new_trace_dir()
        area.fill(str(tmp_path))
        assert sorted(os.listdir(area.path)) == [work_area.RECORDS, "data.csv"]
        area.new_trace_dir()
        first = area.trace_dir
        assert os.path.dirname(first) == area.records_path
        assert (os.stat(first).st_uid, os.stat(first).st_mode & 0o777) == (sandbox._account(area.user)[0], 0o700)
        area.new_trace_dir()  # the next kernel's: the last one's is gone, under a name it could not guess
        assert area.trace_dir != first and not os.path.exists(first)
        assert not area.newly_full()
    finally:
        area.close()
    assert not os.path.exists(area.path)
