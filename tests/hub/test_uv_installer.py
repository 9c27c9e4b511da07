"""hub/uv_installer.py: pip's configuration as uv's flags, read from written-out `pip config
list` text and from a real pip given a written pip.conf; the one uv release ./course and the
hub's set-up both install; and, where a uv and the local CPU torch wheel are at hand, that uv with
these flags takes that wheel (without them it takes the CUDA build from the index)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit import ROOT

sys.path.insert(0, str(ROOT / "hub"))
import uv_installer

SCRIPT = ROOT / "hub" / "uv_installer.py"
STRATEGY = ["--index-strategy", "unsafe-best-match", "--system-certs"]
# As `python3 -m pip config list` prints this machine's: an environment variable and two files,
# find-links given twice, two extra indexes in one value.
CONFIG = """:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.find-links='/opt/wheels'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/opt/wheels'
"""


def test_this_machines_pip_config_becomes_uv_flags_each_source_once():
    assert uv_installer.uv_flags(CONFIG) == [
        "--find-links", "/opt/wheels", "--constraint", "/etc/xdg/pip/constraints.txt",
        "--extra-index-url", "file:///opt/pypi/simple", "--extra-index-url", "file:///opt/pypi-more/simple",
        *STRATEGY]


def test_an_index_url_and_no_index_are_kept_and_other_options_left_out():
    config = ("global.index-url='https://mirror.example/simple'\nglobal.no-index='true'\n"
              "install.no-index='1'\nglobal.timeout='60'\nglobal.trusted-host='mirror.example'\n")
    assert uv_installer.uv_flags(config) == ["--index-url", "https://mirror.example/simple", "--no-index", *STRATEGY]
    assert uv_installer.uv_flags("") == STRATEGY
    assert uv_installer.uv_flags("global.no-index='false'\n") == STRATEGY


def test_a_real_pip_given_a_written_config_file_and_variables(tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nfind-links = /srv/wheels\n[install]\nconstraint = /srv/caps.txt\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=str(conf), PIP_EXTRA_INDEX_URL="file:///srv/a file:///srv/b", HOME=str(tmp_path))
    flags = uv_installer.sources(sys.executable, env)
    pairs = set(zip(flags[::2], flags[1::2]))
    assert {("--find-links", "/srv/wheels"), ("--constraint", "/srv/caps.txt"),
            ("--extra-index-url", "file:///srv/a"), ("--extra-index-url", "file:///srv/b")} <= pairs, flags
    assert flags[-3:] == STRATEGY


def test_a_python_without_pip_gives_the_strategy_alone(tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], check=True, timeout=60)
    assert uv_installer.sources(str(bare / "bin" / "python")) == STRATEGY


def test_the_command_line_says_the_release_and_the_sources():
    version = subprocess.run([sys.executable, SCRIPT, "version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == uv_installer.VERSION
    said = subprocess.run([sys.executable, SCRIPT, "sources", sys.executable], capture_output=True, text=True,
                          check=True).stdout.splitlines()
    assert said == uv_installer.sources(sys.executable)
    wrong = subprocess.run([sys.executable, SCRIPT, "sources"], capture_output=True, text=True)
    assert wrong.returncode == 1 and "usage" in wrong.stderr


def test_course_and_the_hub_take_the_release_from_here():
    assert uv_installer.VERSION not in (ROOT / "course").read_text(), "./course names a uv release of its own"
    assert "hub/uv_installer.py\" version" in (ROOT / "course").read_text()
    assert "uv_installer.VERSION" in (ROOT / "hub" / "install.py").read_text()


def a_uv() -> str | None:
    cached = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"), "pytorch-course",
                  f"uv-{uv_installer.VERSION}", "bin", "uv")
    return shutil.which("uv") or (str(cached) if cached.exists() else None)


def test_uv_with_these_flags_takes_the_local_cpu_torch_wheel(covered):
    flags = uv_installer.sources(sys.executable)
    wheels = [Path(d) for k, d in zip(flags[::2], flags[1::2]) if k == "--find-links"]
    if not any(w.glob("torch-*+cpu-*.whl") for w in wheels if w.is_dir()) or not a_uv():
        pytest.skip("no uv, or no local CPU torch wheel that pip is told of, on this machine")
    done = subprocess.run([a_uv(), "--no-config", "pip", "compile", "--no-deps", "--python-version", "3.11", *flags,
                           "-"], input="torch==2.13.0\n", capture_output=True, text=True, timeout=120)
    assert "torch==2.13.0+cpu" in done.stdout.split(), done.stdout + done.stderr
    covered(f"uv with pip's sources ({' '.join(flags)}) resolves torch==2.13.0 to the local CPU wheel")
