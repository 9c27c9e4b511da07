"""release/ is exactly what `nbgrader generate_assignment` makes from source/ now, and
holds no solution or hidden test."""
import pytest

from coursekit import ASSIGNMENTS, ROOT, read_notebook, source_text


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_matches_a_fresh_generate_assignment(assignment, course, covered):
    committed = sorted(p.relative_to(ROOT / "release")
                       for p in (ROOT / "release" / assignment).rglob("*") if p.is_file())
    fresh = sorted(p.relative_to(course / "release")
                   for p in (course / "release" / assignment).rglob("*") if p.is_file())
    assert committed == fresh, f"release/{assignment} holds other files than generate_assignment makes"
    for rel in fresh:
        if rel.suffix == ".ipynb":
            assert read_notebook(ROOT / "release" / rel) == read_notebook(course / "release" / rel), (
                f"release/{rel} is stale: run ./course generate {assignment} and commit the result")
        else:
            assert (ROOT / "release" / rel).read_bytes() == (course / "release" / rel).read_bytes()
    covered(f"release/{assignment}: {len(fresh)} files equal a fresh generate_assignment")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_holds_no_solutions_or_hidden_tests(assignment):
    for path in (ROOT / "release" / assignment).glob("*.ipynb"):
        text = "\n".join(source_text(c) for c in read_notebook(path)["cells"])
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
            assert marker not in text, f"{path.name} contains {marker!r}"
