"""Explore views: which elements of the underlying storage a tensor reads, and whether two tensors share it.

A tensor is a window onto a flat block of memory, its *storage*. Three numbers place the window:
the storage offset (where element [0, 0, ...] lives), the shape, and the strides (how many
storage elements to skip to move one step along each dimension). A view is a new window on the
same storage; a copy has a storage of its own.

Two layers, so the facts can be tested without a browser:

    shares_storage(a, b)                 # pure: do a and b read the same block of memory?
    storage_report(t, t.T)               # pure: the storage, the indices t.T reads, its strides...
    storage_html(t, t.T, name="t.T")     # pure: that report as HTML
    StorageExplorer()                    # ipywidgets wiring: pick a view of t, see its window

Every number comes from the tensors themselves (untyped_storage(), stride(), storage_offset(),
is_contiguous()); the touched indices are computed from offset, shape and stride, and the tests
check them against the values the view actually holds."""
import html
from collections.abc import Callable
from dataclasses import dataclass

import ipywidgets as widgets
import torch

from utils.formatting import HIGHLIGHT, MUTED, attr, facts_table, flag, format_shape, shape_attr

MAX_CELLS = 256  # the widget draws at most this many storage elements


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True if a and b read the same underlying storage (so writing through one changes the other).

    Compares the storages' start addresses, not the tensors': t[1].data_ptr() is the address
    of t[1]'s first element, which is not t's first element, although both live in one storage.
    Tensors with an empty storage share nothing."""
    sa, sb = a.untyped_storage(), b.untyped_storage()
    return sa.nbytes() > 0 and sb.nbytes() > 0 and sa.data_ptr() == sb.data_ptr()


def storage_elements(t: torch.Tensor) -> list:
    """Every element of t's storage, index 0 first, read in t's dtype (also the ones t does not use)."""
    if t.device.type == "meta":
        raise ValueError("a meta tensor has no data, so there is no storage to show")
    n = t.untyped_storage().nbytes() // t.element_size()
    return t.detach().as_strided((n,), (1,), 0).tolist()


def touched_indices(t: torch.Tensor) -> list[int]:
    """The storage index of each element of t, in t's element order (row-major, like t.flatten()).

    Element [i0, i1, ...] lives at storage_offset + i0 * stride[0] + i1 * stride[1] + ...
    A stride of 0 (expand) makes several elements read the same index."""
    index = torch.tensor(t.storage_offset())
    for size, step in zip(t.shape, t.stride()):
        index = index.unsqueeze(-1) + torch.arange(size) * step  # one new axis per dimension
    return index.flatten().tolist()


@dataclass(frozen=True)
class StorageReport:
    """Where a view's elements live, measured against a base tensor."""
    storage: tuple              # every element of base's storage, index 0 first
    shares_storage: bool        # view reads base's storage (a view), or has its own (a copy)
    touched: tuple[int, ...]    # storage index of each element of the view, in the view's order;
                                # indexes `storage` if shared, else `view_storage`
    view_storage: tuple         # the storage `touched` indexes: the same as `storage` when shared
    base_touched: tuple[int, ...]  # the storage indices base itself covers (base may be a view too)
    shape: tuple[int, ...]      # the view's
    stride: tuple[int, ...]
    storage_offset: int
    is_contiguous: bool
    same_data_ptr: bool         # view.data_ptr() == base.data_ptr(): true only if both START at
                                # the same element, so it misses views into the middle
    values: tuple               # view.flatten().tolist(): what the view holds, in order


