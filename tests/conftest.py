"""Shared fixtures, and the end-of-run report of what the tests covered."""
import pytest

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
    config.addinivalue_line("markers", "cuda: needs a CUDA GPU; skipped where torch sees none")


def pytest_collection_modifyitems(config, items):
    needing = [item for item in items if item.get_closest_marker("cuda")]
    if needing:
        import torch  # only when a test asks: importing torch costs seconds per worker
        if not torch.cuda.is_available():
            for item in needing:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))


def pytest_runtest_logreport(report):
    if report.when == "call":
        _covered.extend(text for key, text in report.user_properties if key == "covered")


def pytest_terminal_summary(terminalreporter):
    if _covered:
        terminalreporter.section("what the tests covered")
        for line in _covered:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """A temporary nbgrader course made from this repository's config and sources."""
    return make_course(tmp_path_factory.mktemp("course"))
