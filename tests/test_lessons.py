"""Each lesson's main path fits one sitting, no longer than the official tutorials on its topic, and every
graded item that sends a student to a lesson section sends them to one on that main path.

The main path is every cell before the first markdown heading that starts with "Optional". Its time is a
beginner's, who reads technical prose, runs every cell, reads its output and its errors, and stops to think at each
Try-it: the words of its markdown at 115 words a minute, 9 seconds for each non-blank code line (reading it,
running it, reading what it prints), and 2.25 minutes for each Try-it (a paragraph opening with "**Try it.**"). At
most 20 minutes. The rates are fitted to measured sittings: newcomers took 27 to 33 minutes over main paths that
this model puts at 26.5 to 31.9."""
import re

import pytest

from coursekit import LESSONS, ROOT, SOURCE_NOTEBOOKS, read_notebook, source_text

MAX_MINUTES = 20
WORDS_PER_MINUTE = 115
SECONDS_PER_CODE_LINE = 9
MINUTES_PER_TRY_IT = 2.25
MAX_TIMES_REFERENCE = 1.5

OPTIONAL_HEADING = re.compile(r"^#{1,6}[ \t]+Optional\b", re.M)
SECTION_HEADING = re.compile(r"^##[ \t]+(.*)$", re.M)
TRY_IT = re.compile(r"^\*\*Try it\.\*\*", re.M)

# Words (prose and code, as a reader sees them: link targets, markup lines and navigation bars left out;
# a word is a run of non-space characters holding a letter or digit) of the official material on each
# lesson's topic. A lesson's main path may be at most MAX_TIMES_REFERENCE times the longest of its anchors.
# PyTorch tutorials: github.com/pytorch/tutorials, beginner_source/ as of July 2024; d2l: github.com/d2l-ai/d2l-en
# at 23d7a5a (March 2024), the text and the PyTorch code of each section.
REFERENCES = {
    "01": {'PyTorch tutorial "Tensors" (basics/tensorqs_tutorial.py)': 722,
           'd2l 2.1 "Data Manipulation" (chapter_preliminaries/ndarray.md)': 1928},
    "02": {'d2l 6.7 "GPUs" (chapter_builders-guide/use-gpu.md)': 1556},
    "03": {'d2l 2.1 "Data Manipulation": broadcasting, indexing, saving memory '
           '(chapter_preliminaries/ndarray.md)': 1928},
    "04": {'PyTorch tutorial "A Gentle Introduction to torch.autograd" (blitz/autograd_tutorial.py)': 1364,
           'd2l 2.5 "Automatic Differentiation" (chapter_preliminaries/autograd.md)': 1670},
    "05": {'PyTorch tutorial "Automatic Differentiation with torch.autograd", with "Disabling Gradient Tracking" '
           '(basics/autogradqs_tutorial.py)': 1041,
           'd2l 2.5 "Automatic Differentiation", with "Detaching Computation" '
           '(chapter_preliminaries/autograd.md)': 1670},
    "06": {'PyTorch tutorial "Build the Neural Network" (basics/buildmodel_tutorial.py)': 659,
           'd2l 6.1 "Layers and Modules" (chapter_builders-guide/model-construction.md)': 1971,
           'd2l 6.2 "Parameter Management" (chapter_builders-guide/parameters.md)': 704},
    "07": {'PyTorch tutorial "Saving and Loading Models" (saving_loading_models.py)': 2031,
           'd2l 6.6 "File I/O" (chapter_builders-guide/read-write.md)': 618},
}

WORD = re.compile(r"\S*\w\S*")
LINK_TARGET = re.compile(r"\]\([^)]*\)")


def words(text: str) -> int:
    return len(WORD.findall(LINK_TARGET.sub("]", text)))


def is_optional_heading(cell) -> bool:
    return cell["cell_type"] == "markdown" and bool(OPTIONAL_HEADING.search(source_text(cell)))


def main_path(cells: list[dict]) -> list[dict]:
    """The cells before the first Optional heading: what a first reading goes through."""
    for i, cell in enumerate(cells):
        if is_optional_heading(cell):
            return cells[:i]
    return cells


