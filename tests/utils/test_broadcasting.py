"""The broadcasting explorer: the pure report checked against PyTorch, then the widget through its traitlets.

Covers parse_shape (accepted spellings, clear errors on junk), broadcast_report (aligned rows, what
stretches, missing dims as 1, result shape vs torch.broadcast_shapes and error text vs a real `a + b`
on many seeded random shapes), broadcast_html (the data- hooks), and BroadcastExplorer (setting
shape_a_box / shape_b_box recomputes view.value)."""
import random

import pytest
import torch

from utils.broadcasting import BroadcastExplorer, DimRow, broadcast_html, broadcast_report, parse_shape
from utils.formatting import format_shape, shape_attr


def _real_add(a, b):
    """(result shape, None) or (None, message) from really adding two tensors of these shapes."""
    try:
        return tuple((torch.ones(a) + torch.ones(b)).shape), None
    except RuntimeError as exc:
        return None, str(exc)


def test_column_against_flat_is_a_table():
    r = broadcast_report((8, 1), (8,))
    assert r.ok and r.result_shape == (8, 8) and r.error is None
    assert r.dims == (DimRow(dim=-2, index=0, a=8, b=None, result=8, stretches="b", ok=True),
                      DimRow(dim=-1, index=1, a=1, b=8, result=8, stretches="a", ok=True))
    assert [row.dim for row in r.stretched] == [-2, -1] and r.conflicts == ()


def test_mismatch_gives_the_exact_message_of_a_plus_b():
    r = broadcast_report((3,), (4,))
    assert (r.ok, r.result_shape) == (False, None)
    assert r.error == "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"
    assert r.dims == (DimRow(dim=-1, index=0, a=3, b=4, result=None, stretches=None, ok=False),)
    r = broadcast_report((5, 2, 3), (4, 3))
    assert r.error == "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 1"
    assert [(c.dim, c.index) for c in r.conflicts] == [(-2, 1)]   # "dimension 1" counts from the left
    assert [row.result for row in r.dims] == [5, None, 3]


def test_missing_dims_count_as_one():
    r = broadcast_report((), (2, 3))
    assert r.result_shape == (2, 3) and [row.stretches for row in r.dims] == ["a", "a"]
    assert [row.a for row in r.dims] == [None, None]
    r = broadcast_report((1,), (4, 1))       # missing against 1, and 1 against 1: nothing stretches
    assert r.result_shape == (4, 1) and [row.stretches for row in r.dims] == ["a", None]
    r = broadcast_report((2, 1, 3), (4, 3))
    assert [row.stretches for row in r.dims] == ["b", "a", None] and r.result_shape == (2, 4, 3)
    assert broadcast_report((), ()).result_shape == () and broadcast_report((), ()).dims == ()


def test_size_zero_broadcasts_like_any_other_size():
    assert broadcast_report((1,), (0,)).result_shape == (0,)
    assert broadcast_report((1,), (0,)).dims[0].stretches == "a"
    r = broadcast_report((0,), (3,))
    assert r.error == _real_add((0,), (3,))[1] and not r.ok


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_torch_on_random_shapes(seed, covered):
    rng = random.Random(seed)
    n_fail = 0
    for _ in range(200):
        a = tuple(rng.choice((0, 1, 1, 2, 3)) for _ in range(rng.randint(0, 4)))
        b = tuple(rng.choice((0, 1, 1, 2, 3)) for _ in range(rng.randint(0, 4)))
        r = broadcast_report(a, b)
        want, message = _real_add(a, b)
        assert (r.result_shape, r.error, r.ok) == (want, message, want is not None), (a, b)
        if want is not None:
            assert r.result_shape == tuple(torch.broadcast_shapes(a, b))
            assert tuple(row.result for row in r.dims) == want
        n_fail += want is None
        # the rows obey the three rules
        assert len(r.dims) == max(len(a), len(b))
        for row in r.dims:
            ea, eb = (1 if row.a is None else row.a), (1 if row.b is None else row.b)
            assert row.ok == (ea == eb or 1 in (ea, eb))
            assert row.stretches == (None if not row.ok or ea == eb else "a" if ea == 1 else "b")
        assert [row.a for row in r.dims if row.a is not None] == list(a)
        assert [row.b for row in r.dims if row.b is not None] == list(b)
    assert 20 < n_fail < 180   # both outcomes exercised
    if seed == 0:
        covered("broadcast_report: 800 seeded random shape pairs vs torch.broadcast_shapes and a real a + b")


