"""The mutation score of the hidden tests: how many wrong variants of each answer they catch.

For every unit, every mutant of tests/mutation.py (generated from the reference solutions by
misconception-shaped operators, plus the unit's hand-written MUTANTS) runs against the source
notebook's test cells, hidden tests included; a mutant is caught when the test cell of the
exercise it changes raises; it is named correctly when the first misconception its feedback
names (tests/mutation.py's `named`: the key a "Pitfall: ..." message carries) is the one the mutant
models. Mutants listed in the unit's EQUIVALENT (behaviourally the same as a
correct answer) are reported apart, with their reasons. In the same runner, every correct variant
of the unit's scenarios must pass every test cell, and every scripted wrong answer must lose
exactly the items it names, with the messages it expects.

    python benchmarks/mutation_score.py [unit01 unit05 ...] [--workers 2] [--target 97]

Prints, per unit: caught / non-equivalent / percent, named / caught with a misconception /
percent, then the survivors, the caught mutants named otherwise (with what their feedback named),
the equivalents with their reasons, and any correct variant that failed. Exits 1 when a unit is
below --target caught or --named-target named, or a correct variant fails, so it can gate a
release."""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # the course's autograder (misconception names)

import mutation


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("units", nargs="*", default=mutation.UNITS, help="units to score (default: all)")
    parser.add_argument("--workers", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--target", type=float, default=97.0, help="percent caught each unit must reach")
    parser.add_argument("--named-target", type=float, default=90.0,
                        help="percent of caught misconception mutants each unit must name correctly")
    args = parser.parse_args()

    reports, start = [], time.perf_counter()
    print(f"{'unit':<24} {'caught':>6} / {'non-equivalent':<14} {'percent':>7}  {'named':>5} / {'caught*':<7} "
          f"{'percent':>7}  {'equivalent':>10}  {'correct variants passing':>24}  seconds", flush=True)
    for unit in args.units:
        began = time.perf_counter()
        report = mutation.score_unit(unit, workers=args.workers)
        reports.append(report)
        live = len(report["caught"]) + len(report["survivors"])
        percent = 100.0 * len(report["caught"]) / live if live else 100.0
        report["percent"] = percent
        modelled = len(report["named"]) + len(report["unnamed"])
        report["named_percent"] = 100.0 * len(report["named"]) / modelled if modelled else 100.0
        passing = report["variants"] - len(report["variants_failed"])
        print(f"{report['assignment']:<24} {len(report['caught']):>6} / {live:<14} {percent:>6.1f}%  "
              f"{len(report['named']):>5} / {modelled:<7} {report['named_percent']:>6.1f}%  "
              f"{len(report['equivalent']):>10}  {passing:>12} of {report['variants']:<9}  "
              f"{time.perf_counter() - began:.0f}", flush=True)
    total_caught = sum(len(r["caught"]) for r in reports)
    total_live = total_caught + sum(len(r["survivors"]) for r in reports)
    total_named = sum(len(r["named"]) for r in reports)
    total_modelled = total_named + sum(len(r["unnamed"]) for r in reports)
    print(f"{'all':<24} {total_caught:>6} / {total_live:<14} {100.0 * total_caught / max(total_live, 1):>6.1f}%  "
          f"{total_named:>5} / {total_modelled:<7} {100.0 * total_named / max(total_modelled, 1):>6.1f}%  "
          f"{sum(len(r['equivalent']) for r in reports):>10}  in {time.perf_counter() - start:.0f} s")

    failed = False
    for r in reports:
        lines = []
        for m in r["survivors"]:
            key = f" [{m.misconception}]" if m.misconception else ""
            lines.append(f"  survivor: {m.name}{key}")
        for m in r["unnamed"]:
            said = mutation.named_keys(r["results"][m.name]) or ["nothing"]
            first = next(iter(r["results"][m.name]["failed"].values()), "")[:160]
            lines.append(f"  named otherwise: {m.name} [{m.misconception}] named {said[0]}: {first}")
        for m in r["equivalent"]:
            caught = " (caught all the same: revisit the reason)" if m in r["equivalent_caught"] else ""
            lines.append(f"  equivalent: {m.name}: {m.equivalent}{caught}")
        for student, cells in r["variants_failed"].items():
            lines.append(f"  CORRECT VARIANT FAILED: {student}: {cells}")
        for student, why in r["scenarios_wrong"].items():
            lines.append(f"  wrong answer graded otherwise than scripted: {student}: {why}")
        if lines:
            print(f"\n{r['assignment']}:")
            print("\n".join(lines))
        failed |= (r["percent"] < args.target or r["named_percent"] < args.named_target
                   or bool(r["variants_failed"]) or bool(r["scenarios_wrong"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
