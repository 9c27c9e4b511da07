"""What each assignment's header says it is worth is what its cells' nbgrader metadata grade: the
total, how many exercises and questions, and the points of each group. (Each section's own
heading is held to its cells by tests/test_hygiene.py.)"""
import re

import pytest

from coursekit import SOURCE_NOTEBOOKS, nbgrader_meta, read_notebook, source_text
from mutation import exercise_of

WORDS = {word: n for n, word in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"])}
HEADER = re.compile(r'\*\*(\d+) points\*\*: (\w+) (?:exercises|parts) \((\d+) points\) and a (\w+)-question '
                    r'"check yourself" \((\d+) points\)')


def graded(path):
    """{exercise: points} for the code exercises and {item: points} for the quiz, from the metadata."""
    exercises, quiz = {}, {}
    for cell in read_notebook(path)["cells"]:
        meta = nbgrader_meta(cell)
        if not meta.get("grade"):
            continue
        gid, points = meta["grade_id"], float(meta["points"])
        if gid.startswith("quiz_"):
            quiz[gid] = points
        else:
            exercises[exercise_of(gid)] = exercises.get(exercise_of(gid), 0) + points
    return exercises, quiz


def cells_by_id(path):
    return {nbgrader_meta(c).get("grade_id"): source_text(c) for c in read_notebook(path)["cells"]}


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_the_header_states_what_the_metadata_grades(path):
    exercises, quiz = graded(path)
    match = HEADER.search(cells_by_id(path)["intro"])
    assert match, f"{path.name}: the header does not say its points in the course's words"
    total, count, exercise_points, questions, quiz_points = match.groups()
    stated = (int(total), WORDS[count], int(exercise_points), WORDS[questions], int(quiz_points))
    actual = (sum(exercises.values()) + sum(quiz.values()), len(exercises), sum(exercises.values()),
              len(quiz), sum(quiz.values()))
    assert stated == actual, (f"{path.name}: the header says {stated}, the metadata grades {actual} "
                              "(total, exercises, their points, questions, their points)")
