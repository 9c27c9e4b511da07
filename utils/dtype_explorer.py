"""Explore what a dtype does to one number and to a tensor's memory.

Two layers, so the facts can be tested without a browser:

    dtype_report(2049.0, torch.float16)    # pure: what float16 keeps of 2049.0, and its cost
    compare_dtypes(2049.0, count=1000)     # pure: one report per dtype, for a table
    table_html(2049.0, torch.float16)      # pure: that table as HTML
    DtypeExplorer()                        # ipywidgets wiring around table_html

Every number comes from PyTorch itself (a round trip through a real tensor, torch.finfo,
torch.iinfo, dtype.itemsize), so the widget cannot disagree with the library it explains."""
import functools
import math
from dataclasses import dataclass

import ipywidgets as widgets
import torch

from utils.formatting import CELL, HIGHLIGHT, attr, data_table, dtype_name, flag, td

# The dtypes a beginner meets, widest float first, then the integers.
DTYPES = (torch.float64, torch.float32, torch.bfloat16, torch.float16,
          torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


@dataclass(frozen=True)
class DtypeReport:
    """What storing one Python number in one dtype gives back, and what the dtype costs."""
    dtype: torch.dtype
    name: str                  # "float16"
    value: float               # the number asked for
    stored: float | int | None  # what torch.tensor(value, dtype=dtype).item() gives; None if torch refuses
    error: float | None        # stored - value (None if refused)
    exact: bool                # stored == value
    note: str                  # one sentence: exact, rounded, truncated, overflowed...
    bits: int                  # bits per element
    bytes_per_element: int     # dtype.itemsize == tensor.element_size()
    count: int                 # how many elements
    total_bytes: int           # count * bytes_per_element == tensor.nbytes
    is_floating: bool
    min: float | int           # most negative finite value
    max: float | int           # largest finite value
    eps: float | None          # floats: gap between 1.0 and the next number up
    spacing: float | None      # gap between adjacent representable numbers at `stored`
    smallest_normal: float | None  # floats: below this, precision drops (subnormals), then 0


def _spacing(stored: float | None, finfo: torch.finfo) -> float | None:
    # A float holds a fixed number of mantissa bits, so the gap between neighbours is
    # eps times the power of two just below |stored| (and constant below smallest_normal).
    # Same answer as torch.nextafter, which is not implemented for every float dtype.
    if stored is None or math.isinf(stored) or math.isnan(stored):  # None: nothing was stored
        return None
    _, exponent = math.frexp(max(abs(stored), finfo.smallest_normal))  # x = m * 2**e, 0.5 <= m < 1
    return finfo.eps * 2.0 ** (exponent - 1)


def _float_note(value, stored, finfo, name) -> str:
    if math.isnan(value):
        return "not a number: NaN stays NaN (and NaN != NaN)"
    if stored == value:
        return f"exact: {name} holds this number"
    if math.isinf(stored) and not math.isinf(value):
        return f"overflow: beyond the largest finite {name} ({finfo.max!r}), so it became inf"
    if stored == 0:
        return f"underflow: too close to zero for {name}, so it became 0"
    if abs(stored) < finfo.smallest_normal:
        return f"rounded, and subnormal: below {finfo.smallest_normal!r}, {name} keeps fewer digits"
    return f"rounded to the nearest {name}"


def _int_note(value, stored, iinfo, name) -> str:
    if stored is None and math.isnan(value):
        return "NaN has no integer value: torch.tensor refuses it"
    if stored is None:
        # torch.tensor checks a Python number against the range and refuses. Arithmetic on an
        # integer tensor checks nothing: it wraps around modulo 2**bits, like the hardware.
        note = f"out of range [{iinfo.min}, {iinfo.max}]: torch.tensor refuses it"
        if math.isfinite(value) and float(value).is_integer():
            wrapped = (int(value) - iinfo.min) % 2**iinfo.bits + iinfo.min
            note += f"; {name} arithmetic that lands on {int(value)} silently wraps to {wrapped}"
        return note
    if stored == value:
        return f"exact: {name} holds this number"
    if stored == math.trunc(value):
        return "fraction dropped: integer dtypes truncate toward zero"
    return f"out of range: torch gave {stored}"


def dtype_report(value: float, dtype: torch.dtype, count: int = 1) -> DtypeReport:
    """Store `value` in a tensor of `dtype`, read it back, and describe the dtype."""
    if dtype.is_complex or dtype == torch.bool:
        raise ValueError(f"dtype_report handles real float and integer dtypes, not {dtype}")
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    name = dtype_name(dtype)
    # The round trip is the definition of "what this dtype keeps": nothing here guesses.
    try:
        stored = torch.tensor(value, dtype=dtype).item()
    except (RuntimeError, ValueError):  # 300.0 into int8: "value cannot be converted to type int8
        stored = None                    # without overflow"; a Python int past 64 bits: ValueError
    exact = stored is not None and stored == value
    report = functools.partial(
        DtypeReport, dtype=dtype, name=name, value=value, stored=stored, exact=exact,
        error=None if stored is None else 0.0 if exact else stored - value,
        bits=dtype.itemsize * 8, bytes_per_element=dtype.itemsize,
        count=count, total_bytes=count * dtype.itemsize)
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        return report(is_floating=True, min=fi.min, max=fi.max, eps=fi.eps,
                      spacing=_spacing(stored, fi), smallest_normal=fi.smallest_normal,
                      note=_float_note(value, stored, fi, name))
    ii = torch.iinfo(dtype)
    return report(is_floating=False, min=ii.min, max=ii.max, eps=None,
                  spacing=1, smallest_normal=None, note=_int_note(value, stored, ii, name))


def compare_dtypes(value: float, dtypes=DTYPES, count: int = 1) -> list[DtypeReport]:
    """One report per dtype: the rows of the explorer's table."""
    return [dtype_report(value, d, count) for d in dtypes]


# ---- HTML: a plain table with data- hooks, so a browser test can find each cell ----

def _fmt(x) -> str:
    # repr of a float is the shortest text that reads back as the same float: exact, not rounded.
    if x is None:
        return "\u2013"
    return f"{x:,}" if isinstance(x, int) else repr(x)


def _num_td(x, digits: int) -> str:
    """A number rounded to `digits` significant digits, so the table fits the notebook (0.1 in
    float32 has 17); the exact value is the cell's tooltip and the row's data-stored."""
    short = x is None or (isinstance(x, int) and abs(x) < 10**7)  # int64's largest has 19 digits
    shown = _fmt(x) if short else f"{x:.{digits}g}"
    return f'<td style="{CELL};white-space:nowrap" title="{attr(_fmt(x))}">{attr(shown)}</td>'


COLUMNS = ("dtype", "bits", "bytes / element", "total bytes", "stored", "error",
           "spacing here", "eps", "largest", "note")


def _row_html(r: DtypeReport, selected: bool) -> str:
    # Stored values keep enough digits to tell float32 from float64; errors and gaps need three.
    cells = ("".join(td(c) for c in (r.name, r.bits, r.bytes_per_element, _fmt(r.total_bytes)))
             + _num_td(r.stored, 10) + "".join(_num_td(x, 3) for x in (r.error, r.spacing, r.eps))
             + _num_td(r.max, 4) + td(r.note, "min-width:16em;white-space:normal"))
    style = f' style="{HIGHLIGHT}"' if selected else ""
    return (f'<tr data-dtype="{r.name}" data-stored="{attr(repr(r.stored))}" '
            f'data-exact="{flag(r.exact)}" data-total-bytes="{r.total_bytes}" '
            f'data-selected="{flag(selected)}"{style}>{cells}</tr>')


def table_html(value: float, selected: torch.dtype | None = None, count: int = 1,
               dtypes=DTYPES) -> str:
    """The comparison table as HTML: a sentence about the chosen dtype, then one row per dtype."""
    rows = compare_dtypes(value, dtypes, count)
    chosen = next((r for r in rows if r.dtype == selected), None)
    summary = ""
    if chosen is not None:
        stored = "refused by torch.tensor" if chosen.stored is None else repr(chosen.stored)
        summary = (f'<p class="dtype-explorer-summary" style="white-space:normal">{attr(repr(value))} stored as '
                   f'<b>{chosen.name}</b> comes back as <b>{attr(stored)}</b> '
                   f'({attr(chosen.note)}). {count:,} elements &times; '
                   f'{chosen.bytes_per_element} bytes = <b>{chosen.total_bytes:,} bytes</b>.</p>')
    sel = dtype_name(selected) if selected is not None else ""
    table = data_table("dtype-explorer", COLUMNS, (_row_html(r, r.dtype == selected) for r in rows),
                       f'data-dtype="{sel}" data-value="{attr(repr(value))}" data-count="{count}"')
    # Ten columns do not fit half a lab's width: the table scrolls sideways inside the widget. The
    # outer box takes the pane's width and never its contents' (width 0, at least 100%), so the
    # sentence wraps in the pane instead of stretching the widget to the table's width.
    return (f'<div class="dtype-explorer-fit" style="width:0;min-width:100%">{summary}'
            f'<div class="dtype-explorer-scroll" style="overflow-x:auto;max-width:100%">{table}</div></div>')



# ---- the widget: three inputs, one HTML output, recomputed on every change ----

class DtypeExplorer(widgets.VBox):
    """Type a number, pick a dtype and an element count; the table shows what is kept and what it costs."""

    def __init__(self, value: float = 2049.0, dtype: torch.dtype = torch.float16,
                 count: int = 1000, dtypes=DTYPES):
        self.dtypes = tuple(dtypes)
        self.value_box = widgets.FloatText(value=value, description="value")
        self.dtype_picker = widgets.Dropdown(
            options=[(dtype_name(d), d) for d in self.dtypes], value=dtype, description="dtype")
        self.count_box = widgets.BoundedIntText(value=count, min=0, max=10**12,
                                                description="elements")
        for control in (self.value_box, self.dtype_picker, self.count_box):  # side by side while they fit
            control.layout = widgets.Layout(width="15em", min_width="12em")
            control.style.description_width = "5.5em"
        self.table = widgets.HTML(layout=widgets.Layout(width="100%", min_width="0"))
        super().__init__([widgets.HBox([self.value_box, self.dtype_picker, self.count_box],
                                       layout=widgets.Layout(flex_flow="row wrap")), self.table],
                         layout=widgets.Layout(width="100%", min_width="0"))
        for w in (self.value_box, self.dtype_picker, self.count_box):
            w.observe(self.refresh, names="value")
        self.refresh()

    def refresh(self, change=None):
        self.table.value = table_html(self.value_box.value, self.dtype_picker.value,
                                      self.count_box.value, self.dtypes)
