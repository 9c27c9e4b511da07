"""A piece of code as copydetect fingerprints it: tokenised by Pygments with every name made `V`
(so renaming changes nothing), comments and whitespace dropped, then the hashes of its k-grams.
Hashes the release's own code has are boilerplate and dropped."""
import html
import io
import os

os.environ.setdefault("MPLBACKEND", "Agg")  # copydetect imports pyplot; a report needs no display

from copydetect import CodeFingerprint, compare_files
from copydetect.utils import highlight_overlap

# k-grams of K filtered characters (a statement or so). Beginners' answers are short, a few hundred
# filtered characters: copydetect's default of 25 would miss a copied line or two. Every k-gram is
# kept (a winnowing window of 1): so few cost nothing to compare, and reordered statements keep all
# the k-grams inside them.
K = 12
WINDOW = 1


def fingerprint(code: str, boilerplate=()) -> CodeFingerprint:
    return CodeFingerprint("answer.py", K, WINDOW, boilerplate=list(boilerplate), fp=io.StringIO(code),
                           language="python")


def boilerplate_of(codes) -> set[int]:
    """The hashes of code every student was given (the release's cells)."""
    found: set[int] = set()
    for code in codes:
        found |= fingerprint(code).hashes
    return found


def marked(a: CodeFingerprint, b: CodeFingerprint, start: str, end: str) -> tuple[str, str]:
    """Both texts, HTML-escaped, with what they share between `start` and `end`."""
    _, _, (slices_a, slices_b) = compare_files(a, b)
    if not len(slices_a) or not len(slices_a[0]):
        return html.escape(a.raw_code), html.escape(b.raw_code)
    return (highlight_overlap(a.raw_code, slices_a, start, end, escape_html=True)[0],
            highlight_overlap(b.raw_code, slices_b, start, end, escape_html=True)[0])