def storage_report(base: torch.Tensor, view: torch.Tensor) -> StorageReport:
    """Describe `view` against `base`: which storage elements it reads, with which strides."""
    if not isinstance(base, torch.Tensor) or not isinstance(view, torch.Tensor):
        raise TypeError("storage_report takes two tensors")
    shared = shares_storage(base, view)
    if shared and view.dtype != base.dtype:
        raise ValueError(f"view reads base's storage as {view.dtype}, base as {base.dtype}; "
                         "storage_report counts storage indices in one dtype, so both must agree")
    storage = tuple(storage_elements(base))
    return StorageReport(
        storage=storage, shares_storage=shared, touched=tuple(touched_indices(view)),
        view_storage=storage if shared else tuple(storage_elements(view)),
        base_touched=tuple(sorted(set(touched_indices(base)))),
        shape=tuple(view.shape), stride=tuple(view.stride()),
        storage_offset=int(view.storage_offset()), is_contiguous=view.is_contiguous(),
        same_data_ptr=view.data_ptr() == base.data_ptr(),
        values=tuple(view.detach().flatten().tolist()))


# ---- the views the explorer offers: named, fixed functions of the base, never eval'd text ----

VIEWS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "t[1]": lambda t: t[1],
    "t[:, 1]": lambda t: t[:, 1],
    "t[1:, 2:]": lambda t: t[1:, 2:],
    "t[:, ::2]": lambda t: t[:, ::2],
    "t.T": lambda t: t.T,
    "t.diagonal()": lambda t: t.diagonal(),
    "t.view(4, 3)": lambda t: t.view(4, 3),
    "t.reshape(4, 3)": lambda t: t.reshape(4, 3),
    "t.flatten()": lambda t: t.flatten(),
    "t[0].expand(3, 4)": lambda t: t[0].expand(3, 4),
    "t.T.reshape(12)": lambda t: t.T.reshape(12),
    "t.T.contiguous()": lambda t: t.T.contiguous(),
    "t[[0, 2]]": lambda t: t[[0, 2]],
    "t.clone()": lambda t: t.clone(),
}


def default_base() -> torch.Tensor:
    return torch.arange(12).reshape(3, 4)


# ---- HTML: the storage as a row of cells, touched ones numbered in view order ----

def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


_BASE = "background:#eef3fb"
_CELL = "border:1px solid #bbb;padding:2px 6px;text-align:center;min-width:2em"


def _storage_row(elements, touched, base_touched, which: str) -> str:
    order: dict[int, list[int]] = {}
    for k, i in enumerate(touched):
        order.setdefault(i, []).append(k)
    shown = elements[:MAX_CELLS]
    idx, val, num = [], [], []
    for i, v in enumerate(shown):
        hit = i in order
        style = _CELL + ";" + (HIGHLIGHT if hit else _BASE if i in base_touched else "")
        attrs = (f'data-index="{i}" data-value="{html.escape(repr(v))}" '
                 f'data-touched="{flag(hit)}" data-order="{",".join(map(str, order.get(i, [])))}"')
        idx.append(f'<td style="{_CELL};{MUTED};font-size:smaller">{i}</td>')
        val.append(f'<td class="storage-cell" {attrs} style="{style}">{html.escape(_fmt(v))}</td>')
        num.append(f'<td style="{_CELL};color:#a60;font-size:smaller">'
                   f'{",".join(map(str, order.get(i, [])))}</td>')
    more = len(elements) - len(shown)
    tail = f'<p class="storage-more">&hellip; and {more} more elements not drawn</p>' if more > 0 else ""
    label = '<th style="padding-right:8px;text-align:right;font-weight:normal">{}</th>'.format
    return (f'<table class="storage-row" data-storage="{which}" data-size="{len(elements)}" '
            f'style="border-collapse:collapse;margin:4px 0">'
            f"<tr>{label('storage index')}{''.join(idx)}</tr>"
            f"<tr>{label('value')}{''.join(val)}</tr>"
            f"<tr>{label('view element #')}{''.join(num)}</tr></table>{tail}")


