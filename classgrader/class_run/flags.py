"""Flags for manual review: what in a submission the grader could not take at face value.

FindStructuralProblems (sanitize step, before nbgrader restores cells) compares the submitted
notebook with its release: edited, deleted or retyped cells and grade ids used twice; and reads
the student's code for means of rewriting the grading process (code_scan.py). The
autograde step adds what the kernel showed (isolated_execute.py). SaveFlags, after
SaveAutoGrades, marks the flagged cells "needs manual grade" in the gradebook (nbgrader's
formgrader then lists them) and hands the flags to the class run (progress.note_flags); it
writes no file, least of all into a folder the student's kernel could write."""
import os
from collections import Counter

import nbformat
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from classgrader.class_run import code_scan, progress, records


def _grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def structural_problems(submitted, release) -> list[str]:
    ids = Counter(filter(None, map(_grade_id, submitted.cells)))
    problems = [f"duplicate grade id: {gid} appears {n} times" for gid, n in sorted(ids.items()) if n > 1]
    mine = {_grade_id(c): c for c in submitted.cells if _grade_id(c)}
    for original in release.cells:
        gid = _grade_id(original)
        if not gid:
            continue
        cell = mine.get(gid)
        test = utils.is_grade(original)
        if cell is None:
            if test or utils.is_solution(original):
                what = "test cell deleted" if test else "answer cell deleted"
                problems.append(f"{what}: {gid}" + (" (restored from the source)" if test else ""))
        elif cell.cell_type != original.cell_type:
            problems.append(f"cell type changed: {gid} ({original.cell_type} -> {cell.cell_type})")
        elif (test or utils.is_locked(original)) and cell.source.strip() != original.source.strip():
            what = "test cell edited" if test else "locked cell edited"
            problems.append(f"{what}: {gid} (graded with the original)")
    return problems


class FindStructuralProblems(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        course = CourseDirectory(config=self.config)
        info = resources["nbgrader"]
        path = os.path.join(course.format_path(course.release_directory, ".", info["assignment"]),
                            info["notebook"] + ".ipynb")
        release = nbformat.read(path, as_version=4)
        try:
            found = code_scan.notebook_findings(nb, release)
            scanned = [code_scan.flag_reason(found)] if found else []
        except Exception as error:  # unread is not clean: flagged, and grading goes on
            scanned = [f"{code_scan.REASON}: the grader could not read the notebook's code ({type(error).__name__})"]
        nb.metadata["course_flags"] = structural_problems(nb, release) + scanned
        # Only the last cell of a grade id keeps its nbgrader metadata (as DeduplicateIds would),
        # but without the empty {} DeduplicateIds leaves, which breaks add_missing_cells.
        seen = set()
        for cell in reversed(nb.cells):
            gid = _grade_id(cell)
            if gid in seen:
                del cell.metadata["nbgrader"]
            elif gid:
                seen.add(gid)
        return nb, resources


class SaveFlags(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        flags = resources.pop("course_flags", [])
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            notebook = gradebook.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            for grade in notebook.grades:
                if any(gid in (None, grade.name) for gid, _ in flags):
                    grade.needs_manual_grade = True
            gradebook.db.commit()
        progress.note_flags(info["student"], [records.flag(gid, reason) for gid, reason in flags],
                            resources.pop("course_device", None))
        return nb, resources
