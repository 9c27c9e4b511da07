"""How every widget and every check writes a shape, a dtype, a byte count and an HTML table.

One module, so a shape reads the same in a test cell's feedback and in a lesson's widget. It
needs only the standard library (no widgets, no autograder), so both the check library students'
test cells import and the lesson widgets can depend on it.

    format_shape((3, 4))         "(3, 4)"    the one notation: Python's tuple, (3,) for 1-D, () for a scalar
    shape_attr((3, 4))           "3, 4"      the same numbers bare, for data- hooks (what the shape boxes accept)
    dtype_name(torch.float16)    "float16"
    format_bytes(1_659_392)      "1.58 MiB"  binary units, about three significant figures
    byte_unit(1_659_392)         ("MiB", 1048576)  the unit a chart's axis scales to
    attr(x), flag(b)             text safe inside HTML; "true" / "false" for a data- hook
    td(x), data_table(...), facts_table(...)  the one look every inspector's tables share
    CELL, HIGHLIGHT, ALARM, MUTED            the styles they share"""
import html

# ---- shapes, dtypes, bytes ----


def format_shape(shape) -> str:
    """(3, 4), (3,) or (): how Python writes the tuple (torch.Size prints the same inside its name).
    None (a shape nobody knows, such as a file's unreadable entry) gives ""."""
    if shape is None:
        return ""
    dims = tuple(int(d) for d in shape)
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def shape_attr(shape) -> str:
    """"3, 4", "3" or "": format_shape without its brackets, for data- hooks and text boxes, where
    a browser test or a student types the dimensions without Python's tuple punctuation."""
    return "" if shape is None else ", ".join(str(int(d)) for d in shape)


def dtype_name(dtype) -> str:
    """torch.float16 -> "float16": the name without its module, as a dropdown or a table shows it."""
    return str(dtype).removeprefix("torch.")


def byte_unit(n: int) -> tuple[str, int]:
    """The largest binary unit n reaches and its size: ("MiB", 1048576) for 1.5 MiB, ("B", 1) below 1 KiB."""
    return next(((unit, step) for unit, step in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024))
                 if abs(n) >= step), ("B", 1))


def format_bytes(n: int) -> str:
    """'0 B', '512 B', '162.0 KiB', '1.58 MiB', '3.00 GiB': binary units, as allocators count; two
    decimals below 10 units so small sizes keep three figures. A negative n (memory given back) keeps its sign."""
    unit, step = byte_unit(n)
    if step == 1:
        return f"{int(n)} B"
    return f"{n / step:.{2 if abs(n) < 10 * step else 1}f} {unit}"


# ---- HTML: escaping, and the tables every inspector draws ----

CELL = "padding:2px 8px;text-align:left;border-bottom:1px solid #ddd"   # a cell of an inspector's table
HIGHLIGHT = "background:#fff3c4;font-weight:bold"   # what the reader picked, or what stretches
ALARM = "background:#fde2e2"                        # unsafe, unregistered, or in conflict
MUTED = "color:#888"                                # a side note: an index, a missing dimension


def attr(x) -> str:
    """Any value as text that is safe inside an HTML attribute or element (quotes escaped); None gives ""."""
    return html.escape("" if x is None else str(x), quote=True)


def flag(b) -> str:
    """"true" or "false": how every data- hook spells a yes/no, so a CSS selector can match it."""
    return "true" if b else "false"


def td(text, style: str = "") -> str:
    """One table cell in the shared look, its text escaped; `style` adds to (or overrides) CELL."""
    return f'<td style="{CELL}{";" + style if style else ""}">{attr(text)}</td>'


def data_table(cls: str, columns, rows, attrs: str = "") -> str:
    """An inspector's table: class `cls` (and data- hooks `attrs`), a header row naming `columns`,
    then `rows`, each already a <tr> (they carry their own data- hooks)."""
    head = "".join(f'<th style="{CELL}">{attr(c)}</th>' for c in columns)
    return (f'<table class="{cls}"{" " + attrs if attrs else ""} style="border-collapse:collapse">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def facts_table(pairs, cls: str = "") -> str:
    """A two-column table of (name, value) facts, the names as row headers; both escaped."""
    rows = "".join(f'<tr><th style="text-align:left;padding-right:8px">{attr(k)}</th><td>{attr(v)}</td></tr>'
                   for k, v in pairs)
    klass = f' class="{cls}"' if cls else ""
    return f"<table{klass}>{rows}</table>"
