"""The "check yourself" quizzes across the course: balanced answer letters, and no strategy that
ignores the questions beats chance.

Each quiz item is a pair of cells, quiz_qN_answer and quiz_qN_tests. The test cell is run here
for real (visible and hidden checks, in a fresh namespace) with every letter as the answer, so
what counts as right is what the grader would accept, not what a regex reads out of the cell.
The options' text is read from the questions cell: the right one must not stand out by its length,
nor be the only one that gives a reason, nor be the only one worded like the lesson, nor be the one the
question already says; no option uses an absolute word; and each item's hidden part holds a reviewer note
naming the misconception each distractor models."""
import re
import string

import pytest

from coursekit import (
    HIDDEN_BLOCK,
    LESSONS,
    RELEASE_NOTEBOOKS,
    SOURCE_NOTEBOOKS,
    nbgrader_meta,
    read_notebook,
    source_text,
)

MAX_SHARE = 0.40          # no letter may be the answer to more than this share of all items
MAX_LONGEST_KEY = 0.30    # the key may be the longest option in no more than this share of items
TEST_ID = re.compile(r"^quiz_q(\d+)_tests$")
QUESTION = re.compile(r"^\*\*q(\d+)\.\*\*(.*?)(?=^\*\*q\d+\.\*\*|\Z)", re.S | re.M)
REASON = re.compile(r"[:;] ")  # "answer: because ..." or "answer; then ..."


def quiz_items():
    """(assignment, item, options, letters the checks accept, points) for every quiz item."""
    items = []
    for path in SOURCE_NOTEBOOKS:
        for cell in read_notebook(path)["cells"]:
            meta = nbgrader_meta(cell)
            match = TEST_ID.match(meta.get("grade_id", ""))
            if not match:
                continue
            code = source_text(cell)
            name = f"q{match.group(1)}"
            options = re.search(rf'check_choice\({name}, "([a-z]+)"', code).group(1)
            accepted = []
            for letter in string.ascii_lowercase[:26]:
                try:
                    exec(compile(code, f"{path.stem}:{name}", "exec"), {name: letter})
                except Exception:
                    continue
                accepted.append(letter)
            items.append((path.parent.name, name, options, accepted, float(meta["points"]),
                          code))
    return items


def option_texts(assignment: str, name: str, letters: str) -> dict[str, str]:
    """The text of each option of item `name` in the assignment's questions cell; {} when the
    item has no options of its own (they are rows of a table the questions share)."""
    path = next(p for p in SOURCE_NOTEBOOKS if p.parent.name == assignment)
    cells = {nbgrader_meta(c).get("grade_id"): source_text(c) for c in read_notebook(path)["cells"]}
    question = next(m.group(2) for m in QUESTION.finditer(cells["quiz_questions"]) if f"q{m.group(1)}" == name)
    return {letter: text.strip() for letter, text in
            re.findall(rf"^\(([{letters}])\)[ \t]*(.*?)[ \t]*$", question, re.M)}


ITEMS = quiz_items()
TOTAL = sum(points for *_, points, _code in ITEMS)


def chance() -> float:
    """The expected quiz score of a student who picks one of each item's options at random."""
    return sum(points / len(options) for _a, _n, options, _acc, points, _c in ITEMS)


def test_every_assignment_has_a_quiz():
    assert {a for a, *_ in ITEMS} == {p.parent.name for p in SOURCE_NOTEBOOKS}


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: f"{it[0]}-{it[1]}")
def test_exactly_one_option_is_right(item):
    assignment, name, options, accepted, _points, _code = item
    assert len(accepted) == 1, f"{assignment} {name}: the checks accept {accepted}, not exactly one letter"
    assert accepted[0] in options, f"{assignment} {name}: the right letter is not an option"


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: f"{it[0]}-{it[1]}")
def test_visible_docstring_does_not_claim_the_right_letter_is_checked(item):
    """The visible check can only say the answer is one of the letters; its docstring must say so."""
    assignment, name, _options, _accepted, _points, code = item
    docstring = code.split('"""')[1]
    assert "checked when graded" in docstring, f"{assignment} {name}: {docstring!r}"
    assert "and the right one" not in docstring


