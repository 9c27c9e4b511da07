"""classgrader/similarity/fingerprints.py: copydetect's fingerprints, blind to names, less the release's."""
from classgrader.similarity.fingerprints import boilerplate_of, fingerprint, marked

ANSWER = "total = 0\nfor x, y in loader:\n    total += loss_fn(model(x), y).item() * len(x)\nreturn total / n"


def test_renaming_changes_no_fingerprint():
    renamed = ANSWER.replace("total", "acc").replace("loader", "batches").replace("x", "inputs")
    assert fingerprint(ANSWER).hashes == fingerprint(renamed).hashes
    assert fingerprint(ANSWER).hashes != fingerprint(ANSWER.replace("* len", "+ len")).hashes


def test_the_releases_code_is_left_out():
    given = boilerplate_of(["for x, y in loader:\n    total += loss_fn(model(x), y)"])
    assert given and not (fingerprint(ANSWER, given).hashes & given)
    assert fingerprint(ANSWER, given).hashes < fingerprint(ANSWER).hashes


def test_what_two_texts_share_is_marked_and_escaped():
    a = fingerprint(ANSWER + "\nprint('<b>')")
    b = fingerprint("print('hello')\n" + ANSWER.replace("total", "acc"))
    left, right = marked(a, b, "[", "]")
    assert "[" in left and "[" in right and "&lt;b&gt;" in left
    assert marked(fingerprint("x = 1"), fingerprint("def g(): pass"), "[", "]") == ("x = 1", "def g(): pass")
