"""./course hub [ARGS]: set up the class (hub/install.py, same ARGS) and run JupyterHub in the
foreground until Ctrl-C, which stops every user's server and the proxy with it. With --remove,
tear the stopped class down instead (hub/remove.py); with --publish, publish the checkout's lessons
to the class (hub/lessons.py), which may be running."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import install

state = install.main(sys.argv[1:], serve=True)
if state is None:  # --remove or --publish: nothing to serve
    sys.exit(0)
config = Path(__file__).resolve().parent / "jupyterhub_config.py"
hub = install.VENV / "bin" / "jupyterhub"
os.environ.update(COURSE_HUB_STATE=str(state), PATH=f"{install.VENV}/bin:/usr/bin:/bin")
os.chdir(state)
os.execv(hub, [str(hub), "-f", str(config)])
