"""Tests for classgrader/commands/report.py: a synthetic class with known mistakes, recorded the way
grading records it (outcomes.RecordOutcomes on graded notebooks: assignment 01's own notebook,
each test cell given the error output nbgrader keeps, worded by the real checks), and the
report's figures checked against what was put in; a class where nobody answered an item; 200
students in seconds; the command's arguments. One test grades a small real class with
`./course autograde` (real nbgrader, real kernels) and checks that the page names each
misconception for exactly the students who hold it."""
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import torch
from nbformat.v4 import new_output
from traitlets.config import Config

from autograder import check_answer, check_tensor
from autograder.misconceptions import pitfall_message
from classgrader.class_run import records
from classgrader.class_run.outcomes import RecordOutcomes
from classgrader.commands import report
from coursekit import ROOT, build_submission, make_course, read_notebook, run_module, tool_env, write_notebook

ASSIGNMENT, NOTEBOOK = "01_tensors", "01_tensors"
ITEMS = ["q1_describe_tests", "q2_classify_error_tests", "q3_channel_means_tests", "q4_tensor_bytes_tests",
         "q5_same_after_rounding_tests", "quiz_q1_tests", "quiz_q2_tests", "quiz_q3_tests", "quiz_q4_tests"]
POINTS = dict(zip(ITEMS, [3, 2, 3, 2, 2, 1, 1, 1, 1]))  # 16 in all


def failure(check, *args, **kwargs) -> tuple[str, str]:
    """(ename, evalue) of what a real check raises."""
    try:
        check(*args, **kwargs)
    except AssertionError as error:
        return type(error).__name__, str(error)
    raise AssertionError("the check passed")


PITFALL = {key: ("PitfallError", pitfall_message(key, "You gave 3.")) for key in
           ("len-as-numel", "size-not-called", "integer-truncation")}
SHAPE = failure(check_tensor, torch.zeros(3, 1), torch.zeros(3), name="channel_means(img)")
WRONG_CHOICE = failure(check_answer, "a", "c", name="q1", hint="Re-read section 1.")
UNANSWERED = ("NotImplementedError", "")
RAISED = ("TypeError", "unsupported operand type(s) for +: 'Tensor' and 'str'")
TIMEOUT = ("TimeoutError", "this cell ran longer than 120 s and was stopped; later cells were graded in a fresh kernel")
TAMPERING = ("Tampering", "the grader's tools were replaced. This cell was left out of grading.")

# Each student: the test cells that fail, and how; every other item passes.
CLASS = {
    "ada": {},
    "ben": {"q1_describe_tests": PITFALL["len-as-numel"]},
    "cal": {"q1_describe_tests": PITFALL["len-as-numel"], "q4_tensor_bytes_tests": PITFALL["len-as-numel"]},
    "dan": {"q1_describe_tests": PITFALL["size-not-called"], "q3_channel_means_tests": PITFALL["integer-truncation"]},
    "eve": dict.fromkeys(ITEMS, UNANSWERED),
    "fay": {"q3_channel_means_tests": SHAPE, "q2_classify_error_tests": RAISED, "quiz_q1_tests": WRONG_CHOICE},
    "gus": dict.fromkeys(ITEMS, RAISED),
    "hal": {"q5_same_after_rounding_tests": TAMPERING},
    "ivy": {"q3_channel_means_tests": TIMEOUT, "q2_classify_error_tests": UNANSWERED},
}
JO_FAILED = "its grading worker ended before grading it, twice"
HAL_FLAG = "tampering: the grader's tools were replaced (cell 21, dropped and the rest re-graded)"


def graded_notebook(failures: dict) -> nbformat.NotebookNode:
    """Assignment 01's source notebook as autograde leaves it: each failing test cell holds the
    error output nbgrader keeps; the setup cell printed the grading device."""
    nb = nbformat.read(ROOT / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    for cell in nb.cells:
        cell.outputs = [] if cell.cell_type == "code" else cell.get("outputs")
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "setup":
            cell.outputs = [new_output("stream", name="stdout", text="Graded on: cpu (no accelerator found)\n")]
        if gid in failures:
            ename, evalue = failures[gid]
            cell.outputs = [new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])]
        if cell.cell_type != "code":
            cell.pop("outputs", None)
    return nb


def record(root: Path, student: str, failures: dict, flags=()) -> None:
    """What grading records for one student: RecordOutcomes, as the worker runs it."""
    config = Config()
    config.CourseDirectory.root = str(root)
    resources = {"nbgrader": {"student": student, "assignment": ASSIGNMENT, "notebook": NOTEBOOK,
                              "db_url": "sqlite://"}, "course_flags": list(flags)}
    RecordOutcomes(config=config).preprocess(graded_notebook(failures), resources)