def markdown_words(cells) -> int:
    return sum(words(source_text(c)) for c in cells if c["cell_type"] == "markdown")


def code_lines(cells) -> int:
    return sum(1 for c in cells if c["cell_type"] == "code" for line in source_text(c).splitlines() if line.strip())


def try_its(cells) -> int:
    return sum(len(TRY_IT.findall(source_text(c))) for c in cells if c["cell_type"] == "markdown")


def minutes(cells) -> float:
    return (markdown_words(cells) / WORDS_PER_MINUTE + code_lines(cells) * SECONDS_PER_CODE_LINE / 60
            + try_its(cells) * MINUTES_PER_TRY_IT)


def all_words(cells) -> int:
    """Prose and code, counted the way the references are."""
    return sum(words(source_text(c)) for c in cells)


def unit(path) -> str:
    return path.name[:2]


def _cell(kind: str, text: str) -> dict:
    return {"cell_type": kind, "source": text}


def test_the_measure_stops_at_the_first_optional_heading_and_counts_words_lines_and_try_its():
    cells = [_cell("markdown", "# A lesson\n\nNine words of prose, [a link](http://x.org/a b) here."),
             _cell("code", "x = 1\n\n   \ny = x + 1  # a comment"),
             _cell("markdown", "**Try it.** Change `x`.\n\n**Try it.** Again."),
             # the optional part, which the measure leaves out
             _cell("markdown", "## Optional: a fine point"), _cell("code", "z = 2")]
    main = main_path(cells)
    assert main == cells[:3]
    assert (markdown_words(main), code_lines(main), try_its(main)) == (9 + 7, 2, 2)
    assert minutes(main) == pytest.approx(16 / 115 + 2 * 9 / 60 + 2 * 2.25)
    assert main_path(cells[:2]) == cells[:2]                      # no optional part: all of it
    assert not is_optional_heading(_cell("markdown", "An optional remark, not a heading"))
    assert is_optional_heading(_cell("markdown", "### Optional, deeper"))
    assert not try_its([_cell("markdown", "Then **Try it.** in a sentence")])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_main_path_fits_one_sitting(path, covered):
    main = main_path(read_notebook(path)["cells"])
    spent = minutes(main)
    detail = (f"{markdown_words(main)} words of prose, {code_lines(main)} code lines, {try_its(main)} Try-its: "
              f"{spent:.1f} minutes")
    covered(f"{path.name}: main path {detail}")
    assert spent <= MAX_MINUTES, (
        f"{path.name}: the main path is {detail}; the budget is {MAX_MINUTES} minutes: move fine points, "
        "internals and version-specific detail to an 'Optional: ...' section at the end")


@pytest.mark.parametrize("path", [p for p in LESSONS if unit(p) in REFERENCES], ids=lambda p: str(p.relative_to(ROOT)))
def test_main_path_is_no_longer_than_the_official_tutorials_allow(path, covered):
    sources = REFERENCES[unit(path)]
    anchor = max(sources, key=sources.get)
    limit = MAX_TIMES_REFERENCE * sources[anchor]
    used = all_words(main_path(read_notebook(path)["cells"]))
    covered(f"{path.name}: main path {used} words, {used / sources[anchor]:.2f}x {anchor}")
    assert used <= limit, (
        f"{path.name}: the main path is {used} words of prose and code, {used / sources[anchor]:.2f} times "
        f"{anchor} ({sources[anchor]} words); at most {MAX_TIMES_REFERENCE}x")


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_optional_sections_come_last_and_are_announced(path):
    cells = read_notebook(path)["cells"]
    rest = cells[len(main_path(cells)):]
    if not rest:
        return
    later = [title for c in rest if c["cell_type"] == "markdown"
             for title in SECTION_HEADING.findall(source_text(c)) if not title.startswith("Optional")]
    assert not later, f"{path.name}: main-path sections after the optional part: {later}"
    assert "Optional" in source_text(cells[0]), f"{path.name}: the opening cell does not say what is optional"


# ---- graded items cite only main-path sections ----

