"""The browser every test of what a person sees drives: Debian's Chromium through Playwright
(Playwright cannot download its own browser here), started the same way everywhere."""
import contextlib
from pathlib import Path

import pytest

from coursekit import IN_CI

CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "apt-get update && apt-get install -y --no-install-recommends chromium"
# From the engineering notes: without the networking flags Chromium stalls on the refused
# connections of a machine with no network.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
FIT_WIDTH = 1100  # a laptop's browser window, in CSS pixels: the lab's default split gives each pane half
NO_BROWSER = f"browser tests need Debian's Chromium at {CHROMIUM}: {INSTALL}"
# A machine without the browser skips these tests; in CI a missing browser fails them (needs_chromium).
SKIP_WITHOUT_CHROMIUM = pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason=NO_BROWSER)


def needs_chromium() -> None:
    """Fail at once where the browser is missing (only reached in CI: skipped elsewhere)."""
    if not CHROMIUM.exists():
        pytest.fail(NO_BROWSER, pytrace=False)


def launch(playwright):
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)


@contextlib.contextmanager
def page_of_files():
    """A page a laptop's window wide, and the list of every URL it requests: for a page written
    to disk, which must fetch nothing from anywhere else."""
    from playwright.sync_api import sync_playwright
    needs_chromium()
    fetched: list[str] = []
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(viewport={"width": FIT_WIDTH, "height": 900})
            page.on("request", lambda request: fetched.append(request.url))
            yield page, fetched
        finally:
            browser.close()
