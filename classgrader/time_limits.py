"""Every time limit the class grader sets, each a named multiple of the course's cell timeout
(c.Execute.timeout in nbgrader_config.py, read by autograder.validate.cell_timeout): change that
one number and every limit here follows. Standard library only."""

# The grader's own run of a solution may take this many times a student's cell timeout per cell,
# so that what it establishes never depends on how busy the machine is.
REFERENCE_TIMEOUTS = 6
# A test judged in the grader (or a shadow) asks the kernel many questions, each a call of the
# student's code bounded by one cell timeout; its answers together may take this many before it is
# a hang (the grader's own work between them is not counted: on a busy machine it is slow too).
GRADER_TIMEOUTS = 10
# One student's notebook in all, unless c.IsolatedExecute.student_budget says otherwise: room for
# every cell of an assignment to take a while, not for each to run out its timeout.
STUDENT_TIMEOUTS = 20
# The class run's watchdog waits twice the worker's own budget, and a minute more for the worker's
# start and nbgrader's own steps, so that the worker's bound, which grades what it can, acts first.
WATCHDOG_TIMES, WATCHDOG_START = 2, 60
# The grader's own run of the solution may hold a worker this many student allowances.
PREPARING = 5


def seconds(cell_timeout) -> float:
    """The cell timeout as the grader bounds its own work by it: a positive number of seconds.
    nbclient reads None or 0 as no limit at all, which would let one notebook hold its worker forever."""
    if isinstance(cell_timeout, bool) or not isinstance(cell_timeout, int | float) or cell_timeout <= 0:
        raise ValueError(f"the class grader needs a cell timeout in seconds (c.Execute.timeout in "
                         f"nbgrader_config.py), not {cell_timeout!r}")
    return float(cell_timeout)


def reference_cell(cell_timeout) -> float:
    """A cell of the grader's own run of the solution."""
    return seconds(cell_timeout) * REFERENCE_TIMEOUTS


def grader_test(cell_timeout) -> float:
    """One test judged in the grader, all its questions to the kernel together."""
    return seconds(cell_timeout) * GRADER_TIMEOUTS


def student_budget(cell_timeout, configured: float = 0) -> float:
    """One student's notebook in all: c.IsolatedExecute.student_budget where set (non-zero)."""
    return float(configured) if configured else seconds(cell_timeout) * STUDENT_TIMEOUTS


def watchdog(budget: float) -> float:
    """How long the class run lets one student hold a worker whose own budget is `budget`."""
    return WATCHDOG_TIMES * budget + WATCHDOG_START