LESSON = r"(?:lesson (?P<{0}num>\d{{2}})|notebooks/(?P<{0}file>\d{{2}})_\w+?_lesson\.ipynb|the lesson)"
NUMBERS = r"(?P<nums>\d+(?:(?:, | and | or |-)\d+)*)"
TITLE = r"\"(?P<title>[^\"\n]+)\"|\*(?P<starred>[^*\n]+)\*"
# "section 2 of the lesson", "sections 8 and 9 of lesson 07", each optionally followed by a quoted title
NUMBERED_AFTER = re.compile(rf"\bsections? {NUMBERS} of {LESSON.format('a')}(?P<rest>(?:\.|,|:)? ?(?:{TITLE})?)")
# "lesson 04, section 2. What backward fills", "notebooks/09_x_lesson.ipynb, section 2"
NUMBERED_BEFORE = re.compile(rf"{LESSON.format('b')}(?:'s)?,? sections? {NUMBERS}(?P<rest>(?:\.|,|:)? ?(?:{TITLE})?)")
# 'the lesson\'s "When the message names no property"', 'lesson 07: "Rebuild, load, ..."', 'lesson 05, section "X"'
TITLED = re.compile(rf"{LESSON.format('c')}(?:'s|,|:)? (?:section )?(?:{TITLE})")
# '"Title" in lesson 05 (05_no_grad_lesson.ipynb)', '"A" and "B" in lesson 03'
QUOTED_IN = re.compile(rf"(?P<titles>\"[^\"\n]+\"(?:(?:, | and | or )\"[^\"\n]+\")*) (?:in|of|from) "
                       rf"{LESSON.format('q')}")
FENCED_CODE = re.compile(r"^```.*?^```", re.S | re.M)
# a link into a lesson: notebooks/05_no_grad_lesson.ipynb#3.-Fixing-it
ANCHOR = re.compile(r"notebooks/(?P<dnum>\d{2})_\w+?_lesson\.ipynb#(?P<anchor>[^)\s\"'>]+)")


def normalised(title: str) -> str:
    title = re.sub(r"^\d+\.\s*", "", title.strip())
    title = re.sub(r"[\s\-]+", " ", re.sub(r"[`*_\"'\\\\.:,;!?()]", "", title)).strip().lower()
    return re.sub(r"^optional ", "", title)


