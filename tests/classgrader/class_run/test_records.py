"""records: the class run's progress lines and done records travel and come back the same;
anything else (an unknown kind, a field missing, extra or of the wrong type, not JSON) is refused
with a message that names it, and the class run fails closed on it: a worker that sends such a
line is stopped and its student counts as its cause, a student whose done record is refused is
graded again."""
import csv
import io
import json
import os

import pytest

from classgrader.class_run import records
from classgrader.class_run.classroom import ClassRun, write_atomically, write_flags_csv
from coursekit import make_course, read_notebook, write_notebook

LINES = [
    records.started("ann"),
    records.preparing("the grader's own run of 01_tensors.ipynb"),
    records.prepared(),
    records.graded("ann", 2.5, [], None),
    records.graded("ann", 3, [records.flag("q1_tests", "test cell edited: q1_tests"),
                              records.flag(None, "invalid notebook")], "cuda (NVIDIA H200)"),
]
RECORDS = [
    records.graded_record("k" * 64, [], 1.25, "cpu (no accelerator found)"),
    records.graded_record("k" * 64, [records.flag("q2_tests", "flagged")], 0.5, None),
    records.failed_record("k" * 64, [records.flag(None, "not graded: it died")], "it died"),
]


@pytest.mark.parametrize("event", LINES, ids=lambda event: event["kind"])
def test_each_progress_line_comes_back_the_same(event):
    line = records.progress_line(event)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert records.read_progress(line.rstrip(b"\n")) == event


# Each line as a worker could send it, and the words its refusal must hold.
REFUSED_LINES = [
    (b'{"kind": "finished", "student": "ann"}', "no such progress line: kind 'finished'"),
    (b'{"started": "ann"}', "no such progress line: kind None"),  # the shape without a kind
    (b'{"kind": "started"}', "a Started lacks student"),
    (b'{"kind": "started", "student": "ann", "pid": 7}', "a Started has no field pid"),
    (b'{"kind": "started", "student": 7}', "a Started's student is not"),
    (b'{"kind": "prepared", "ok": true}', "a Prepared has no field ok"),
    (b'{"kind": "graded", "student": "ann", "seconds": "2", "flags": [], "device": null}', "a Graded's seconds"),
    (b'{"kind": "graded", "student": "ann", "seconds": true, "flags": [], "device": null}', "a Graded's seconds"),
    (b'{"kind": "graded", "student": "ann", "seconds": 2.0, "flags": [{"item": 1, "reason": "r"}], "device": null}',
     "a Graded's flags"),
    (b'{"kind": "graded", "student": "ann", "seconds": 2.0, "flags": [{"reason": "r"}], "device": null}',
     "a Graded's flags"),
    (b'{"kind": "graded", "student": "ann", "seconds": 2.0, "flags": []}', "a Graded lacks device"),
    (b'{"kind": "graded", "student": "ann"', "refused: Expecting"),  # cut short
    (b"\xff", "refused: 'utf-8' codec can't decode"),
    (b'["started", "ann"]', "no such progress line"),
]


@pytest.mark.parametrize(("line", "says"), REFUSED_LINES)
def test_a_line_of_another_shape_is_refused_and_named(line, says):
    with pytest.raises(records.Malformed) as refused:
        records.read_progress(line)
    assert says in str(refused.value)
    assert str(refused.value).startswith(f"progress line {line!r}")  # which line


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: record["kind"])
def test_each_done_record_comes_back_the_same(tmp_path, record):
    path = tmp_path / "ann.json"
    path.write_text(records.done_json(record))
    assert records.read_done(str(path)) == record


def test_no_done_record_is_none(tmp_path):
    assert records.read_done(str(tmp_path / "ann.json")) is None


