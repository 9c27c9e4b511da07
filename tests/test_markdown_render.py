"""Every markdown cell of the lessons and the assignments renders as meant: each table stays a table.

Two renderers, the two families a student meets: markdown-it-py with GFM tables (what JupyterLab's
renderer, marked, follows) and mistune with its table plugin (what nbconvert, and so the HTML feedback and
exports, use). A table fails when a row comes out as text (a line starting with `|` outside a <table>), or
when a source row is one the GFM renderer reads differently from how it looks: text after its last pipe
(dropped, or in nbconvert the row falls out of the table), a line without pipes swallowed as a row, or a row
with more cells than the header (the extra ones dropped)."""
import re

import mistune
import pytest
from markdown_it import MarkdownIt

from coursekit import LESSONS, ROOT, SOURCE_NOTEBOOKS, read_notebook, source_text

GFM = MarkdownIt("commonmark").enable(["table", "strikethrough"])
NBCONVERT_LIKE = mistune.create_markdown(plugins=["table", "strikethrough"])
NOTEBOOKS = LESSONS + SOURCE_NOTEBOOKS

TABLE = re.compile(r"<table>.*?</table>", re.S)
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def rows_as_text(html: str) -> list[str]:
    """Lines of rendered HTML, outside every <table>, that start with a pipe: table rows shown as text."""
    outside = TABLE.sub("", html)
    return [line for line in outside.splitlines() if re.sub(r"^(<[^>]+>)+", "", line).lstrip().startswith("|")]


def cells(row: str) -> int:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return len(UNESCAPED_PIPE.split(inner))


def misread_rows(markdown: str) -> list[str]:
    """Source lines of each GFM table that the renderer reads differently from how they look."""
    lines = markdown.splitlines()
    problems = []
    for token in GFM.parse(markdown):
        if token.type != "table_open" or not token.map:
            continue
        start, end = token.map
        header = cells(lines[start])
        for line in lines[start:end]:
            row = line.strip()
            if not row.startswith("|"):
                problems.append(f"a line without a leading pipe read as a row: {row!r}")
            elif not row.endswith("|"):
                problems.append(f"text after the row's last pipe: {row!r}")
            elif cells(row) != header:
                problems.append(f"{cells(row)} cells where the header has {header}: {row!r}")
    return problems


def table_problems(markdown: str) -> list[str]:
    problems = misread_rows(markdown)
    for name, render in (("markdown-it (GFM)", GFM.render), ("mistune (nbconvert)", NBCONVERT_LIKE)):
        problems += [f"{name} shows a row as text: {line.strip()!r}" for line in rows_as_text(render(markdown))]
    return problems


GOOD = "| kind | moved |\n|---|---|\n| buffer | yes |\n| `a \\| b` | no |\n\nA sentence after the table.\n"


def test_a_well_formed_table_passes_both_renderers():
    assert table_problems(GOOD) == []
    assert "<table>" in GFM.render(GOOD) and "<table>" in NBCONVERT_LIKE(GOOD)


@pytest.mark.parametrize(("broken", "found"), [
    ("| a | b |\n|---|---|\n| 1 | 2 | (a remark after the row)\n", "text after the row's last pipe"),
    ("| a | b |\n|---|---|\n| 1 | 2 |\na sentence right under the table\n", "a line without a leading pipe"),
    ("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n", "3 cells where the header has 2"),
    ("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 | (x)\n", "mistune (nbconvert) shows a row as text"),
])
def test_each_way_a_table_breaks_is_found(broken, found):
    assert any(found in problem for problem in table_problems(broken)), table_problems(broken)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_table_renders_as_a_table(path, covered):
    broken, tables = [], 0
    for index, cell in enumerate(read_notebook(path)["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = source_text(cell)
        tables += sum(token.type == "table_open" for token in GFM.parse(text))
        broken += [f"{path.name} cell [{index}]: {problem}" for problem in table_problems(text)]
    assert not broken, "tables that do not render as tables:\n" + "\n".join(broken)
    covered(f"{path.name}: {tables} tables render in markdown-it (GFM) and mistune (nbconvert)")
