"""nbgrader's settings for every role's Assignment List (lab/ROLE/nbgrader_config.py links here, and
lab/ROLE is on JUPYTER_CONFIG_PATH).

The Assignment List reads nbgrader's settings twice: in the folder the lab serves, which holds the
course's nbgrader_config.py, then again in the folder it fetches into (Exchange.assignment_dir,
the course's work/), which holds only the student's assignments. There this file brings in the
settings of the course above, when they name this folder as the one the course fetches into."""
import os

from traitlets.config.loader import PyFileConfigLoader

_here = os.getcwd()
_course = os.path.dirname(_here)
if not os.path.exists("nbgrader_config.py") and os.path.isfile(os.path.join(_course, "nbgrader_config.py")):
    _settings = PyFileConfigLoader("nbgrader_config.py", path=_course).load_config()
    if os.path.realpath(_settings.Exchange.get("assignment_dir", "")) == os.path.realpath(_here):
        get_config().merge(_settings)  # noqa: F821 (provided by traitlets when it loads this file)
