"""What the class got wrong, on one page an instructor reads in a minute:

    python -m classgrader.commands.report ID [ID ...] [--below PERCENT]
    python -m classgrader.commands.report --all [--below PERCENT]

From what grading recorded (outcomes.py: runtime/grading/ID/outcomes/, and the class run's
runtime/grading/ID/done/), writes runtime/reports/ID.html (and runtime/reports/index.html
with --all): the score distribution; per item its points, mean, the share with full marks
and the share that did not answer; the misconceptions the hidden tests named, ranked by
students hit, each with the lesson section that teaches it and a message students saw; the
kinds of mistake per item; the students to look at (flagged, below PERCENT of the points,
default 50, or raising everywhere); and how grading went. One self-contained file: the plots
are inline SVG, nothing loads from elsewhere.

Arguments are checked by ./course's one table (classgrader/cli.py) before anything heavy loads:
one line and exit 2 when they are wrong."""
import glob
import html
import json
import os
import statistics
import sys
import types
from collections import Counter

from classgrader import arguments
from classgrader.class_run.records import read_done_folder
from classgrader.commands import similarity

GRADING = arguments.GRADING
REPORTS = os.path.join("runtime", "reports")
BELOW = 50.0  # percent of the points: a student below it is one to look at (./course report --below)
CATEGORIES = ["shape", "dtype", "device", "graph", "type", "value", "misconception",
              "error raised", "no answer", "timeout/crash", "flagged"]  # as outcomes.CATEGORIES
CRASHED = {"error raised", "timeout/crash"}


# -- what grading recorded ------------------------------------------------------------------

def _json_files(folder: str) -> dict[str, dict]:
    found = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        path = os.path.join(folder, name)
        if not name.endswith(".json") or os.path.islink(path):  # a temporary file ends in .tmp
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            found[name.removesuffix(".json")] = data
    return found


def load(root: str, assignment: str) -> dict:
    """The records of one assignment: outcomes and done records by student, why each done
    record refused was refused (records.read_done_folder), and the students a worker's death
    sent to another try in the latest class run (the shards of its later rounds)."""
    work = os.path.join(root, GRADING, assignment)
    shards = os.path.join(work, "shards")
    again = glob.glob(os.path.join(shards, "retry", "*")) + glob.glob(os.path.join(shards, "round-*", "*", "*"))
    done, refused = read_done_folder(os.path.join(work, "done"))
    return {"assignment": assignment,
            "outcomes": _json_files(os.path.join(work, "outcomes")),
            "done": done, "refused": refused,
            "retried": sorted({os.path.basename(path) for path in again if os.path.isdir(path)})}


# -- the figures ----------------------------------------------------------------------------

def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def summarize(records: dict, below: float = BELOW) -> dict:
    """Every figure the page shows, as plain data (the tests check these)."""
    items, named, students = _collect(records)
    totals = {}
    for student, info in students.items():
        score, top = sum(e["score"] for e in info["entries"]), sum(e["max"] for e in info["entries"])
        totals[student] = {"score": score, "max": top, "percent": 100 * _share(score, top)}
    return {"assignment": records["assignment"], "class_size": len(students), "below": below,
            "totals": totals, "items": [_item_figures(info) for info in items.values()],
            "misconceptions": _misconceptions(students, named),
            "look": _to_look_at(students, totals, records["done"], records["refused"], below),
            "grading": _grading(records, students)}


