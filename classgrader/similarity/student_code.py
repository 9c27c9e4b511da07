"""What a student wrote in a notebook: the code of each answer cell and of each cell they added,
normalised (normalise.py), less every line the release already has (the stub's signature, the
setup, the tests), so that two students who left the same stub do not look alike."""
import re

from .normalise import normalise

QUIZ_PREFIX = "quiz_"   # a quiz answer is one letter: shared by chance, not by copying
ADDED = "added cells"   # code cells the release does not have, above every answer cell


def cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _grade_id(cell: dict) -> str:
    return ((cell.get("metadata") or {}).get("nbgrader") or {}).get("grade_id", "")


def release_lines(release: dict) -> set[str]:
    """Every non-blank line of the release's code cells, stripped: what no student wrote."""
    return {line.strip() for cell in release.get("cells", []) if cell.get("cell_type") == "code"
            for line in normalise(cell_text(cell)).splitlines() if line.strip()}


_DEF = re.compile(r"(?:async\s+)?(?:def|class)\s+(\w+)")


def _defined(release: dict) -> set[str]:
    """Names the release's stubs define: a student's `def evaluate(...)` line is the stub's, whatever
    they named its arguments."""
    return {match.group(1) for cell in release.get("cells", []) if cell.get("cell_type") == "code"
            for match in _DEF.finditer(cell_text(cell))}


def _given(line: str, given: set[str], defined: set[str]) -> bool:
    stripped = line.strip()
    match = _DEF.match(stripped)
    return stripped in given or bool(match and match.group(1) in defined)


def answer_ids(release: dict) -> list[str]:
    """The release's answer cells, in order, quiz answers left out."""
    return [_grade_id(c) for c in release.get("cells", [])
            if ((c.get("metadata") or {}).get("nbgrader") or {}).get("solution")
            and not _grade_id(c).startswith(QUIZ_PREFIX)]


class Release:
    """What every student was given, read once for a whole class."""

    def __init__(self, release: dict):
        self.lines, self.defined = release_lines(release), _defined(release)
        self.answer_ids = {_grade_id(c) for c in release.get("cells", [])
                           if ((c.get("metadata") or {}).get("nbgrader") or {}).get("solution")}


def written_code(notebook: dict, release: Release) -> dict[str, str]:
    """{answer cell's grade id, or ADDED: the student's own lines}, only where they wrote some."""
    given, defined, answer_ids = release.lines, release.defined, release.answer_ids
    written: dict[str, list[str]] = {}
    answering = ADDED  # a cell the student added counts with the answer above it (a helper split out)
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        gid = _grade_id(cell)
        if gid.startswith(QUIZ_PREFIX) or (gid and gid not in answer_ids):
            continue  # quiz letters, and the release's own graded or read-only cells
        answering = gid or answering
        own = [line for line in normalise(cell_text(cell)).splitlines()
               if line.strip() and not _given(line, given, defined)]
        if own:
            written.setdefault(answering, []).extend(own)
    return {key: "\n".join(lines) + "\n" for key, lines in written.items()}