def synthetic_class(root: Path) -> Path:
    """CLASS recorded under root, with the class run's done records (seconds, device, flags),
    ivy given a second worker, and jo, whom the class run could not grade."""
    work = root / "runtime" / "grading" / ASSIGNMENT
    for n, (student, failures) in enumerate(CLASS.items()):
        flags = [("q5_same_after_rounding_tests", HAL_FLAG)] if student == "hal" else []
        record(root, student, failures, flags)
        done = records.graded_record("k", [records.flag(gid, reason) for gid, reason in flags], 1.0 + n / 2, "cpu")
        (work / "done").mkdir(parents=True, exist_ok=True)
        (work / "done" / f"{student}.json").write_text(records.done_json(done))
    # ivy's worker died: graded again in a later round; jo's grading died twice: not graded.
    (work / "shards" / "round-1" / "retry-0" / "ivy").mkdir(parents=True)
    (work / "shards" / "round-2" / "alone-jo" / "jo").mkdir(parents=True)
    (work / "done" / "jo.json").write_text(records.done_json(records.failed_record("k", [], JO_FAILED)))
    return root


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    root = synthetic_class(tmp_path_factory.mktemp("class"))
    return report.summarize(report.load(str(root), ASSIGNMENT))


def test_each_misconception_is_counted_once_per_student_who_holds_it(summary):
    found = {m["key"]: (m["students"], m["items"]) for m in summary["misconceptions"]}
    assert found == {"len-as-numel": (2, ["Q1 · Describe a tensor", "Q4 · How much memory?"]),
                     "size-not-called": (1, ["Q1 · Describe a tensor"]),
                     "integer-truncation": (1, ["Q3 · Fix a dtype bug"])}
    first = summary["misconceptions"][0]
    assert first["key"] == "len-as-numel" and first["share"] == pytest.approx(2 / 9)
    assert (first["lesson"], first["section"]) == ("01_tensors_lesson.ipynb", "How many elements?")
    assert first["example"] == PITFALL["len-as-numel"][1]


def test_item_figures_match_the_class(summary):
    items = {i["item"]: i for i in summary["items"]}
    assert list(items) == ITEMS
    assert {i: items[i]["max"] for i in ITEMS} == POINTS
    # q1: ben, cal, dan failed; eve did not answer; gus raised: 4 of 9 full marks.
    q1 = items["q1_describe_tests"]
    assert (q1["students"], q1["full"], q1["no_answer"]) == (9, pytest.approx(4 / 9), pytest.approx(1 / 9))
    assert q1["mean"] == pytest.approx(3 * 4 / 9)
    assert dict(q1["kinds"]) == {"misconception": 3, "no answer": 1, "error raised": 1}
    q2 = items["q2_classify_error_tests"]  # eve and ivy did not answer; fay and gus raised
    assert dict(q2["kinds"]) == {"no answer": 2, "error raised": 2} and q2["no_answer"] == pytest.approx(2 / 9)
    q3 = items["q3_channel_means_tests"]
    assert dict(q3["kinds"]) == {"misconception": 1, "no answer": 1, "shape": 1, "error raised": 1,
                                 "timeout/crash": 1}
    assert dict(items["quiz_q1_tests"]["kinds"]) == {"value": 1, "no answer": 1, "error raised": 1}
    assert dict(items["q5_same_after_rounding_tests"]["kinds"]) == {"flagged": 1, "no answer": 1,
                                                                    "error raised": 1}


def test_totals_and_students_to_look_at(summary):
    totals = {s: t["score"] for s, t in summary["totals"].items()}
    assert totals == {"ada": 16, "ben": 13, "cal": 11, "dan": 10, "eve": 0, "fay": 10, "gus": 0, "hal": 14,
                      "ivy": 11}
    look = {row["student"]: row["reasons"] for row in summary["look"]}
    assert set(look) == {"eve", "gus", "hal", "jo"}  # nobody else is below 50% (8 of 16 points) or flagged
    assert look["eve"] == ["answered nothing", "below 50%: 0 of 16 points"]
    assert look["gus"] == ["every item raised an error", "below 50%: 0 of 16 points"]
    assert look["hal"] == [f"flagged: {HAL_FLAG}"] and look["jo"] == [f"not graded: {JO_FAILED}"]
    assert [row["student"] for row in summary["look"]][-1] == "hal"  # lowest score first
    grading = summary["grading"]
    assert grading["seconds"] == [1.0 + n / 2 for n in range(9)]
    assert grading["devices"] == {"cpu": 9} and grading["retried"] == ["ivy", "jo"]
    assert grading["restarted"] == ["ivy"] and grading["failed"] == ["jo"]