def _collect(records: dict) -> tuple[dict, dict, dict]:
    """(items in the order first met, what each misconception hit is called, each student's
    entries and flags)."""
    items: dict[tuple[str, str], dict] = {}
    named: dict[str, dict] = {}
    students: dict[str, dict] = {}
    for student, record in sorted(records["outcomes"].items()):
        notebooks = record.get("notebooks") or {}
        mine = []
        for notebook, graded in sorted(notebooks.items()):
            named.update(graded.get("misconceptions") or {})
            for entry in graded.get("items", []):
                item = items.setdefault((notebook, entry["item"]), {
                    "notebook": notebook, "item": entry["item"], "exercise": entry.get("exercise"),
                    "max": entry["max"], "scores": [], "kinds": Counter()})
                item["scores"].append(entry["score"])
                if entry.get("category"):
                    item["kinds"][entry["category"]] += 1
                mine.append(entry)
        if student in records["done"]:  # the class run's record has every flag, the triage's too
            flags = [flag["reason"] for flag in records["done"][student]["flags"]]
        else:
            flags = [f for graded in notebooks.values() for f in graded.get("flags", [])] + \
                    [entry["flag"] for entry in mine if entry.get("flag")]
        students[student] = {"entries": mine, "flags": flags}
    return items, named, students


def _item_figures(info: dict) -> dict:
    scores = info["scores"]
    figures = {key: value for key, value in info.items() if key != "scores"}
    return {**figures, "students": len(scores), "mean": statistics.fmean(scores) if scores else 0.0,
            "full": _share(sum(s >= info["max"] for s in scores), len(scores)),
            "no_answer": _share(info["kinds"]["no answer"], len(scores))}


def _misconceptions(students: dict, named: dict) -> list[dict]:
    """Ranked by students hit (a tie by key), each with where it appeared and its commonest message."""
    hits: dict[str, dict] = {}
    for student, info in students.items():
        for entry in info["entries"]:
            if entry.get("misconception"):
                hit = hits.setdefault(entry["misconception"],
                                      {"students": set(), "items": set(), "examples": Counter()})
                hit["students"].add(student)
                hit["items"].add(entry.get("exercise") or entry["item"])
                hit["examples"][entry.get("message") or ""] += 1
    unknown = {"lesson": "", "section": ""}
    return [{"key": key, "name": key, **unknown, **named.get(key, {}), "students": len(hit["students"]),
             "share": _share(len(hit["students"]), len(students)), "items": sorted(hit["items"]),
             "example": hit["examples"].most_common(1)[0][0]}
            for key, hit in sorted(hits.items(), key=lambda pair: (-len(pair[1]["students"]), pair[0]))]


def _to_look_at(students: dict, totals: dict, done: dict, refused: dict[str, str], below: float) -> list[dict]:
    """Flagged, answered nothing, raised on every item, below the threshold, not graded, or
    whose done record was refused (no verdict of the class run's); lowest score first."""
    look = []
    for student, info in students.items():
        reasons = [f"flagged: {reason}" for reason in info["flags"]]
        if student in refused:
            reasons.append(f"no verdict: {refused[student]}")
        kinds = {entry.get("category") for entry in info["entries"]}
        if info["entries"] and None not in kinds:  # no item scored full marks
            if kinds == {"no answer"}:
                reasons.append("answered nothing")
            elif kinds <= CRASHED | {"no answer"}:
                reasons.append("every item raised an error")
        total = totals[student]
        if total["percent"] < below:
            reasons.append(f"below {below:g}%: {total['score']:g} of {total['max']:g} points")
        if reasons:
            look.append({"student": student, "reasons": reasons, **total})
    for student, record in sorted(done.items()):
        if record["kind"] == "failed" and student not in students:  # the class run gave up on it
            look.append({"student": student, "reasons": [f"not graded: {record['why']}"],
                         "score": 0.0, "max": 0.0, "percent": 0.0})
    for student, why in sorted(refused.items()):
        if student not in students:
            look.append({"student": student, "reasons": [f"no verdict: {why}"],
                         "score": 0.0, "max": 0.0, "percent": 0.0})
    return sorted(look, key=lambda row: (row["percent"], row["student"]))