def test_large_shapes_cost_no_memory():
    r = broadcast_report((10**6, 1, 10**6), (10**6, 1))
    assert r.result_shape == (10**6, 10**6, 10**6)
    r = broadcast_report((10**9,), (10**9 + 1,))
    assert r.error == ("The size of tensor a (1000000000) must match the size of tensor b "
                       "(1000000001) at non-singleton dimension 0")


@pytest.mark.parametrize(("text", "shape"), [
    ("3, 1", (3, 1)), ("3,1", (3, 1)), ("(3, 1)", (3, 1)), ("[3, 1]", (3, 1)), (" 3 ,1 ", (3, 1)),
    ("", ()), ("()", ()), ("  ", ()), ("[]", ()), ("8", (8,)), ("(8,)", (8,)), ("8,", (8,)),
    ("torch.Size([3, 1])", (3, 1)), ("torch.Size([])", ()), ("0", (0,)), ("1, 2, 3, 4", (1, 2, 3, 4)),
])
def test_parse_shape_accepts(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize(("text", "words"), [
    ("a", "not a whole number"), ("3.5", "not a whole number"), ("1e3", "not a whole number"),
    ("3 1", "separate sizes with commas"), ("3,,1", "entry 2 is empty"), (",", "entry 1 is empty"),
    ("-1", "cannot be negative"), ("(3", "not a whole number"), ("3, x", "'x' is not a whole number"),
    (str(2**63), "too big"), (",".join(["1"] * 65), "at most 64"),
])
def test_parse_shape_refuses_junk_clearly(text, words):
    with pytest.raises(ValueError, match=words):
        parse_shape(text)


def test_report_takes_sizes_strings_and_torch_size_but_not_junk():
    assert broadcast_report(torch.Size([8, 1]), "8").result_shape == (8, 8)
    assert broadcast_report("(2, 1)", [1, 5]).result_shape == (2, 5)
    for bad in ((-1,), (2.0,), (True,), 3, (2**63,)):
        with pytest.raises(ValueError, match=r"^shape_a (must be a tuple of whole numbers|sizes must be >= 0)"):
            broadcast_report(bad, (1,))
    for shape in ((8, 1), (8,), ()):   # what the page shows and what its hooks hold both read back
        assert parse_shape(format_shape(shape)) == shape == parse_shape(shape_attr(shape))


def test_html_has_stable_hooks():
    page = broadcast_html((8, 1), (8,))
    assert '<table class="broadcast-explorer" data-result="8, 8" data-ok="true" data-a="8, 1" data-b="8">' in page
    assert '<tr data-operand="a" data-shape="8, 1">' in page and '<tr data-operand="result" data-shape="8, 8">' in page
    assert 'data-operand="b" data-dim="-2" data-size="" data-stretches="true" data-conflict="false"' in page
    assert 'data-operand="a" data-dim="-1" data-size="1" data-stretches="true"' in page
    assert 'data-operand="a" data-dim="-2" data-size="8" data-stretches="false"' in page
    assert '<p class="broadcast-result" data-result="8, 8">' in page
    assert "<script" not in page and "http" not in page
    bad = broadcast_html("3", "4")
    assert '<table class="broadcast-explorer" data-result="" data-ok="false"' in bad
    assert ('data-error="The size of tensor a (3) must match the size of tensor b (4) '
            'at non-singleton dimension 0"') in bad
    assert 'data-operand="a" data-dim="-1" data-size="3" data-stretches="false" data-conflict="true"' in bad
    junk = broadcast_html("3 4", "4")
    assert '<p class="broadcast-input-error" data-operand="a">' in junk and "commas" in junk


def test_widget_recomputes_when_shapes_change(covered):
    w = BroadcastExplorer()
    assert (w.shape_a_box.value, w.shape_b_box.value) == ("8, 1", "8")
    assert w.children[1] is w.view
    assert 'data-result="8, 8" data-ok="true"' in w.view.value
    w.shape_b_box.value = "8, 1"
    assert 'data-result="8, 1" data-ok="true"' in w.view.value and "Stretched: nothing" in w.view.value
    w.shape_a_box.value = "2, 3"
    w.shape_b_box.value = "3, 2"
    assert 'data-ok="false"' in w.view.value
    assert "must match the size of tensor b (2) at non-singleton dimension 1" in w.view.value
    w.shape_b_box.value = "three"
    assert 'class="broadcast-input-error" data-operand="b"' in w.view.value
    w.shape_b_box.value = "()"
    assert 'data-result="2, 3" data-ok="true" data-a="2, 3" data-b=""' in w.view.value
    assert 'data-result="4, 5"' in BroadcastExplorer("4, 1", "(5,)").view.value
    covered("broadcast explorer: parse_shape spellings and junk, exact errors, html hooks, widget traitlets")
