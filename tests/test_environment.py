"""requirements.txt and environment.yml pin the same versions, exactly."""
import re
from pathlib import Path

import pytest

from coursekit import ROOT

PIN = re.compile(r"^\s*(?:-\s+)?([A-Za-z0-9_.\-]+)==([^\s#]+)\s*$")


def pins(path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line)
        if match:
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def test_every_requirement_is_an_exact_pin():
    lines = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    loose = [line for line in lines if not PIN.match(line)]
    assert not loose, f"requirements.txt lines that are not exact pins: {loose}"


def test_environment_yml_lists_the_same_versions(covered):
    required, conda = pins(ROOT / "requirements.txt"), pins(ROOT / "environment.yml")
    assert "torch" in required
    assert conda == required, {name: (required.get(name), conda.get(name))
                               for name in set(required) | set(conda)
                               if required.get(name) != conda.get(name)}
    assert "python=3.11" in (ROOT / "environment.yml").read_text()
    covered(f"{len(required)} pins agree between requirements.txt and environment.yml")


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_environment_is_exactly_the_pins(covered):
    """What ./course built (with uv or pip) holds every pin at its version and nothing else but
    the course itself. A local build tag (torch's +cpu) is the pin."""
    import importlib.metadata
    import sys
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip("not running in the .venv ./course builds")
    pinned = {normalised(name): version for name, version in pins(ROOT / "requirements.txt").items()}
    # Only what is installed in the venv: setuptools, once imported, puts its vendored copies
    # (older packaging, platformdirs, ...) on sys.path, and they carry metadata too.
    import sysconfig
    places = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    found = {normalised(d.metadata["Name"]): d.version for d in importlib.metadata.distributions(path=places)}
    wrong = {name: (version, found.get(name)) for name, version in pinned.items()
             if found.get(name, "").split("+")[0] != version}
    assert not wrong, f"installed versions that are not the pins (pin, installed): {wrong}"
    extra = set(found) - set(pinned) - {"pytorch-fundamentals-course"}
    assert not extra, f"installed but not pinned: {sorted(extra)} (./course setup rebuilds exactly the pins)"
    installer = (ROOT / ".venv" / ".installer")
    covered(f"{len(pinned)} pins installed exactly, nothing else"
            + (f" (built with {installer.read_text().strip()})" if installer.exists() else ""))
