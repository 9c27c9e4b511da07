"""uv, the installer both of the course's environments are built with (.venv by ./course setup,
the hub's by hub/install.py, each falling back to pip): the release both install, and the package
sources pip is configured with, and the certificates it trusts, as uv's flags. uv ignores pip's
configuration, and where pip finds the CPU torch wheel through it (find-links, file:// indexes, a
constraint file), a uv install without them downloads about 3 GB of CUDA torch. Standard library
only: ./course runs it with any Python 3.11 before a venv exists.

    python3 hub/uv_installer.py version          the uv release to install (uv==VERSION)
    python3 hub/uv_installer.py sources PYTHON   PYTHON's pip configuration as uv flags, one a line
"""
import ast
import subprocess
import sys

VERSION = "0.13.8"  # the installer only; what it installs is pinned by requirements.txt
FLAGS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url",
         "find-links": "--find-links", "constraint": "--constraint"}
TRUE = ("1", "true", "yes", "on")


def uv_flags(config: str) -> list[str]:
    """`pip config list`'s text (lines `where.option='value'`) as uv's flags, each source once."""
    flags: list[str] = []
    seen = set()
    for line in config.splitlines():
        name, _, value = line.strip().partition("=")
        key = name.rpartition(".")[2]
        if key == "no-index" and value.strip("'\"").lower() in TRUE and "--no-index" not in flags:
            flags.append("--no-index")
        if key not in FLAGS or not value:
            continue
        for item in ast.literal_eval(value).split():  # pip splits multi-valued options on whitespace
            if (key, item) not in seen:
                seen.add((key, item))
                flags += [FLAGS[key], item]
    # As pip does: the best version from any index, and the system's certificates (pip's truststore;
    # uv's own roots refuse a site's or a proxy's own authority, and sudo drops SSL_CERT_FILE).
    return [*flags, "--index-strategy", "unsafe-best-match", "--system-certs"]


def pip_config(python: str, env: dict[str, str] | None = None) -> str:
    """What `python -m pip config list` says (nothing when that Python has no pip)."""
    done = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, env=env)
    return done.stdout if done.returncode == 0 else ""


def sources(python: str, env: dict[str, str] | None = None) -> list[str]:
    """The package sources `python -m pip install` would use, as uv's flags."""
    return uv_flags(pip_config(python, env))


if __name__ == "__main__":
    if sys.argv[1:] == ["version"]:
        print(VERSION)
    elif len(sys.argv) == 3 and sys.argv[1] == "sources":
        print(*sources(sys.argv[2]), sep="\n")
    else:
        sys.exit("usage: python3 hub/uv_installer.py version | sources PYTHON")
