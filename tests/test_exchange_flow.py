"""An assignment's whole round trip through nbgrader's exchange, as ./course runs it: the
instructor releases, students fetch and submit, the instructor collects, autogrades, makes
and returns feedback and exports grades; students fetch their feedback. (On a shared machine
nbgrader takes the student id from the login name; here --student stands in for two logins.)
Along the way: fetching into a work/ that already holds the assignment (./course lab copies
it there) adds what is missing and overwrites nothing; the feedback names every question and
says "not answered"; a student with no submission exports an empty score, not 0; JupyterLab's
.ipynb_checkpoints beside a notebook never reach the exchange or runtime/submitted."""
import csv
import re
import shutil

import pytest

from coursekit import build_submission, make_course, nbgrader, read_notebook, write_notebook

pytestmark = pytest.mark.early(8)

ASSIGNMENT, NOTEBOOK = "01_tensors", "01_tensors.ipynb"
STUDENTS = {"alice": {}, "bob": None}  # alice submits the reference answers, bob the untouched notebook


def test_release_fetch_submit_collect_grade_return(tmp_path, covered):
    course = make_course(tmp_path / "course", [ASSIGNMENT])                # ./course generate
    nbgrader(course, "release_assignment", ASSIGNMENT)                      # ./course release
    source = read_notebook(course / "source" / ASSIGNMENT / NOTEBOOK)
    for student, answers in STUDENTS.items():
        work = tmp_path / student                                           # the student's work/
        fetched = work / ASSIGNMENT / NOTEBOOK
        if student == "alice":  # ./course lab copied it into work/ and she started: fetch keeps her work
            mine = write_notebook(build_submission(source, read_notebook(course / "release" / ASSIGNMENT / NOTEBOOK),
                                                   {"q1_describe_answer": "# alice's own start\n"}), fetched)
            before = mine.read_bytes()
        nbgrader(course, "fetch_assignment", ASSIGNMENT, f"--Exchange.assignment_dir={work}", f"--student={student}")
        if student == "alice":
            assert fetched.read_bytes() == before, "fetch overwrote the student's copy"
        write_notebook(build_submission(source, read_notebook(fetched), answers), fetched)
        checkpoint = fetched.parent / ".ipynb_checkpoints" / f"{fetched.stem}-checkpoint.ipynb"
        checkpoint.parent.mkdir()  # what JupyterLab saves beside every notebook it opens
        shutil.copy(fetched, checkpoint)
        nbgrader(course, "submit", ASSIGNMENT, f"--Exchange.assignment_dir={work}", f"--student={student}")
    nbgrader(course, "collect", ASSIGNMENT)                                 # ./course collect
    for student in STUDENTS:
        assert (course / "runtime" / "submitted" / student / ASSIGNMENT / NOTEBOOK).exists(), f"{student} not collected"
    handed_in = [p for where in ("runtime/exchange", "runtime/submitted") for p in (course / where).rglob("*")]
    assert handed_in and not [p for p in handed_in if ".ipynb_checkpoints" in p.parts], "checkpoints submitted"
    nbgrader(course, "autograde", ASSIGNMENT)
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    nbgrader(course, "release_feedback", ASSIGNMENT)                        # ./course return
    nbgrader(course, "db", "student", "add", "carol")                       # enrolled, never submitted
    nbgrader(course, "export")
    for student in STUDENTS:
        work = tmp_path / student
        nbgrader(course, "fetch_feedback", ASSIGNMENT, f"--Exchange.assignment_dir={work}", f"--student={student}")
        pages = list((work / ASSIGNMENT / "feedback").rglob("*.html"))
        assert pages, f"{student} got no feedback back"
    with open(course / "runtime" / "grades.csv", newline="") as handle:
        scores = {row["student_id"]: row["score"] for row in csv.DictReader(handle)}
    assert scores == {"alice": str(row_max(course)), "bob": "0.0", "carol": ""}, scores
    # One OS user stands in for both students, so bob fetches alice's feedback too; his submission
    # came last, and nbgrader names each feedback folder by its submission's timestamp.
    check_feedback(sorted((tmp_path / "bob" / ASSIGNMENT / "feedback").rglob("*.html"))[-1].read_text())
    covered(f"exchange round trip: release, fetch (keeping a copy already there), submit, collect, autograde, "
            f"feedback naming each question back to students, export {scores} (carol never submitted); "
            f"no .ipynb_checkpoints submitted")


QUESTIONS = ["Q1 · Describe a tensor", "Q2 · Which property broke?", "Q3 · Fix a dtype bug",
             "Q4 · How much memory?", "Q5 · Rounding, or a bug?", "Check yourself · q1"]


def check_feedback(page: str) -> None:
    """bob's feedback (the untouched release): every question named in the contents and in
    its headings, "not answered" for each, no anonymous "Test cell" and no empty comment."""
    contents = re.search(r'<div id="toc">(.*?)</div>', page, re.S).group(1)
    for question in QUESTIONS:
        assert f">{question}</label>" in contents, f"{question} missing from the contents"
        assert f"Checks of <b>{question}</b>" in page and f"Your answer to <b>{question}</b>" in page, question
    assert "Test cell" not in contents and ">Comment</label>" not in contents and "No response." not in page
    assert page.count("Not answered: the answer still raises NotImplementedError.") >= 9
    assert "NotImplementedError:" not in page.replace("NotImplementedError.", "")


def row_max(course) -> float:
    with open(course / "runtime" / "grades.csv", newline="") as handle:
        return max(float(row["max_score"]) for row in csv.DictReader(handle))
