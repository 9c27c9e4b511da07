"""nbgrader's Assignment List and course list server extensions, loaded once the lab is serving.

Importing them imports most of nbgrader (its database layer, nbconvert, a URI grammar): seconds on
a quiet 2-core machine, far more on a busy one, all before the lab would answer. Enabled in their
place (lab/ROLE/jupyter_server_config.json switches them off), this imports nothing of nbgrader at
start: the import runs in a thread once the server is up, then each extension is loaded as the
server would have loaded it. Their panels ask for their data when opened; until then they
answer 404, which the panels show as a list that could not load (open it again to refresh)."""
import asyncio
import importlib

LATE = ["nbgrader.server_extensions.assignment_list", "nbgrader.server_extensions.course_list"]


async def load_late(serverapp, names=tuple(LATE)) -> None:
    for name in names:
        try:
            module = await asyncio.to_thread(importlib.import_module, name)
            module._load_jupyter_server_extension(serverapp)
        except Exception:  # one panel missing, not the lab
            serverapp.log.exception("course: could not load %s", name)
    serverapp.log.info("course: nbgrader's Assignment List and course list are served")


def _load_jupyter_server_extension(serverapp):
    # Kept, so the task is not collected before it ends.
    serverapp.web_app.settings["course_late_extensions"] = asyncio.get_event_loop().create_task(load_late(serverapp))


def _jupyter_server_extension_points():
    return [{"module": "course_late_extensions"}]
