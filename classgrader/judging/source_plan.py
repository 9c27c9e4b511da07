"""What the grader takes from an assignment's source notebook itself, never from a submission:
its setup and helper cells, the names its answer cells define, and each test's full code and
cell (whose metadata may set its route: routing.requested, checked here, before any kernel)."""
import os

from nbgrader.coursedir import CourseDirectory

from classgrader.judging import judge, routing

_plans: dict[tuple[str, int], "SourcePlan"] = {}  # (source notebook path, its bytes' hash) -> its plan, per process


class SourcePlan:
    # Where it was read from, set by read(): its key in _plans, its path, its bytes.
    key: tuple[str, int]
    path: str
    data: bytes

    def __init__(self, nb):
        self.setup, self.answers, self.tests, self.cells = [], set(), {}, {}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or not meta:
                continue
            if meta.get("solution"):
                self.answers |= judge.defined_names(without_markers(cell.source))
            elif meta.get("grade"):
                routing.requested(cell)
                self.tests[meta.get("grade_id")] = cell.source
                self.cells[meta.get("grade_id")] = cell
            elif meta.get("locked"):
                self.setup.append(cell.source)
        # A name the course's own cells define is never the student's to answer with.
        self.answers -= set().union(set(), *(judge.defined_names(code) for code in self.setup))


def without_markers(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if "### BEGIN" not in line and "### END" not in line)


def read(config, resources) -> SourcePlan | None:
    """The plan of the source notebook of what nbgrader is grading (`resources`), read once per
    process and notebook, not once per student; None outside nbgrader, or when the source is not there."""
    info = resources.get("nbgrader", {})
    if not info.get("assignment") or not info.get("notebook"):
        return None
    course = CourseDirectory(config=config)
    path = os.path.join(course.format_path(course.source_directory, ".", info["assignment"]),
                        f"{info['notebook']}.ipynb")
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as handle:
        data = handle.read()
    key = (path, hash(data))
    if key not in _plans:
        import nbformat
        plan = _plans[key] = SourcePlan(nbformat.reads(data.decode("utf-8"), as_version=4))
        plan.key, plan.path, plan.data = key, path, data
    return _plans[key]