def test_a_higher_threshold_adds_students(tmp_path):
    root = synthetic_class(tmp_path)
    summary = report.summarize(report.load(str(root), ASSIGNMENT), below=70)
    assert {row["student"] for row in summary["look"]} == {"eve", "gus", "hal", "jo", "cal", "dan", "fay", "ivy"}


def test_a_refused_done_record_is_a_student_to_look_at(tmp_path):
    """A done record that does not conform is no verdict: its student is listed with the file's
    refusal, whether grading recorded outcomes for it (ada) or not (zed)."""
    root = synthetic_class(tmp_path)
    done = root / "runtime" / "grading" / ASSIGNMENT / "done"
    (done / "ada.json").write_text('{"key": "k", "flags": [], "seconds": 1.0, "device": "cpu"}')
    (done / "zed.json").write_text('{"kind": "graded"')
    summary = report.summarize(report.load(str(root), ASSIGNMENT))
    look = {row["student"]: row["reasons"] for row in summary["look"]}
    assert look["ada"] == [f"no verdict: done record {done / 'ada.json'} refused: no such done record: kind None"]
    assert look["zed"][0].startswith(f"no verdict: done record {done / 'zed.json'} refused")
    assert summary["grading"]["seconds"] == [1.0 + n / 2 for n in range(1, 9)]  # ada's is not counted


