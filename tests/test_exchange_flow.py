"""An assignment's whole round trip through nbgrader's exchange, as ./course runs it: the
instructor releases, students fetch and submit, the instructor collects, autogrades, makes
and returns feedback and exports grades; students fetch their feedback. (On a shared machine
nbgrader takes the student id from the login name; here --student stands in for two logins.)"""
import csv
import shutil

from coursekit import ROOT, build_submission, nbgrader, read_notebook, write_notebook

ASSIGNMENT, NOTEBOOK = "01_tensors", "01_tensors.ipynb"
STUDENTS = {"alice": {}, "bob": None}  # alice submits the reference answers, bob the untouched notebook


def test_release_fetch_submit_collect_grade_return(tmp_path, covered):
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "source" / ASSIGNMENT, course / "source" / ASSIGNMENT)
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    nbgrader(course, "release_assignment", ASSIGNMENT)                      # ./course release
    source = read_notebook(course / "source" / ASSIGNMENT / NOTEBOOK)
    for student, answers in STUDENTS.items():
        work = tmp_path / student                                           # the student's work/
        nbgrader(course, "fetch_assignment", ASSIGNMENT, f"--Exchange.assignment_dir={work}", f"--student={student}")
        fetched = work / ASSIGNMENT / NOTEBOOK
        write_notebook(build_submission(source, read_notebook(fetched), answers), fetched)
        nbgrader(course, "submit", ASSIGNMENT, f"--Exchange.assignment_dir={work}", f"--student={student}")
    nbgrader(course, "collect", ASSIGNMENT)                                 # ./course collect
    for student in STUDENTS:
        assert (course / "runtime" / "submitted" / student / ASSIGNMENT / NOTEBOOK).exists(), f"{student} not collected"
    nbgrader(course, "autograde", ASSIGNMENT)
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    nbgrader(course, "release_feedback", ASSIGNMENT)                        # ./course return
    nbgrader(course, "export")
    for student in STUDENTS:
        work = tmp_path / student
        nbgrader(course, "fetch_feedback", ASSIGNMENT, f"--Exchange.assignment_dir={work}", f"--student={student}")
        pages = list((work / ASSIGNMENT / "feedback").rglob("*.html"))
        assert pages, f"{student} got no feedback back"
    with open(course / "runtime" / "grades.csv", newline="") as handle:
        scores = {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}
    assert scores["alice"] == float(row_max(course)) and scores["bob"] == 0.0, scores
    covered(f"exchange round trip: release, fetch, submit, collect, autograde, feedback back to students, export {scores}")


def row_max(course) -> float:
    with open(course / "runtime" / "grades.csv", newline="") as handle:
        return max(float(row["max_score"]) for row in csv.DictReader(handle))
