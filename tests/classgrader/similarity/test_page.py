"""classgrader/similarity/page.py: the pairs in order, each side by side with what they share marked;
names escaped; nothing loaded from elsewhere."""
import re

from classgrader.similarity.compare import compare
from classgrader.similarity.page import render

STUB = "def f(xs):\n    raise NotImplementedError()"


def notebook(code: str) -> dict:
    return {"cells": [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "q1_answer", "solution": True}},
                       "source": code, "outputs": []}]}


def test_the_page():
    long = "def f(xs):\n    total = 0\n    for x in xs:\n        total = total + x * x - 1\n    return total / len(xs)"
    students = {"<ann>": notebook(long), "ben": notebook(long.replace("total", "t")),
                "cal": notebook("def f(xs):\n    return max(xs)")}
    page = render("01_x", [compare("01_x.ipynb", students, notebook(STUB))])
    assert "<h1>Code alike: 01_x</h1>" in page
    assert "&lt;ann&gt; &amp; ben" in page and "<ann>" not in page
    assert "worth a look" in page and "<mark>" in page
    assert "href='#pair-1'" in page and "id='pair-1'" in page
    assert not re.search(r"(src|href)=['\"](?!#)", page)    # no link or resource but the page's own anchors
