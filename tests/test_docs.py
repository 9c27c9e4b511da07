"""The README is a front door: short, and every guide (docs/, benchmarks/README.md) is
reachable from it by links that lead somewhere, anchors included."""
import re

from coursekit import ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", path.read_text(), re.M)}


def local_links(path) -> list[tuple[object, str]]:
    found = []
    for target in LINK.findall(path.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        file, _, anchor = target.partition("#")
        found.append(((path.parent / file).resolve() if file else path, anchor))
    return found


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 75  # guides live in docs/


def test_every_guide_is_reachable_from_the_readme_and_every_link_leads_somewhere(covered):
    seen, todo, broken = set(), [ROOT / "README.md"], []
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for target, anchor in local_links(page):
            if not target.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                broken.append(f"{page.relative_to(ROOT)} -> {target.relative_to(ROOT)}#{anchor}")
            elif target.suffix == ".md":
                todo.append(target)
    assert not broken, broken
    guides = set((ROOT / "docs").glob("*.md")) | {ROOT / "benchmarks" / "README.md", ROOT / "CHANGES.md"}
    assert guides <= seen, f"not reachable from README.md: {sorted(str(g.relative_to(ROOT)) for g in guides - seen)}"
    covered(f"README.md reaches {len(seen) - 1} pages, every link and anchor resolves")


def test_every_notebook_a_page_or_an_assignment_names_exists(covered):
    """A lesson named in the README, a guide, a lesson or an assignment (source and release) is
    a file of the course: a renamed notebook leaves no dead name behind."""
    # notebooks/NAME in the course's own pages; lessons/NAME or NAME alone where a student reads it
    # (a student's lab has their copies in lessons/)
    named = re.compile(r"(?<![\w/])(?:notebooks/|lessons/)?(\d\d_[\w-]+_lesson\.ipynb)")
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "notebooks").glob("*.ipynb"),
             *(ROOT / "source").glob("*/*.ipynb"), *(ROOT / "release").glob("*/*.ipynb")]
    seen = {(page.relative_to(ROOT), name) for page in pages for name in named.findall(page.read_text())}
    missing = sorted(f"{page}: {name}" for page, name in seen if not (ROOT / "notebooks" / name).exists())
    assert not missing, missing
    assert any(str(page).startswith("source") for page, _ in seen)  # the assignments do name their lessons
    covered(f"{len(seen)} names of lesson notebooks in pages and assignments, each a file")
