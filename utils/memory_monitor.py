"""Watch a buggy and a fixed loop side by side: bytes autograd still holds, and live graph nodes.

Two layers, so everything can be tested without a browser:

    history = {"buggy": measure_loop(...), "fixed": measure_loop(...)}   # utils.autograd_memory
    monitor_html(history)          # pure: two small SVG charts (three with an accelerator) as HTML
    plot_history(history)          # pure: the same charts as a matplotlib figure (static fallback)
    MemoryMonitor(buggy=make_buggy, fixed=make_fixed, iterations=60)   # ipywidgets wiring: runs
                                   # both loops, one iteration each in turn, and redraws every k

The charts are drawn here, in Python, as inline SVG inside a plain ipywidgets HTML widget: nothing
loads from a CDN, the numbers a browser shows are the numbers the tests read, and the page a
browser test sees has stable hooks: a root `div.memory-monitor`, one `[data-series=NAME]` legend
entry per loop carrying `data-last-bytes`, `data-last-nodes` (and `data-last-accelerator-bytes`
where an accelerator is present), and one `polyline[data-line=NAME][data-metric=...]` per chart."""
from __future__ import annotations

import contextlib
import html
from collections.abc import Callable, Mapping

import ipywidgets as widgets

from utils.autograd_memory import Allocated, LoopMeter, accelerator_allocated, accelerator_name, steady_growth
from utils.formatting import byte_unit, format_bytes

METRICS = (("saved_bytes", "bytes held by saved tensors"),
           ("nodes", "live graph nodes"),
           ("accelerator_bytes", "allocator: net bytes allocated"))
COLORS = {"buggy": "#c0392b", "fixed": "#2471a3"}
OTHER_COLORS = ("#7d3c98", "#1e8449", "#b9770e", "#566573")
WIDTH, HEIGHT = 330, 190                      # one chart, in SVG user units
LEFT, RIGHT, TOP, BOTTOM = 64, 10, 24, 30      # margins around the plotting area


def color_of(name: str, index: int) -> str:
    return COLORS.get(name, OTHER_COLORS[index % len(OTHER_COLORS)])


def _fmt(metric: str, value: float) -> str:
    return format_bytes(int(value)) if metric.endswith("bytes") else f"{int(value):,}"


def growth_text(series, metric: str) -> str:
    """'+165,888 B per iteration', 'flat', or 'not steady' for one measured series."""
    try:
        step = steady_growth(series)
    except ValueError:
        return "not steady" if len(series) >= 3 else ""
    if step == 0:
        return "flat"
    unit = " B" if metric.endswith("bytes") else " nodes"
    return f"{step:+,}{unit} per iteration"


def _metrics(history: Mapping[str, Mapping[str, list]]) -> list[tuple[str, str]]:
    shown = list(METRICS[:2])
    if any("accelerator_bytes" in h for h in history.values()):
        shown.append(METRICS[2])
    return shown


