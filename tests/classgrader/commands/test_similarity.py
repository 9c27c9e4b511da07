"""Tests for classgrader/commands/similarity.py: a class built from the course's correct answers
(tests/scenarios/copying_class.py) in which honest students wrote their own, two copied a classmate's
notebook with disguises, two more copied one classmate (a trio), and one copied only the capstone.
In every assignment the copied pairs rank above every other pair and are worth a look, and no pair
of honest students is. Then the real command on a course folder: its page, its summary, a submission
that is a link or not a notebook left out, and its arguments checked before anything heavy."""
import importlib
import json
import os
import shutil

import pytest

from classgrader.similarity.compare import compare
from coursekit import ROOT, run_module, write_notebook
from scenarios import copying_class


@pytest.mark.parametrize("unit", copying_class.UNITS)
def test_the_copied_pairs_rank_first_and_no_honest_pair_is_worth_a_look(unit, covered):
    notebooks, release = copying_class.build(unit)
    result = compare("n.ipynb", notebooks, release)
    copied = copying_class.copied_pairs(unit)
    ranked = [(p.a, p.b) for p in result.ranked]
    assert set(ranked[:len(copied)]) == copied, result.ranked[:len(copied) + 2]
    looked = {(p.a, p.b) for p in result.worth_a_look}
    assert looked == copied, f"worth a look: {sorted(looked)}; copied: {sorted(copied)}"
    honest = [p for p in result.ranked if (p.a, p.b) not in copied]
    covered(f"{unit}: {len(copied)} copied pairs {min(p.score for p in result.worth_a_look):.0%} or more, "
            f"the closest other pair {max((p.score for p in honest), default=0):.0%}")


def course_with_class(root, unit: str = "unit08"):
    """A course folder with the release of `unit`'s assignment and its class submitted, plus one
    student whose notebook is a link and one whose notebook is not JSON."""
    notebooks, _release = copying_class.build(unit)
    assignment = importlib.import_module(f"scenarios.{unit}").ASSIGNMENT
    (root / "source" / assignment).mkdir(parents=True)
    shutil.copytree(ROOT / "release" / assignment, root / "release" / assignment)
    for student, nb in notebooks.items():
        write_notebook(nb, root / "runtime" / "submitted" / student / assignment / f"{assignment}.ipynb")
    linked = root / "runtime" / "submitted" / "lnk" / assignment / f"{assignment}.ipynb"
    linked.parent.mkdir(parents=True)
    os.symlink(root / "runtime" / "submitted" / "h00" / assignment / f"{assignment}.ipynb", linked)
    broken = root / "runtime" / "submitted" / "zed" / assignment / f"{assignment}.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"cells": [')
    return assignment


def test_the_command_writes_the_page_and_names_the_pairs(tmp_path):
    assignment = course_with_class(tmp_path)
    done, _ = run_module(tmp_path, "classgrader.commands.similarity", assignment)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{assignment}/{assignment}.ipynb: 14 students; worth a look: ")
    for a, b in copying_class.copied_pairs("unit08"):
        assert f"{a} & {b} " in lines[0]
    assert lines[1] == "  not read (not a notebook, a link, or over 20 MB): lnk, zed"
    page = (tmp_path / "runtime" / "reports" / f"similarity-{assignment}.html").read_text()
    assert lines[2] == f"  -> {tmp_path / 'runtime' / 'reports' / f'similarity-{assignment}.html'}"
    assert page.count("worth a look</td>") == len(copying_class.copied_pairs("unit08"))
    assert "<mark>" in page and "q4_run_answer" in page


@pytest.mark.parametrize(("args", "line"), [
    (["09_nope"], "course: no assignment '09_nope'; the assignments are: 08_capstone"),
    ([], "course: similarity needs an assignment id, e.g. ./course similarity 08_capstone (assignments: 08_capstone)"),
])
def test_a_bad_argument_is_one_line_before_anything_heavy(tmp_path, args, line):
    course_with_class(tmp_path)
    done, loaded = run_module(tmp_path, "classgrader.commands.similarity", *args)
    assert (done.returncode, done.stderr.strip(), loaded) == (2, line, [])
    assert not (tmp_path / "runtime" / "reports").exists()


def test_the_report_links_the_page(tmp_path):
    """./course report's section: the pairs worth a look, and the page's link."""
    from classgrader.commands import report, similarity
    assignment = course_with_class(tmp_path)
    alike = similarity.for_report(str(tmp_path), assignment)
    assert alike["page"] == f"similarity-{assignment}.html" and alike["students"] == 14
    assert {(a, b) for a, b, _ in alike["pairs"]} == copying_class.copied_pairs("unit08")
    section = report._alike_section(alike)
    assert f"<a href='similarity-{assignment}.html'>" in section and "c1 &amp; h00" in section
    assert "nothing to compare" in report._alike_section(similarity.for_report(str(tmp_path / "empty"), assignment))
    assert json.loads(json.dumps(alike["pairs"]))  # plain data: it goes into the summary as is
