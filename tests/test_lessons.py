"""Each lesson's main path fits one sitting; its fine points wait at the end, under "Optional" headings.

The main path is every cell before the first heading that starts with "Optional". Its budget: at most
60 cells, and at most 20 minutes, counted as the words of its prose and code at 200 words a minute
plus 15 seconds for each code cell (running it and reading what it shows)."""
import re

import pytest

from coursekit import LESSONS, ROOT, read_notebook, source_text

MAX_CELLS = 60
MAX_MINUTES = 20
WORDS_PER_MINUTE = 200
MINUTES_PER_CODE_CELL = 0.25

OPTIONAL_HEADING = re.compile(r"^#{1,6}[ \t]+Optional\b", re.M)
SECTION_HEADING = re.compile(r"^##[ \t]+(.*)$", re.M)


def is_optional_heading(cell) -> bool:
    return cell["cell_type"] == "markdown" and bool(OPTIONAL_HEADING.match(source_text(cell)))


def main_path(cells: list[dict]) -> list[dict]:
    """The cells before the first Optional heading: what a first reading goes through."""
    for i, cell in enumerate(cells):
        if is_optional_heading(cell):
            return cells[:i]
    return cells


def minutes(cells: list[dict]) -> float:
    words = sum(len(source_text(c).split()) for c in cells)
    code_cells = sum(c["cell_type"] == "code" for c in cells)
    return words / WORDS_PER_MINUTE + code_cells * MINUTES_PER_CODE_CELL


def _cell(kind: str, text: str) -> dict:
    return {"cell_type": kind, "source": text}


def test_the_measure_stops_at_the_first_optional_heading_and_counts_code_cells():
    cells = ([_cell("markdown", "# A lesson"), _cell("code", "x = 1  # four words")]
             + [_cell("markdown", "## Optional: a fine point"), _cell("code", "y = 2")])
    assert main_path(cells) == cells[:2]
    assert minutes(main_path(cells)) == pytest.approx(9 / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL)
    assert main_path(cells[:2]) == cells[:2]                      # no optional part: all of it
    assert not is_optional_heading(_cell("markdown", "An optional remark, not a heading"))
    assert is_optional_heading(_cell("markdown", "### Optional, deeper"))


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_main_path_fits_one_sitting(path, covered):
    main = main_path(read_notebook(path)["cells"])
    spent = minutes(main)
    assert len(main) <= MAX_CELLS and spent <= MAX_MINUTES, (
        f"{path.name}: the main path is {len(main)} cells and {spent:.1f} minutes; the budget is {MAX_CELLS} "
        f"cells and {MAX_MINUTES} minutes: move fine points to an 'Optional: ...' section at the end")
    covered(f"{path.name}: main path {len(main)} cells, {spent:.1f} min")


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_optional_sections_come_last_and_are_announced(path):
    cells = read_notebook(path)["cells"]
    rest = cells[len(main_path(cells)):]
    if not rest:
        return
    later = [title for c in rest if c["cell_type"] == "markdown"
             for title in SECTION_HEADING.findall(source_text(c)) if not title.startswith("Optional")]
    assert not later, f"{path.name}: main-path sections after the optional part: {later}"
    assert "Optional" in source_text(cells[0]), f"{path.name}: the opening cell does not say what is optional"