def chart_svg(history: Mapping[str, Mapping[str, list]], metric: str, title: str,
              planned: int | None = None) -> str:
    """One chart: one polyline per loop for `metric`, x = iteration, y from 0 to the largest value."""
    names = list(history)
    n = max([planned or 0] + [len(h.get("iteration", ())) for h in history.values()] + [1])
    top = max([max(h[metric]) for h in history.values() if h.get(metric)] + [0])
    ymax = top if top > 0 else 1
    w, h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i):   # iteration i (1-based) -> SVG x
        return LEFT + (w * (i - 1) / (n - 1) if n > 1 else w / 2)

    def y(v):
        return TOP + h - h * v / ymax

    parts = [f'<svg class="memory-monitor-chart" data-metric="{metric}" data-max="{top}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
             f'role="img" aria-label="{html.escape(title)}" '
             f'style="font:11px sans-serif;background:#fff">',
             f'<text x="{LEFT}" y="14" style="font-weight:bold">{html.escape(title)}</text>',
             f'<line x1="{LEFT}" y1="{TOP + h}" x2="{LEFT + w}" y2="{TOP + h}" stroke="#999"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + h}" stroke="#999"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT + w}" y2="{TOP}" stroke="#eee"/>',
             f'<text x="{LEFT - 4}" y="{TOP + 4}" text-anchor="end">{_fmt(metric, top) if top else ""}</text>',
             f'<text x="{LEFT - 4}" y="{TOP + h + 4}" text-anchor="end">0</text>',
             f'<text x="{LEFT}" y="{HEIGHT - 8}">1</text>',
             f'<text x="{LEFT + w}" y="{HEIGHT - 8}" text-anchor="end">{n}</text>',
             f'<text x="{LEFT + w / 2}" y="{HEIGHT - 8}" text-anchor="middle">iteration</text>']
    for index, name in enumerate(names):
        values = history[name].get(metric) or []
        every = -(-len(values) // w) or 1      # at most one point per unit of width, the last always kept
        kept = list(range(0, len(values), every))
        if values and kept[-1] != len(values) - 1:
            kept.append(len(values) - 1)
        points = " ".join(f"{x(i + 1):.1f},{y(values[i]):.1f}" for i in kept)
        parts.append(f'<polyline data-line="{html.escape(name, quote=True)}" data-metric="{metric}" '
                     f'data-count="{len(values)}" points="{points}" fill="none" '
                     f'stroke="{color_of(name, index)}" stroke-width="2"/>')
        if len(values) == 1:   # a polyline of one point draws nothing: mark it
            parts.append(f'<circle cx="{x(1):.1f}" cy="{y(values[0]):.1f}" r="2.5" '
                         f'fill="{color_of(name, index)}"/>')
    parts.append("</svg>")
    return "".join(parts)


def _legend(name: str, index: int, h: Mapping[str, list]) -> str:
    def last(key):
        return h[key][-1] if h.get(key) else 0
    attrs = (f'data-series="{html.escape(name, quote=True)}" data-iterations="{len(h.get("iteration", ()))}" '
             f'data-last-bytes="{last("saved_bytes")}" data-last-nodes="{last("nodes")}"')
    if "accelerator_bytes" in h:
        attrs += f' data-last-accelerator-bytes="{last("accelerator_bytes")}"'
    facts = [f"{format_bytes(last('saved_bytes'))} saved ({last('saved_bytes'):,} B)",
             f"{last('nodes'):,} graph nodes"]
    if "accelerator_bytes" in h:
        facts.append(f"allocator {format_bytes(last('accelerator_bytes'))}")
    growth = [f"{label}: {text}" for label, key in (("bytes", "saved_bytes"), ("nodes", "nodes"))
              if (text := growth_text(h.get(key, []), key))]
    return (f'<div class="memory-monitor-series" {attrs} style="margin:2px 0">'
            f'<span style="display:inline-block;width:12px;height:12px;background:{color_of(name, index)};'
            f'margin-right:6px;vertical-align:middle"></span><b>{html.escape(name)}</b> '
            f'after {len(h.get("iteration", ())):,} iterations: {"; ".join(facts)}'
            + (f' <span style="color:#666">({"; ".join(growth)})</span>' if growth else "") + "</div>")


def monitor_html(history: Mapping[str, Mapping[str, list]], *, planned: int | None = None,
                 running: bool = False, note: str = "", accelerator: str | None = None) -> str:
    """The monitor as HTML: a legend line per loop, then one chart per metric, side by side.

    history: loop name -> the dict measure_loop returns (iteration, saved_bytes, nodes, and
    accelerator_bytes where there is an accelerator). planned: the iteration count the x axis spans.
    accelerator: its name for the data-accelerator hook ("cuda"); "none" when no series has figures."""
    done = max([len(h.get("iteration", ())) for h in history.values()] + [0])
    has_allocator = any("accelerator_bytes" in h for h in history.values())
    accelerator = (accelerator or accelerator_name() or "accelerator") if has_allocator else None
    legends = "".join(_legend(name, i, h) for i, (name, h) in enumerate(history.items()))
    charts = "".join(chart_svg(history, metric, title, planned) for metric, title in _metrics(history))
    if not has_allocator:
        acc_note = ("No accelerator here, so no allocator figures: on a GPU the monitor adds "
                    "torch.cuda.memory_allocated() as a third chart.")
    else:
        acc_note = ("allocator: the net change in the accelerator allocator's live bytes "
                    "across each loop's own iterations.")
    extra = f'<p class="memory-monitor-note" style="margin:2px 0">{html.escape(note)}</p>' if note else ""
    return (f'<div class="memory-monitor" data-iterations="{done}" data-planned="{planned or done}" '
            f'data-running="{str(running).lower()}" data-accelerator="{accelerator or "none"}" '
            f'data-series-names="{html.escape(",".join(history), quote=True)}">'
            f'<div class="memory-monitor-legend">{legends}</div>'
            f'<div class="memory-monitor-charts" style="display:flex;flex-wrap:wrap;gap:8px">{charts}</div>'
            f'<p style="color:#666;margin:2px 0;font-size:smaller">{html.escape(acc_note)}</p>{extra}</div>')


def plot_history(history: Mapping[str, Mapping[str, list]], *, axes=None):
    """The same charts as a matplotlib figure, for a notebook viewer that shows no widgets."""
    import matplotlib.pyplot as plt

    metrics = _metrics(history)
    if axes is None:
        fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.2), squeeze=False)
        axes = axes[0]
    else:
        fig = axes[0].figure
    for ax, (metric, title) in zip(axes, metrics):
        unit, step = "", 1
        if metric.endswith("bytes"):   # scale to one binary unit, so the ticks are round numbers
            top = max([max(h[metric]) for h in history.values() if h.get(metric)] + [1])
            unit, step = byte_unit(top)
        for index, (name, h) in enumerate(history.items()):
            if h.get(metric):
                ax.plot(h["iteration"], [v / step for v in h[metric]] if step > 1 else h[metric],
                        label=name, color=color_of(name, index), lw=2)
        ax.set(title=title, xlabel="iteration", ylabel=unit)
        ax.set_ylim(bottom=0)
        ax.legend()
    fig.tight_layout()
    return fig


