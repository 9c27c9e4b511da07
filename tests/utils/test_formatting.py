"""utils.formatting: the one shape notation (and its bare form for data- hooks), dtype names, byte
sizes in binary units, HTML escaping, and the shared table look; plus the promise that makes it
shareable: importing it pulls in no widget library and no part of the check library."""
import subprocess
import sys

import pytest
import torch

from utils.formatting import (
    ALARM,
    CELL,
    HIGHLIGHT,
    attr,
    byte_unit,
    data_table,
    dtype_name,
    facts_table,
    flag,
    format_bytes,
    format_shape,
    shape_attr,
    td,
)

# ---- shapes ----

@pytest.mark.parametrize(("shape", "text"), [
    ((3, 4), "(3, 4)"),
    ((3,), "(3,)"),
    ((), "()"),
    (torch.Size([2, 1, 5]), "(2, 1, 5)"),
    (torch.Size([7]), "(7,)"),
    (torch.zeros(()).shape, "()"),
])
def test_format_shape(shape, text):
    assert format_shape(shape) == text
    assert format_shape(shape) == str(tuple(shape))    # exactly how Python writes the tuple


def test_shape_attr_is_format_shape_without_brackets():
    assert [shape_attr(s) for s in [(8, 1), (8,), (), torch.Size([2, 3])]] == ["8, 1", "8", "", "2, 3"]
    assert shape_attr(None) == "" == format_shape(None)
    # numpy and tensor integers print as plain numbers, never as np.int64(3) or tensor(3)
    import numpy as np
    assert format_shape((np.int64(3), torch.tensor(2))) == "(3, 2)" == f"({shape_attr((np.int64(3), 2))})"


def test_dtype_name():
    assert [dtype_name(d) for d in (torch.float16, torch.bfloat16, torch.int64, torch.bool)] == [
        "float16", "bfloat16", "int64", "bool"]


# ---- bytes ----

def test_format_bytes():
    assert [format_bytes(n) for n in (0, 512, 1023, 1024, 1536, 165_888, 1_659_392, 5 * 2**20, 3 * 1024 ** 3)] == [
        "0 B", "512 B", "1023 B", "1.00 KiB", "1.50 KiB", "162.0 KiB", "1.58 MiB", "5.00 MiB", "3.00 GiB"]
    assert format_bytes(-2048) == "-2.00 KiB"           # memory given back keeps its sign


def test_byte_unit_is_the_largest_unit_reached():
    assert [byte_unit(n) for n in (0, 1023, 1024, 5 * 2**20, 2**40)] == [
        ("B", 1), ("B", 1), ("KiB", 1024), ("MiB", 2**20), ("GiB", 2**30)]


# ---- HTML ----

def test_attr_escapes_everything_a_file_or_a_student_could_type():
    assert attr('"><script>alert(1)</script>') == "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
    assert attr("it's") == "it&#x27;s" and attr(None) == "" and attr(3) == "3"
    assert (flag(True), flag(False), flag(0), flag([1])) == ("true", "false", "false", "true")


def test_tables_share_one_look_and_escape_their_text():
    cell = td("<b>", "color:red")
    assert cell == f'<td style="{CELL};color:red">&lt;b&gt;</td>' and td(1) == f'<td style="{CELL}">1</td>'
    page = data_table("things", ["name", "a<b"], [f"<tr>{td('x')}</tr>"], 'data-count="1"')
    assert page.startswith('<table class="things" data-count="1" style="border-collapse:collapse"><thead><tr>')
    assert f'<th style="{CELL}">a&lt;b</th>' in page and page.endswith(f"<tbody><tr>{td('x')}</tr></tbody></table>")
    assert data_table("empty", [], []).startswith('<table class="empty" style=')
    facts = facts_table([("shape", "(3,)"), ("<k>", 1)], "facts")
    assert facts.startswith('<table class="facts"><tr><th style="text-align:left;padding-right:8px">shape</th>')
    assert "<td>(3,)</td>" in facts and "&lt;k&gt;" in facts and facts_table([]) == "<table></table>"
    assert HIGHLIGHT != ALARM                            # picked and unsafe must never look alike


def test_imports_no_widgets_and_no_check_library():
    # The check library imports this module inside every grading kernel: it must stay that light.
    code = ("import sys, utils.formatting; "
            "print(sorted(m for m in ('ipywidgets', 'autograder', 'anywidget', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
