"""isolated_execute: grading refuses to run unconfined unless told to, and says how."""
import pytest
from traitlets.config import Config

from classgrader import isolated_execute, sandbox


def test_refuses_without_a_sandbox(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "unavailable_reason", lambda: "not running as root.")
    execute = isolated_execute.IsolatedExecute(config=Config())
    execute.cwd = str(tmp_path)
    with pytest.raises(isolated_execute.SandboxUnavailable) as refused:
        execute._jail()
    assert "not running as root." in str(refused.value) and "COURSE_SANDBOX=off" in str(refused.value)


def test_an_explicit_opt_out_runs_unconfined(tmp_path):
    config = Config()
    config.IsolatedExecute.use_sandbox = False
    execute = isolated_execute.IsolatedExecute(config=config)
    execute.cwd = str(tmp_path)
    assert execute._jail() is None


def test_the_jail_hides_the_course_and_exposes_python(tmp_path):
    spec = isolated_execute.jail_spec(str(tmp_path), hide=["/course/source"])
    assert "/course/source" in spec["hide"] and spec["workdir"] == str(tmp_path)
    assert any(path.endswith("source") for path in spec["hide"] if path.startswith(isolated_execute.REPO))
    assert isolated_execute.REPO in spec["expose"] and spec["user"].startswith("#")
