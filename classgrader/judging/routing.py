"""Where each test is judged: one decision, made here, from the source notebook's test cell and
what the grader's own run of the solution observed of it (reference_run.py).

- OUTSIDE: the test runs in the grader (judge.py); the student's kernel only answers, with data,
  what its names hold and what its functions return (answer_channel.py). The kernel never sees
  the test.
- SHADOWED: the test runs in the student's kernel; it counts only if its records hold up in the
  grader (verify.py) and its shadow, its value checks run in the grader against the same
  kernel, passes every check the solution's shadow passes (judge.Judge.shadow).
- KERNEL: as SHADOWED, without a shadow: the solution's shadow passed no check, so there is
  nothing of the test the grader can check itself besides its records.

A test is judged outside when it looks only at values (judge.observes_process) and the solution
passes it there; otherwise it runs in the kernel, shadowed where the solution's shadow passes a
check. An author may decide instead, in the source notebook's test cell (never a student's):
`cell.metadata["course"]["route"] = "outside"` judges it outside whatever it looks at (a
solution that fails it there leaves it unestablished, and every student then fails it: the
grader's own run says so in a warning), `"kernel"` runs it in the kernel (shadowed as usual).
"""
import enum
from typing import NamedTuple

from classgrader.judging import judge

METADATA, KEY = "course", "route"


class Route(enum.Enum):
    OUTSIDE = "outside"
    SHADOWED = "shadowed"
    KERNEL = "kernel"


# What an author may ask for in a test cell's metadata.
REQUESTS = {"outside": Route.OUTSIDE, "kernel": Route.SHADOWED}


class BadRoute(ValueError):
    """A test cell's metadata asks for a route there is not."""


class Observed(NamedTuple):
    """What the grader's own run of the solution saw of one test, so far."""
    passed_outside: bool | None = None  # None: not tried outside (yet)
    shadow_checks: int | None = None  # checks the solution's shadow passed; None: not shadowed (yet)


def requested(cell) -> Route | None:
    """The route the author set in a source test cell's metadata, or None; BadRoute for a value
    that is not one, naming the cell."""
    value = cell.metadata.get(METADATA, {}).get(KEY)
    if value is None:
        return None
    if value not in REQUESTS:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "(no grade id)")
        raise BadRoute(f"test cell {grade_id!r}: metadata {METADATA}.{KEY} is {value!r}; "
                       f"it may be {' or '.join(map(repr, REQUESTS))}")
    return REQUESTS[value]


def route(cell, answers: frozenset, observed: Observed | None = None) -> Route:
    """The route of the source test `cell`, whose answer cells define `answers`, given what the
    grader's own run `observed` of it. Before the grader's own run has tried it: the route to
    try (OUTSIDE, or SHADOWED where the shadow is yet to be tried)."""
    observed = observed or Observed()
    wanted = requested(cell)
    if wanted is Route.OUTSIDE:
        return Route.OUTSIDE
    values_only = wanted is None and judge.observes_process(cell.source, frozenset(answers)) is None
    if values_only and observed.passed_outside is not False:
        return Route.OUTSIDE
    return Route.KERNEL if observed.shadow_checks == 0 else Route.SHADOWED
