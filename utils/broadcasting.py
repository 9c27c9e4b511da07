"""Explore broadcasting: two shapes in, the aligned dimensions, what stretches, the result or the error.

Two layers, so the facts can be tested without a browser:

    parse_shape("8, 1")                  # pure: (8, 1); also "8,1", "(8, 1)", "[8]", "", "()"
    broadcast_report((8, 1), (8,))       # pure: aligned dims, what stretches, result shape or error
    broadcast_html((8, 1), (8,))         # pure: that report as HTML
    BroadcastExplorer()                  # ipywidgets wiring around broadcast_html

The rules, applied one dimension at a time from the right:
  1. align the two shapes at their last dimension;
  2. a dimension one shape lacks counts as size 1 ("missing dims are 1");
  3. two sizes agree if they are equal or one of them is 1; the 1 is stretched to the other size.

The result shape comes from torch.broadcast_shapes and the error from really running `a + b`
on CPU tensors (expanded from a single number, so no memory is touched and the op raises
before it allocates anything). That error is the one a student meets in their own code:
"The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0".
(torch.broadcast_shapes and meta tensors word the same refusal differently: "Attempting to
broadcast a dimension of length 4 at -1! ...".) So the explorer cannot disagree with PyTorch."""
import html
import operator
import re
from dataclasses import dataclass

import ipywidgets as widgets
import torch

from utils.formatting import ALARM, HIGHLIGHT, MUTED, flag, format_shape, shape_attr

MAX_DIMS = 64  # PyTorch's own limit on the number of dimensions of a tensor


@dataclass(frozen=True)
class DimRow:
    """One dimension of the result, with the two operands aligned from the right."""
    dim: int            # counted from the right: -1 is the last dimension
    index: int          # counted from the left of the result: what "dimension 0" in an error means
    a: int | None       # size of operand a here; None if a has no such dimension (it counts as 1)
    b: int | None       # size of operand b here; None if missing
    result: int | None  # size of the result here; None if the sizes conflict
    stretches: str | None  # "a" or "b": the operand whose (missing or) size-1 dim is stretched; else None
    ok: bool            # the two sizes agree (equal, or one of them is 1)


@dataclass(frozen=True)
class BroadcastReport:
    """What broadcasting does to two shapes, dimension by dimension."""
    shape_a: tuple[int, ...]
    shape_b: tuple[int, ...]
    dims: tuple[DimRow, ...]             # one row per result dimension, leftmost first
    result_shape: tuple[int, ...] | None  # torch.broadcast_shapes(a, b); None if they do not broadcast
    error: str | None                     # the exact message `a + b` raises; None if it works
    ok: bool

    @property
    def stretched(self) -> tuple[DimRow, ...]:
        """The rows where one operand is stretched."""
        return tuple(r for r in self.dims if r.stretches)

    @property
    def conflicts(self) -> tuple[DimRow, ...]:
        """The rows where the sizes disagree and neither is 1."""
        return tuple(r for r in self.dims if not r.ok)


# ---- parsing what a person types ----

_SIZE_PREFIX = re.compile(r"^torch\.Size\((.*)\)$", re.S)


def parse_shape(text: str) -> tuple[int, ...]:
    """Read a shape typed as "3, 1", "3,1", "(3, 1)", "[3, 1]", "(3,)", "3", "" or "()".

    Also accepts a pasted torch.Size([3, 1]). Raises ValueError, saying what is wrong, on anything
    else: words, decimals, negative sizes, empty entries ("3,,1"), spaces instead of commas."""
    if not isinstance(text, str):
        raise ValueError(f"a shape is typed as text such as '3, 1', not {type(text).__name__}")
    s = text.strip()
    m = _SIZE_PREFIX.match(s)
    if m:
        s = m.group(1).strip()
    if len(s) >= 2 and (s[0], s[-1]) in {("(", ")"), ("[", "]")}:
        s = s[1:-1].strip()
    if not s:
        return ()
    parts = [p.strip() for p in s.split(",")]
    if parts[-1] == "":          # "3," and "(3,)" are the one-dimensional shape (3,)
        parts.pop()
    sizes = []
    for i, p in enumerate(parts):
        if p == "":
            raise ValueError(f"{text!r}: entry {i + 1} is empty; write sizes separated by commas, like '3, 1'")
        if re.fullmatch(r"[+-]?\d+", p) is None:
            hint = " (separate sizes with commas)" if re.fullmatch(r"\d+(\s+\d+)+", p) else ""
            raise ValueError(f"{text!r}: {p!r} is not a whole number{hint}; "
                             f"a shape looks like '3, 1', '(8,)' or '()'")
        n = int(p)
        if n < 0:
            raise ValueError(f"{text!r}: sizes cannot be negative, got {n}")
        if n >= 2**63:
            raise ValueError(f"{text!r}: {n} is too big for a size (PyTorch sizes are 64-bit)")
        sizes.append(n)
    if len(sizes) > MAX_DIMS:
        raise ValueError(f"{text!r}: {len(sizes)} dimensions; PyTorch allows at most {MAX_DIMS}")
    return tuple(sizes)


