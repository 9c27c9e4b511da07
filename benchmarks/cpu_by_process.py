"""Where a command's CPU time goes, by kind of process: runs CMD, reads /proc for every process
it starts (children, their children, forks) every --every seconds, and prints each kind's CPU
seconds and process count, the total, the wall time, the machine's load and the CPU time its host
took back (steal: on a shared virtual machine the same work can take twice the CPU seconds when
the host is busy, so two runs compare only with it). Linux only.

    .venv/bin/python benchmarks/cpu_by_process.py [--every 0.2] [--top 40] -- ./course test

A kind is a process's command line, shortened (`python -m nbgrader generate_feedback ...` is
"nbgrader generate_feedback"); a fork that kept its parent's command line (a grading worker, a
kernel forked by the zygote) counts as "(fork of) ...". A process that lives less than one
sampling period may be missed, and each is counted as of its last sample: the figures are a
floor, close for a suite whose time is in processes that live seconds."""
import argparse
import collections
import os
import re
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.2, help="seconds between readings of /proc")
    parser.add_argument("--top", type=int, default=40, help="kinds to list")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args(argv)
    args.command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not args.command:
        parser.error("give the command to measure after --")
    if args.every <= 0:
        parser.error("--every must be above 0")
    return args


def processes() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds so far) for every process /proc shows now."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:  # gone meanwhile
                continue
            found[int(name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS)
    return found


def stolen() -> float:
    """CPU seconds the host has taken from this virtual machine since boot (/proc/stat's steal)."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    return int(fields[8]) / TICKS if len(fields) > 8 else 0.0


def command_line(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return [part.decode(errors="replace") for part in cmdline.read().split(b"\0") if part]
    except OSError:
        return []


def kind(words: list[str]) -> str:
    """A short name for a command line: the module or script and its first word of arguments."""
    if not words:
        return "(unknown)"
    if "-m" in words[:-1]:
        module, rest = words[words.index("-m") + 1], words[words.index("-m") + 2:]
        # A subcommand (nbgrader's), not a path or an assignment, which would split one kind into many.
        return f"{module} {rest[0]}" if rest and re.fullmatch(r"[a-z_]+", rest[0]) else module
    if "-c" in words[:-1]:
        return f"{os.path.basename(words[0])} -c {' '.join(words[words.index('-c') + 1].split())[:50]}"
    script = next((w for w in words[1:] if not w.startswith("-")), "")
    return f"{os.path.basename(words[0])} {os.path.basename(script)}".strip()[:80]


def measure(command: list[str], every: float) -> tuple[dict[str, list[float]], float, int]:
    """({kind: [CPU seconds, processes]}, wall seconds, exit status) of running `command`."""
    start = time.monotonic()
    child = subprocess.Popen(command)
    ours: dict[int, tuple[str, list[str], float]] = {}  # pid -> (kind, command line, CPU seconds)
    while child.poll() is None:
        table = processes()
        for pid, (parent, seconds) in table.items():
            if pid in ours or pid == child.pid or parent in ours:
                # Its command line read at every reading, and its name taken again when that changed:
                # one first read between its fork and its exec shows its parent's (or none), and a
                # busy machine makes that gap long. An ended process (a zombie) shows none, and one
                # whose parent has gone has another parent: both keep the name they had.
                words = command_line(pid) or (ours[pid][1] if pid in ours else [])
                if pid in ours and words == ours[pid][1]:
                    ours[pid] = (ours[pid][0], words, seconds)
                    continue
                label = kind(words)
                if parent in ours and words == ours[parent][1]:
                    label = f"(fork of) {ours[parent][0].removeprefix('(fork of) ')}"
                ours[pid] = (label, words, seconds)
        time.sleep(every)
    totals: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for label, _, seconds in ours.values():
        totals[label][0] += seconds
        totals[label][1] += 1
    return dict(totals), time.monotonic() - start, child.returncode


def report(totals: dict[str, list[float]], wall: float, top: int, load: tuple[float, ...], steal: float) -> str:
    cpu, cores = sum(seconds for seconds, _ in totals.values()), os.cpu_count() or 1
    lines = [f"{cpu:.0f} CPU-s in {sum(n for _, n in totals.values()):.0f} processes over {wall:.0f} s of wall "
             f"({cpu / wall / cores:.0%} of {cores} cores); "
             f"load average at the start {load[0]:.1f}, at the end {os.getloadavg()[0]:.1f}; "
             f"taken by the host (steal) {steal:.0f} s, {steal / wall / cores:.0%} of the cores' time",
             "| CPU-s | share | processes | kind |", "|---:|---:|---:|---|"]
    for label, (seconds, count) in sorted(totals.items(), key=lambda item: -item[1][0])[:top]:
        lines.append(f"| {seconds:.1f} | {seconds / cpu if cpu else 0:.1%} | {count:.0f} | {label} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = arguments(sys.argv[1:] if argv is None else argv)
    load, steal = os.getloadavg(), stolen()
    totals, wall, status = measure(args.command, args.every)
    print(report(totals, wall, args.top, load, stolen() - steal), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
