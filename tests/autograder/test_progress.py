"""progress: nbgrader's convert hooks report each student graded, only during a class run."""
import json

from autograder import progress

NOTEBOOKS = ["/course/runtime/grading/01_tensors/shards/shard-0/alice/01_tensors/01_tensors.ipynb"]


def test_a_graded_student_is_one_json_line(tmp_path, monkeypatch):
    log = tmp_path / "progress.jsonl"
    monkeypatch.setenv("COURSE_PROGRESS", str(log))
    progress.before(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
    progress.after(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
    [line] = log.read_text().splitlines()
    assert json.loads(line)["student"] == "alice"  # from the path: nbgrader passes its pattern


def test_silent_outside_a_class_run(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_PROGRESS", raising=False)
    progress.after(assignment="01_tensors", student="*", notebooks=NOTEBOOKS)
    assert list(tmp_path.iterdir()) == []
