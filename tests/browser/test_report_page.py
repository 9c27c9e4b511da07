"""The class report as an instructor opens it: the synthetic class of
tests/classgrader/commands/test_report.py (whose figures that file checks), its pages written by
classgrader.commands.report, opened from disk in Debian's Chromium through Playwright. From the index
to the assignment's page by its link; both plots drawn; the misconceptions ranked with their
counts; nothing fetched from anywhere but the page itself; nothing wider than a laptop's
window. The screenshot goes to artifacts/screenshots/report.png, so that a run changes no committed
file; docs/images/report.png, which the README shows, is copied from it when the page's look changes."""
import importlib.util

from browserkit import FIT_WIDTH, SKIP_WITHOUT_CHROMIUM, page_of_files
from coursekit import ROOT

SCREENSHOT = ROOT / "artifacts" / "screenshots" / "report.png"
pytestmark = SKIP_WITHOUT_CHROMIUM


def the_class():
    """tests/classgrader/commands/test_report.py, loaded by its path (test folders are not packages)."""
    path = ROOT / "tests" / "classgrader" / "commands" / "test_report.py"
    spec = importlib.util.spec_from_file_location("report_class", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_report_in_a_browser(tmp_path):
    from classgrader.commands import report
    synthetic = the_class()
    root = synthetic.synthetic_class(tmp_path)
    page_path, index_path = report.write_reports(str(root), [synthetic.ASSIGNMENT], index=True)
    with page_of_files() as (page, fetched):
        page.goto(f"file://{index_path}")
        page.get_by_role("link", name=synthetic.ASSIGNMENT).click()
        page.wait_for_load_state()
        assert page.url == f"file://{page_path}"
        assert page.locator("h1").inner_text() == f"{synthetic.ASSIGNMENT}: what the class got wrong"
        plots = page.locator("svg")
        assert plots.count() == 2
        for n in range(2):
            box = plots.nth(n).bounding_box()
            assert box["width"] > 300 and box["height"] > 150, box
        ranked = page.locator("h2:has-text('Misconceptions') + table tr")
        assert ranked.count() == 4  # the header and three misconceptions
        assert ranked.nth(1).inner_text().startswith("2 (22%)")
        assert "len(t) taken for the number of elements" in ranked.nth(1).inner_text()
        assert page.get_by_role("heading", name="Students to look at (4)").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= FIT_WIDTH
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert fetched and all(url.startswith("file://") for url in fetched), fetched
    assert set(fetched) == {f"file://{index_path}", f"file://{page_path}"}