def headings(lesson_cells: list[dict]) -> list[tuple[str, bool, str]]:
    """(heading text, on the main path, the number of the section it opens or lies in) for every markdown
    heading of a lesson, in order: "### How many elements?" under "## 1. Reading ..." lies in section 1."""
    on_main, found, section = len(main_path(lesson_cells)), [], ""
    for index, cell in enumerate(lesson_cells):
        if cell["cell_type"] != "markdown":
            continue
        prose = FENCED_CODE.sub("", source_text(cell))            # a comment in a code block is no heading
        for match in re.finditer(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", prose, re.M):
            level, text = len(match.group(1)), match.group(2)
            if level <= 2:
                numbered = re.match(r"(\d+)\.\s", text)
                section = numbered.group(1) if numbered else ""
            found.append((text, index < on_main, section))
    return found


def section_references(text: str, own_unit: str) -> list[tuple[str, str, str, str]]:
    """(the cited text, lesson number, section number or "", title or "") for each section a text cites."""
    found = []

    def lesson_of(match, prefix):
        return match.group(f"{prefix}num") or match.group(f"{prefix}file") or own_unit

    def title_of(match):
        title = match.group("title") or match.group("starred") or ""
        rest = match.groupdict().get("rest") or ""
        if not title and rest.startswith(". "):          # "section 2. What backward fills"
            tail = text[match.end():]
            # the title ends at a bracket, a spaced hyphen, en or em dash, a stop, a quote or the end
            title = re.split(r"\)|\s[-\u2013\u2014]\s|[.;:](?:\s|$)|\"|'|$", tail, maxsplit=1)[0]
        return title.strip()

    taken: list[range] = []

    def fresh(match) -> bool:                         # the first, most specific reading of a span wins
        if any(match.start() < span.stop and span.start < match.end() for span in taken):
            return False
        taken.append(range(match.start(), match.end()))
        return True

    for match in filter(fresh, QUOTED_IN.finditer(text)):
        found += [(match.group(0), lesson_of(match, "q"), "", title)
                  for title in re.findall(r"\"([^\"\n]+)\"", match.group("titles"))]
    for pattern, prefix in ((NUMBERED_BEFORE, "b"), (NUMBERED_AFTER, "a")):
        for match in filter(fresh, pattern.finditer(text)):
            numbers = re.findall(r"\d+", match.group("nums"))
            title = title_of(match) if len(numbers) == 1 else ""
            found += [(match.group(0), lesson_of(match, prefix), n, title) for n in numbers]
    for match in filter(fresh, TITLED.finditer(text)):
        found.append((match.group(0), lesson_of(match, "c"), "", match.group("title") or match.group("starred")))
    for match in filter(fresh, ANCHOR.finditer(text)):
        found.append((match.group(0), match.group("dnum"), "", match.group("anchor").replace("-", " ")))
    return found


def resolve(reference, lesson_cells: list[dict]) -> str | None:
    """What is wrong with a reference to a lesson (None: it names a main-path section of that lesson)."""
    cited, _lesson, number, title = reference
    found = headings(lesson_cells)
    candidates = found
    if number:
        candidates = [h for h in found if h[2] == number]
        if not candidates:
            return f"{cited!r}: the lesson has no section {number}"
    if title:
        wanted = normalised(title)
        named = [h for h in candidates
                 if normalised(h[0]) == wanted or (len(wanted) >= 12 and normalised(h[0]).startswith(wanted))]
        if not named:
            return f"{cited!r}: no heading{f' of section {number}' if number else ''} is titled {title!r}"
        candidates = named
    heading, on_main, _section = candidates[0]
    if not on_main:
        return f"{cited!r} names {heading!r}, which is in the lesson's optional part"
    return None


def lesson_cells_of(number: str) -> list[dict] | None:
    matches = [p for p in LESSONS if unit(p) == number]
    return read_notebook(matches[0])["cells"] if matches else None


LESSON_FOR_TEST = [_cell("markdown", "# 05 A lesson\n\nOptional parts at the end."),
                   _cell("markdown", "## 1. What one forward pass keeps"), _cell("code", "x = 1"),
                   _cell("markdown", "### The mode is state on the model"),
                   _cell("markdown", "## 2. `no_grad`: nothing recorded"),
                   _cell("markdown", "## Optional: when the saved tensors are freed")]


@pytest.mark.parametrize(("text", "wanted"), [
    ('Re-read section 1 of the lesson, "What one forward pass keeps".', [("05", "1", "What one forward pass keeps")]),
    ("Re-read sections 1 and 2 of the lesson: both.", [("05", "1", ""), ("05", "2", "")]),
    ("See lesson 04, section 2. What backward fills; then try again.", [("04", "2", "What backward fills")]),
    ("Re-read notebooks/09_silent_symptoms_lesson.ipynb, section 2: what keeps it.", [("09", "2", "")]),
    ("(the lesson's \"The mode is state on the model\")", [("05", "", "The mode is state on the model")]),
    ("lesson 07: *Rebuild, load, then build the optimiser*", [("07", "", "Rebuild, load, then build the optimiser")]),
    ("[here](../notebooks/05_no_grad_lesson.ipynb#2.-no_grad:-nothing-recorded)",
     [("05", "", "2. no_grad: nothing recorded")]),
    ('Re-read "A" and "B" in lesson 03 (03_broadcasting_views_lesson.ipynb).', [("03", "", "A"), ("03", "", "B")]),
    ("Re-read \"`running += loss` in a training loop\" in lesson 05 (05_no_grad_lesson.ipynb): what is freed?",
     [("05", "", "`running += loss` in a training loop")]),
    ("Re-read the lesson on tied parameters.", []),
    ("See section 2 above.", []),
])
def test_section_references_are_read_in_every_form_the_assignments_use(text, wanted):
    assert [ref[1:] for ref in section_references(text, "05")] == wanted


def test_a_reference_resolves_only_to_a_main_path_heading_of_that_number_and_title():
    def check(text):
        return [resolve(ref, LESSON_FOR_TEST) for ref in section_references(text, "05")]

    assert check('section 1 of the lesson, "What one forward pass keeps"') == [None]
    assert check("section 2 of the lesson") == [None]
    assert headings([*LESSON_FOR_TEST, _cell("markdown", "```python\n# 9. a comment\n```")])[-1][0] != "9. a comment"
    assert check("the lesson's \"The mode is state on the model\"") == [None]
    assert check("[see](notebooks/05_x_lesson.ipynb#2.-no_grad:-nothing-recorded)") == [None]
    assert "no section 3" in check("section 3 of the lesson")[0]
    assert "no heading of section 1 is titled" in check('section 1 of the lesson, "Fixing it"')[0]
    assert "optional part" in check('the lesson\'s "when the saved tensors are freed"')[0]
    assert "optional part" in check('the lesson: "Optional: when the saved tensors are freed"')[0]


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_graded_items_cite_only_main_path_sections(path, covered):
    """Task texts, quiz questions and the hints of hidden tests: every lesson section they name exists
    and lies on that lesson's main path, so every graded item is answerable from the main path."""
    problems, count = [], 0
    for index, cell in enumerate(read_notebook(path)["cells"]):
        for reference in section_references(source_text(cell), unit(path)):
            count += 1
            lesson = lesson_cells_of(reference[1])
            problem = (f"{reference[0]!r}: there is no lesson {reference[1]}" if lesson is None
                       else resolve(reference, lesson))
            if problem:
                problems.append(f"{path.name} cell [{index}] (lesson {reference[1]}): {problem}")
    covered(f"{path.name}: {count} lesson sections cited, each on its lesson's main path")
    assert not problems, "references to lesson sections that are not on a main path:\n" + "\n".join(problems)


def test_each_misconception_names_a_section_of_its_lesson_and_which_part_it_is_in(covered):
    """The feedback of a named misconception sends the student to the lesson section that teaches it
    (autograder.misconceptions.LESSON_SECTIONS), saying "the optional part" for those after the main path."""
    from autograder.misconceptions import IN_OPTIONAL_PARTS, LESSON_SECTIONS
    problems = []
    for key, (lesson, title) in sorted(LESSON_SECTIONS.items()):
        found = [h for h in headings(read_notebook(ROOT / "notebooks" / lesson)["cells"])
                 if normalised(h[0]) == normalised(title)]
        if not found:
            problems.append(f"{key}: {lesson} has no section titled {title!r}")
        elif found[0][1] == (key in IN_OPTIONAL_PARTS):
            part = "the main path" if found[0][1] else "the optional part"
            problems.append(f"{key}: {title!r} is on {part}; IN_OPTIONAL_PARTS says otherwise")
    covered(f"{len(LESSON_SECTIONS)} misconceptions send students to their lesson's section, "
            f"{len(IN_OPTIONAL_PARTS)} of them saying it is in the optional part")
    assert not problems, "\n".join(problems)


HINT = re.compile(r"check_answer\([^\n]*?hint=(?P<q>['\"])(?P<hint>(?:\\.|(?!(?P=q)).)*)(?P=q)")


def test_a_hint_is_read_from_a_check_answer_call():
    line = """check_answer(q2, "b", hint='Re-read "Resuming" in lesson 07 (x.ipynb): the optimiser\\'s state.')"""
    assert [m.group("hint") for m in HINT.finditer(line)] == [
        """Re-read "Resuming" in lesson 07 (x.ipynb): the optimiser\\'s state."""]


@pytest.mark.parametrize("path", SOURCE_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_quiz_hint_names_the_sections_it_rests_on(path, covered):
    """A quiz's feedback sends the student to named sections (checked above to be on a main path), not to
    "the lesson on ...", which could be an optional part or nowhere."""
    hints = [m.group("hint") for cell in read_notebook(path)["cells"] if cell["cell_type"] == "code"
             for m in HINT.finditer(source_text(cell))]
    vague = [hint for hint in hints if not section_references(hint, unit(path))]
    covered(f"{path.name}: {len(hints)} quiz hints, each naming a lesson section")
    assert not vague, f"{path.name}: quiz hints that name no lesson section: {vague}"
