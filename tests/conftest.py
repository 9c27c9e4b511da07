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
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # LONGEST_FIRST's order, not xdist's
    config.addinivalue_line("markers", "cuda: needs a CUDA GPU; skipped where torch sees none")
    config.addinivalue_line("markers", "says: only the end-to-end scenarios whose feedback must say something")


# Under pytest-xdist, files are handed out in collection order (xdist's own reorder, by number
# of tests, is switched off in pytest_configure: it put the files of one long test,
# the hub's and the exchange's, at the very end, one worker running them while the other idled).
# The longest files go first, the hostile class first of all so that its grading overlaps the
# hub's round trip and, when its tests need the machine to themselves (below), the other
# worker is in test_validate.py, which starts no sandboxed kernel.
LONGEST_FIRST = ["tests/test_class_grading.py", "tests/hub/test_hub.py", "tests/test_autograde_e2e_a.py",
                 "tests/autograder/test_validate.py", "tests/test_autograde_e2e_b.py",
                 "tests/test_autograde_e2e_c.py", "tests/browser/test_browser.py", "tests/test_exchange_flow.py"]


def pytest_collection_modifyitems(config, items):
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest as collected
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
    folder = tmp_path_factory.getbasetemp().parent  # the run's workers share it
    handle = open(folder / "sandboxed-kernels.lock", "a")
    # A turnstile: flock lets new shared holders in while an exclusive one waits, so a worker
    # going from one kernel-starting file to the next could keep test_class_grading waiting for
    # ever. Whoever waits for the lock holds the turnstile, so the next file waits behind it.
    with open(folder / "sandboxed-kernels.turnstile", "a") as turnstile:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
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