def _as_shape(shape, name: str) -> tuple[int, ...]:
    if isinstance(shape, str):
        return parse_shape(shape)
    try:
        if any(isinstance(n, bool) for n in shape):
            raise TypeError
        sizes = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise ValueError(f"shape_{name} must be a tuple of whole numbers, got {shape!r}") from None
    if not all(0 <= n < 2**63 for n in sizes):
        raise ValueError(f"shape_{name} sizes must be >= 0 and fit in 64 bits, got {shape!r}")
    if len(sizes) > MAX_DIMS:
        raise ValueError(f"shape_{name} has {len(sizes)} dimensions; PyTorch allows at most {MAX_DIMS}")
    return sizes


# ---- the pure report ----

def _free(shape: tuple[int, ...]) -> torch.Tensor:
    # One number viewed with stride 0 in every dimension: any shape, no memory.
    return torch.zeros(()).expand(shape)


def _torch_says(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...] | None, str | None]:
    """(result shape, None) or (None, the exact message of `a + b`), both from PyTorch."""
    try:
        return tuple(torch.broadcast_shapes(a, b)), None
    except RuntimeError:
        pass
    try:  # they do not broadcast, so the add refuses before allocating a result
        _free(a) + _free(b)
    except RuntimeError as exc:
        return None, str(exc)
    raise AssertionError(f"torch.broadcast_shapes refused {a} and {b} but a + b accepted them")


def broadcast_report(shape_a, shape_b) -> BroadcastReport:
    """Align two shapes from the right and say, per dimension, what broadcasting does.

    shape_a, shape_b: tuples of sizes (a torch.Size works), or text for parse_shape."""
    a, b = _as_shape(shape_a, "a"), _as_shape(shape_b, "b")
    ndim = max(len(a), len(b))
    rows = []
    for index in range(ndim):
        dim = index - ndim
        sa = a[dim] if -dim <= len(a) else None
        sb = b[dim] if -dim <= len(b) else None
        ea, eb = (1 if sa is None else sa), (1 if sb is None else sb)  # missing dims are 1
        ok = ea == eb or ea == 1 or eb == 1
        result = (eb if ea == 1 else ea) if ok else None
        stretches = None
        if ok and ea != eb:
            stretches = "a" if ea == 1 else "b"
        rows.append(DimRow(dim=dim, index=index, a=sa, b=sb, result=result,
                           stretches=stretches, ok=ok))
    result_shape, error = _torch_says(a, b)
    mine = None if any(not r.ok for r in rows) else tuple(r.result for r in rows)
    if mine != result_shape:  # the rules above are the documented ones; say so loudly if torch moves
        raise AssertionError(f"broadcast rules give {mine} for {a} and {b}, torch gives {result_shape}")
    return BroadcastReport(shape_a=a, shape_b=b, dims=tuple(rows), result_shape=result_shape,
                           error=error, ok=error is None)


# ---- HTML: the shapes as rows aligned from the right, with data- hooks for browser tests ----

_MISSING = MUTED + ";font-style:italic"
_CONFLICT = ALARM + ";font-weight:bold"


def _cell(operand: str, r: DimRow) -> str:
    size = {"a": r.a, "b": r.b, "result": r.result}[operand]
    stretched = operand == r.stretches
    attrs = (f'data-operand="{operand}" data-dim="{r.dim}" data-size="{"" if size is None else size}" '
             f'data-stretches="{flag(stretched)}" data-conflict="{flag(not r.ok)}"')
    if operand == "result":
        text, style = ("?" if size is None else str(size)), ("" if r.ok else _CONFLICT)
    elif size is None:
        text, style = "(1)", _MISSING  # missing: counts as 1
    else:
        text, style = str(size), ("" if r.ok else _CONFLICT)
    if stretched:
        text, style = f"{text} &rarr; {r.result}", HIGHLIGHT
    return f'<td {attrs} style="text-align:center;{style}">{text}</td>'