REFUSED_RECORDS = [
    ('{"key": "k", "flags": [], "seconds": 1.0, "device": null}', "no such done record: kind None"),
    ('{"kind": "graded", "flags": [], "seconds": 1.0, "device": null}', "a GradedRecord lacks key"),
    ('{"kind": "graded", "key": "k", "flags": [], "seconds": 1.0, "device": null, "retried": true}',
     "a GradedRecord has no field retried"),
    ('{"kind": "failed", "key": "k", "flags": []}', "a FailedRecord lacks why"),
    ('{"kind": "failed", "key": "k", "flags": {}, "why": "w"}', "a FailedRecord's flags"),
    ('{"kind": "graded", "key": "k", "flags": [], "seconds": 1.0, "device": 0}', "a GradedRecord's device"),
    ('{"kind": "graded", "key": "k", "fl', "refused: Unterminated string"),
    ("", "refused: Expecting value"),
    ("null", "no such done record: kind None"),
]


@pytest.mark.parametrize(("text", "says"), REFUSED_RECORDS)
def test_a_done_record_of_another_shape_is_refused_and_its_file_named(tmp_path, text, says):
    path = tmp_path / "ann.json"
    path.write_text(text)
    with pytest.raises(records.Malformed) as refused:
        records.read_done(str(path))
    assert says in str(refused.value) and f"done record {path} refused" in str(refused.value)


