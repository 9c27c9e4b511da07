"""Tests for classgrader/commands/export.py: blank_missing empties the score columns of exactly the
(assignment, student) pairs that have no submission, keeps a real 0.0 and every other column.
(The real `nbgrader export` through the plugin runs in tests/test_exchange_flow.py.)"""
import csv

from classgrader.class_run import records
from classgrader.commands.export import blank_missing

HEADER = ("assignment,duedate,timestamp,student_id,last_name,first_name,email,raw_score,late_submission_penalty,"
          "score,max_score\n")


def test_missing_submissions_are_empty_and_real_zeros_stay(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text(HEADER + "a1,,2026-11-30 10:00:00,alice,,,,0.0,0.0,0.0,16.0\n"
                             "a1,,,bob,,,,0.0,0.0,0.0,16.0\n"
                             "a2,,,alice,,,,0.0,0.0,0.0,9.0\n")
    blank_missing(str(path), {("a1", "alice")})
    rows = list(csv.DictReader(path.open()))
    assert [(r["assignment"], r["student_id"], r["score"], r["raw_score"], r["max_score"]) for r in rows] == [
        ("a1", "alice", "0.0", "0.0", "16.0"), ("a1", "bob", "", "", "16.0"), ("a2", "alice", "", "", "9.0")]
    assert path.read_text().splitlines()[0] + "\n" == HEADER


def test_each_submission_says_where_it_was_graded(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text(HEADER + "a1,,2026-11-30 10:00:00,alice,,,,16.0,0.0,16.0,16.0\n"
                             "a1,,,bob,,,,0.0,0.0,0.0,16.0\n"
                             "a1,,2026-11-30 10:00:00,cleo,,,,3.0,0.0,3.0,16.0\n")
    done = tmp_path / "grading" / "a1" / "done"
    done.mkdir(parents=True)
    (done / "alice.json").write_text(records.done_json(records.graded_record("k", [], 1.0, "cuda (NVIDIA H200)")))
    (done / "bob.json").write_text(records.done_json(records.graded_record("k", [], 1.0, "cpu (no accelerator found)")))
    blank_missing(str(path), {("a1", "alice"), ("a1", "cleo")}, str(tmp_path / "grading"))
    rows = list(csv.DictReader(path.open()))
    assert [(r["student_id"], r["graded_on"]) for r in rows] == [
        ("alice", "cuda (NVIDIA H200)"), ("bob", ""), ("cleo", "")]  # bob never submitted; cleo has no record


def test_a_refused_done_record_graded_on_nothing_and_said(tmp_path, capsys):
    path = tmp_path / "grades.csv"
    path.write_text(HEADER + "a1,,2026-11-30 10:00:00,alice,,,,16.0,0.0,16.0,16.0\n")
    done = tmp_path / "grading" / "a1" / "done"
    done.mkdir(parents=True)
    (done / "alice.json").write_text('{"key": "k", "flags": [], "device": "cuda (NVIDIA H200)"}')  # no kind
    blank_missing(str(path), {("a1", "alice")}, str(tmp_path / "grading"))
    assert [r["graded_on"] for r in csv.DictReader(path.open())] == [""]
    said = capsys.readouterr().err
    assert f"done record {done / 'alice.json'} refused: no such done record" in said
    assert "graded_on is left empty" in said
