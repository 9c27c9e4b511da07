"""classgrader/similarity/student_code.py: what a student wrote, without the release's own lines."""
from classgrader.similarity.student_code import ADDED, Release, answer_ids, written_code


def cell(source: str, grade_id: str = "", solution: bool = False) -> dict:
    meta = {"nbgrader": {"grade_id": grade_id, "solution": solution}} if grade_id else {}
    return {"cell_type": "code", "metadata": meta, "source": source, "outputs": []}


STUB = 'def area(w, h):\n    """w * h."""\n    # YOUR CODE HERE\n    raise NotImplementedError()'
RELEASE = {"cells": [cell("import torch"), cell(STUB, "q1_answer", True), cell("assert area(2, 3) == 6", "q1_tests"),
                     cell("answer = None", "quiz_q1_answer", True)]}


def test_only_the_students_own_lines_per_answer_cell():
    nb = {"cells": [cell("import torch"),
                    cell('def area(width, height):\n    """w * h."""\n    return width * height', "q1_answer", True),
                    cell("assert area(2, 3) == 6", "q1_tests"),
                    cell('answer = "b"', "quiz_q1_answer", True)]}
    assert written_code(nb, Release(RELEASE)) == {"q1_answer": "    return width * height\n"}
    assert answer_ids(RELEASE) == ["q1_answer"]


def test_a_cell_the_student_added_counts_with_the_answer_above_it():
    nb = {"cells": [cell("def helper(a, b):\n    return a * b"),
                    cell("def area(w, h):\n    return helper(w, h)", "q1_answer", True),
                    cell("def twice(x):\n    return 2 * x")]}
    written = written_code(nb, Release(RELEASE))
    assert written[ADDED] == "def helper(a, b):\n    return a * b\n"
    assert written["q1_answer"] == "    return helper(w, h)\ndef twice(x):\n    return 2 * x\n"


def test_the_untouched_release_wrote_nothing():
    assert written_code(RELEASE, Release(RELEASE)) == {}
