"""Committed notebooks are clean (no outputs, execution counts or widget state) and every
nbgrader cell has a readable, unique grade id; each item's heading states its points."""
import re

import pytest

from coursekit import ALL_NOTEBOOKS, ROOT, SOURCE_NOTEBOOKS, grade_cells, nbgrader_meta, read_notebook, source_text

READABLE_ID = re.compile(r"^[a-z][a-z0-9_]*$")  # not nbgrader's default "cell-3f2a..."
HEADING_POINTS = re.compile(r"^##\s+(.*)\((\d+) points?", re.M)


def test_there_are_notebooks(covered):
    assert ALL_NOTEBOOKS, "no notebooks found"
    covered(f"{len(ALL_NOTEBOOKS)} notebooks checked for hygiene")


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_outputs_counts_or_widget_state(path):
    nb = read_notebook(path)
    dirty = [i for i, c in enumerate(nb["cells"])
             if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts"
    assert "widgets" not in nb["metadata"], f"{path.name}: stored widget state in metadata"


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_grade_ids_are_readable_and_unique(path, covered):
    ids = [nbgrader_meta(c)["grade_id"] for c in read_notebook(path)["cells"] if nbgrader_meta(c)]
    unreadable = [i for i in ids if not READABLE_ID.match(i)]
    assert not unreadable, f"{path.name}: grade ids that do not say what they are: {unreadable}"
    assert len(ids) == len(set(ids)), f"{path.name}: a grade id is used twice"
    covered(f"{path.name}: {len(ids)} nbgrader cells with readable ids")


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_test_cells_say_what_they_check(path):
    for cell in grade_cells(read_notebook(path)):
        first = source_text(cell).lstrip().splitlines()[0]
        assert first.startswith('"""') and first.endswith('"""') and len(first) > 10, (
            f"{nbgrader_meta(cell)['grade_id']}: a test cell opens with a one-line docstring")


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_headings_state_the_points_of_their_test_cells(path, covered):
    """Points in '## Q1 · ... (3 points)' equal the sum of that section's test cells."""
    sections, current = [], None
    for cell in read_notebook(path)["cells"]:
        if cell["cell_type"] == "markdown" and source_text(cell).startswith("## "):
            match = HEADING_POINTS.match(source_text(cell))
            current = [match.group(1).strip(), int(match.group(2)), 0] if match else None
            if current:
                sections.append(current)
        elif current and nbgrader_meta(cell).get("grade"):
            current[2] += nbgrader_meta(cell)["points"]
    assert sections, f"{path.name}: no '## ... (N points)' headings"
    wrong = [(title, said, actual) for title, said, actual in sections if said != actual]
    assert not wrong, f"{path.name}: headings whose points differ from their test cells: {wrong}"
    covered(f"{path.name}: {len(sections)} headings match their cells' points")
