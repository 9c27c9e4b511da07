"""The student's own folder (work/, git-ignored), which a student's lab serves: their copy of each
lesson in lessons/ and of each assignment in ID/. The course's files are never edited in place, so
running a lesson changes no file of the checkout and `git pull` stays clean.

    python -P autograder/student_folder.py COURSE WORK     (classgrader/cli.py loads it by path)

A lesson's copy follows nbgitpuller's rule for a course that changes under a student: a copy that
is missing is made; a copy the student has not changed since it was made is brought up to the
course's version; a copy they changed is kept, and the course's version is put beside it
(NN_name_lesson.course.ipynb, the same rule again) and said. What was copied is recorded in
lessons/.copied.json (each copy's cell sources, hashed: running a lesson fills its outputs and
counts, which is not changing it). An assignment is copied once, when missing, and never
overwritten, as nbgrader's fetch does (fetching again only adds missing files).

Standard library only, and run as a file: importing the autograder package would import torch.
"""
import hashlib
import json
import os
import shutil
import sys

LESSONS = "lessons"              # under work/: the lesson copies
RECORD = ".copied.json"          # under lessons/: what was copied, by file name
BESIDE = ".course.ipynb"         # the course's newer version of a lesson the student changed


def sources_digest(path: str) -> str | None:
    """A digest of the notebook's cells (their kinds and sources), or None if it is not one."""
    try:
        with open(path, encoding="utf-8") as handle:
            cells = json.load(handle)["cells"]
        text = json.dumps([(c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"]))
                           for c in cells])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def _read_record(folder: str) -> dict:
    try:
        with open(os.path.join(folder, RECORD), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def _place(course_file: str, copy: str, record: dict) -> str:
    """Copy, update or keep `copy` of `course_file`: "made", "updated", "same" (equal already), "yours"
    (changed by the student, not by the course) or "kept" (changed by both: left as it is)."""
    name, wanted = os.path.basename(copy), sources_digest(course_file)
    if not os.path.exists(copy):
        outcome = "made"
    elif sources_digest(copy) == wanted:
        record[name] = wanted  # the course and the copy agree
        return "same"
    elif record.get(name) == wanted:
        return "yours"  # the student changed it; the course did not
    elif sources_digest(copy) == record.get(name):
        outcome = "updated"  # untouched since it was copied: the course's newer version replaces it
    else:
        return "kept"
    shutil.copyfile(course_file, copy)
    record[name] = wanted
    return outcome


def update_lessons(course_lessons: str, work: str) -> list[str]:
    """Bring work/lessons/ up to the course's lessons; return a line for each thing a student should know."""
    folder = os.path.join(work, LESSONS)
    os.makedirs(folder, exist_ok=True)
    record, said = _read_record(folder), []
    names = sorted(n for n in os.listdir(course_lessons) if n.endswith(".ipynb")) if os.path.isdir(
        course_lessons) else []
    for name in names:
        course_file, copy = os.path.join(course_lessons, name), os.path.join(folder, name)
        if _place(course_file, copy, record) != "kept":
            continue
        beside = copy.removesuffix(".ipynb") + BESIDE
        outcome = _place(course_file, beside, record)
        where = f"{LESSONS}/{os.path.basename(beside)}"
        if outcome in ("made", "updated"):
            said.append(f"course: {LESSONS}/{name} has a newer version in the course; yours is kept as it is, "
                        f"the course's is {where}")
        elif outcome == "kept":
            said.append(f"course: {LESSONS}/{name} has a newer version in the course; yours and {where} "
                        f"are both yours, so neither was replaced")
    with open(os.path.join(folder, RECORD), "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
    return said


def copy_assignments(release: str, work: str) -> None:
    """work/ID for every assignment in release/ that the student does not have yet."""
    for assignment in sorted(os.listdir(release)) if os.path.isdir(release) else []:
        source, target = os.path.join(release, assignment), os.path.join(work, assignment)
        if os.path.isdir(source) and not assignment.startswith(".") and not os.path.exists(target):
            shutil.copytree(source, target)


def prepare(course: str, work: str) -> list[str]:
    """The student's folder for the course at `course`: lessons brought up to date, assignments copied."""
    os.makedirs(work, exist_ok=True)
    copy_assignments(os.path.join(course, "release"), work)
    return update_lessons(os.path.join(course, "notebooks"), work)


if __name__ == "__main__":
    for line in prepare(sys.argv[1], sys.argv[2]):
        print(line)
