"""Print one hub user's nbgrader_config.py: the course, the shared exchange, and the grading
kernel's settings Validate uses, read from the course's own nbgrader_config.py with traitlets (so
an edit there reaches every user). The instructor's also names their course folder (Formgrader).

    python hub/user_config.py EXCHANGE [COURSE_ROOT]

Used by hub/install.py (one machine) and hub/z2jh/Dockerfile (the single-user image)."""
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def user_config(exchange: str, course_root: str | None = None, checkout: Path = CHECKOUT) -> str:
    from traitlets.config.loader import PyFileConfigLoader
    course = PyFileConfigLoader("nbgrader_config.py", path=str(checkout)).load_config()
    lines = ["# Made by the course hub (hub/user_config.py): this user's nbgrader settings. Validate reads",
             "# the grading kernel's settings here, as the autograder reads them from the course's.",
             "c = get_config()  # noqa: F821",
             f"c.CourseDirectory.course_id = {course.CourseDirectory.course_id!r}",
             f"c.Exchange.root = {exchange!r}",
             f"c.Execute.extra_arguments = {list(course.Execute.get('extra_arguments', []))!r}"]
    if "timeout" in course.Execute:  # else nbgrader's own default, for the user as for the autograder
        lines.append(f"c.Execute.timeout = {course.Execute.timeout!r}")
    if course_root:
        lines.append(f"c.CourseDirectory.root = {course_root!r}  # the Formgrader's course")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python hub/user_config.py EXCHANGE [COURSE_ROOT]")
    print(user_config(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None), end="")
