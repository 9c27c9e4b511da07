"""The wheels a lent GPU machine needs to run benchmarks/gpu_check.py, downloaded here into .whl/.

That machine has Python 3.12 and a CUDA build of PyTorch, with many common packages beside it,
but none of the Jupyter and nbgrader stack, and it cannot reach a package index. So the
pins of requirements.txt travel as wheels built for it (CPython 3.12, manylinux x86-64), less
what its image already has and what a grading run never imports (front ends and dev tools):
about 25 MB, inside the 64 MiB a call may carry. benchmarks/gpu_run.sh installs them there.

    python3 benchmarks/gpu_wheels.py [--list] [--into .whl]
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Of our pins, what the GPU machine's image holds (its own versions; its package list of 2026-11).
ON_THE_IMAGE = {
    "anyio", "attrs", "certifi", "charset-normalizer", "contourpy", "coverage", "cycler", "execnet", "filelock",
    "fonttools", "fsspec", "h11", "httpcore", "httpx", "idna", "iniconfig", "jinja2", "kiwisolver",
    "markdown-it-py", "markupsafe", "matplotlib", "mdurl", "mpmath", "mypy-extensions", "networkx", "numpy",
    "packaging", "pathspec", "pillow", "pip", "pluggy", "prometheus-client", "psutil", "pygments", "pyparsing",
    "pytest", "pytest-xdist", "python-dateutil", "pyyaml", "requests", "setuptools", "six", "sympy", "torch",
    "tqdm", "typing-extensions", "urllib3",
}
# Never imported by generate, autograde, a grading kernel or a lesson: the lab's front ends
# (jupyterlab and babel alone are 28 MB), the debugger, the linters, the browser tests.
NOT_FOR_GRADING = {
    "jupyterlab", "jupyterlab-server", "jupyter-lsp", "jupyter-builder", "notebook", "notebook-shim", "babel",
    "widgetsnbextension", "jupyterlab-widgets", "debugpy", "playwright", "ruff", "mypy", "librt",
    "ast-serialize", "nbval", "copydetect", "greenlet",
}
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64")


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def carried() -> list[str]:
    """requirements.txt's pins that must travel, as NAME==VERSION."""
    pins = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    return [pin for pin in pins if normal(pin.split("==")[0]) not in ON_THE_IMAGE | NOT_FOR_GRADING]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print the pins that travel, download nothing")
    parser.add_argument("--into", default=str(ROOT / ".whl"), help="the folder for the wheels")
    args = parser.parse_args()
    if args.list:
        print("\n".join(carried()))
        return 0
    platforms = [flag for platform in PLATFORMS for flag in ("--platform", platform)]
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                           "--python-version", "3.12", "--implementation", "cp", *platforms, "-d", args.into,
                           *carried()])
    if done.returncode == 0:
        size = sum(path.stat().st_size for path in Path(args.into).glob("*.whl"))
        print(f"gpu_wheels: {len(carried())} pins, {size / 2**20:.1f} MiB of wheels in {args.into}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
