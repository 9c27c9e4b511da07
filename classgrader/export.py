"""grades.csv in which a missing submission reads as missing, not as a score of 0.

nbgrader's CsvExportPlugin writes 0.0 for every assignment a student never submitted (or that
was never released), the same as a real zero. This plugin (nbgrader_config.py,
ExportApp.plugin_class) writes the same file and then leaves the score columns empty for
those rows; a submission that scored 0 keeps its 0.0."""
import csv

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

SCORE_COLUMNS = ("raw_score", "late_submission_penalty", "score")


def blank_missing(path: str, submitted: set[tuple[str, str]]) -> None:
    """Rewrite the CSV at `path`, emptying the score columns of (assignment, student) pairs
    not in `submitted`."""
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, list(reader)
    for row in rows:
        if (row["assignment"], row["student_id"]) not in submitted:
            row.update({column: "" for column in SCORE_COLUMNS})
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


class CsvExport(CsvExportPlugin):
    def export(self, gradebook) -> None:
        super().export(gradebook)
        submitted = set()
        for assignment in gradebook.assignments:
            for student in gradebook.students:
                try:
                    gradebook.find_submission(assignment.name, student.id)
                    submitted.add((assignment.name, student.id))
                except MissingEntry:
                    pass
        blank_missing(self.to or "grades.csv", submitted)
