"""The course as nbgrader sees it, loaded from its nbgrader_config.py, and the grader's own code:
shared by the class run and its workers, so neither imports the other."""
import functools
import hashlib
import os


def load_course(root: str):
    """The course's nbgrader CourseDirectory, configured by its nbgrader_config.py."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", path=root).load_config()
    return CourseDirectory(config=config)


# What grading depends on besides the notebooks: every package of the course's code that
# grading imports (utils formats the checks' messages).
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRADER_PACKAGES = [os.path.join(_REPO, name) for name in ("classgrader", "autograder", "utils")]


@functools.cache  # one process grades with one grader
def grader_digest() -> bytes:
    """The grader's code, the check library and the helpers (GRADER_PACKAGES), each file by its
    name and bytes: what every record of grading is keyed on besides the notebooks."""
    digest = hashlib.sha256()
    for package in GRADER_PACKAGES:
        for folder, dirs, files in sorted(os.walk(package)):
            dirs.sort()
            for name in sorted(f for f in files if f.endswith((".py", ".j2", ".json"))):
                with open(os.path.join(folder, name), "rb") as handle:
                    digest.update(name.encode() + b"\0" + handle.read())
    return digest.digest()
