"""Every pair of students, scored exercise by exercise on the fingerprints they share, each weighted
by how few others have it: a fragment two students share counts 1, one that k students share
1/(k-1), and one that more than COMMON of the class has counts nothing (the natural answer everyone
writes), as MOSS and Dolos discount what many submissions have.

A pair's score is the mean, over the exercises where both wrote enough of their own to tell
(JUDGEABLE weight each), of how much of the smaller side's weight they share. A copied notebook
shares most of every such exercise; two honest students who happened on the same short answer share
one or two. An inverted index visits only pairs that share something, so a class of hundreds costs
what its shared fragments cost, not n^2 comparisons."""
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

COMMON = 0.2        # a fragment more than this share of the class has is anybody's...
MIN_COMMON = 5      # ...but in a small class, more than this many (a trio that copied holds three)
JUDGEABLE = 5.0     # an exercise counts for a pair when each side's own weight there reaches this
WORTH_A_LOOK = 0.65  # a pair whose score reaches this...
MIN_EXERCISES = 2   # ...over at least this many judgeable exercises (or all there are, if fewer)


@dataclass
class Pair:
    a: str
    b: str
    score: float = 0.0
    parts: dict = field(default_factory=dict)     # exercise -> its score, for judgeable exercises
    shared: int = 0                               # fingerprints they share that count, unweighted
    possible: int = 1                             # judgeable exercises the assignment could have

    @property
    def worth_a_look(self) -> bool:
        return self.score >= WORTH_A_LOOK and len(self.parts) >= min(MIN_EXERCISES, self.possible)


def weights(hashes_of: dict[str, set[int]]) -> dict[int, float]:
    """{fingerprint: its weight} for those at least two students have."""
    holders: dict[int, int] = defaultdict(int)
    for hashes in hashes_of.values():
        for h in hashes:
            holders[h] += 1
    common = max(MIN_COMMON, COMMON * len(hashes_of))
    return {h: (1.0 / (n - 1) if n <= common else 0.0) for h, n in holders.items() if n >= 2}


def own_weight(hashes: set[int], weight: dict[int, float]) -> float:
    """What a student's code in one exercise weighs: an unshared fingerprint 1, a shared one its weight."""
    return sum(weight.get(h, 1.0) for h in hashes)


def shared_weights(hashes_of: dict[str, set[int]], weight: dict[int, float]):
    """{(a, b): (weight shared, fingerprints shared)} for the pairs sharing a fingerprint that counts."""
    index: dict[int, list[str]] = defaultdict(list)
    for student, hashes in hashes_of.items():
        for h in hashes:
            if weight.get(h):
                index[h].append(student)
    shared: dict[tuple[str, str], list] = defaultdict(lambda: [0.0, 0])
    for h, holders in index.items():
        for pair in combinations(sorted(holders), 2):
            shared[pair][0] += weight[h]
            shared[pair][1] += 1
    return shared


def rank(parts: dict[str, dict[str, set[int]]]) -> list[Pair]:
    """The pairs that share anything, most alike first. parts: {exercise: {student: fingerprints}}."""
    own: dict[str, dict[str, float]] = {}
    found: dict[tuple[str, str], Pair] = {}
    for exercise, hashes_of in parts.items():
        weight = weights(hashes_of)
        own[exercise] = {s: own_weight(h, weight) for s, h in hashes_of.items()}
        for pair, (amount, count) in shared_weights(hashes_of, weight).items():
            entry = found.setdefault(pair, Pair(*pair))
            entry.parts[exercise] = amount / max(min(own[exercise][pair[0]], own[exercise][pair[1]]), 1.0)
            entry.shared += count
    for entry in found.values():
        judgeable = [e for e in parts if min(own[e].get(entry.a, 0.0), own[e].get(entry.b, 0.0)) >= JUDGEABLE]
        entry.parts = {e: entry.parts.get(e, 0.0) for e in judgeable}
        entry.possible = sum(1 for e in parts if sum(w >= JUDGEABLE for w in own[e].values()) >= 2)
        entry.score = sum(entry.parts.values()) / len(judgeable) if judgeable else 0.0
    return sorted(found.values(), key=lambda p: (-p.score, -p.shared, p.a, p.b))
