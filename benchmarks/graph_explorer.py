"""Time the graph explorer on ~1,000-node graphs: .venv/bin/python benchmarks/graph_explorer.py [--nodes N] [--runs R]

Prints, for each graph, its node count and the median over --runs runs of the time to extract it
(utils.autograd_graph.extract_graph), lay it out (layout_full) and render it (to_svg), and the total.
Two graphs: a deep MLP (one Linear + tanh per layer, every parameter a leaf) and an unrolled RNN
(one weight matrix shared by every step, so many edges skip rows and need routing)."""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from utils.autograd_graph import extract_graph, layout_full
from utils.graph_explorer import to_svg


def deep_mlp(layers: int, width: int = 16) -> torch.Tensor:
    """10 nodes per layer: addmm (2 saved), T, tanh (1 saved), 2 AccumulateGrad, 2 leaves."""
    torch.manual_seed(0)
    h = torch.randn(8, width)
    for _ in range(layers):
        layer = torch.nn.Linear(width, width)
        h = torch.tanh(layer(h))
    return h.pow(2).mean()


def unrolled_rnn(steps: int, width: int = 16) -> torch.Tensor:
    """One shared weight W: every step's matmul reaches W's AccumulateGrad at the bottom."""
    torch.manual_seed(0)
    w = (torch.randn(width, width) * 0.1).requires_grad_()
    xs, h = torch.randn(steps, 8, width), torch.zeros(8, width)
    for t in range(steps):
        h = torch.tanh(xs[t] + h @ w)
    return h.pow(2).mean()


def time_once(loss: torch.Tensor) -> tuple[int, int, float, float, float]:
    t0 = time.perf_counter()
    graph = extract_graph(loss)
    t1 = time.perf_counter()
    plan = layout_full(graph)
    t2 = time.perf_counter()
    svg = to_svg(graph, plan.positions, plan.bends)
    t3 = time.perf_counter()
    return len(graph), len(svg), t1 - t0, t2 - t1, t3 - t2


def size_for(make, nodes: int) -> int:
    """The number of layers/steps whose graph has about `nodes` nodes."""
    per = len(extract_graph(make(10))) / 10
    return max(1, round(nodes / per))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000, help="about how many nodes each graph has")
    parser.add_argument("--runs", type=int, default=5, help="runs per graph; the median is printed")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, median of {args.runs} runs, times in ms")
    print(f"{'graph':26} {'nodes':>6} {'extract':>8} {'layout':>8} {'svg':>8} {'total':>8} {'svg size':>10}")
    for title, make in (("deep MLP", deep_mlp), ("unrolled RNN (shared W)", unrolled_rnn)):
        loss = make(size_for(make, args.nodes))
        runs = [time_once(loss) for _ in range(args.runs)]
        n, chars = runs[0][0], runs[0][1]
        ext, lay, svg = (statistics.median(r[i] for r in runs) * 1000 for i in (2, 3, 4))
        total = statistics.median((r[2] + r[3] + r[4]) * 1000 for r in runs)
        print(f"{title:26} {n:6d} {ext:8.1f} {lay:8.1f} {svg:8.1f} {total:8.1f} {chars / 1024:8.0f} KiB")


if __name__ == "__main__":
    main()
