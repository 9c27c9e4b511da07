"""One assignment's notebooks compared: what each student wrote, fingerprinted exercise by exercise
against the release's own code, and every pair that shares something, ranked."""
from dataclasses import dataclass

from . import fingerprints, pairs, student_code


@dataclass
class Comparison:
    notebook: str                          # the notebook's name, e.g. 01_tensors.ipynb
    students: list[str]
    exercises: list[str]                   # answer cells in the release's order
    written: dict[str, dict[str, str]]     # student -> exercise -> the code they wrote there
    boilerplate: set[int]
    ranked: list[pairs.Pair]

    @property
    def worth_a_look(self) -> list[pairs.Pair]:
        return [p for p in self.ranked if p.worth_a_look]

    def fingerprint(self, student: str, exercise: str):
        return fingerprints.fingerprint(self.written[student].get(exercise, ""), self.boilerplate)


def _release_code(release: dict) -> list[str]:
    return [student_code.cell_text(c) for c in release.get("cells", []) if c.get("cell_type") == "code"]


def compare(notebook: str, notebooks: dict[str, dict], release: dict) -> Comparison:
    """notebooks: {student: their submitted notebook (nbformat JSON)}; release: the release's."""
    boilerplate = fingerprints.boilerplate_of(_release_code(release))
    given = student_code.Release(release)
    written = {student: student_code.written_code(nb, given) for student, nb in sorted(notebooks.items())}
    exercises = student_code.answer_ids(release)
    exercises += sorted({e for w in written.values() for e in w} - set(exercises))
    parts = {e: {s: fingerprints.fingerprint(w[e], boilerplate).hashes for s, w in written.items() if e in w}
             for e in exercises}
    return Comparison(notebook, sorted(notebooks), exercises, written, boilerplate, pairs.rank(parts))
