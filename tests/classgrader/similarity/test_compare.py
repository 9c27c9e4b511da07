"""classgrader/similarity/compare.py: a small class compared; the copy ranks first, exercises in the
release's order."""
import copy

from classgrader.similarity.compare import compare

STUB = "def f(xs):\n    # YOUR CODE HERE\n    raise NotImplementedError()"


def notebook(*answers: str) -> dict:
    return {"cells": [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": f"q{i}_answer", "solution": True}},
                       "source": code, "outputs": []} for i, code in enumerate(answers, 1)]}


RELEASE = notebook(STUB, STUB.replace("f(", "g("))
ANN = notebook("def f(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total ** 0.5",
               "def g(xs):\n    best = xs[0]\n    for x in xs[1:]:\n        if x > best:\n"
               "            best = x\n    return best")
BEN = notebook("def f(xs):\n    return sum(v ** 2 for v in xs) ** 0.5", "def g(xs):\n    return max(xs)")
CAL = notebook("def f(xs):\n    import math\n    return math.sqrt(sum([v * v for v in xs]))",
               "def g(xs):\n    return sorted(xs)[-1]")


def test_the_copy_ranks_first_and_is_worth_a_look():
    dan = copy.deepcopy(ANN)
    dan["cells"][0]["source"] = ANN["cells"][0]["source"].replace("total", "acc") + "  # mine"
    result = compare("n.ipynb", {"ann": ANN, "ben": BEN, "cal": CAL, "dan": dan}, RELEASE)
    assert result.exercises == ["q1_answer", "q2_answer"]
    assert result.students == ["ann", "ben", "cal", "dan"]
    assert [(p.a, p.b) for p in result.worth_a_look] == [("ann", "dan")]
    assert result.ranked[0].score == 1.0
    assert "acc" in result.written["dan"]["q1_answer"]
