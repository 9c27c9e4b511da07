"""course: the course nbgrader sees, loaded from a course folder's own nbgrader_config.py, and the
grader's code as every record of grading is keyed on it."""
from classgrader.commands import course as course_module
from classgrader.commands.course import GRADER_PACKAGES, load_course
from coursekit import ROOT


def test_load_course_reads_the_folders_config():
    course = load_course(str(ROOT))
    assert course.course_id == "pytorch-fundamentals"
    assert course.root == str(ROOT) and course.submitted_directory == "runtime/submitted"


def test_load_course_of_another_folder_reads_that_folders_config(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = 'elsewhere'\nc.CourseDirectory.root = {str(tmp_path)!r}\n")
    course = load_course(str(tmp_path))
    assert course.course_id == "elsewhere" and course.root == str(tmp_path)


def test_the_grader_is_every_package_grading_imports():
    """A change in the check library, the pipeline or the formatting the checks' messages use
    (utils) changes what grading depends on."""
    assert sorted(p.rsplit("/", 1)[-1] for p in GRADER_PACKAGES) == ["autograder", "classgrader", "utils"]


def test_the_graders_digest_follows_its_code_and_nothing_else(tmp_path, monkeypatch):
    """One digest for the class run's grader_version and the kept references (reference_store):
    a file of the grader's changed, added or renamed changes it; anything else does not."""
    package = tmp_path / "classgrader"
    (package / "judging").mkdir(parents=True)
    (package / "judging" / "judge.py").write_text("RULE = 1\n")
    monkeypatch.setattr(course_module, "GRADER_PACKAGES", [str(package)])
    digest = course_module.grader_digest.__wrapped__  # uncached: the code changes under it here
    first = digest()
    (package / "notes.txt").write_text("not code")
    assert digest() == first
    (package / "judging" / "judge.py").write_text("RULE = 2\n")
    changed = digest()
    assert changed != first
    (package / "judging" / "judge.py").rename(package / "judging" / "verify.py")
    assert digest() not in (first, changed)


def test_the_class_run_and_the_kept_references_key_on_the_one_digest():
    from classgrader.class_run import classroom
    from classgrader.judging import reference_store
    assert classroom.grader_digest is reference_store.grader_digest is course_module.grader_digest
