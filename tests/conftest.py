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
        config.option.loadscopereorder = False  # the early marks' order, not xdist's


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


LOCK_WAITS = "kernel-lock-waits.txt"  # in the run's temporary folder, one line per wait


# Under pytest-xdist (./course test) test files run two at a time. Each file marked `kernels`
# holds a shared lock for its whole module (fixtures included), so that a file whose tests needed
# every other file's sandboxed kernels gone could take it alone. One lock file per run. A file
# that starts a sandboxed kernel without the mark fails (kernel_watch), so none escapes the lock
# unseen.


def _kernel_lock(request, tmp_path_factory, exclusive: bool):
    import fcntl
    import time
    folder = tmp_path_factory.getbasetemp().parent  # the run's workers share it
    handle = open(folder / "sandboxed-kernels.lock", "a")
    start = time.monotonic()
    # A turnstile: flock lets new shared holders in while an exclusive one waits, so a worker
    # going from one kernel-starting file to the next could keep test_class_grading waiting for
    # ever. Whoever waits for the lock holds the turnstile, so the next file waits behind it.
    with open(folder / "sandboxed-kernels.turnstile", "a") as turnstile:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    waited = time.monotonic() - start
    if waited >= 1:  # a test worker idle meanwhile: the run's summary says where (pytest_terminal_summary)
        with open(folder / LOCK_WAITS, "a") as log:
            log.write(f"{request.config.workerinput['workerid']} waited {waited:.0f} s for the kernel lock "
                      f"before {request.node.nodeid}\n")
    return handle  # released when closed


def _marked(request, name: str) -> bool:
    return any(mark.name == name for mark in request.node.iter_markers())


@pytest.fixture(scope="module", autouse=True)
def _kernels_running(request, tmp_path_factory):
    if _marked(request, "kernels"):
        if not hasattr(request.config, "workerinput"):
            yield  # not under xdist: one file at a time anyway
            return
        with _kernel_lock(request, tmp_path_factory, exclusive=False):
            yield
        return
    from kernel_watch import KernelWatch
    with KernelWatch() as watch:
        yield
    if watch.seen:
        pytest.fail(f"{request.path.name} started a sandboxed kernel ({watch.seen}) but is not marked: add "
                    f"`pytestmark = pytest.mark.kernels` so it takes the machine-wide kernel lock", pytrace=False)


def pytest_runtest_logreport(report):
    if report.when == "call":
        _covered.extend(text for key, text in report.user_properties if key == "covered")


def pytest_terminal_summary(terminalreporter, config):
    if _covered:
        terminalreporter.section("what the tests covered")
        for line in _covered:
            terminalreporter.write_line(line)
    waits = config._tmp_path_factory.getbasetemp() / LOCK_WAITS  # the workers' folders lie in it
    if config.pluginmanager.hasplugin("dsession") and waits.exists():
        terminalreporter.section("test workers idle, waiting for the kernel lock")
        for line in waits.read_text().splitlines():
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """A temporary nbgrader course made from this repository's config and sources."""
    return make_course(tmp_path_factory.mktemp("course"))
