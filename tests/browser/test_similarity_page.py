"""The similarity page as an instructor opens it: the copying class of the capstone
(tests/scenarios/copying_class.py), its page written by ./course similarity's code, opened from disk
in Debian's Chromium through Playwright. The pairs worth a look first, each row's link leading to its
side-by-side view with the shared code marked; nothing fetched but the page itself; nothing wider than
a laptop's window. The screenshot is kept at docs/images/similarity.png, which docs/similarity.md shows."""
from browserkit import FIT_WIDTH, SKIP_WITHOUT_CHROMIUM, page_of_files
from coursekit import ROOT
from scenarios import copying_class

SCREENSHOT = ROOT / "docs" / "images" / "similarity.png"
pytestmark = SKIP_WITHOUT_CHROMIUM


def test_the_similarity_page_in_a_browser(tmp_path):
    from classgrader.commands.similarity import write_page
    from classgrader.similarity.compare import compare
    notebooks, release = copying_class.build("unit08")
    comparison = compare("08_capstone.ipynb", notebooks, release)
    path = write_page(str(tmp_path), "08_capstone", [(comparison, [])])
    copied = copying_class.copied_pairs("unit08")
    with page_of_files() as (page, fetched):
        page.goto(f"file://{path}")
        assert page.locator("h1").inner_text() == "Code alike: 08_capstone"
        rows = page.locator("table tr")
        looked = [rows.nth(i).inner_text() for i in range(1, len(copied) + 1)]
        assert all("worth a look" in row for row in looked), looked
        assert "worth a look" not in rows.nth(len(copied) + 1).inner_text()
        first = comparison.worth_a_look[0]
        page.get_by_role("link", name=f"{first.a} & {first.b}").click()
        assert page.url.endswith("#pair-1")
        heading = page.locator("#pair-1")
        assert heading.inner_text().startswith(f"1. {first.a} & {first.b}")
        marks = page.locator("mark")
        assert marks.count() > 10 and marks.first.is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= FIT_WIDTH
        page.goto(f"file://{path}")
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.set_viewport_size({"width": FIT_WIDTH, "height": 1300})
        page.screenshot(path=str(SCREENSHOT))
    assert fetched and all(url.startswith("file://") for url in fetched), fetched
