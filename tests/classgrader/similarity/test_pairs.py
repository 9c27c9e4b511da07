"""classgrader/similarity/pairs.py: weights by how many share a fragment, the inverted index against
every pair compared directly, and what makes a pair worth a look."""
import random
from itertools import combinations

from classgrader.similarity import pairs


def test_a_fragment_weighs_less_the_more_students_share_it():
    hashes_of = {f"s{i}": {1} | ({2} if i < 3 else set()) | ({3} if i < 2 else set()) | {100 + i} for i in range(30)}
    weight = pairs.weights(hashes_of)
    assert weight[3] == 1.0 and weight[2] == 0.5 and weight[1] == 0.0  # 2, 3 and all 30 share them
    assert 100 not in weight                                            # nobody else has it


def test_the_index_finds_what_comparing_every_pair_finds():
    rng = random.Random(7)
    hashes_of = {f"s{i}": {rng.randrange(60) for _ in range(15)} for i in range(25)}
    weight = pairs.weights(hashes_of)
    found = pairs.shared_weights(hashes_of, weight)
    for a, b in combinations(sorted(hashes_of), 2):
        common = [h for h in hashes_of[a] & hashes_of[b] if weight.get(h)]
        if common:
            assert found[a, b][1] == len(common)
            assert abs(found[a, b][0] - sum(weight[h] for h in common)) < 1e-9
        else:
            assert (a, b) not in found


def test_a_pair_is_scored_over_the_exercises_both_wrote_enough_in():
    own = lambda base: set(range(base, base + 10))  # noqa: E731 (ten fingerprints of one's own)
    parts = {"q1": {"ann": own(0), "bob": own(0), "cat": own(100)},
             "q2": {"ann": own(200), "bob": own(200), "cat": own(300)},
             "q3": {"ann": own(400), "bob": own(500), "cat": own(600)},
             "q4": {"ann": {1}, "bob": {1}}}                      # too little to tell
    ranked = pairs.rank(parts)
    assert [(p.a, p.b) for p in ranked] == [("ann", "bob")]
    top = ranked[0]
    assert set(top.parts) == {"q1", "q2", "q3"} and top.parts["q3"] == 0.0
    assert abs(top.score - 2 / 3) < 1e-9 and top.worth_a_look


def test_one_exercise_alike_is_not_worth_a_look_where_there_were_more():
    own = lambda base: set(range(base, base + 10))  # noqa: E731
    parts = {"q1": {"ann": own(0), "bob": own(0)}, "q2": {"ann": own(10), "bob": own(20)}}
    (pair,) = pairs.rank(parts)
    assert pair.score == 0.5 and not pair.worth_a_look
    parts["q2"] = {"ann": {1}, "bob": {1}}                      # q2 cannot tell: q1 is all there is
    (pair,) = pairs.rank(parts)
    assert pair.score == 1.0 and pair.worth_a_look
