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


def test_a_second_press_right_after_finds_a_kernel_ready_and_each_is_fresh(covered):
    """Two kept started: the press after a press takes the second without waiting for a start,
    and the first's replacement starts only once its press is done (not competing with it)."""
    pool = WarmKernels(ROOT, kept=2)
    pool.wait_ready()
    assert pool.ready() == 2
    first = pool.take()
    try:
        assert pool.ready() == 1  # the next press's kernel is already started
        [reply] = first.run(["x = 41 + 1"])
        assert reply["status"] == "ok" and len(pool._ready) == 1  # no start during the press
    finally:
        first.close()
    assert len(pool._ready) == 2  # its replacement starts as the press ends
    second = pool.take()
    try:
        [reply] = second.run(["x"])  # nothing passes from one Validate to the next
        assert reply["status"] == "error" and reply["ename"] == "NameError"
    finally:
        second.close()
        pool.close()
    assert not pool._ready
    covered("Validate's pool: two kernels started; a press right after a press finds one ready; "
            "a taken kernel's replacement starts when its press is done; nothing passes between presses")
