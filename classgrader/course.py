"""The course as nbgrader sees it, loaded from its nbgrader_config.py: shared by the class run
and its workers, so neither imports the other."""
import os


def load_course(root: str):
    """The course's nbgrader CourseDirectory, configured by its nbgrader_config.py."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", path=root).load_config()
    return CourseDirectory(config=config)


# What grading depends on besides the notebooks: both wings of the course's code.
GRADER_PACKAGES = [os.path.dirname(os.path.abspath(__file__)),
                   os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "autograder")]