def _grading(records: dict, students: dict) -> dict:
    done = records["done"]
    seconds = [d["seconds"] for d in done.values() if d["kind"] == "graded"]
    devices = Counter(d["device"] for d in done.values() if d["kind"] == "graded" and d["device"])
    if not devices:  # what the notebooks printed, where the class run recorded none
        devices = Counter(g["device"] for r in records["outcomes"].values()
                          for g in (r.get("notebooks") or {}).values() if g.get("device"))
    restarted = sorted(s for s, info in students.items()
                       if any(e.get("category") == "timeout/crash" for e in info["entries"]))
    retried = sorted(records["retried"])
    failed = sorted(s for s, d in done.items() if d["kind"] == "failed")
    return {"graded": len(students), "seconds": seconds, "devices": dict(devices), "retried": retried,
            "restarted": restarted, "failed": failed}


# -- the page -------------------------------------------------------------------------------

def _svg(figure) -> str:
    import io

    import matplotlib.pyplot as plt
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight",  # no date or creator: the same data, the same page
                   metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # without the XML prolog and doctype: inline in HTML


def _plots() -> types.ModuleType:
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "font.size": 9, "svg.hashsalt": "course-report"})
    import matplotlib.pyplot as plt
    return plt


def distribution_plot(summary: dict) -> str:
    plt = _plots()
    figure, axes = plt.subplots(figsize=(6, 2.4))
    percents = [t["percent"] for t in summary["totals"].values()]
    axes.hist(percents, bins=[i * 10 for i in range(11)], color="#4c78a8", edgecolor="white")
    axes.axvline(summary["below"], color="#d62728", linestyle="--", linewidth=1)
    axes.set_xlim(0, 100)
    axes.set_xlabel("score (% of the points)")
    axes.set_ylabel("students")
    axes.spines[["top", "right"]].set_visible(False)
    return _svg(figure)


KIND_COLOURS = dict(zip(CATEGORIES, ["#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b",
                                     "#b279a2", "#ff9da6", "#bab0ac", "#9d755d", "#333333"]))


def kinds_plot(summary: dict) -> str:
    plt = _plots()
    rows = summary["items"]
    figure, axes = plt.subplots(figsize=(6, 0.28 * len(rows) + 1.2))
    left = [0] * len(rows)
    labels = [row["exercise"] or row["item"] for row in rows]
    for kind in CATEGORIES:
        counts = [row["kinds"].get(kind, 0) for row in rows]
        if any(counts):
            axes.barh(labels, counts, left=left, color=KIND_COLOURS[kind], label=kind)
            left = [a + b for a, b in zip(left, counts)]
    axes.invert_yaxis()
    axes.set_xlabel("students")
    axes.spines[["top", "right"]].set_visible(False)
    if any(left):  # below the bars, so that the plot keeps the column's width
        axes.legend(loc="upper center", bbox_to_anchor=(0.4, -0.25), ncol=4, frameon=False)
    return _svg(figure)


STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 68em; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; }
h2 { font-size: 1.15em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
.lead { color: #555; margin-top: 0; }
table { border-collapse: collapse; width: 100%; margin: .5em 0; }
th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid #eee; vertical-align: top; }
th { background: #f6f6f6; font-weight: 600; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.bar { display: inline-block; height: .7em; background: #4c78a8; vertical-align: middle; margin-right: .4em; }
.msg { color: #555; font-size: .92em; } .none { color: #777; font-style: italic; }
.scroll { max-height: 32em; overflow: auto; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 1.5em; } svg { max-width: 100%; height: auto; }
"""


def _e(text) -> str:
    return html.escape(str(text))


def _pct(share: float) -> str:
    return f"{100 * share:.0f}%"


def render(summary: dict) -> str:
    """The page, one self-contained HTML document."""
    name = summary["assignment"]
    totals = list(summary["totals"].values())
    mean = statistics.fmean(t["percent"] for t in totals) if totals else 0.0
    median = statistics.median(t["percent"] for t in totals) if totals else 0.0
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(name)}: class report</title>"
             f"<style>{STYLE}</style></head><body>",
             f"<h1>{_e(name)}: what the class got wrong</h1>",
             f"<p class='lead'>{summary['class_size']} students graded; mean {mean:.0f}%, median {median:.0f}% "
             f"of the points; {len(summary['misconceptions'])} misconceptions named by the hidden tests; "
             f"{len(summary['look'])} students to look at.</p>"]
    parts += ["<div class='grid'><section><h2>Score distribution</h2>",
              distribution_plot(summary) if totals else "<p class='none'>No student was graded.</p>",
              "</section><section><h2>Mistake kinds per item</h2>",
              kinds_plot(summary) if summary["items"] else "<p class='none'>No items.</p>",
              "</section></div>"]
    parts.append(_items_table(summary))
    parts.append(_misconceptions_table(summary))
    parts.append(_kinds_table(summary))
    parts.append(_look_table(summary))
    parts.append(_alike_section(summary.get("alike")))
    parts.append(_grading_section(summary["grading"]))
    parts.append("</body></html>\n")
    return "".join(parts)


def _items_table(summary) -> str:
    rows = "".join(
        f"<tr><td>{_e(i['exercise'] or i['item'])}<br><span class='msg'>{_e(i['item'])}</span></td>"
        f"<td class='n'>{i['max']:g}</td><td class='n'>{i['mean']:.2f}</td>"
        f"<td class='n'><span class='bar' style='width:{60 * i['full']:.0f}px'></span>{_pct(i['full'])}</td>"
        f"<td class='n'>{_pct(i['no_answer'])}</td></tr>" for i in summary["items"])
    return ("<h2>Items</h2><table><tr><th>item</th><th class='n'>points</th><th class='n'>mean</th>"
            f"<th class='n'>full marks</th><th class='n'>did not answer</th></tr>{rows}</table>")


def _misconceptions_table(summary) -> str:
    if not summary["misconceptions"]:
        return "<h2>Misconceptions</h2><p class='none'>No hidden test named a misconception.</p>"
    rows = "".join(
        f"<tr><td class='n'>{m['students']} <span class='msg'>({_pct(m['share'])})</span></td>"
        f"<td><b>{_e(m['name'])}</b><br><span class='msg'>{_e(m['key'])}</span></td>"
        f"<td>{_e(m['lesson'])}<br><span class='msg'>{_e(m['section'])}</span></td>"
        f"<td>{_e(', '.join(m['items']))}</td><td class='msg'>{_e(m['example'])}</td></tr>"
        for m in summary["misconceptions"])
    return ("<h2>Misconceptions, by students hit</h2><table><tr><th class='n'>students</th><th>misconception</th>"
            f"<th>taught in</th><th>items</th><th>a message students saw</th></tr>{rows}</table>")


def _kinds_table(summary) -> str:
    used = [k for k in CATEGORIES if any(i["kinds"].get(k) for i in summary["items"])]
    if not used:
        return "<h2>Mistake kinds</h2><p class='none'>Every item scored full marks.</p>"
    head = "".join(f"<th class='n'>{_e(k)}</th>" for k in used)
    rows = "".join(f"<tr><td>{_e(i['exercise'] or i['item'])}</td>"
                   + "".join(f"<td class='n'>{i['kinds'].get(k, 0) or ''}</td>" for k in used) + "</tr>"
                   for i in summary["items"])
    return f"<h2>Mistake kinds (students per item)</h2><table><tr><th>item</th>{head}</tr>{rows}</table>"


def _score(row) -> str:
    return f"{row['score']:g} / {row['max']:g}" if row["max"] else "-"  # not graded: no score


def _look_table(summary) -> str:
    if not summary["look"]:
        return "<h2>Students to look at</h2><p class='none'>Nobody: no flags, nobody below the threshold.</p>"
    rows = "".join(f"<tr><td>{_e(s['student'])}</td><td class='n'>{_score(s)}</td>"
                   f"<td>{'<br>'.join(_e(r) for r in s['reasons'])}</td></tr>" for s in summary["look"])
    return (f"<h2>Students to look at ({len(summary['look'])})</h2><div class='scroll'><table><tr><th>student</th>"
            f"<th class='n'>score</th><th>why</th></tr>{rows}</table></div>")


def _grading_section(grading) -> str:
    lines = [f"{grading['graded']} students graded."]
    seconds = grading["seconds"]
    if seconds:
        lines.append(f"Seconds per student: median {statistics.median(seconds):.1f}, slowest {max(seconds):.1f}, "
                     f"{sum(seconds):.0f} in all.")
    else:
        lines.append("Seconds per student were not recorded.")
    if grading["devices"]:
        lines.append("Graded on: " + ", ".join(f"{d} ({n})" for d, n in sorted(grading["devices"].items())) + ".")
    if grading["retried"]:
        lines.append("Graded again after their worker died: " + ", ".join(grading["retried"]) + ".")
    if grading["failed"]:
        lines.append("Could not be graded: " + ", ".join(grading["failed"]) + " (see Students to look at).")
    if grading["restarted"]:
        lines.append("A cell timed out or crashed its kernel (graded on in a fresh one): "
                     + ", ".join(grading["restarted"]) + ".")
    return "<h2>How grading went</h2><ul>" + "".join(f"<li>{_e(line)}</li>" for line in lines) + "</ul>"


def _alike_section(alike) -> str:
    """The similarity page's verdict in brief (classgrader/commands/similarity.py), and its link."""
    if alike is None:
        return "<h2>Code alike</h2><p class='none'>Fewer than two submitted notebooks: nothing to compare.</p>"
    rows = "".join(f"<tr><td>{_e(a)} &amp; {_e(b)}</td><td class='n'>{_pct(score)}</td></tr>"
                   for a, b, score in alike["pairs"])
    table = (f"<table><tr><th>students</th><th class='n'>score</th></tr>{rows}</table>" if rows else
             "<p class='none'>No pair of students wrote code alike enough to look at.</p>")
    return (f"<h2>Code alike ({len(alike['pairs'])} pairs worth a look)</h2>"
            f"<p>Every pair of the {alike['students']} submitted notebooks compared, the release's own code left "
            f"out; it changes no score. Side by side: <a href='{_e(alike['page'])}'>{_e(alike['page'])}</a>.</p>"
            + table)


def render_index(summaries: list[dict]) -> str:
    rows = "".join(
        f"<tr><td><a href='{_e(s['assignment'])}.html'>{_e(s['assignment'])}</a></td>"
        f"<td class='n'>{s['class_size']}</td>"
        f"<td class='n'>{statistics.fmean(t['percent'] for t in s['totals'].values()) if s['totals'] else 0:.0f}%</td>"
        f"<td>{_e(s['misconceptions'][0]['name']) if s['misconceptions'] else ''}</td>"
        f"<td class='n'>{len(s['look'])}</td></tr>" for s in summaries)
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Class reports</title>"
            f"<style>{STYLE}</style></head><body><h1>Class reports</h1><table><tr><th>assignment</th>"
            "<th class='n'>students</th><th class='n'>mean</th><th>most common misconception</th>"
            f"<th class='n'>to look at</th></tr>{rows}</table></body></html>\n")


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)


def write_reports(root: str, assignments: list[str], below: float = BELOW, index: bool = False) -> list[str]:
    """Write each assignment's page (and the index); their paths."""
    written, summaries = [], []
    for assignment in assignments:
        summary = summarize(load(root, assignment), below)
        summary["alike"] = similarity.for_report(root, assignment)
        summaries.append(summary)
        path = os.path.join(root, REPORTS, f"{assignment}.html")
        _write(path, render(summary))
        written.append(path)
    if index:
        path = os.path.join(root, REPORTS, "index.html")
        _write(path, render_index(summaries))
        written.append(path)
    return written


def main(argv=None, root=None) -> int:
    from classgrader.cli import parse_or_exit  # the one command table: ./course report's arguments
    args = parse_or_exit("report", sys.argv[1:] if argv is None else list(argv))
    root = root or os.getcwd()
    assignments = arguments.graded(root) if args.all else args.ids
    below = BELOW if args.below is None else args.below
    for path in write_reports(root, assignments, below, index=args.all):
        print(os.path.relpath(path, root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
