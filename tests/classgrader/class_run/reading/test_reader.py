"""reader: one cell's tree walked against the rules, each finding at its line; and the fields a
format string reads, as str.format reads them."""
from classgrader.class_run import code_scan
from classgrader.class_run.reading.reader import format_fields


def test_format_fields_are_the_field_names_str_format_reads_specs_included():
    assert [name for name in format_fields("{0:{1.x}} {a[0]!r} {{plain}}") if name] == ["0", "1.x", "a[0]"]
    assert not any(format_fields("no fields {{at all}}"))


def test_each_finding_is_at_its_cell_and_line():
    found = code_scan.scan(["x = 1", "import torch\ny = 2\nimport gc"])
    assert [(f.cell, f.line) for f in found] == [(1, 3)] and "imports gc" in found[0].what


def test_a_cell_the_course_wrote_is_not_read():
    assert code_scan.scan(["import gc"], given={"import gc"}) == []
