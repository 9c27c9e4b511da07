"""Show what a checkpoint file holds and needs, read without ever running the file.

utils.checkpoint_reader reads the file (pure data); this module draws its report:

    report_html(inspect_checkpoint(path))   # pure: the report as HTML with stable data- hooks
    checkpoint_html(path)                   # the same, from a path
    CheckpointInspector(folder)             # ipywidgets wiring: pick a file in a folder, see its report
    report_text(report)                     # pure: the report as plain text
    python -m utils.checkpoint_inspector FILE...   # that text, in a terminal

Every text in the HTML is escaped: the file chose it. Nothing here loads or runs anything.
inspect_checkpoint is importable from here too, as the lesson does."""
import html
import os
from pathlib import Path

import ipywidgets as widgets

from utils.checkpoint_reader import MAX_DEPTH, MAX_ENTRIES, CheckpointReport, Entry, inspect_checkpoint
from utils.formatting import ALARM, CELL, attr, data_table, flag, format_shape, shape_attr, td

COLUMNS = ("key", "kind", "shape", "dtype", "device (saved on)", "bytes", "note")


# ---- HTML: a verdict, a table of entries, the globals ----

def _what(e: Entry) -> str:
    """The kind column: the class or function for tensors, dicts, objects and globals."""
    if e.kind == "object" and e.global_name:
        return f"result of calling {e.global_name}" if e.built_by == "call" else f"instance of {e.global_name}"
    return e.type_name if e.kind in ("tensor", "dict", "object", "global") and e.type_name else e.kind


def _note(e: Entry) -> str:
    if e.kind == "tensor" and e.requires_grad:
        return "requires_grad"
    if e.kind in ("dict", "list", "tuple", "set") and e.length is not None:
        note = f"{e.length} item{'s' if e.length != 1 else ''}"
        return note + f": {e.value}" if e.value and e.kind != "dict" and e.length else note
    return e.value or ""


def _row(e: Entry) -> str:
    label = html.escape(e.path[-1]) if e.path else "<i>(the whole file)</i>"
    indent = 8 + 16 * max(e.depth - 1, 0)        # the key column shows the nesting
    cells = (f'<td style="{CELL};padding-left:{indent}px;white-space:nowrap"><code>{label}</code></td>'
             + td(_what(e)) + td(format_shape(e.shape)) + td(e.dtype) + td(e.device)
             + td("" if e.nbytes is None else f"{e.nbytes:,}", "text-align:right") + td(_note(e), "color:#555"))
    style = f' style="{ALARM}"' if not e.safe else ""
    return (f'<tr data-key="{attr(e.key)}" data-kind="{attr(e.kind)}" data-shape="{shape_attr(e.shape)}" '
            f'data-dtype="{attr(e.dtype)}" data-bytes="{attr(e.nbytes)}" data-device="{attr(e.device)}" '
            f'data-depth="{e.depth}" data-safe="{flag(e.safe)}"'
            + (f' data-global="{attr(e.global_name)}"' if e.kind in ("object", "global") else "")
            + f"{style}>{cells}</tr>")


def report_html(report: CheckpointReport) -> str:
    """A report as HTML, with data- hooks for tests. Nothing in it loads or runs anything."""
    r = report
    safe = flag(r.loads_with_weights_only)
    if r.error is not None:
        verdict = (f"<b>{html.escape(r.name)}</b> could not be read as a checkpoint: "
                   f"<code>{html.escape(r.error)}</code>.")
    elif r.loads_with_weights_only:
        verdict = (f"<code>torch.load</code> with <code>weights_only=True</code> (the default) would accept "
                   f"<b>{html.escape(r.name)}</b>: every global it names is on torch's allowlist.")
    else:
        verdict = (f"<code>torch.load</code> with <code>weights_only=True</code> (the default) would "
                   f"<b>refuse</b> <b>{html.escape(r.name)}</b>. Loading it with "
                   f"<code>weights_only=False</code> would run what it names: treat it as a program.")
    sizes = (f"{r.tensor_count} tensor{'s' if r.tensor_count != 1 else ''} in {len(r.storages)} "
             f"storage{'s' if len(r.storages) != 1 else ''}: <b>{r.total_bytes:,} bytes</b> of tensor data "
             f"declared; the file is {r.file_bytes:,} bytes ({html.escape(r.format)}"
             + (f", pickle protocol {r.protocol}" if r.protocol is not None else "") + ").")
    reasons = "".join(f'<li class="refusal-reason">{html.escape(x)}</li>' for x in r.reasons)
    problems = "".join(f'<li class="checkpoint-problem">{html.escape(x)}</li>' for x in r.problems)
    unsafe = "".join(f'<li class="unsafe-global" data-global="{attr(g.name)}" data-count="{g.count}">'
                     f"<code>{html.escape(g.name)}</code></li>" for g in r.globals if not g.safe)
    allowed = "".join(f'<li class="allowed-global" data-global="{attr(g.name)}" data-count="{g.count}">'
                      f"<code>{html.escape(g.name)}</code></li>" for g in r.globals if g.safe)
    rows = [_row(e) for e in r.entries()]
    more = ('<p class="checkpoint-truncated">The file holds more than this report shows '
            f"(it stops at {MAX_ENTRIES} entries or {MAX_DEPTH} levels).</p>") if r.truncated else ""
    parts = [f'<div class="checkpoint-inspector" data-safe="{safe}" data-file="{attr(r.name)}" '
             f'data-format="{attr(r.format)}" data-total-bytes="{r.total_bytes}" '
             f'data-tensors="{r.tensor_count}">',
             f'<p class="checkpoint-verdict">{verdict}</p>']
    if reasons:
        parts.append(f'<ul class="refusal-reasons">{reasons}</ul>')
    if r.error is None:
        parts.append(f'<p class="checkpoint-sizes">{sizes}</p>')
    if problems:
        parts.append(f'<ul class="checkpoint-problems">{problems}</ul>')
    if rows:
        # Half a lab is narrow: the table keeps each cell on one line and scrolls sideways inside itself.
        parts.append('<div class="checkpoint-entries-scroll" style="overflow-x:auto;max-width:100%;white-space:nowrap">'
                     + data_table("checkpoint-entries", COLUMNS, rows) + "</div>" + more)
    if unsafe:
        parts.append("<p>What it would need to load: globals outside the allowlist, which "
                     "<code>weights_only=False</code> would import and call:</p>"
                     f'<ul class="unsafe-globals">{unsafe}</ul>')
    if allowed:
        parts.append(f'<details><summary>{sum(1 for g in r.globals if g.safe)} allowlisted globals it names '
                     f'</summary><ul class="allowed-globals">{allowed}</ul></details>')
    parts.append("</div>")
    return "".join(parts)


