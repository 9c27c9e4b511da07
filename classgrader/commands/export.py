"""grades.csv in which a missing submission reads as missing, not as a score of 0.

nbgrader's CsvExportPlugin writes 0.0 for every assignment a student never submitted (or that
was never released), the same as a real zero. This plugin (nbgrader_config.py,
ExportApp.plugin_class) writes the same file and then leaves the score columns empty for
those rows; a submission that scored 0 keeps its 0.0."""
import csv
import os
import sys

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

from classgrader.class_run.records import Malformed, read_done

SCORE_COLUMNS = ("raw_score", "late_submission_penalty", "score")


def graded_on(grading: str, assignment: str, student: str) -> str:
    """The device a student's tests of `assignment` ran on, as the class run recorded it in
    `grading`/ID/done/STUDENT.json (runtime/grading), or "" when it recorded none, or a record
    that does not conform (said on stderr)."""
    path = os.path.join(grading, os.path.basename(assignment), "done", f"{os.path.basename(student)}.json")
    try:
        record = read_done(path)
    except Malformed as error:
        print(f"./course export: {error}; its graded_on is left empty", file=sys.stderr)
        return ""
    return (record["device"] or "") if record and record["kind"] == "graded" else ""


def blank_missing(path: str, submitted: set[tuple[str, str]], grading: str | None = None) -> None:
    """Rewrite the CSV at `path`, emptying the score columns of (assignment, student) pairs
    not in `submitted`; given the class run's `grading` folder, a last column says where each
    submission was graded (graded_on: a CPU fallback told from a GPU run)."""
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, list(reader)
    if fields is None:
        raise ValueError(f"{path} is empty: nbgrader's export writes a header row first")
    if grading is not None and "graded_on" not in fields:
        fields = [*fields, "graded_on"]
    for row in rows:
        if (row["assignment"], row["student_id"]) not in submitted:
            row.update(dict.fromkeys(SCORE_COLUMNS, ""))
        if grading is not None:
            row["graded_on"] = graded_on(grading, row["assignment"], row["student_id"]) \
                if (row["assignment"], row["student_id"]) in submitted else ""
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
        path = self.to or "grades.csv"
        blank_missing(path, submitted, os.path.join(os.path.dirname(os.path.abspath(path)), "grading"))