def report_html(rep: StorageReport, name: str = "view") -> str:
    """A report as HTML, with data- hooks for browser tests."""
    esc = html.escape(name)
    yes = lambda b: "yes" if b else "no"  # noqa: E731
    attrs = (f'data-view="{attr(name)}" data-shares="{flag(rep.shares_storage)}" '
             f'data-touched="{",".join(map(str, rep.touched))}" data-shape="{shape_attr(rep.shape)}" '
             f'data-stride="{shape_attr(rep.stride)}" data-offset="{rep.storage_offset}" '
             f'data-contiguous="{flag(rep.is_contiguous)}" '
             f'data-same-data-ptr="{flag(rep.same_data_ptr)}"')
    if rep.shares_storage:
        verdict = (f"<b>{esc}</b> is a <b>view</b>: it reads t's own storage (highlighted cells, "
                   f"numbered in the order of {esc}'s elements). Writing into it changes t.")
        rows = _storage_row(rep.storage, rep.touched, set(rep.base_touched), "shared")
    else:
        verdict = (f"<b>{esc}</b> is a <b>copy</b>: it has a storage of its own, so writing into it "
                   f"leaves t alone, and t's storage (first row) is not read at all.")
        rows = (_storage_row(rep.storage, (), set(rep.base_touched), "base")
                + _storage_row(rep.view_storage, rep.touched, set(), "own"))
    repeats = len(rep.touched) - len(set(rep.touched))
    if repeats:
        verdict += (f" A stride of 0 makes {repeats} of its elements read a storage cell another "
                    f"element already reads: no memory is used for them, and writing in place is refused.")
    facts = [("shape", format_shape(rep.shape)),
             ("stride", format_shape(rep.stride)),
             ("storage_offset", rep.storage_offset),
             ("is_contiguous()", rep.is_contiguous),
             ("shares t's storage", yes(rep.shares_storage)),
             ("same data_ptr() as t", yes(rep.same_data_ptr)),
             ("values in order", ", ".join(_fmt(v) for v in rep.values[:MAX_CELLS])
              + (" ..." if len(rep.values) > MAX_CELLS else ""))]
    return f'<div class="storage-explorer" {attrs}><p>{verdict}</p>{rows}{facts_table(facts, "storage-facts")}</div>'


def storage_html(base: torch.Tensor, view: torch.Tensor, name: str = "view") -> str:
    """storage_report(base, view) as HTML."""
    return report_html(storage_report(base, view), name)


def _error_html(name: str, exc: Exception) -> str:
    message = str(exc).splitlines()[0] if str(exc) else ""
    return (f'<div class="storage-explorer" data-view="{attr(name)}" '
            f'data-error="{attr(message)}"><p><code>{html.escape(name)}</code> '
            f"raises <code>{type(exc).__name__}: {html.escape(message)}</code></p></div>")


# ---- the widget: a dropdown of named views of one base tensor, one HTML output ----

class StorageExplorer(widgets.VBox):
    """Pick a view of t; see which storage elements it reads, its strides, and whether it is a copy."""

    def __init__(self, base: torch.Tensor | None = None,
                 views: dict[str, Callable[[torch.Tensor], torch.Tensor]] | None = None):
        self.base = default_base() if base is None else base
        self.views = dict(VIEWS if views is None else views)
        if not self.views:
            raise ValueError("StorageExplorer needs at least one named view")
        self.view_picker = widgets.Dropdown(options=list(self.views), description="view")
        self.base_label = widgets.HTML(
            f"<code>t</code> has shape {format_shape(self.base.shape)}, stride "
            f"{format_shape(self.base.stride())}, storage_offset {self.base.storage_offset()}")
        self.view = widgets.HTML()
        super().__init__([widgets.HBox([self.view_picker, self.base_label]), self.view])
        self.view_picker.observe(self.refresh, names="value")
        self.refresh()

    def refresh(self, change=None):
        name = self.view_picker.value
        try:
            result = self.views[name](self.base)
            self.view.value = storage_html(self.base, result, name)
        except Exception as exc:  # a view that does not apply to this base: say so, keep going
            self.view.value = _error_html(name, exc)
