"""Shared fixtures, and the end-of-run report of what the tests covered."""
import pytest

from coursekit import make_course

_covered: list[str] = []


@pytest.fixture
def covered(request):
    """covered("...") records a line for the "what the tests covered" report."""
    def note(text: str) -> None:
        _covered.append(f"{request.node.name}: {text}")
    return note


def pytest_terminal_summary(terminalreporter):
    if _covered:
        terminalreporter.section("what the tests covered")
        for line in _covered:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """A temporary nbgrader course made from this repository's config and sources."""
    return make_course(tmp_path_factory.mktemp("course"))
