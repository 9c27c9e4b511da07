"""course: the course nbgrader sees, loaded from a course folder's own nbgrader_config.py."""
from classgrader.commands.course import GRADER_PACKAGES, load_course
from coursekit import ROOT


def test_load_course_reads_the_folders_config():
    course = load_course(str(ROOT))
    assert course.course_id == "pytorch-fundamentals"
    assert course.root == str(ROOT) and course.submitted_directory == "runtime/submitted"


def test_load_course_of_another_folder_reads_that_folders_config(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'elsewhere'\nc.CourseDirectory.root = %r\n" % str(tmp_path))
    course = load_course(str(tmp_path))
    assert course.course_id == "elsewhere" and course.root == str(tmp_path)


def test_the_grader_is_every_package_grading_imports():
    """A change in the check library, the pipeline or the formatting the checks' messages use
    (utils) changes what grading depends on."""
    assert sorted(p.rsplit("/", 1)[-1] for p in GRADER_PACKAGES) == ["autograder", "classgrader", "utils"]