# ---- the widget ----

def _checked_factory(name: str, factory) -> Callable:
    if not callable(factory):
        raise TypeError(f"{name}: give a function that starts the loop, such as "
                        f"lambda: leaky_eval(model, batches()), so that Run can start it again; "
                        f"got a {type(factory).__name__}")
    return factory


class MemoryMonitor(widgets.VBox):
    """Run loops side by side (one iteration of each in turn) and chart, live, what each keeps alive.

        monitor = MemoryMonitor(buggy=lambda: leaky_eval(model, batches()),
                                fixed=lambda: item_eval(model, batches()), iterations=60)
        display(monitor); monitor.run()     # or press Run

    Each loop is a generator that yields once per iteration (see utils.autograd_memory.LoopMeter), and
    runs in a thread of its own: a loop that yields inside `with torch.no_grad():` would otherwise
    switch recording off for the other loop too (grad mode belongs to the thread, not the loop).
    After a run, `monitor.history[name]` holds its per-iteration figures and `monitor.after_end[name]`
    the saved bytes still alive once the loop has ended and its variables are gone."""

    def __init__(self, iterations: int = 50, update_every: int = 5,
                 allocated: Allocated = "auto", **loops):
        if not loops:
            raise ValueError("MemoryMonitor needs at least one loop, e.g. buggy=..., fixed=...")
        if update_every < 1:
            raise ValueError(f"update_every must be at least 1, got {update_every}")
        self.loops = {name: _checked_factory(name, f) for name, f in loops.items()}
        self.update_every = update_every
        self.allocated = accelerator_allocated() if allocated == "auto" else allocated
        self.accelerator = (accelerator_name() if allocated == "auto" else "custom") if self.allocated else None
        self.history: dict[str, dict[str, list[int]]] = {name: {} for name in self.loops}
        self.after_end: dict[str, int] = {}
        self.redraws = 0
        self.iterations_box = widgets.BoundedIntText(value=iterations, min=1, max=100_000,
                                                     description="iterations")
        self.run_button = widgets.Button(description="Run", icon="play", button_style="primary")
        self.chart = widgets.HTML()
        super().__init__([widgets.HBox([self.iterations_box, self.run_button]), self.chart])
        self.add_class("memory-monitor-widget")
        self.run_button.on_click(lambda _: self.run())
        self._draw(running=False, note="Press Run: each loop runs one iteration in turn, "
                                       f"and the charts redraw every {update_every} iterations.")

    def _draw(self, running: bool, note: str = "") -> None:
        self.chart.value = monitor_html(self.history, planned=self.iterations_box.value,
                                        running=running, note=note, accelerator=self.accelerator)
        self.redraws += 1

    def run(self, iterations: int | None = None) -> dict[str, dict[str, list[int]]]:
        """Run every loop for `iterations` iterations (the box's value if None); return the history."""
        if iterations is not None:
            self.iterations_box.value = iterations
        planned = self.iterations_box.value
        meters: dict[str, LoopMeter] = {}
        self.after_end = {}
        self.run_button.disabled = True
        try:
            for name, factory in self.loops.items():
                meters[name] = LoopMeter(factory, allocated=self.allocated, own_thread=True)
            self.history = {name: meter.history for name, meter in meters.items()}
            self._draw(running=True)
            for i in range(1, planned + 1):
                for meter in meters.values():
                    meter.step()
                if all(m.done for m in meters.values()):
                    break
                if i % self.update_every == 0 and i < planned:
                    self._draw(running=True)
        except BaseException as exc:
            for meter in meters.values():
                with contextlib.suppress(Exception):
                    meter.close()
            self._draw(running=False, note=f"stopped: {type(exc).__name__}: {exc}")
            raise
        finally:
            self.run_button.disabled = False
        self.after_end = {name: meter.close() for name, meter in meters.items()}
        ended = ", ".join(f"{name} {format_bytes(b)}" for name, b in self.after_end.items())
        self._draw(running=False, note=f"After the loops ended (their variables gone), saved bytes "
                                       f"still alive: {ended}.")
        return self.history
