"""The similarity page of one assignment: the pairs worth a look, then the closest others, each with
its score per exercise, and below, each of those pairs side by side, exercise by exercise, what
they share marked. One self-contained file: nothing loads from elsewhere."""
import html

from .compare import Comparison
from .fingerprints import marked
from .pairs import WORTH_A_LOOK

SHOWN = 20          # pairs listed beyond those worth a look
START, END = "<mark>", "</mark>"

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;max-width:1400px;color:#1b1b1b}
h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.look td{background:#fff4e0}.note{color:#555;max-width:900px}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px}.side>div{min-width:0}
pre{background:#fafafa;border:1px solid #ddd;padding:8px;overflow-x:auto;margin:0;font-size:12.5px}
mark{background:#ffd98a}.who{font-weight:600;margin-bottom:4px}
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _pct(value: float) -> str:
    return f"{round(100 * value)}%"


def _shown(comparison: Comparison) -> list:
    look = comparison.worth_a_look
    return look + [p for p in comparison.ranked if not p.worth_a_look][:SHOWN]


def _table(comparison: Comparison, shown: list, tag: str) -> str:
    head = "".join(f"<th>{_e(e)}</th>" for e in comparison.exercises)
    rows = []
    for i, pair in enumerate(shown, 1):
        cells = "".join(f"<td class='n'>{_pct(pair.parts[e]) if e in pair.parts else ''}</td>"
                        for e in comparison.exercises)
        rows.append(f"<tr class='{'look' if pair.worth_a_look else ''}'><td class='n'>{i}</td>"
                    f"<td><a href='#pair-{tag}{i}'>{_e(pair.a)} &amp; {_e(pair.b)}</a></td>"
                    f"<td class='n'>{_pct(pair.score)}</td><td>{'worth a look' if pair.worth_a_look else ''}</td>"
                    f"{cells}</tr>")
    if not rows:
        return "<p>No two students share code that few others have.</p>"
    return (f"<table><tr><th>#</th><th>students</th><th>score</th><th></th>{head}</tr>"
            + "".join(rows) + "</table>")


def _side_by_side(comparison: Comparison, i: int, pair, tag: str) -> str:
    parts = [f"<h2 id='pair-{tag}{i}'>{i}. {_e(pair.a)} &amp; {_e(pair.b)}: {_pct(pair.score)}</h2>"]
    for exercise in comparison.exercises:
        a_code = comparison.written[pair.a].get(exercise)
        b_code = comparison.written[pair.b].get(exercise)
        if not a_code and not b_code:
            continue
        left, right = _marked(comparison, pair, exercise)
        score = f" ({_pct(pair.parts[exercise])})" if exercise in pair.parts else ""
        parts.append(f"<h3>{_e(exercise)}{score}</h3><div class='side'>"
                     f"<div><div class='who'>{_e(pair.a)}</div><pre>{left}</pre></div>"
                     f"<div><div class='who'>{_e(pair.b)}</div><pre>{right}</pre></div></div>")
    return "".join(parts)


def _marked(comparison: Comparison, pair, exercise: str) -> tuple[str, str]:
    return marked(comparison.fingerprint(pair.a, exercise), comparison.fingerprint(pair.b, exercise), START, END)


def render(assignment: str, comparisons: list[Comparison]) -> str:
    body = [f"<h1>Code alike: {_e(assignment)}</h1>",
            "<p class='note'>For every pair of students, how much of the code they wrote is the same, exercise by "
            "exercise: the release's own code left out, names, comments and layout ignored, and a fragment that "
            "many students share counting for little. A pair is <b>worth a look</b> when its score reaches "
            f"{_pct(WORTH_A_LOOK)} over at least two exercises. This page informs your review; it changes no "
            "score and flags nobody (docs/similarity.md says how it is computed and what it cannot see).</p>"]
    for k, comparison in enumerate(comparisons):
        shown, tag = _shown(comparison), (f"{k}-" if k else "")
        body.append(f"<h2>{_e(comparison.notebook)}: {len(comparison.students)} students, "
                    f"{len(comparison.worth_a_look)} pairs worth a look</h2>")
        body.append(_table(comparison, shown, tag))
        body.extend(_side_by_side(comparison, i, pair, tag) for i, pair in enumerate(shown, 1))
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>Code alike: {_e(assignment)}</title><style>{STYLE}</style></head><body>"
            + "".join(body) + "</body></html>")
