"""`./course generate` (classgrader/commands/generate.py, one process for every assignment) makes exactly
what stock `nbgrader generate_assignment` makes: the same release files, byte for byte, and the
same gradebook entries. tests/test_release.py then holds the committed release/ to it."""
import shutil

from coursekit import ASSIGNMENTS, ROOT, generate, nbgrader


def files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def gradebook(course_root) -> dict:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course_root / 'runtime' / 'gradebook.db'}") as gb:
        return {(a.name, nb.name): ([(c.name, c.max_score, c.cell_type) for c in nb.grade_cells],
                                    [(c.name, c.checksum, c.source, c.locked) for c in nb.source_cells])
                for a in gb.assignments for nb in a.notebooks}


def test_generate_equals_stock_generate_assignment(course, tmp_path, covered):
    """`course` (conftest) was made by classgrader.commands.generate; stock nbgrader, in its own folder."""
    stock = tmp_path / "stock"
    stock.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", stock)
    shutil.copytree(course / "source", stock / "source")
    nbgrader(stock, "generate_assignment", "*", "--force")  # stock nbgrader takes a glob of ids
    ours, theirs = files(course / "release"), files(stock / "release")
    assert sorted(ours) == sorted(theirs)
    differing = [str(rel) for rel in ours if ours[rel] != theirs[rel]]
    assert not differing, f"classgrader.commands.generate differs from generate_assignment in {differing}"
    assert gradebook(course) == gradebook(stock)
    assert {a for a, _ in gradebook(course)} == set(ASSIGNMENTS)
    covered(f"{len(ours)} release files and {len(gradebook(course))} gradebook notebooks equal stock nbgrader's")


def test_generate_makes_only_the_ids_given(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    shutil.copytree(ROOT / "source", tmp_path / "source")
    generate(tmp_path, ASSIGNMENTS[0], ASSIGNMENTS[-1])
    assert sorted(p.name for p in (tmp_path / "release").iterdir()) == [ASSIGNMENTS[0], ASSIGNMENTS[-1]]
    assert {a for a, _ in gradebook(tmp_path)} == {ASSIGNMENTS[0], ASSIGNMENTS[-1]}
