"""The dtype explorer: exact facts from the pure functions, then the widget driven through its traitlets.

Covers dtype_report (round trip, rounding error, bytes, finfo/iinfo facts, spacing checked against
torch.nextafter, integer truncation, refusal and wrap-around), compare_dtypes, table_html (the data-
hooks a browser test will use), and DtypeExplorer (setting value_box / dtype_picker / count_box
recomputes table.value)."""
import math

import pytest
import torch

from utils.dtype_explorer import DTYPES, DtypeExplorer, compare_dtypes, dtype_report, table_html

FLOATS = (torch.float64, torch.float32, torch.bfloat16, torch.float16)


def test_float16_rounds_2049_to_2048():
    r = dtype_report(2049.0, torch.float16)
    assert (r.stored, r.error, r.exact, r.spacing) == (2048.0, -1.0, False, 2.0)
    assert r.note.startswith("rounded")
    assert dtype_report(2049.0, torch.float32).exact


def test_point_one_in_each_float_dtype():
    got = {d: dtype_report(0.1, d).stored for d in FLOATS}
    assert got == {torch.float64: 0.1, torch.float32: 0.10000000149011612,
                   torch.bfloat16: 0.10009765625, torch.float16: 0.0999755859375}


def test_bytes_are_itemsize_times_count():
    r = dtype_report(1.0, torch.float64, count=1000)
    assert (r.bits, r.bytes_per_element, r.total_bytes) == (64, 8, 8000)
    assert r.total_bytes == torch.ones(1000, dtype=torch.float64).nbytes
    for d in DTYPES:
        assert dtype_report(1.0, d, count=7).total_bytes == torch.empty(7, dtype=d).nbytes


def test_float_limits_come_from_finfo():
    r = dtype_report(1.0, torch.float16)
    assert (r.eps, r.max, r.min, r.smallest_normal) == (2.0 ** -10, 65504.0, -65504.0, 2.0 ** -14)
    assert dtype_report(1.0, torch.bfloat16).eps == 2.0 ** -7
    assert dtype_report(1.0, torch.float32).eps == 2.0 ** -23
    assert dtype_report(1.0, torch.float64).eps == 2.0 ** -52


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("value", [0.0, 1e-42, 1e-6, 0.1, 1.0, 2049.0, 3e4, 65504.0, -7.3, 1e30])
def test_spacing_matches_nextafter(dtype, value):
    r = dtype_report(value, dtype)
    if math.isinf(r.stored):
        assert r.spacing is None
        return
    a = torch.tensor(abs(r.stored), dtype=dtype)
    up = torch.nextafter(a, torch.tensor(math.inf, dtype=dtype))
    if math.isinf(up.item()):                       # at max, measure the gap below instead
        up, a = a, torch.nextafter(a, torch.tensor(0.0, dtype=dtype))
    assert r.spacing == up.item() - a.item()


def test_float_overflow_and_underflow():
    assert dtype_report(70000.0, torch.float16).stored == math.inf
    assert "overflow" in dtype_report(70000.0, torch.float16).note
    assert dtype_report(70000.0, torch.bfloat16).stored == 70144.0
    assert dtype_report(1e-8, torch.float16).stored == 0.0
    assert "underflow" in dtype_report(1e-8, torch.float16).note
    nan = dtype_report(math.nan, torch.float32)
    assert math.isnan(nan.stored) and not nan.exact


def test_integers_truncate_toward_zero():
    r = dtype_report(2.7, torch.int32)
    assert (r.stored, r.spacing, r.eps, r.is_floating) == (2, 1, None, False)
    assert "truncate" in r.note
    assert dtype_report(-2.7, torch.int64).stored == -2
    assert dtype_report(-0.9, torch.int8).stored == 0
    assert type(dtype_report(5.0, torch.int16).stored) is int