def checkpoint_html(path) -> str:
    """inspect_checkpoint(path) as HTML."""
    return report_html(inspect_checkpoint(path))


# ---- the widget: a dropdown of the files in a folder, one HTML view ----

def list_files(folder) -> list[Path]:
    """The regular files directly in a folder, by name (hidden files left out; none if it is gone)."""
    if not Path(folder).is_dir():
        return []
    return sorted((p for p in Path(folder).iterdir() if p.is_file() and not p.name.startswith(".")),
                  key=lambda p: p.name)


class CheckpointInspector(widgets.VBox):
    """Pick a file in a folder; see what it holds and what it would need to load. Nothing is loaded."""

    def __init__(self, path_or_dir: str | os.PathLike[str]) -> None:
        target = Path(path_or_dir)
        if not target.exists():
            raise FileNotFoundError(f"no file or folder at {target}")
        self.folder = target if target.is_dir() else target.parent
        self.file_picker = widgets.Dropdown(description="file", layout=widgets.Layout(width="420px"))
        self.rescan_button = widgets.Button(description="rescan folder", tooltip="list the folder's files again")
        self.view = widgets.HTML()
        self.report: CheckpointReport | None = None
        super().__init__([widgets.HBox([self.file_picker, self.rescan_button]), self.view])
        self.rescan(selected=target if target.is_file() else None)
        self.file_picker.observe(self.refresh, names="value")
        self.rescan_button.on_click(lambda _button: self.rescan())
        self.refresh()

    def rescan(self, selected=None):
        """List the folder's files again, keeping the current choice if it is still there."""
        keep = str(selected) if selected is not None else self.file_picker.value
        options = [(p.name, str(p)) for p in list_files(self.folder)]
        values = [v for _, v in options]
        self.file_picker.options = options
        if keep in values:
            self.file_picker.value = keep
        elif values:
            self.file_picker.value = values[0]

    def refresh(self, change=None):
        path = self.file_picker.value
        if path is None:
            self.report = None
            self.view.value = (f'<div class="checkpoint-inspector" data-safe="" data-file="">'
                               f"<p>No files in <code>{html.escape(str(self.folder))}</code> yet.</p></div>")
            return
        try:
            self.report = inspect_checkpoint(path)
            self.view.value = report_html(self.report)
        except OSError as exc:               # the file vanished between listing and reading
            self.report = None
            self.view.value = (f'<div class="checkpoint-inspector" data-safe="" data-file="{attr(Path(path).name)}">'
                               f"<p>{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</p></div>")


__all__ = ["CheckpointInspector", "checkpoint_html", "inspect_checkpoint", "list_files", "report_html",
           "report_text"]


def report_text(report: CheckpointReport) -> str:
    """The report as plain text for a terminal: the verdict, one line per entry, the reasons."""
    lines = [f"{report.name}: weights_only would {'accept' if report.loads_with_weights_only else 'refuse'}"]
    for e in report.entries():
        fields = (e.kind, format_shape(e.shape), e.dtype, None if e.nbytes is None else f"{e.nbytes:,}", _note(e))
        lines.append("  " * e.depth + f"{e.key or '(file)'}: " + " ".join(f for f in fields if f))
    lines += [f"  refuse: {reason}" for reason in report.reasons]
    return "\n".join(lines)


if __name__ == "__main__":  # python -m utils.checkpoint_inspector FILE...: each report as text
    import sys
    for arg in sys.argv[1:]:
        print(report_text(inspect_checkpoint(arg)))
