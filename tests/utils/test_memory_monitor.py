"""The memory monitor: the pure HTML/SVG drawing with its data- hooks, the matplotlib fallback, and
the widget run on short real loops (history read from the widget, live redraws seen through the
HTML widget's value as it changes, the Run button, errors).

The loops are the unit's: an evaluation loop that accumulates the loss tensor without no_grad
(buggy), the same loop logging loss.item() (fixed)."""
import re

import matplotlib
import pytest
import torch
import torch.nn.functional as F

from utils import example_loops
from utils.example_loops import float_eval, leaky_eval, mlp, no_grad_eval
from utils.memory_monitor import MemoryMonitor, chart_svg, growth_text, monitor_html, plot_history

matplotlib.use("Agg")
PER_BATCH = (256 * 32 + 256 * 128 + 256 + 256) * 4   # x, hidden activation, prediction, target




def batches(n=1000):
    return example_loops.batches(n)


def make_monitor(**kw):
    model = mlp()
    kw.setdefault("allocated", None)
    return MemoryMonitor(buggy=lambda: leaky_eval(model, batches()),
                         fixed=lambda: float_eval(model, batches()), **kw)


HISTORY = {"buggy": {"iteration": [1, 2, 3], "saved_bytes": [100, 200, 300], "saved_tensors": [1, 2, 3],
                     "nodes": [4, 11, 18]},
           "fixed": {"iteration": [1, 2, 3], "saved_bytes": [0, 0, 0], "saved_tensors": [0, 0, 0],
                     "nodes": [0, 0, 0]}}


def attrs(page: str, series: str) -> dict:
    tag = re.search(rf'<div class="memory-monitor-series" data-series="{series}"[^>]*>', page).group(0)
    return dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', tag))


def test_growth_text():
    assert growth_text([10, 20, 30], "saved_bytes") == "+10 B per iteration"
    assert growth_text([1, 8, 15, 22], "nodes") == "+7 nodes per iteration"
    assert growth_text([5, 5, 5], "nodes") == "flat"
    assert growth_text([1, 5, 6, 20], "nodes") == "not steady" and growth_text([1], "nodes") == ""


def test_html_has_stable_hooks_and_one_chart_per_metric():
    page = monitor_html(HISTORY, planned=10, running=True)
    assert page.startswith('<div class="memory-monitor" data-iterations="3" data-planned="10" '
                           'data-running="true" data-accelerator="none" data-series-names="buggy,fixed">')
    assert attrs(page, "buggy") == {"data-series": "buggy", "data-iterations": "3",
                                    "data-last-bytes": "300", "data-last-nodes": "18"}
    assert attrs(page, "fixed")["data-last-bytes"] == "0"
    assert page.count("data-series=") == 2                      # one legend entry per loop, nothing else
    assert page.count("<svg") == 2 and 'data-metric="saved_bytes"' in page and 'data-metric="nodes"' in page
    assert page.count('<polyline data-line="buggy"') == 2 and page.count('<polyline data-line="fixed"') == 2
    assert "+100 B per iteration" in page and "+7 nodes per iteration" in page and "flat" in page
    assert "No accelerator here" in page
    assert "<script" not in page and "http" not in page          # nothing fetched, nothing run


def test_chart_geometry():
    svg = chart_svg(HISTORY, "saved_bytes", "t", planned=3)
    buggy = re.search(r'data-line="buggy"[^>]*points="([^"]*)"', svg).group(1)
    points = [tuple(map(float, p.split(","))) for p in buggy.split()]
    xs, ys = zip(*points)
    assert xs == (64.0, 192.0, 320.0)                            # first to last iteration span the axis
    assert ys[2] == 24.0 and ys[0] > ys[1] > ys[2]               # the largest value at the top
    flat = re.search(r'data-line="fixed"[^>]*points="([^"]*)"', svg).group(1)
    assert {p.split(",")[1] for p in flat.split()} == {"160.0"}  # zero on the bottom axis
    assert 'data-max="300"' in svg
    one = chart_svg({"a": {"iteration": [1], "nodes": [5]}}, "nodes", "t")
    assert "<circle" in one and 'data-count="1"' in one
    long = chart_svg({"a": {"iteration": list(range(1, 1001)), "nodes": list(range(1000))}}, "nodes", "t")
    points = re.search(r'points="([^"]*)"', long).group(1).split()
    assert len(points) <= 257 and points[-1] == "320.0,24.0" and 'data-count="1000"' in long   # one per pixel
    empty = monitor_html({"buggy": {}, "fixed": {}})
    assert 'data-iterations="0"' in empty and attrs(empty, "buggy")["data-last-nodes"] == "0"


def test_allocator_chart_only_where_there_are_figures():
    history = {name: dict(h, accelerator_bytes=[0, 256, 512]) for name, h in HISTORY.items()}
    page = monitor_html(history, accelerator="cuda")
    assert page.count("<svg") == 3 and 'data-metric="accelerator_bytes"' in page
    assert 'data-accelerator="cuda"' in page and attrs(page, "buggy")["data-last-accelerator-bytes"] == "512"
    assert "No accelerator here" not in page
    assert "data-last-accelerator-bytes" not in monitor_html(HISTORY)


def test_matplotlib_fallback():
    fig = plot_history(HISTORY)
    assert [ax.get_title() for ax in fig.axes] == ["bytes held by saved tensors", "live graph nodes"]
    assert [line.get_label() for line in fig.axes[0].lines] == ["buggy", "fixed"]
    assert list(fig.axes[1].lines[0].get_ydata()) == [4, 11, 18]
    history = {name: dict(h, accelerator_bytes=[0, 1, 2]) for name, h in HISTORY.items()}
    assert len(plot_history(history).axes) == 3


