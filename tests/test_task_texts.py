"""Each exercise says what its hidden tests check: a right answer by the task text never fails.

The hidden-test code of every source notebook is read here: each misconception a test cell can raise
with pitfall_if must be named by a sentence of what the student reads for that exercise (the header,
the task cell, the answer cell's docstring), in the words KEY_WORDS gives; an exercise whose tests run
it on `meta` says so, and one whose tests use the strict device mode says that too. (That the lesson
sections a task names lie on a main path is tests/test_lessons.py's.)"""
import re

import pytest

from autograder.misconceptions import CATALOGUE
from coursekit import HIDDEN_BLOCK, SOURCE_NOTEBOOKS, nbgrader_meta, read_notebook, source_text
from mutation import exercise_of

# What a student must read for each misconception a hidden test can raise: every pattern must match
# (case-insensitively) the exercise's texts.
KEY_WORDS: dict[str, list[str]] = {
    "len-as-numel": [r"elements|how many numbers"],
    "size-not-called": [r"tuple"],
    "integer-truncation": [r"fraction|whole number"],
    "precision-as-bug": [r"round"],
    "to-not-assigned": [r"\bmov(e|ed)\b|every tensor on `device`"],
    "batch-not-moved": [r"batch[^.]*`(DEVICE|device)`|put it on `device`"],
    "created-on-default-device": [r"same device as"],
    "moved-leaf-no-grad": [r"\bleaf\b"],
    "column-vs-flat-loss": [r"\(N,\)"],
    "mutates-through-view": [r"exactly as it was|must not change|do not change|unchanged"],
    "reshape-always-copies": [r"shares? (no )?(memory|storage)"],
    "accidental-broadcast": [r"column mean|exact\w* (result )?shape"],
    "non-leaf-grad": [r"non-leaf|not a leaf"],
    "grad-accumulates": [r"gradient alone|not added to"],
    "static-graph": [r"current"],
    "recording-by-value": [r"record"],
    "missing-no-grad": [r"record(ing|s)? nothing|without recording|no graph"],
    "eval-as-no-grad": [r"record(ing|s)? nothing|no graph"],
    "running-loss-tensor": [r"graph[^.]*alive", r"plain (python )?`?float"],
    "mode-not-restored": [r"mode it (was in|found it)"],
    "bare-tensor-attribute": [r"state_dict|buffer"],
    "python-list-of-layers": [r"parameters\(\)"],
    "statistics-as-parameter": [r"no parameters|buffers|without becoming something the optimiser trains"],
    "buffer-updated-in-eval": [r"unchanged"],
    "saved-model-object": [r"state_dict"],
    "optimizer-state-dropped": [r"optimi[sz]er's (state|`state_dict`)|optimi[sz]er[^.]*load its state"],
    "optimizer-on-old-parameters": [r"parameters of the model|model's parameters|model\.parameters\(\)"],
    "unsafe-load": [r"weights_only=True|run(s|ning)? nothing|without running"],
    "config-not-plain": [r"plain"],
    "requires-grad-as-no-grad": [r"still require grad"],
    "state-dict-as-parameters": [r"buffers[^.]*not parameters"],
    "batch-statistics-under-no-grad": [r"batch's statistics"],
    "swapped-loss-arguments": [r"loss_fn\(model\(x\), y\)"],
    "non-strict-load": [r"strict"],
    "tolerance-as-rounding": [r"exactly what you get back"],
    "view-start-as-storage": [r"middle of a storage"],
    "allowlisted-untrusted": [r"from elsewhere", r"another class"],
}
PITFALL = re.compile(r"pitfall_if\((.*?)\"([a-z]+(?:-[a-z]+)+)\"", re.S)


def exercises(nb: dict) -> dict[str, dict]:
    """{exercise: {"text": what the student reads for it, "hidden": its hidden tests, "tests": all of
    its test code}}, the header's text part of every exercise's."""
    header = next(source_text(c) for c in nb["cells"] if nbgrader_meta(c).get("grade_id") == "intro")
    found: dict[str, dict] = {}
    for cell in nb["cells"]:
        gid = nbgrader_meta(cell).get("grade_id", "")
        if not gid or gid in ("intro", "outro", "setup") or gid.startswith("quiz_"):
            continue
        entry = found.setdefault(exercise_of(gid.removesuffix("_task")), {"text": header, "hidden": "", "tests": ""})
        code = source_text(cell)
        if gid.endswith("_task"):
            entry["text"] += "\n" + code
        elif nbgrader_meta(cell).get("grade"):
            entry["hidden"] += "\n".join(HIDDEN_BLOCK.findall(code))
            entry["tests"] += code
        else:  # the answer cell: its docstring is task text, its solution is not
            entry["text"] += "\n" + "\n".join(re.findall(r'"""(.*?)"""', code, re.S))
    return found


def pitfall_keys(hidden: str) -> set[str]:
    return {key for _condition, key in PITFALL.findall(hidden)}


def unstated(nb: dict) -> list[str]:
    """What the hidden tests of `nb` ask that its texts do not say, one line per finding."""
    missing = []
    for name, ex in exercises(nb).items():
        text = ex["text"]
        for key in sorted(pitfall_keys(ex["hidden"])):
            missing.extend(f"{name}: can raise {key}, but no sentence matches {pattern!r}"
                           for pattern in KEY_WORDS[key] if not re.search(pattern, text, re.I))
        if re.search(r"""["']meta["]|device\(["']meta""", ex["tests"]) and "`meta`" not in text:
            missing.append(f"{name}: its tests run on meta, which its texts never name")
        if "strict_devices(" in ex["tests"] and not re.search(r"strict device mode", text, re.I):
            missing.append(f"{name}: its tests run in the strict device mode, which its texts never name")
    return missing


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_every_hidden_requirement_is_stated(path):
    missing = unstated(read_notebook(path))
    assert not missing, "\n".join(missing)


def test_every_raised_key_has_its_words():
    raised = {k for path in SOURCE_NOTEBOOKS for ex in exercises(read_notebook(path)).values()
              for k in pitfall_keys(ex["hidden"])}
    assert raised <= set(KEY_WORDS) <= set(CATALOGUE), (raised - set(KEY_WORDS), set(KEY_WORDS) - set(CATALOGUE))


def test_the_reading_sees_every_exercise_and_its_pitfalls():
    """Not vacuous: the parse finds the exercises and most catalogue keys in the hidden tests."""
    raised = set()
    for path in SOURCE_NOTEBOOKS:
        found = exercises(read_notebook(path))
        assert len(found) >= 4, f"{path.name}: {sorted(found)}"
        raised |= {k for ex in found.values() for k in pitfall_keys(ex["hidden"])}
    assert len(raised) >= 25, sorted(set(KEY_WORDS) - raised)


def test_a_task_that_hides_a_requirement_is_caught():
    """A05 Q1 without its sentence on moving each batch, and a header without the strict device mode,
    are found (the right answer by such a text failed the hidden test on meta)."""
    path = next(p for p in SOURCE_NOTEBOOKS if p.parent.name == "05_no_grad")
    nb = read_notebook(path)
    for cell in nb["cells"]:
        if nbgrader_meta(cell).get("grade_id") == "intro":
            kept = [line for line in source_text(cell).splitlines() if "strict device mode" not in line]
            cell["source"] = "\n".join(kept)
        if nbgrader_meta(cell).get("grade_id") == "q1_task":
            cell["source"] = re.sub(r"Move each batch[^.]*\. ", "", source_text(cell))
    found = "\n".join(unstated(nb))
    assert "q1: can raise batch-not-moved" in found
    assert "q1: its tests run in the strict device mode" in found
