"""requirements.txt and environment.yml pin the same versions, exactly."""
import re

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
    lines = [l for l in (ROOT / "requirements.txt").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    loose = [l for l in lines if not PIN.match(l)]
    assert not loose, f"requirements.txt lines that are not exact pins: {loose}"


def test_environment_yml_lists_the_same_versions(covered):
    required, conda = pins(ROOT / "requirements.txt"), pins(ROOT / "environment.yml")
    assert "torch" in required
    assert conda == required, {name: (required.get(name), conda.get(name))
                               for name in set(required) | set(conda)
                               if required.get(name) != conda.get(name)}
    assert "python=3.11" in (ROOT / "environment.yml").read_text()
    covered(f"{len(required)} pins agree between requirements.txt and environment.yml")