def test_a_done_record_that_is_a_link_is_refused(tmp_path):
    (tmp_path / "elsewhere.json").write_text(records.done_json(RECORDS[0]))
    (tmp_path / "ann.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(records.Malformed, match="a link, not a record"):
        records.read_done(str(tmp_path / "ann.json"))


def test_a_done_folder_reads_by_student_and_names_each_refused(tmp_path):
    (tmp_path / "ann.json").write_text(records.done_json(RECORDS[0]))
    (tmp_path / "bob.json").write_text('{"key": "k"')
    (tmp_path / "cy.json.tmp").write_text('{"key": "k"')  # a write cut short before its rename
    found, refused = records.read_done_folder(str(tmp_path))
    assert found == {"ann": RECORDS[0]}
    assert list(refused) == ["bob"] and str(tmp_path / "bob.json") in refused["bob"]
    assert records.read_done_folder(str(tmp_path / "none")) == ({}, {})


def test_flags_csv_names_a_refused_record_as_one_to_grade_again(tmp_path):
    done = tmp_path / "runtime" / "grading" / "01_tensors" / "done"
    done.mkdir(parents=True)
    (done / "ann.json").write_text(records.done_json(RECORDS[1]))
    (done / "bob.json").write_text("{}")
    (done / "cy.json").write_text(records.done_json(RECORDS[2]))
    with open(write_flags_csv(str(tmp_path), course=None), newline="") as handle:
        rows = [(r["student_id"], r["item"], r["reason"], r["graded_on"]) for r in csv.DictReader(handle)]
    assert rows[0] == ("ann", "q2_tests", "flagged", "")
    assert rows[1][:2] == ("bob", "") and rows[1][2].startswith(f"done record {done / 'bob.json'} refused")
    assert rows[1][2].endswith("./course autograde 01_tensors grades it again")
    assert rows[2] == ("cy", "", "not graded: it died", "")


# -- the class run fails closed -----------------------------------------------------------------
class NoZygote:
    socket_path = "/nonexistent"

    def failed(self):
        return None


def class_run(work) -> ClassRun:
    """A ClassRun with just what reading its workers' pipes needs."""
    run = ClassRun.__new__(ClassRun)
    run.assignment, run.work, run.out, run.zygote = "01_tensors", str(work), io.StringIO(), NoZygote()
    run.worker_memory, run.student_seconds = 2**30, 60.0
    run.graded, run.total, run.started = 0, 2, 0.0
    run._memory_limit = lambda: None
    return run


def workers_that_send(monkeypatch, lines: dict[str, list[bytes]]) -> None:
    """Each shard's worker: a child process that writes its shard's lines to its pipe and ends."""
    from classgrader.class_run import grade_worker

    def start(assignment, shard, write, log, socket_path, memory, scratch):
        pid = os.fork()
        if pid == 0:  # the child only writes and ends: nothing of the test runs twice
            try:
                for line in lines[shard]:
                    os.write(write, line)
            finally:
                os._exit(0)
        return pid
    monkeypatch.setattr(grade_worker, "start", start)


def test_a_worker_that_sends_a_refused_line_is_stopped_and_its_student_is_its_cause(tmp_path, monkeypatch, covered):
    graded = records.graded("ann", 2.0, [records.flag("q1_tests", "flagged")], "cpu")
    workers_that_send(monkeypatch, {
        "shard-0": [records.progress_line(records.started("ann")), records.progress_line(graded)],
        # what follows a refused line is not taken either: bob is not counted graded
        "shard-1": [records.progress_line(records.started("bob")), b'{"kind": "graded", "student": "bob"}\n'
                    + records.progress_line(records.graded("bob", 1.0, [], "cpu"))],
    })
    run = class_run(tmp_path)
    left = {student: {"key": f"key-{student}", "flags": ["renamed notebook"], "shard": f"shard-{n}"}
            for n, student in enumerate(["ann", "bob"])}
    died = run._run_workers(["shard-0", "shard-1"], left)
    assert list(died) == ["bob"] and list(left) == ["bob"]
    assert "its grading worker sent a line the class run refuses" in died["bob"]
    assert "a Graded lacks device" in died["bob"] and "worker-1.log" in died["bob"]
    assert f"{tmp_path}/worker-1.log: progress line" in run.out.getvalue()
    assert records.read_done(run.done_path("ann")) == records.graded_record(
        "key-ann", [records.flag(None, "renamed notebook"), records.flag("q1_tests", "flagged")], 2.0, "cpu")
    assert records.read_done(run.done_path("bob")) is None
    covered("a grade worker's progress line that does not conform is refused, naming the line and the worker's log: "
            "nothing of it or after it is taken, the worker is stopped and the student it was grading counts as "
            "its cause (graded again alone, then marked failed with the reason)")


def test_a_refused_line_before_any_student_blames_no_one(tmp_path, monkeypatch):
    workers_that_send(monkeypatch, {"shard-0": [b"Traceback (most recent call last):\n"]})
    run = class_run(tmp_path)
    left = {"ann": {"key": "k", "flags": [], "shard": "shard-0"}}
    assert run._run_workers(["shard-0"], left) == {} and list(left) == ["ann"]  # ann stays to grade
    assert "worker-0.log: progress line b'Traceback" in run.out.getvalue()


def test_a_student_whose_done_record_is_refused_is_graded_again(tmp_path, covered):
    course = make_course(tmp_path, ["01_tensors"])
    release = read_notebook(course / "release" / "01_tensors" / "01_tensors.ipynb")
    for student in ("ann", "bob", "cy"):
        write_notebook(release, course / "runtime" / "submitted" / student / "01_tensors" / "01_tensors.ipynb")
    run = ClassRun(str(course), "01_tensors", 1, False, NoZygote(), out=io.StringIO())
    pending = run.stage(run.submissions())
    assert sorted(pending) == ["ann", "bob", "cy"]  # no record: graded
    for student, info in pending.items():
        write_atomically(run.done_path(student), records.done_json(records.graded_record(info["key"], [], 1.0, "cpu")))
    assert run.stage(run.submissions()) == {}  # a record of the same files: skipped
    bob, cy = run.done_path("bob"), run.done_path("cy")
    with open(bob, "w") as handle:
        handle.write('{"key": "' + pending["bob"]["key"][:20])  # cut short
    with open(cy) as handle:
        record = json.load(handle)
    del record["kind"]  # the key is right, the record is not one
    with open(cy, "w") as handle:
        json.dump(record, handle)
    assert sorted(run.stage(run.submissions())) == ["bob", "cy"]
    said = run.out.getvalue()
    assert f"bob: done record {bob} refused: Unterminated string" in said and said.count("graded again") == 2
    assert f"cy: done record {cy} refused: no such done record: kind None" in said
    covered("a done record that does not conform (cut short, or of another shape) is no verdict: the class run "
            "says which file and grades its student again, as with no record; the others are skipped")

