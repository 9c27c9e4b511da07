"""isolated_execute: grading refuses to run unconfined unless told to, and says how; the kernel
gets an allow-list and a work area of its own, never nbgrader's folder."""
import os

import pytest
from traitlets.config import Config

from classgrader import isolated_execute, sandbox


def test_refuses_without_a_sandbox(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "unavailable_reason", lambda: "not running as root.")
    execute = isolated_execute.IsolatedExecute(config=Config())
    with pytest.raises(isolated_execute.SandboxUnavailable) as refused:
        execute._workarea()
    assert "not running as root." in str(refused.value) and "COURSE_SANDBOX=off" in str(refused.value)


def test_an_explicit_opt_out_runs_unconfined():
    config = Config()
    config.IsolatedExecute.use_sandbox = False
    execute = isolated_execute.IsolatedExecute(config=config)
    folder, user = execute._workarea()
    assert user is None and os.path.isdir(folder)
    os.rmdir(folder)


def test_the_kernel_sees_an_allow_list():
    allowed = isolated_execute.allowed_paths()
    repo = isolated_execute.REPO
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
    isolated_execute.copy_regular_files(str(tmp_path / "src"), str(tmp_path / "dst"))
    found = sorted(str(p.relative_to(tmp_path / "dst")) for p in (tmp_path / "dst").rglob("*"))
    assert found == ["data.csv", "sub", "sub/notes.txt"]