def test_widget_runs_both_loops_and_redraws_live(covered):
    monitor = make_monitor(iterations=12, update_every=4)
    assert 'data-iterations="0"' in monitor.chart.value and monitor.children[1] is monitor.chart
    seen = []
    monitor.chart.observe(lambda change: seen.append(change["new"]), names="value")
    history = monitor.run()
    assert history is monitor.history
    buggy, fixed = monitor.history["buggy"], monitor.history["fixed"]
    assert buggy["iteration"] == fixed["iteration"] == list(range(1, 13))
    assert {b - a for a, b in zip(buggy["saved_bytes"], buggy["saved_bytes"][1:])} == {PER_BATCH}
    assert {b - a for a, b in zip(buggy["nodes"], buggy["nodes"][1:])} == {7}
    assert set(fixed["saved_bytes"]) == {0} and set(fixed["nodes"]) == {0}
    # live: drawn at the start, after iterations 4 and 8 while running, and once at the end
    states = [(re.search(r'data-iterations="(\d+)"', p).group(1), re.search(r'data-running="(\w+)"', p).group(1))
              for p in seen]
    assert states == [("0", "true"), ("4", "true"), ("8", "true"), ("12", "false")]
    final = monitor.chart.value
    assert attrs(final, "buggy")["data-last-bytes"] == str(buggy["saved_bytes"][-1])
    assert attrs(final, "buggy")["data-last-nodes"] == str(buggy["nodes"][-1])
    assert attrs(final, "fixed")["data-last-bytes"] == "0"
    assert monitor.after_end == {"buggy": 0, "fixed": 0}       # ending the loops freed their graphs
    assert "still alive: buggy 0 B, fixed 0 B" in final and not monitor.run_button.disabled
    covered(f"memory monitor: buggy +{PER_BATCH:,} B and +7 nodes per iteration, fixed flat, 4 live redraws")


def test_each_loop_keeps_its_own_grad_mode():
    """A fixed loop that yields inside no_grad (or inference_mode) must not switch the buggy one's recording off."""
    model = mlp()

    @torch.inference_mode()
    def inference_eval(model, data):
        for x, y in data:
            F.mse_loss(model(x), y)
            yield

    def inference_block_eval(model, data):
        with torch.inference_mode():
            for x, y in data:
                F.mse_loss(model(x), y)
                yield

    for fixed in (no_grad_eval, inference_eval, inference_block_eval):
        monitor = MemoryMonitor(fixed=lambda evaluate=fixed: evaluate(model, batches()),
                                buggy=lambda: leaky_eval(model, batches()), iterations=4, allocated=None)
        monitor.run()
        assert {b - a for a, b in zip(monitor.history["buggy"]["saved_bytes"],
                                      monitor.history["buggy"]["saved_bytes"][1:])} == {PER_BATCH}, fixed.__name__
        assert set(monitor.history["fixed"]["saved_bytes"]) == {0}
        assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
    with torch.no_grad():                     # the loops start in the caller's grad mode
        monitor = MemoryMonitor(buggy=lambda: leaky_eval(model, batches()), iterations=3, allocated=None)
        monitor.run()
    assert set(monitor.history["buggy"]["nodes"]) == {0}


def test_run_button_and_iterations_box_start_a_fresh_run():
    monitor = make_monitor(iterations=3, update_every=10)
    monitor.run()
    first = list(monitor.history["buggy"]["saved_bytes"])
    monitor.iterations_box.value = 5
    monitor.run_button.click()
    assert monitor.history["buggy"]["saved_bytes"][:3] == first       # same loop, started again
    assert len(monitor.history["buggy"]["iteration"]) == 5
    monitor.run(iterations=2)
    assert monitor.iterations_box.value == 2 and monitor.history["fixed"]["iteration"] == [1, 2]


def test_loops_that_end_early_and_loops_that_fail():
    model = mlp()
    monitor = MemoryMonitor(buggy=lambda: leaky_eval(model, batches(3)), fixed=lambda: float_eval(model, batches(5)),
                            iterations=50, allocated=None)
    monitor.run()
    assert monitor.history["buggy"]["iteration"] == [1, 2, 3] and len(monitor.history["fixed"]["iteration"]) == 5

    def broken():
        yield
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")
    monitor = MemoryMonitor(buggy=broken, iterations=5, allocated=None)
    with pytest.raises(RuntimeError, match="shapes"):
        monitor.run()
    assert "stopped: RuntimeError: mat1 and mat2" in monitor.chart.value and not monitor.run_button.disabled


def test_a_stand_in_allocator_adds_its_chart():
    counter = {"bytes": 0}

    def loop():
        while True:
            counter["bytes"] += 1024
            yield
    monitor = MemoryMonitor(buggy=loop, iterations=3, allocated=lambda: counter["bytes"])
    monitor.run()
    assert monitor.history["buggy"]["accelerator_bytes"] == [1024, 2048, 3072]
    assert 'data-accelerator="custom"' in monitor.chart.value and monitor.chart.value.count("<svg") == 3


def test_refuses_what_it_cannot_run():
    with pytest.raises(ValueError, match="at least one loop"):
        MemoryMonitor()
    with pytest.raises(ValueError, match="update_every"):
        MemoryMonitor(buggy=lambda: iter(()), update_every=0)
    with pytest.raises(TypeError, match="so that Run can start it again"):
        MemoryMonitor(buggy=leaky_eval(mlp(), batches()))
    monitor = MemoryMonitor(buggy=lambda: 42, iterations=2, allocated=None)   # makes no loop
    with pytest.raises(TypeError, match="not int"):
        monitor.run()
    assert "stopped: TypeError" in monitor.chart.value
