"""The product says what is, not what was: no README, guide, code, comment, test or notebook
speaks of its own history ("last time", "issue 14", "this round", "as before"). What changed
goes in commit messages, and for users in CHANGES.md, the one file that may."""
import json
import re
import subprocess

import pytest

from coursekit import ROOT

HISTORY = re.compile("|".join([
    r"\b(this|last|previous|next) stop\b", r"\bthe stop before\b", r"\bstops? (earlier|ago)\b",
    r"\bissues? #?\d+",  # this project's issues; another project's are owner/name#N
    r"\bas before\b", r"\blast time\b", r"\b(this|last|previous|earlier|next) round\b",
    r"\b(before|after|since) the split\b", r"\bthe split removed\b",
    r"\bearlier (this|that|the same) (stop|round|session|week|day)\b",
]), re.I)
KINDS = (".py", ".md", ".ipynb", ".toml", ".txt", ".yml", ".yaml", ".cfg", ".json", ".sh", ".html", ".tpl", ".j2")
BARE = {"course", ".ci/run", "hub/course-autograde"}  # scripts without an extension
NOT_PRODUCT = {"CHANGES.md", "tests/test_history_words.py"}  # (this file names the words to find them)


def product_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    return sorted(p for p in listed if (p.endswith(KINDS) or p in BARE) and p not in NOT_PRODUCT
                  and (ROOT / p).is_file())


def text_of(path: str) -> str:
    raw = (ROOT / path).read_text(encoding="utf-8", errors="replace")
    if path.endswith(".ipynb"):  # what a reader sees: cell sources, not escaped JSON
        cells = json.loads(raw)["cells"]
        return "\n".join(c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in cells)
    return raw


def hits() -> dict[tuple[str, str], list[int]]:
    found = {}
    for path in product_files():
        for number, line in enumerate(text_of(path).splitlines(), 1):
            for match in HISTORY.finditer(line):
                found.setdefault((path, match.group(0).lower()), []).append(number)
    return found


def test_no_history_words_in_the_product(covered):
    found = hits()
    assert not found, "history words (put them in commit messages or CHANGES.md): " + "; ".join(
        f"{path}:{lines[0]}: '{words}'" for (path, words), lines in sorted(found.items()))
    covered(f"{len(product_files())} product files without history words")


@pytest.mark.parametrize("line", ["The stop before measured 7 min", "the routes of issue 14", "re-checked as before",
                                  "Before this round's changes", "Two stops earlier: 7 min", "Earlier this stop, 6x",
                                  "the circle the split removed", "unlike last time"])
def test_the_pattern_catches_history(line):
    assert HISTORY.search(line)


@pytest.mark.parametrize("line", ["the kernel stops before the grader reads", "a round trip", "split into two",
                                  "color: #222", "see jupyterhub/helm-chart#47", 'checkpoint["epoch"] after the stop',
                                  "TinyNet after the refactor"])
def test_the_pattern_lets_ordinary_words_be(line):
    assert not HISTORY.search(line)
