"""autograder/student_folder.py: the student's work/ holds a copy of each lesson and assignment; a
lesson the course corrects reaches a copy the student left as it was, and never replaces one they
changed (nbgitpuller's rule): the course's version is put beside it and said. Real files, in-process."""
import importlib.util
import json
import shutil

import pytest

from coursekit import LESSONS, ROOT, read_notebook, write_notebook

# The module runs as a file (it must not import the autograder package); so do its tests.
_spec = importlib.util.spec_from_file_location("student_folder", ROOT / "autograder" / "student_folder.py")
student_folder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(student_folder)

LESSON = LESSONS[0].name


@pytest.fixture
def course(tmp_path):
    (tmp_path / "notebooks").mkdir()
    for lesson in LESSONS[:2]:
        shutil.copy(lesson, tmp_path / "notebooks")
    shutil.copytree(ROOT / "release" / "01_tensors", tmp_path / "release" / "01_tensors")
    return tmp_path


def edit(path, text: str) -> None:
    """A change to the notebook's first cell (a student's note, or the instructor's correction)."""
    nb = read_notebook(path)
    nb["cells"][0]["source"] = text
    write_notebook(nb, path)


def run(path) -> None:
    """What running it in the lab and saving does: outputs and execution counts, the sources as they were."""
    nb = read_notebook(path)
    for count, cell in enumerate((c for c in nb["cells"] if c["cell_type"] == "code"), 1):
        cell["execution_count"], cell["outputs"] = count, [{"output_type": "stream", "name": "stdout", "text": "x\n"}]
    write_notebook(nb, path)


def test_copies_are_made_once_and_assignments_never_overwritten(course, covered):
    work = course / "work"
    assert student_folder.prepare(str(course), str(work)) == []
    lessons = sorted(p.name for p in (work / "lessons").glob("*.ipynb"))
    assert lessons == sorted(p.name for p in LESSONS[:2])
    assert (work / "lessons" / LESSON).read_bytes() == (course / "notebooks" / LESSON).read_bytes()
    mine = work / "01_tensors" / "01_tensors.ipynb"
    assert mine.read_bytes() == (course / "release" / "01_tensors" / "01_tensors.ipynb").read_bytes()
    mine.write_text("my own work")
    (work / "lessons" / LESSON).unlink()  # deleted: made again, as nbgitpuller restores it
    assert student_folder.prepare(str(course), str(work)) == []
    assert mine.read_text() == "my own work" and (work / "lessons" / LESSON).exists()
    record = json.loads((work / "lessons" / ".copied.json").read_text())
    assert set(record) == set(lessons)
    covered("work/: every lesson copied into lessons/ and every assignment into ID/, a deleted lesson copy "
            "made again, an assignment copy never overwritten, what was copied recorded")


def test_a_corrected_lesson_reaches_an_untouched_or_only_run_copy(course, covered):
    work = course / "work"
    student_folder.prepare(str(course), str(work))
    run(work / "lessons" / LESSON)  # running a lesson is not changing it
    edit(course / "notebooks" / LESSON, "# The corrected lesson")
    assert student_folder.prepare(str(course), str(work)) == []
    assert read_notebook(work / "lessons" / LESSON)["cells"][0]["source"] == "# The corrected lesson"
    assert not list((work / "lessons").glob("*.course.ipynb"))
    covered("a lesson the course corrects replaces the student's copy they only ran (outputs do not count)")


def test_a_lesson_the_student_changed_is_kept_and_the_course_version_put_beside(course, covered):
    work = course / "work"
    student_folder.prepare(str(course), str(work))
    edit(work / "lessons" / LESSON, "# my notes")
    assert student_folder.prepare(str(course), str(work)) == []  # only they changed it: nothing to say
    edit(course / "notebooks" / LESSON, "# The corrected lesson")
    said = student_folder.prepare(str(course), str(work))
    beside = LESSON.replace(".ipynb", ".course.ipynb")
    assert said == [f"course: lessons/{LESSON} has a newer version in the course; yours is kept as it is, "
                    f"the course's is lessons/{beside}"]
    assert read_notebook(work / "lessons" / LESSON)["cells"][0]["source"] == "# my notes"
    assert read_notebook(work / "lessons" / beside)["cells"][0]["source"] == "# The corrected lesson"
    edit(course / "notebooks" / LESSON, "# Corrected again")  # the untouched version beside follows the course
    assert len(student_folder.prepare(str(course), str(work))) == 1
    assert read_notebook(work / "lessons" / beside)["cells"][0]["source"] == "# Corrected again"
    edit(work / "lessons" / beside, "# notes in the course's copy too")
    edit(course / "notebooks" / LESSON, "# Corrected a third time")
    [line] = student_folder.prepare(str(course), str(work))
    assert "neither was replaced" in line
    assert read_notebook(work / "lessons" / beside)["cells"][0]["source"] == "# notes in the course's copy too"
    covered("a lesson the student changed is kept; the course's correction goes beside it "
            f"(lessons/{beside}) and is said; a copy beside that they changed too is kept as well")


def test_a_broken_copy_counts_as_the_students_own(course):
    work = course / "work"
    student_folder.prepare(str(course), str(work))
    (work / "lessons" / LESSON).write_text("{ half a notebook")
    edit(course / "notebooks" / LESSON, "# The corrected lesson")
    assert len(student_folder.prepare(str(course), str(work))) == 1
    assert (work / "lessons" / LESSON).read_text() == "{ half a notebook"