def test_solution_key_matches_the_hidden_check():
    for path in SOURCE_NOTEBOOKS:
        cells = {nbgrader_meta(c).get("grade_id"): source_text(c) for c in read_notebook(path)["cells"]}
        for assignment, name, _options, accepted, _points, _code in ITEMS:
            if assignment == path.parent.name:
                key = re.search(rf'{name} = "([a-z])"', cells[f"quiz_{name}_answer"]).group(1)
                assert [key] == accepted, f"{assignment} {name}: solution {key!r}, checks accept {accepted}"


def test_no_letter_answers_more_than_40_percent_of_the_course():
    counts = {}
    for _a, _n, _options, accepted, _p, _c in ITEMS:
        counts[accepted[0]] = counts.get(accepted[0], 0) + 1
    worst = max(counts, key=counts.get)
    assert counts[worst] <= MAX_SHARE * len(ITEMS), (
        f"{worst!r} answers {counts[worst]} of {len(ITEMS)} items: {counts}")


@pytest.mark.parametrize("letter", "abcd")
def test_one_letter_everywhere_scores_no_more_than_chance(letter):
    score = sum(points for _a, _n, _o, accepted, points, _c in ITEMS if letter in accepted)
    assert score <= chance() + 1e-9, (
        f'answering "{letter}" everywhere scores {score} of {TOTAL}; chance is {chance():.2f}')


def test_guessing_at_random_scores_chance():
    """Exact expectation over every option of every item (each accepted letter scores the item)."""
    expected = sum(points * len(set(accepted) & set(options)) / len(options)
                   for _a, _n, options, accepted, points, _c in ITEMS)
    assert expected <= chance() + 1e-9
    assert chance() <= 0.26 * TOTAL, f"chance is {chance():.2f} of {TOTAL}: too few options per item"


def worded_items():
    """(assignment, item, key, {letter: text}) for every item whose options are its own."""
    found = []
    for assignment, name, options, accepted, _points, _code in ITEMS:
        texts = option_texts(assignment, name, options)
        if texts:
            assert sorted(texts) == sorted(options), f"{assignment} {name}: options read {sorted(texts)}, not {options}"
            found.append((assignment, name, accepted[0], texts))
    return found


def test_most_items_have_options_of_their_own():
    """Guards the two tests below: they read the options of nearly every item."""
    assert len(worded_items()) >= 0.8 * len(ITEMS)


def test_the_key_is_rarely_the_longest_option():
    longest = [f"{a} {n}" for a, n, key, texts in worded_items()
               if all(len(texts[key]) > len(t) for letter, t in texts.items() if letter != key)]
    items = worded_items()
    assert len(longest) <= MAX_LONGEST_KEY * len(items), (
        f"the key is the longest option in {len(longest)} of {len(items)} items: {longest}")


def test_no_key_is_the_only_option_that_gives_a_reason():
    """An option that explains itself ("...: because the lesson's rule says so") must not be the
    key alone: a distractor of the item gives a reason too."""
    alone = [f"{a} {n}" for a, n, key, texts in worded_items()
             if REASON.search(texts[key]) and not any(REASON.search(t) for option, t in texts.items() if option != key)]
    assert not alone, f"items where only the key gives a reason: {alone}"


# ---- what only understanding passes: wording the key alone shares, absolute words, stems, notes ----

ABSOLUTE = re.compile(r"\b(always|never|only|all)\b", re.I)
WORD = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?")
SHORT_WORDS = {"that", "this", "with", "from", "what", "which", "there", "their", "they", "them", "does", "have",
               "into", "when", "then", "than", "each", "every", "your"}


def words(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("`", ""))


def grams(text: str, n: int = 4) -> set[tuple[str, ...]]:
    found = words(text)
    return {tuple(found[i:i + n]) for i in range(len(found) - n + 1)}


