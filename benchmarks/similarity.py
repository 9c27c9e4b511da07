"""How long comparing a class takes: `./course similarity`'s work (classgrader/similarity/) on a
class of N students of one assignment, built as tests/scenarios/copying_class.py builds its class
(honest students each in their own hand, copiers disguising a classmate's notebook), every pair
compared. Prints the class size, the seconds spent reading what students wrote, fingerprinting and
ranking, the pairs worth a look (found / copied), and the machine's load while it ran.

    python benchmarks/similarity.py [--students 500] [--unit unit08] [--copiers 10]

The target: a class of 500 in under a minute on 2 cores."""
import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from classgrader.similarity.compare import compare  # noqa: E402
from coursekit import build_submission, read_notebook  # noqa: E402
from scenarios import copying_class  # noqa: E402


def big_class(unit: str, students: int, copiers: int) -> tuple[dict, dict, set]:
    """{student: notebook}, the release, and the copied pairs: students - copiers honest students,
    and copiers who each copied a different honest student, disguised in turn as the test class's are."""
    module = __import__(f"scenarios.{unit}", fromlist=["ASSIGNMENT"])
    source = read_notebook(ROOT / "source" / module.ASSIGNMENT / module.NOTEBOOK)
    release = read_notebook(ROOT / "release" / module.ASSIGNMENT / module.NOTEBOOK)
    # Three draws, not the test class's fifty: hundreds of students exhaust a short answer's shapes.
    honest = copying_class.honest_answers(copying_class.correct_variants(unit), students - copiers, tries=3)
    # 500 students drawn from a few variants per exercise repeat one another's shapes, where real ones
    # would not: each honest answer gets a line of its own (a number only that student writes), the
    # stand-in for what makes a real student's code theirs. Copiers copy it with the rest.
    honest = [{gid: f"{code}\nmine = {100000 + i}{j}{100000 + i}\n" for j, (gid, code) in enumerate(answers.items())}
              for i, answers in enumerate(honest)]
    notebooks = {f"s{i:04d}": build_submission(source, release, answers) for i, answers in enumerate(honest)}
    disguises = [set(d) for _, d in copying_class.COPIERS.values()]
    copied = set()
    for n in range(copiers):
        original = f"s{7 * n + 3:04d}"
        notebooks[f"x{n:03d}"] = copying_class.copied(notebooks[original], disguises[n % len(disguises)], f"x{n}")
        copied.add(tuple(sorted((original, f"x{n:03d}"))))
    return notebooks, release, copied


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=500)
    parser.add_argument("--unit", default="unit08", choices=copying_class.UNITS)
    parser.add_argument("--copiers", type=int, default=10)
    args = parser.parse_args()
    if not 0 <= args.copiers < args.students:
        parser.error("--copiers must be fewer than --students")
    built = time.perf_counter()
    notebooks, release, copied = big_class(args.unit, args.students, args.copiers)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    result = compare("n.ipynb", notebooks, release)
    seconds = time.perf_counter() - start
    looked = {(p.a, p.b) for p in result.worth_a_look}
    print(f"{args.unit}: {len(notebooks)} students ({args.copiers} copied), class built in {start - built:.0f} s")
    print(f"compared in {seconds:.1f} s on {os.cpu_count()} cores (load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after); {len(result.ranked)} pairs share something")
    print(f"worth a look: {len(looked)}; of the {len(copied)} copied pairs {len(looked & copied)}; "
          f"other pairs {len(looked - copied)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
