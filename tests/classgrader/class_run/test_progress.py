"""progress: nbgrader's convert hooks report each student graded, with its flags, on the
worker's pipe, and only during a class run."""
import json
import os

from classgrader.class_run import progress

NOTEBOOKS = ["/course/runtime/grading/01_tensors/shards/shard-0/alice/01_tensors/01_tensors.ipynb"]


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    return data


def _graded(data: bytes) -> list[dict]:
    """The lines that say a student is graded (others may say who is being graded)."""
    return [event for event in map(json.loads, data.decode().splitlines()) if "seconds" in event]


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
    [event] = _graded(_read_all(read))
    os.close(read)
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
    [event] = _graded(_read_all(read))
    assert event["flags"] == []
    os.close(read)


def test_silent_outside_a_class_run():
    """A pipe that was reported to, then let go (the class run is over), gets nothing more."""
    read, write = os.pipe()
    progress.report_to(write)
    progress.report_to(None)
    try:
        progress.before(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
        progress.after(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
    finally:
        os.close(write)
    assert _read_all(read) == b""
    os.close(read)
