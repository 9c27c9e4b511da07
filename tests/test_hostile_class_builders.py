"""The hostile class's builders, checked without running a kernel: each writes its student's
submission where it should and nowhere else, and the class covers every scenario it promises."""
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from classgrader.class_run import code_scan
from coursekit import ROOT, grade_cells, read_notebook
from scenarios.hostile_class import SCANNED, STUDENTS, expected_score, points

# Every kind of student the class test relies on: (assignment, the end of the student id).
REQUIRED_KINDS = [("01_tensors", kind) for kind in (
    "correct", "alternative", "partly_correct", "blank", "syntax_error", "import_error",
    "kernel_death", "infinite_loop", "ignores_interrupt", "memory_bomb_function",
    "memory_bomb_cell", "huge_output", "warnings", "test_edited", "test_deleted",
    "duplicate_cell", "cell_type_changed", "renamed_notebook", "missing_notebook",
    "extra_files", "invalid_json", "patch_checks", "patch_torch", "always_equal",
    "input_transformer", "custom_exception_handler", "hardcoded", "reads_hidden_tests",
    "network", "overwrite_files", "fork_bomb", "huge_file",
    # A student who has read the grader
    "links_and_fifo", "hide_tracebacks", "swap_check_code", "clear_errors", "silent_forger",
    "expected_forger", "plant_links", "daemon", "fill_disk", "snoop")] + [
    ("04_autograd", "correct"), ("04_autograd", "kernel_death"), ("04_autograd", "patch_torch"),
    ("06_modules", "correct"), ("06_modules", "alternative"), ("06_modules", "infinite_loop"),
    ("01_tensors", "lying_tensor"), ("04_autograd", "lying_tensor"), ("06_modules", "lying_tensor"),
    ("02_devices", "device_forger"), ("05_no_grad", "evaluate_forger"), ("02_devices", "lying_tensor"),
]
FLAG_WORDINGS = ("invalid notebook", "missing notebook", "renamed notebook", "test cell edited",
                 "test cell deleted", "duplicate grade id", "cell type changed", "tampering",
                 "refused file", "disk quota", "differ from the grader's own run",
                 "differs from the grader's own run", "the grader's own check of its values failed",
                 "not graded in full", "could not establish this test", "not graded:", code_scan.REASON)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A course with the repository's source and release, every student's submission built
    into it; returns the course root."""
    course = tmp_path_factory.mktemp("hostile_course")
    shutil.copytree(ROOT / "source", course / "source")
    shutil.copytree(ROOT / "release", course / "release")
    for student in STUDENTS:
        dest = course / "runtime" / "submitted" / student.student / student.assignment
        dest.mkdir(parents=True)
        student.build(dest, course)
    return course


def _submitted(course, student) -> Path:
    return course / "runtime" / "submitted" / student.student / student.assignment


def test_ids_are_unique_and_plain():
    ids = [s.student for s in STUDENTS]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9_]+", i) for i in ids)
    assert len(STUDENTS) >= 25


def test_every_scenario_kind_is_present():
    present = {(s.assignment, s.student) for s in STUDENTS}
    missing = [kind for kind in REQUIRED_KINDS
               if not any(a == kind[0] and sid.endswith(kind[1]) for a, sid in present)]
    assert not missing


def test_losses_and_flags_name_real_things():
    for student in STUDENTS:
        nb = read_notebook(ROOT / "source" / student.assignment / f"{student.assignment}.ipynb")
        grade_ids = {c["metadata"]["nbgrader"]["grade_id"] for c in grade_cells(nb)}
        assert student.loses == {"*"} or student.loses <= grade_ids, student.student
        assert student.flag is None or any(w in student.flag for w in FLAG_WORDINGS), student.student


def test_the_grader_s_reading_flags_exactly_the_students_it_should(built):
    """Read as the class run reads them (code_scan, before any kernel): every student marked
    SCANNED has findings, and no student expected unflagged has any."""
    for student in STUDENTS:
        release = nbformat.read(ROOT / "release" / student.assignment / f"{student.assignment}.ipynb", as_version=4)
        found = []
        for path in _submitted(built, student).glob("*.ipynb"):
            try:
                found += code_scan.notebook_findings(nbformat.read(path, as_version=4), release)
            except Exception:  # the broken notebook: triage replaces it with the release
                continue
        if student.flag == SCANNED:
            assert found, student.student
        if student.flag is None:
            assert not found, (student.student, [str(f) for f in found])


def test_builders_write_only_into_their_own_folder(built):
    # The course holds source/, release/ untouched and runtime/submitted/<student>/<assignment>/ only.
    for folder in ("source", "release"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file():
                assert (built / folder / path.relative_to(ROOT / folder)).read_bytes() == path.read_bytes()
    assert sorted(p.name for p in built.iterdir()) == ["release", "runtime", "source"]
    by_id = {s.student: s for s in STUDENTS}
    for student_dir in (built / "runtime" / "submitted").iterdir():
        assert [p.name for p in student_dir.iterdir()] == [by_id[student_dir.name].assignment]
    for student in STUDENTS:
        assert any(_submitted(built, student).iterdir()), f"{student.student} wrote nothing"


def test_notebooks_are_valid_except_the_broken_file(built):
    for student in STUDENTS:
        for path in _submitted(built, student).rglob("*.ipynb"):
            text = path.read_text(encoding="utf-8")
            if student.student.endswith("invalid_json"):
                with pytest.raises(json.JSONDecodeError):
                    json.loads(text)
                continue
            nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
            assert nb.nbformat == 4
            nbformat.validate(nb)


def test_code_cells_compile_except_the_syntax_error(built):
    # A typo in a scenario would silently turn it into a syntax-error scenario.
    for student in STUDENTS:
        if student.student.endswith("invalid_json"):
            continue
        for path in _submitted(built, student).rglob("*.ipynb"):
            for cell in read_notebook(path)["cells"]:
                if cell["cell_type"] != "code":
                    continue
                code = "".join(cell["source"])
                if student.student.endswith("syntax_error") and cell["id"] == "q2_classify_error_answer":
                    with pytest.raises(SyntaxError):
                        compile(code, str(path), "exec")
                else:
                    compile(code, str(path), "exec")


def test_file_level_scenarios(built):
    def names(kind):
        student = next(s for s in STUDENTS if s.student.endswith(kind))
        return sorted(str(p.relative_to(_submitted(built, student)))
                      for p in _submitted(built, student).rglob("*"))
    assert names("renamed_notebook") == ["my_work.ipynb"]
    assert names("missing_notebook") == ["README.txt"]
    assert "01_tensors.ipynb" in names("extra_files") and len(names("extra_files")) > 3
    linked = next(s for s in STUDENTS if s.student.endswith("links_and_fifo"))
    folder = _submitted(built, linked)
    assert (folder / "notes.txt").is_symlink() and (folder / "course").is_symlink()
    assert (folder / "pipe").is_fifo() and (folder / "data.csv").is_file()


def test_expected_scores(built):
    for student in STUDENTS:
        nb = read_notebook(built / "source" / student.assignment / f"{student.assignment}.ipynb")
        total = sum(c["metadata"]["nbgrader"]["points"] for c in grade_cells(nb))
        score = expected_score(student, built)
        if student.student.endswith("correct") and "partly" not in student.student:
            assert score == total
        if student.loses == {"*"}:
            assert score == 0
        assert 0 <= score <= total
    assert points("01_tensors", "q1_describe_tests", built) == 3
    assert expected_score("c01_correct", built) == 16


# The routes that run code from a file shipped with the notebook: the cell the student adds,
# run in a fresh interpreter in the submission's folder, runs the payload (the probe it names
# is rigged), though the cell names no means a reading of means would list. The reading of the
# notebook against the list flags each (test_the_grader_s_reading_flags_exactly_the_students_it_should).
PAYLOAD_ROUTES = {
    "c68_pickle_module_payload": ("q2_load_checkpoint_answer", "import autograder",
                                  "autograder.pitfall_if.__code__.co_filename"),
    "c69_environment_payload": ("q1_pick_device_answer", "import autograder",
                                "autograder.pretend_accelerators.__name__"),
    "c70_hub_payload": ("q3_evaluate_answer", "from autograder.autograd_probe import SavedTensorCount",
                        "SavedTensorCount._module_ran.__name__"),
}


@pytest.mark.parametrize("student_id", PAYLOAD_ROUTES)
def test_a_shipped_payload_runs_from_the_cell_the_student_adds(built, student_id, tmp_path):
    import subprocess
    import sys
    student = next(s for s in STUDENTS if s.student == student_id)
    folder = _submitted(built, student)
    cell_id, before, rigged = PAYLOAD_ROUTES[student_id]
    nb = read_notebook(folder / f"{student.assignment}.ipynb")
    added = next("".join(c["source"]) for c in nb["cells"] if c.get("id") == f"extra-{cell_id}")
    work = tmp_path / "work"
    shutil.copytree(folder, work)
    script = f"import torch\n{before}\nprint('before', {rigged})\n{added}\nprint('after', {rigged})\n"
    shown = subprocess.run([sys.executable, "-c", script], cwd=work, capture_output=True, text=True, timeout=300,
                           env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    assert shown.returncode == 0, shown.stderr[-3000:]
    lines = [line for line in shown.stdout.splitlines() if line.startswith(("before ", "after "))]
    first, second = [line.split(" ", 1)[1] for line in lines]
    assert first != second and ("<" in second), shown.stdout
