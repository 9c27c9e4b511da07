"""Tests for autograder/misconceptions.py: the CATALOGUE's entries are complete and keyed by
their own key, pitfall_if raises PitfallError (a GradingError, hence an AssertionError)
worded "Pitfall: <name>. <Explanation> <detail>", stays silent when the condition is
False, and rejects an unknown key whatever the condition."""
import dataclasses
import re

import pytest

from autograder.checks import GradingError
from autograder.misconceptions import CATALOGUE, Misconception, PitfallError, pitfall_if, pitfall_message

KEYS = sorted(CATALOGUE)


def test_unit_01_misconceptions_are_catalogued():
    assert {"len-as-numel", "size-not-called", "integer-truncation",
            "precision-as-bug"} <= set(CATALOGUE)


@pytest.mark.parametrize("key", KEYS)
def test_entry_is_complete_and_keyed_by_its_key(key):
    entry = CATALOGUE[key]
    assert isinstance(entry, Misconception)
    assert entry.key == key
    assert entry.name.strip() and entry.name == entry.name.strip()
    assert entry.explanation.strip() and entry.explanation.endswith(".")
    assert not entry.name.endswith(".")  # the message adds the full stop


def test_entries_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        CATALOGUE["len-as-numel"].name = "changed"


def test_pitfall_error_is_a_grading_error_and_an_assertion_error():
    assert issubclass(PitfallError, GradingError)
    assert issubclass(PitfallError, AssertionError)


@pytest.mark.parametrize("key", KEYS)
def test_pitfall_if_true_raises_named_message_with_detail(key):
    entry = CATALOGUE[key]
    detail = "You returned 3 for a tensor of shape (3, 4)."
    with pytest.raises(PitfallError) as info:
        pitfall_if(True, key, detail)
    msg = str(info.value)
    assert msg.startswith(f"Pitfall: {entry.name}. ")
    assert msg.endswith(" " + detail)
    # The explanation, whole sentences used as written, follows the name.
    assert msg == f"Pitfall: {entry.name}. {entry.explanation} {detail}"


def test_pitfall_is_caught_as_assertion_error():
    with pytest.raises(AssertionError):
        pitfall_if(True, "len-as-numel")


def test_exact_message():
    with pytest.raises(PitfallError) as info:
        pitfall_if(True, "integer-truncation", "You have 2, a true division gives 2.5.")
    assert str(info.value) == (
        "Pitfall: integer tensors silently truncating. "
        + CATALOGUE["integer-truncation"].explanation
        + " You have 2, a true division gives 2.5.")
    assert "An integer tensor cannot hold a fraction." in str(info.value)


def test_no_detail_means_no_trailing_space():
    msg = pitfall_message("precision-as-bug")
    assert msg.endswith("before suspecting the code.")
    assert pitfall_message("precision-as-bug", "") == msg


@pytest.mark.parametrize("key", KEYS)
def test_pitfall_if_false_is_silent(key):
    assert pitfall_if(False, key, "never shown") is None


@pytest.mark.parametrize("condition", [False, True])
def test_unknown_key_raises_key_error_whatever_the_condition(condition):
    with pytest.raises(KeyError, match="no-such-misconception"):
        pitfall_if(condition, "no-such-misconception")


def test_unknown_key_is_not_a_grading_error():
    # An author's typo must not look like a student's failed check.
    with pytest.raises(KeyError) as info:
        pitfall_if(True, "len-as-nummel")
    assert not isinstance(info.value, AssertionError)


# The message uses the explanation as written (no upper-casing of code such as t.size), so each
# explanation itself opens with a capitalised word, never with code.
@pytest.mark.parametrize(("key", "code"), [
    ("size-not-called", "t.size is a method"),
    ("len-as-numel", "len(t) is the size"),
])
def test_message_keeps_code_as_written(key, code):
    assert code in pitfall_message(key)


SENTENCE_START = re.compile(r"[A-Z][a-z]*\b")


@pytest.mark.parametrize("key", KEYS)
def test_explanation_is_whole_sentences_opening_with_a_capital(key):
    """Each sentence of the explanation opens with a capital letter (a word, not code) and the
    explanation ends with a full stop: a student reads it as written after the name."""
    text = CATALOGUE[key].explanation
    assert text.endswith("."), text
    sentences = re.split(r"(?<=[a-z)\]])\. (?=\S)", text)
    for sentence in sentences:
        assert SENTENCE_START.match(sentence), f"{key}: {sentence!r} does not open with a capitalised word"
