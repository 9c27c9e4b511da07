"""Every role's lab (lab/ROLE/jupyter_server_config.py links here): puts the course's lab/server/ on
the server's import path, for the Validate button's server extension (course_validate_button,
enabled in the role's jupyter_server_config.json). The
folder is found beside the course's autograder package without importing it (that would import
torch), so the settings work wherever they are copied (a hub copies them)."""
import importlib.util
import os
import sys

_autograder = importlib.util.find_spec("autograder")
if _autograder is not None and _autograder.origin:
    _server = os.path.join(os.path.dirname(os.path.dirname(_autograder.origin)), "lab", "server")
    if _server not in sys.path:
        sys.path.insert(0, _server)
