"""How much the memory monitor slows down the loop it watches.

One run times the same loops three ways, each a median of several repeats:

- unwatched: `for _ in loop(): pass`;
- measured:  `measure_loop(loop())`: a SavedTensorTracker around each iteration, plus a walk of the
  loop's variables for live graph nodes after each one;
- live:      `MemoryMonitor(...).run()`: the same measurement, plus the SVG charts redrawn into the
  widget every `--every` iterations (here without a browser: the cost of drawing and setting the
  widget's value, not of the page showing it).

Two loops, a small MLP (64 -> 256 -> 10, cross-entropy) on batches of 256:

- train: a training step per iteration, the running loss logged with .item() (what a correct
  training loop looks like: the overhead a student pays for watching a healthy loop);
- leaky eval: an evaluation loop that accumulates the loss tensor without no_grad, the unit's bug.
  Its graph grows every iteration, so the node walk grows too: watching it costs more the longer
  it runs.

    python benchmarks/memory_monitor.py [--iterations 300] [--repeats 5] [--every 5] [--threads N]

A script, not a test: it prints figures and asserts nothing about time."""
import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from utils import example_loops
from utils.autograd_memory import measure_loop
from utils.memory_monitor import MemoryMonitor


def make_model():
    return example_loops.mlp(features=64, hidden=256, outputs=10)


def make_batches(n, batch=256):
    return list(example_loops.batches(n, batch=batch, features=64, classes=10, seed=1))


def train_loop(model, batches):
    return example_loops.train(model, batches, leaky=False, loss_fn=F.cross_entropy)


def leaky_eval_loop(model, batches):
    return example_loops.leaky_eval(model, batches, loss_fn=F.cross_entropy)


def unwatched(make):
    for _ in make():
        pass


def measured(make):
    measure_loop(make(), allocated=None)


def live(make, iterations, every):
    MemoryMonitor(iterations=iterations, update_every=every, allocated=None, loop=make).run()


def time_once(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--every", type=int, default=5, help="live: redraw every N iterations")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    n = args.iterations
    batches = make_batches(n)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {n} iterations, batch 256, "
          f"median of {args.repeats} (after one warm-up), live redraw every {args.every}")
    print(f"{'loop':12} {'way':10} {'ms / iteration':>15} {'x unwatched':>12}")
    for label, loop in (("train", train_loop), ("leaky eval", leaky_eval_loop)):
        def make(loop=loop):   # an iterator over the batches, as a DataLoader gives: the loop holds one at a time
            return loop(make_model(), iter(batches))
        ways = {"unwatched": lambda: unwatched(make),
                "measured": lambda: measured(make),
                "live": lambda: live(make, n, args.every)}
        times = {name: [] for name in ways}
        for fn in ways.values():
            fn()                                    # warm-up
        for _ in range(args.repeats):               # interleaved, so drift hits every way alike
            for name, fn in ways.items():
                times[name].append(time_once(fn))
        base = statistics.median(times["unwatched"])
        for name in ways:
            med = statistics.median(times[name])
            print(f"{label:12} {name:10} {1000 * med / n:15.3f} {med / base:12.2f}")


if __name__ == "__main__":
    main()
