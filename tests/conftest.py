"""Shared fixtures, and the end-of-run report of what the tests covered."""
import os
import shutil
import tempfile

import pytest

import coursekit
from coursekit import make_course

_covered: list[str] = []


@pytest.fixture
def covered(request):
    """covered("...") records a line for the "what the tests covered" report."""
    def note(text: str) -> None:
        # Kept on the test's report, not in a list here: under pytest-xdist the tests run in
        # worker processes, and only reports travel back to the process that prints the summary.
        request.node.user_properties.append(("covered", f"{request.node.name}: {text}"))
    return note


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # the early marks' order, not xdist's
    # Jupyter's per-user data (nbgrader's record of every submission, servers' runtime files) in a
    # folder of the run's own, not the running user's home, where each run's test students would
    # pile up in that user's Assignment List.
    _run_folder(config, "JUPYTER_DATA_DIR", "course-test-jupyter-")
    _run_folder(config, SCRATCH_ENV, "course-test-scratch-")
    # A plugin, not a hook of this file: this file's hooks reach only the items under tests/.
    config.pluginmanager.register(NotebookScratch(), "course-notebook-scratch")


def _run_folder(config, variable: str, prefix: str) -> None:
    """A folder of the run's own in the environment `variable`, removed at its end. Set before
    pytest-xdist starts its workers, which inherit it; a run inside a run keeps the outer one's."""
    if variable not in os.environ:
        folder = os.environ[variable] = tempfile.mkdtemp(prefix=prefix)
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


SCRATCH_ENV = "COURSE_TEST_SCRATCH"  # the run's folder for what the notebooks nbval runs leave in their /tmp


class NotebookScratch:
    """nbval starts a notebook's kernel in its first cell's set-up: that kernel gets the run's scratch
    folder as its TMPDIR, so the folders the notebook makes (a checkpoint's, a TemporaryDirectory
    a killed kernel never removes) go with the run. Only there: other processes the tests start
    keep their own (the hub's, whose sockets' paths must stay short)."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        if type(item).__name__ != "IPyNbCell":
            yield
            return
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TMPDIR", os.environ[SCRATCH_ENV])
            yield


# Under pytest-xdist, files are handed out in collection order (xdist's own reorder, by number
# of tests, is switched off in pytest_configure: it put the files of one long test, the hub's
# and the exchange's, at the very end, one worker running them while the other idled). Files
# marked `early(N)` go first, lowest N first: the hostile class first of all, so that its
# grading overlaps the hub's round trip.
def _early_rank(item) -> float:
    mark = item.get_closest_marker("early")
    return mark.args[0] if mark else float("inf")


def pytest_collection_modifyitems(config, items):
    items.sort(key=_early_rank)  # stable: the rest as collected
    needing = [item for item in items if item.get_closest_marker("cuda")]
    if needing:
        import torch  # only when a test asks: importing torch costs seconds per worker
        if not torch.cuda.is_available():
            for item in needing:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))


def pytest_runtest_logreport(report):
    if report.when == "call":
        _covered.extend(text for key, text in report.user_properties if key == "covered")


def pytest_terminal_summary(terminalreporter, config):
    if _covered:
        terminalreporter.section("what the tests covered")
        for line in _covered:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session", autouse=True)
def _course_builds(tmp_path_factory):
    """Generated courses are kept for the whole run, shared by its pytest-xdist workers: in the
    run's own temporary folder (each worker's lies inside it), so no run reads another's."""
    base = tmp_path_factory.getbasetemp()
    coursekit.builds = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "course-builds"


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """A temporary nbgrader course made from this repository's config and sources."""
    return make_course(tmp_path_factory.mktemp("course"))
