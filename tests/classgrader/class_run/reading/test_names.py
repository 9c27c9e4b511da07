"""names: what names, attributes and imports reach, format strings' fields, the process's own
files, the meta device singled out."""
from classgrader.class_run import code_scan
from classgrader.class_run.reading.names import format_fields


def found(code: str) -> str:
    return " | ".join(f.what for f in code_scan.scan([code]))


def test_format_fields_are_the_field_names_str_format_reads_specs_included():
    assert [name for name in format_fields("{0:{1.x}} {a[0]!r} {{plain}}") if name] == ["0", "1.x", "a[0]"]
    assert not any(format_fields("no fields {{at all}}"))


def test_an_import_past_the_list_is_a_finding_and_torch_is_not():
    assert "imports gc" in found("import gc")
    assert found("import torch\nfrom torch import nn") == ""


def test_a_name_the_notebook_never_defines_is_a_finding():
    assert "never defines" in found("print(_i3)")


def test_a_format_string_reading_attributes_is_a_finding_and_plain_fields_are_not():
    assert "format string" in found("import torch\n'{0.sys}'.format(torch)")
    assert found("x = 3\ntext = '{} and {:.2f}'.format(x, 1.5)") == ""


def test_the_process_s_own_files_and_the_meta_device_singled_out_are_findings():
    assert "the process's own files" in found("open('/proc/self/environ').read()")
    assert "meta device" in found("import torch\nx = torch.zeros(1)\nif x.device.type == 'meta':\n    pass")
