"""Fixtures the widget tests share."""
import pytest

from utils import unsafe_pickle


@pytest.fixture
def fresh_flag():
    """The harmless payload's FLAG at "never ran" before and after a test, so a run shows as a change."""
    unsafe_pickle.reset_flag()
    yield
    unsafe_pickle.reset_flag()