def _sentences(rep: BroadcastReport) -> str:
    lines = []
    for r in rep.dims:
        if r.stretches:
            size = getattr(r, r.stretches)
            was = "has no such dimension (counts as 1)" if size is None else "has size 1"
            lines.append(f"<li>dim {r.dim}: <b>{r.stretches}</b> {was}, stretched to {r.result}</li>")
        elif not r.ok:
            lines.append(f"<li>dim {r.dim} (dimension {r.index} counting from the left, as the error "
                         f"does): {r.a} against {r.b}; neither is 1, so nothing can stretch</li>")
    return f'<ul class="broadcast-explorer-notes">{"".join(lines)}</ul>' if lines else ""


def report_html(rep: BroadcastReport) -> str:
    """A report as HTML: a table of the aligned shapes, then the result or PyTorch's error."""
    head = "".join(f'<th data-dim="{r.dim}">{r.dim}</th>' for r in rep.dims)
    rows = []
    for operand, shape in (("a", rep.shape_a), ("b", rep.shape_b), ("result", rep.result_shape)):
        label = format_shape(shape) if shape is not None else "does not exist"
        cells = "".join(_cell(operand, r) for r in rep.dims)
        rows.append(f'<tr data-operand="{operand}" data-shape="{shape_attr(shape)}">'
                    f"<th style=\"text-align:left\">{operand} {label}</th>{cells}</tr>")
    table = (f'<table class="broadcast-explorer" data-result="{shape_attr(rep.result_shape)}" '
             f'data-ok="{flag(rep.ok)}" data-a="{shape_attr(rep.shape_a)}" '
             f'data-b="{shape_attr(rep.shape_b)}">'
             f'<thead><tr><th style="text-align:left">dim (from the right)</th>{head}</tr></thead>'
             f'<tbody>{"".join(rows)}</tbody></table>')
    if rep.error is None:  # rep.ok: they broadcast
        stretched = ", ".join(f"{r.stretches} along dim {r.dim}" for r in rep.stretched) or "nothing"
        verdict = (f'<p class="broadcast-result" data-result="{shape_attr(rep.result_shape)}">'
                   f"a {format_shape(rep.shape_a)} and b {format_shape(rep.shape_b)} broadcast to "
                   f"<b>{format_shape(rep.result_shape)}</b>. Stretched: {stretched}.</p>")
    else:
        message = html.escape(rep.error)
        verdict = (f'<p class="broadcast-error" data-error="{html.escape(rep.error, quote=True)}">'
                   f"They do not broadcast. <code>a + b</code> raises:<br>"
                   f"<code>RuntimeError: {message}</code></p>")
    return table + _sentences(rep) + verdict


def broadcast_html(shape_a, shape_b) -> str:
    """broadcast_report(shape_a, shape_b) as HTML; text shapes that do not parse give a message."""
    parsed = {}
    for name, shape in (("a", shape_a), ("b", shape_b)):
        try:
            parsed[name] = _as_shape(shape, name)
        except ValueError as exc:
            return (f'<p class="broadcast-input-error" data-operand="{name}">'
                    f"shape {name}: {html.escape(str(exc))}</p>")
    return report_html(broadcast_report(parsed["a"], parsed["b"]))


# ---- the widget: two text boxes, one HTML output, recomputed on every change ----

class BroadcastExplorer(widgets.VBox):
    """Type two shapes; see them aligned from the right, what stretches, and the result or the error."""

    def __init__(self, shape_a: str = "8, 1", shape_b: str = "8"):
        self.shape_a_box = widgets.Text(value=shape_a, description="shape a", placeholder="e.g. 8, 1")
        self.shape_b_box = widgets.Text(value=shape_b, description="shape b", placeholder="e.g. 8")
        self.view = widgets.HTML()
        super().__init__([widgets.HBox([self.shape_a_box, self.shape_b_box]), self.view])
        for w in (self.shape_a_box, self.shape_b_box):
            w.observe(self.refresh, names="value")
        self.refresh()

    def refresh(self, change=None):
        self.view.value = broadcast_html(self.shape_a_box.value, self.shape_b_box.value)
