"""Who wrote the same code, for the instructor's review:

    python -m classgrader.commands.similarity ID [ID ...]     (./course similarity ID [ID ...])

For each assignment, every submitted notebook (runtime/submitted/STUDENT/ID/) compared with every
other (classgrader/similarity/), written to runtime/reports/similarity-ID.html, with the pairs worth
a look printed. It reads what students submitted and changes nothing: no score, no flag.
Arguments are checked by ./course's table (classgrader/cli.py) before anything heavy loads."""
import json
import os
import sys

SUBMITTED = os.path.join("runtime", "submitted")
RELEASE = "release"
REPORTS = os.path.join("runtime", "reports")
MAX_NOTEBOOK = 20 * 2**20   # a submitted notebook larger than this is not read (outputs aside, none is)


def _read_json(path: str) -> dict | None:
    """A submitted notebook, or None: a link, a file too large or not a notebook is left out
    (a student wrote it; the instructor's process follows no link of theirs)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_NOTEBOOK:
            return None
        try:
            data = json.loads(handle.read())
        except ValueError:
            return None
    return data if isinstance(data, dict) and isinstance(data.get("cells"), list) else None


def submissions(root: str, assignment: str, notebook: str) -> tuple[dict[str, dict], list[str]]:
    """({student: their notebook}, [students whose notebook could not be read])."""
    found, unreadable = {}, []
    folder = os.path.join(root, SUBMITTED)
    for student in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        path = os.path.join(folder, student, assignment, notebook)
        if not os.path.lexists(path):
            continue
        nb = _read_json(path)
        if nb is None:
            unreadable.append(student)
        else:
            found[student] = nb
    return found, unreadable


def compare_assignment(root: str, assignment: str):
    """Each of the release's notebooks compared across the class: [(Comparison, unreadable)]."""
    from classgrader.similarity.compare import compare
    results = []
    release_dir = os.path.join(root, RELEASE, assignment)
    for notebook in sorted(n for n in os.listdir(release_dir) if n.endswith(".ipynb")):
        with open(os.path.join(release_dir, notebook), encoding="utf-8") as handle:
            release = json.load(handle)
        notebooks, unreadable = submissions(root, assignment, notebook)
        results.append((compare(notebook, notebooks, release), unreadable))
    return results


def write_page(root: str, assignment: str, results) -> str:
    from classgrader.similarity.page import render
    path = os.path.join(root, REPORTS, f"similarity-{assignment}.html")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(render(assignment, [comparison for comparison, _ in results]))
    os.replace(path + ".tmp", path)
    return path


def summary(assignment: str, results, path: str) -> str:
    lines = []
    for comparison, unreadable in results:
        look = comparison.worth_a_look
        pairs = ", ".join(f"{p.a} & {p.b} {round(100 * p.score)}%" for p in look) or "none"
        lines.append(f"{assignment}/{comparison.notebook}: {len(comparison.students)} students; "
                     f"worth a look: {pairs}")
        if unreadable:
            lines.append(f"  not read (not a notebook, a link, or over {MAX_NOTEBOOK >> 20} MB): "
                         f"{', '.join(unreadable)}")
    lines.append(f"  -> {path}")
    return "\n".join(lines)


def for_report(root: str, assignment: str) -> dict | None:
    """What the class report shows of it: the page written, and the pairs worth a look; None where
    there is nothing to compare (no release, or fewer than two submissions)."""
    release_dir = os.path.join(root, RELEASE, assignment)
    folder = os.path.join(root, SUBMITTED)
    if not os.path.isdir(release_dir) or len([s for s in (os.listdir(folder) if os.path.isdir(folder) else [])
                                              if os.path.isdir(os.path.join(folder, s, assignment))]) < 2:
        return None
    results = compare_assignment(root, assignment)
    path = write_page(root, assignment, results)
    return {"page": os.path.basename(path),
            "students": max((len(c.students) for c, _ in results), default=0),
            "pairs": [(p.a, p.b, p.score) for c, _ in results for p in c.worth_a_look]}


def main(argv=None, root=None) -> int:
    from classgrader.cli import parse_or_exit  # the one command table: ./course similarity's arguments
    args = parse_or_exit("similarity", sys.argv[1:] if argv is None else list(argv))
    root = root or os.getcwd()
    for assignment in args.ids:
        results = compare_assignment(root, assignment)
        print(summary(assignment, results, write_page(root, assignment, results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