def test_integer_range_refused_by_torch_tensor_and_wrap_reported():
    ii = torch.iinfo(torch.int8)
    r = dtype_report(300.0, torch.int8)
    assert (r.min, r.max, r.stored, r.error, r.exact) == (ii.min, ii.max, None, None, False)
    with pytest.raises(RuntimeError, match="without overflow"):   # what the report stands for
        torch.tensor(300.0, dtype=torch.int8)
    assert "wraps to 44" in r.note
    assert (torch.zeros((), dtype=torch.int8) + 300).item() == 44    # ...and the wrap is torch's
    assert "wraps to 255" in dtype_report(-1.0, torch.uint8).note
    assert (torch.zeros((), dtype=torch.uint8) - 1).item() == 255
    assert dtype_report(127.5, torch.int8).stored is None               # torch checks before truncating
    assert "NaN" in dtype_report(math.nan, torch.int32).note
    assert dtype_report(2**70, torch.int64).stored is None              # too big even for Python->C


def test_rejects_bool_complex_and_negative_count():
    for bad in (torch.bool, torch.complex64):
        with pytest.raises(ValueError, match="handles real float and integer dtypes"):
            dtype_report(1.0, bad)
    with pytest.raises(ValueError, match="count must be >= 0"):
        dtype_report(1.0, torch.float32, count=-1)


def test_compare_dtypes_one_row_per_dtype():
    rows = compare_dtypes(2049.0, count=10)
    assert [r.dtype for r in rows] == list(DTYPES)
    assert all(r.count == 10 for r in rows)
    assert [r.name for r in compare_dtypes(1.0, (torch.int8, torch.float16))] == ["int8", "float16"]


def test_table_html_has_stable_hooks():
    page = table_html(2049.0, torch.float16, count=1000)
    assert '<table class="dtype-explorer" data-dtype="float16" data-value="2049.0" data-count="1000"' in page
    assert ('<tr data-dtype="float16" data-stored="2048.0" data-exact="false" '
            'data-total-bytes="2000" data-selected="true"') in page
    assert '<tr data-dtype="float32" data-stored="2049.0" data-exact="true"' in page
    assert page.count('data-selected="true"') == 1
    assert 'data-dtype="int8" data-stored="None"' in table_html(300.0, torch.float16)
    assert "<script" not in page and "http" not in page   # nothing to load from anywhere


def test_widget_recomputes_when_inputs_change():
    w = DtypeExplorer(value=1.0, dtype=torch.float32, count=1)
    assert 'data-dtype="float32"' in w.table.value
    w.dtype_picker.value = torch.float16
    w.value_box.value = 2049
    assert 'class="dtype-explorer" data-dtype="float16" data-value="2049.0"' in w.table.value
    assert 'data-dtype="float16" data-stored="2048.0"' in w.table.value
    assert "comes back as <b>2048.0</b>" in w.table.value
    w.count_box.value = 1000
    assert 'data-count="1000"' in w.table.value and "2,000 bytes" in w.table.value
    w.dtype_picker.value = torch.int8
    w.value_box.value = 2.7
    assert 'data-dtype="int8" data-stored="2"' in w.table.value
    assert 'data-selected="true"' in w.table.value.split('data-dtype="int8" data-stored')[1][:80]


def test_widget_offers_every_dtype_and_exposes_its_parts(covered):
    w = DtypeExplorer()
    assert [v for _, v in w.dtype_picker.options] == list(DTYPES)
    assert w.children[1] is w.table
    assert (w.value_box.value, w.dtype_picker.value, w.count_box.value) == (2049.0, torch.float16, 1000)
    covered(f"dtype explorer: {len(DTYPES)} dtypes; round trip, bytes, finfo/iinfo, spacing vs nextafter, "
            "widget traitlets")


def test_table_rounds_long_floats_and_keeps_the_exact_value_as_a_tooltip():
    page = table_html(0.1, torch.float32)
    row = page.split('<tr data-dtype="float32"')[1].split("</tr>")[0]
    assert 'title="0.10000000149011612">0.1000000015</td>' in row  # stored: ten digits shown
    table = page.split("<table", 1)[1]                               # (the sentence above keeps it exact)
    assert ">0.10000000149011612<" not in table                     # no 17-digit float in a cell
    assert 'min-width:16em;white-space:normal' in row                # the note wraps, not one word a line
    assert 'class="dtype-explorer-scroll" style="overflow-x:auto' in page  # half a lab: it scrolls sideways
