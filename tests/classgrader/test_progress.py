"""progress: nbgrader's convert hooks report each student graded, with its flags, on the
worker's pipe, and only during a class run."""
import json
import os

from classgrader import progress

NOTEBOOKS = ["/course/runtime/grading/01_tensors/shards/shard-0/alice/01_tensors/01_tensors.ipynb"]


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    return data


def test_a_graded_student_is_one_json_line_with_its_flags():
    read, write = os.pipe()
    progress.report_to(write)
    try:
        progress.before(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
        progress.note_flags("alice", [{"item": "q1_tests", "reason": "test cell edited: q1_tests"}])
        progress.after(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
    finally:
        progress.report_to(None)
        os.close(write)
    [line] = _read_all(read).decode().splitlines()
    os.close(read)
    event = json.loads(line)
    assert event["student"] == "alice"  # from the path: nbgrader passes its pattern
    assert event["flags"] == [{"item": "q1_tests", "reason": "test cell edited: q1_tests"}]


def test_flags_do_not_carry_over_to_the_next_grading_of_a_student():
    read, write = os.pipe()
    progress.report_to(write)
    try:
        progress.note_flags("alice", [{"item": None, "reason": "stale"}])
        progress.before(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
        progress.after(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
    finally:
        progress.report_to(None)
        os.close(write)
    assert json.loads(_read_all(read))["flags"] == []
    os.close(read)


def test_silent_outside_a_class_run(tmp_path):
    progress.report_to(None)
    progress.before(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
    progress.after(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
    assert list(tmp_path.iterdir()) == []
