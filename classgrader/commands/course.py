"""The course as nbgrader sees it, loaded from its nbgrader_config.py: shared by the class run
and its workers, so neither imports the other."""
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
