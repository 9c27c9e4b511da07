"""validate_button: the checklist as the JupyterLab dialog shows it, and the warm kernels it
takes (the button itself, pressed in a real lab, is in tests/test_student_experience.py and the
browser tests)."""
import re

from autograder.validate import CANNOT_SEE, Line
from autograder.validate_button import WarmKernels, as_html
from coursekit import ROOT


def test_one_item_per_exercise_in_order_with_its_status_and_nothing_unescaped():
    lines = [Line("Q1 · Describe a tensor", "passed"),
             Line("Q2 · Which property broke?", "failed", "classify_error('<b>x</b>'): expected 'shape'"),
             Line("Q3 · Fix a dtype bug", "unanswered"),
             Line("Check yourself · q1", "answered", kind="question")]
    page = as_html(lines)
    items = re.findall(r'<li data-status="(\w+)" data-kind="\w+">.*?<b>(.*?)</b>: (.*?)</li>', page)
    assert items == [("passed", "Q1 · Describe a tensor", "passed"),
                     ("failed", "Q2 · Which property broke?",
                      "failed: classify_error(&#x27;&lt;b&gt;x&lt;/b&gt;&#x27;): expected &#x27;shape&#x27;"),
                     ("unanswered", "Q3 · Fix a dtype bug", "not answered yet"),
                     ("answered", "Check yourself · q1", "answered, checked at grading")]
    assert CANNOT_SEE.split(":")[0] in page and "<b>x</b>" not in page


def test_a_taken_kernel_is_fresh_and_the_next_one_is_already_starting():
    pool = WarmKernels(ROOT)
    first = pool.take()
    try:
        assert pool._next is not None  # the next kernel starts as this one is handed out
        [reply] = first.run(["x = 41 + 1"])
        assert reply["status"] == "ok"
        second = pool.take(refill=False)
        try:
            [reply] = second.run(["x"])  # nothing passes from one Validate to the next
            assert reply["status"] == "error" and reply["ename"] == "NameError"
        finally:
            second.close()
    finally:
        first.close()
