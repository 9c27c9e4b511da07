"""classgrader/similarity/normalise.py: layout, comments and docstrings vanish; independent
statements in any order become one order; dependent ones keep theirs; broken code stays as it is."""
from classgrader.similarity.normalise import normalise


def test_layout_comments_quotes_and_docstrings_are_gone():
    typed = ('def f(x):\n    """Say what f does."""\n    # add one\n    y = (x+1)   # here\n\n\n'
             "    return y * 'a'\n")
    assert normalise(typed) == "def f(x):\n    y = x + 1\n    return y * 'a'"
    assert normalise(typed) == normalise('def f(x):\n    y = x + 1\n    return y * "a"')


def test_independent_statements_in_any_order_are_one_text():
    one = "def f(x):\n    a = x.sum()\n    b = x.mean()\n    c = x.abs()\n    return a + b + c"
    other = "def f(x):\n    c = x.abs()\n    a = x.sum()\n    b = x.mean()\n    return a + b + c"
    renamed = "def f(t):\n    q = t.abs()\n    p = t.sum()\n    r = t.mean()\n    return p + r + q"
    assert normalise(one) == normalise(other)
    assert normalise(renamed).splitlines()[1:4] == [
        line.replace("x", "t").replace("a =", "p =").replace("b =", "r =").replace("c =", "q =")
        for line in normalise(one).splitlines()[1:4]]


def test_a_statement_stays_after_what_it_reads_or_changes():
    code = "def f(x):\n    total = x.sum()\n    x.add_(1)\n    total = total + 1\n    return total"
    lines = normalise(code).splitlines()
    assert lines.index("    total = x.sum()") < lines.index("    x.add_(1)")      # x.add_ changes x
    assert lines.index("    total = x.sum()") < lines.index("    total = total + 1")


def test_code_that_does_not_parse_is_kept():
    assert normalise("def f(:\n  pass") == "def f(:\n  pass"
