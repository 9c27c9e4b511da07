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
    config.addinivalue_line("markers", "says: only the end-to-end scenarios whose feedback must say something")


def pytest_collection_modifyitems(config, items):
    needing = [item for item in items if item.get_closest_marker("cuda")]
    if needing:
        import torch  # only when a test asks: importing torch costs seconds per worker
        if not torch.cuda.is_available():
            for item in needing:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))


# Under pytest-xdist (./course test) test files run two at a time. test_class_grading.py asserts
# that no kernel process is left anywhere on the machine once its class is graded, so while its
# tests run no other file may have sandboxed kernels alive: each of its tests holds an exclusive
# lock, and each file that starts such kernels a shared one for its whole module (fixtures
# included). Its own grading (the module fixture) may overlap theirs. One lock file per run.
SANDBOXED_KERNELS = {"test_autograde_e2e_a.py", "test_autograde_e2e_b.py", "test_autograde_e2e_c.py",
                     "test_exchange_flow.py", "test_browser.py", "test_classroom.py",
                     "test_isolated_execute.py", "test_sandbox.py", "test_warm_kernel.py", "test_grade_worker.py",
                     "test_hub.py"}  # the hub's sudo course-autograde grades in sandboxed kernels too
EXCLUSIVE = {"test_class_grading.py"}


def _kernel_lock(request, tmp_path_factory, exclusive: bool):
    import fcntl
    handle = open(tmp_path_factory.getbasetemp().parent / "sandboxed-kernels.lock", "a")  # the run's workers share it
    fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    return handle  # released when closed


@pytest.fixture(scope="module", autouse=True)
def _kernels_running(request, tmp_path_factory):
    if request.path.name not in SANDBOXED_KERNELS or not hasattr(request.config, "workerinput"):
        yield  # not a kernel user, or not under xdist (one file at a time anyway)
        return
    with _kernel_lock(request, tmp_path_factory, exclusive=False):
        yield


@pytest.fixture(autouse=True)
def _no_other_kernels(request, tmp_path_factory):
    if request.path.name not in EXCLUSIVE or not hasattr(request.config, "workerinput"):
        yield
        return
    if "graded" in request.fixturenames:  # its class is graded first, alongside whatever else runs
        request.getfixturevalue("graded")
    with _kernel_lock(request, tmp_path_factory, exclusive=True):
        yield


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