def test_the_page_is_self_contained_and_shows_the_figures(summary):
    page = report.render(summary)
    assert page.count("<svg") == 2  # the score distribution and the mistake kinds, inline
    # Nothing is fetched: no script, stylesheet or image from elsewhere, no reference but into the page itself.
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\((?!#)|src\s*=|href\s*=\s*[\"'](?!#)", page)
    assert "len(t) taken for the number of elements" in page and "How many elements?" in page
    assert "every item raised an error" in page and HAL_FLAG.replace("'", "&#x27;") in page
    assert "Seconds per student: median 3.0, slowest 5.0" in page and "cpu (9)" in page


def test_a_student_message_is_escaped(tmp_path):
    shown = ("PitfallError", pitfall_message("size-not-called", "You gave <img src=x onerror=alert(1)>."))
    record(tmp_path, "<i>mal", {"q1_describe_tests": shown})
    page = report.render(report.summarize(report.load(str(tmp_path), ASSIGNMENT), below=100))
    assert "<img" not in page and "<i>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;i&gt;mal" in page


def test_an_item_nobody_answered(tmp_path):
    for student in ("a", "b", "c"):
        record(tmp_path, student, {"q2_classify_error_tests": UNANSWERED})
    summary = report.summarize(report.load(str(tmp_path), ASSIGNMENT))
    q2 = next(i for i in summary["items"] if i["item"] == "q2_classify_error_tests")
    assert (q2["mean"], q2["full"], q2["no_answer"]) == (0.0, 0.0, 1.0)
    assert summary["misconceptions"] == [] and summary["look"] == []
    page = report.render(summary)
    assert "No hidden test named a misconception." in page and "Seconds per student were not recorded." in page


def test_a_class_of_200_in_seconds(tmp_path, covered):
    record(tmp_path, "s000", CLASS["dan"])
    folder = tmp_path / "runtime" / "grading" / ASSIGNMENT / "outcomes"
    one = (folder / "s000.json").read_text()
    for n in range(1, 200):
        (folder / f"s{n:03d}.json").write_text(one.replace('"s000"', f'"s{n:03d}"'))
    started = time.perf_counter()
    written = report.write_reports(str(tmp_path), [ASSIGNMENT], index=True)
    covered(f"a class of 200: its report in {time.perf_counter() - started:.1f} s")  # a figure, not a verdict
    page = Path(written[0]).read_text()
    assert "200 students graded" in page and Path(written[1]).name == "index.html"
    index = Path(written[1]).read_text()
    # dan holds two misconceptions, so every student does: a tie, ranked by key
    assert f"<a href='{ASSIGNMENT}.html'>" in index and "integer tensors silently truncating" in index


def run_report(root, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "classgrader.commands.report", *args], cwd=root, env=tool_env(),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("args", "says"), [
    ([], "report needs assignment ids or --all, e.g. ./course report 01_tensors"),
    (["nope"], "no assignment 'nope'; the assignments are: 01_tensors, 02_devices"),
    (["02_devices"], "no grading records for 02_devices (runtime/grading/02_devices/outcomes/ is missing); "
                     "run ./course autograde 02_devices first"),
    (["--all", "01_tensors"], "report needs assignment ids or --all"),
    (["01_tensors", "--below", "lots"], "report: argument --below: invalid float value: 'lots'; usage: "
                                        "./course report ID [ID ...] [--all] [--below PERCENT]"),
    (["01_tensors", "--below", "150"], "--below takes a percentage from 0 to 100, not 150"),
    (["01_tensors", "--colour"], "report: unrecognized arguments: --colour"),
])
def test_bad_arguments_say_one_line_and_exit_2(tmp_path, args, says):
    """Parsed and checked by ./course's one table (classgrader/cli.py), as ./course report is."""
    for assignment in ("01_tensors", "02_devices"):
        (tmp_path / "source" / assignment).mkdir(parents=True)
    (tmp_path / "runtime" / "grading" / "01_tensors" / "outcomes").mkdir(parents=True)
    done, loaded = run_module(tmp_path, "classgrader.commands.report", *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"course: {says}") and done.stderr.count("\n") == 1, done.stderr
    assert loaded == [], f"arguments must be checked before {', '.join(loaded)} loads"


def test_nothing_graded_yet(tmp_path):
    done = run_report(tmp_path, "--all")
    assert done.returncode == 2 and "nothing has been graded yet" in done.stderr


# -- one real class -------------------------------------------------------------------------

REAL_CLASS = ["solution", "untouched", "len_as_numel", "ndim_as_numel", "size_not_called"]


def test_a_real_class_graded_by_nbgrader(tmp_path, covered):
    from scenarios import unit01
    scenarios = {s.student: s for s in unit01.SCENARIOS}
    course = make_course(tmp_path, [ASSIGNMENT])
    source = read_notebook(ROOT / "source" / ASSIGNMENT / unit01.NOTEBOOK)
    release = read_notebook(course / "release" / ASSIGNMENT / unit01.NOTEBOOK)
    for name in REAL_CLASS:
        nb = build_submission(source, release, scenarios[name].answers)
        write_notebook(nb, course / "runtime" / "submitted" / name / ASSIGNMENT / unit01.NOTEBOOK)
    started = time.perf_counter()
    # One worker: one grader's own run of the source, then five notebooks of about a second each.
    graded = subprocess.run([sys.executable, "-m", "classgrader.class_run.classroom", ASSIGNMENT, "--workers", "1"],
                            cwd=course, env=tool_env(), capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    seconds = time.perf_counter() - started
    done = run_report(course, ASSIGNMENT)
    assert done.returncode == 0, done.stderr
    summary = report.summarize(report.load(str(course), ASSIGNMENT))
    hit = {m["key"]: m["students"] for m in summary["misconceptions"]}
    assert hit == {"len-as-numel": 2, "size-not-called": 1}  # len(t), and len(shape) for a count
    kinds = {item["item"]: dict(item["kinds"]) for item in summary["items"]}
    assert kinds.pop("q1_describe_tests") == {"misconception": 2, "no answer": 1}
    assert kinds.pop("q4_tensor_bytes_tests") == {"misconception": 1, "no answer": 1}
    assert all(k == {"no answer": 1} for k in kinds.values()), kinds  # the untouched release, nothing else
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course}/runtime/gradebook.db") as gradebook:
        scores = {name: gradebook.find_submission(ASSIGNMENT, name).score for name in REAL_CLASS}
    assert {s: t["score"] for s, t in summary["totals"].items()} == scores  # the outcomes agree with nbgrader
    assert scores["solution"] == 16 and summary["totals"]["solution"]["max"] == 16
    look = {row["student"]: row["reasons"] for row in summary["look"]}
    assert look["untouched"][0] == "answered nothing"
    grading = summary["grading"]  # from the class run's done records
    assert len(grading["seconds"]) == len(REAL_CLASS) and sum(grading["devices"].values()) == len(REAL_CLASS)
    page = (course / "runtime" / "reports" / f"{ASSIGNMENT}.html").read_text()
    assert "len(t) taken for the number of elements" in page and "Seconds per student: median" in page
    covered(f"{len(REAL_CLASS)} students through ./course autograde in {seconds:.0f} s; the report names "
            f"each misconception for exactly the students who hold it")