def main_path_prose(number: str) -> str:
    """The markdown of lesson `number` before its first Optional heading: what a quiz may rest on."""
    path = next(p for p in LESSONS if p.name.startswith(number + "_"))
    prose = []
    for cell in read_notebook(path)["cells"]:
        text = source_text(cell)
        if cell["cell_type"] == "markdown" and re.search(r"^## Optional", text, re.M):
            break
        if cell["cell_type"] == "markdown":
            prose.append(text)
    return "\n".join(prose)


def stem(assignment: str, name: str) -> str:
    """The question of item `name`, before its first option."""
    path = next(p for p in SOURCE_NOTEBOOKS if p.parent.name == assignment)
    cells = {nbgrader_meta(c).get("grade_id"): source_text(c) for c in read_notebook(path)["cells"]}
    question = next(m.group(2) for m in QUESTION.finditer(cells["quiz_questions"]) if f"q{m.group(1)}" == name)
    return re.split(r"^\([a-z]\)", question, maxsplit=1, flags=re.M)[0]


def test_no_option_uses_an_absolute_word():
    """"always", "never", "only", "all": a distractor that claims too much is eliminated without knowledge,
    and a key that uses them stands out; neither teaches anything."""
    found = [f"{a} {n} ({letter}): {text}" for a, n, _key, texts in worded_items()
             for letter, text in texts.items() if ABSOLUTE.search(text)]
    assert not found, "options with an absolute word:\n" + "\n".join(found)


def test_the_key_is_not_the_only_option_worded_like_the_lesson():
    """An option that repeats four words in a row of the lesson's main path (the lessons its hint names,
    else the assignment's own) must not be the key alone: a student could match wording, not ideas."""
    alone = []
    for assignment, name, _options, accepted, _points, code in ITEMS:
        texts = option_texts(assignment, name, _options)
        if not texts:
            continue
        lessons = sorted(set(re.findall(r"lesson (\d\d)", code))) or [assignment[:2]]
        lesson = set().union(*(grams(main_path_prose(n)) for n in lessons))
        shared = {letter: grams(text) & lesson for letter, text in texts.items()}
        key = accepted[0]
        if shared[key] and not any(shared[letter] for letter in texts if letter != key):
            alone.append(f"{assignment} {name}: {sorted(' '.join(g) for g in shared[key])}")
    assert not alone, "items whose key alone repeats the lesson's words:\n" + "\n".join(alone)


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if len(w) >= 4 and w not in SHORT_WORDS}


def test_no_stem_echoes_its_key():
    """The key must not be the option whose words the question already says: a key of three or more
    content words, at least half of them in the stem, must not share more of them than every distractor."""
    echoed = []
    for assignment, name, key, texts in worded_items():
        asked = content_words(stem(assignment, name))
        share = {letter: len(content_words(t) & asked) / len(content_words(t))
                 for letter, t in texts.items() if content_words(t)}
        if len(content_words(texts[key])) >= 3 and share[key] >= 0.5 and all(
                share[key] > s for letter, s in share.items() if letter != key):
            echoed.append(f"{assignment} {name}: {share}")
    assert not echoed, "items whose stem says the key's words:\n" + "\n".join(echoed)


@pytest.mark.parametrize("item", ITEMS, ids=lambda it: f"{it[0]}-{it[1]}")
def test_a_reviewer_note_names_each_distractor_and_stays_hidden(item):
    """Each quiz test cell says, in its hidden part (never in the students' copy), which misconception
    each distractor models."""
    assignment, name, options, accepted, _points, code = item
    hidden = "\n".join(HIDDEN_BLOCK.findall(code))
    note = "\n".join(line for line in hidden.splitlines() if line.startswith("#"))
    assert "Reviewer note" in note, f"{assignment} {name}: no reviewer note in the hidden part"
    unnamed = [letter for letter in options if letter not in accepted and f"({letter})" not in note]
    assert not unnamed, f"{assignment} {name}: the note does not say what ({', '.join(unnamed)}) models"
    visible = HIDDEN_BLOCK.sub("", code)
    assert "Reviewer note" not in visible


def test_no_released_notebook_holds_a_reviewer_note():
    for path in RELEASE_NOTEBOOKS:
        assert "Reviewer note" not in path.read_text(encoding="utf-8"), path
