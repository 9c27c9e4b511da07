"""A KernelManager whose kernels are forks of the warm zygote (kernel_zygote.py), optionally
confined by a sandbox jail, talking over Unix sockets (`ipc`), which work across the network
namespace a jail removes. nbclient and nbgrader use it like any other KernelManager."""
import atexit
import json
import os
import shutil
import sys
import tempfile

from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Unicode

from .kernel_zygote import Zygote

RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_relay.py")
ZYGOTE_ENV = "COURSE_ZYGOTE"  # a running zygote's socket, shared by every worker of a class run
_own_zygote = None


def zygote_socket() -> str:
    """The zygote to fork from: the one named in the environment, else one started (once) here."""
    global _own_zygote
    if os.environ.get(ZYGOTE_ENV):
        return os.environ[ZYGOTE_ENV]
    if _own_zygote is None:
        _own_zygote = Zygote()
        atexit.register(_own_zygote.stop)
    return _own_zygote.socket_path


class WarmKernelManager(AsyncKernelManager):
    jail = Dict(allow_none=True, default_value=None, help="sandbox.Jail fields; None: no sandbox")
    trace_dir = Unicode("", help="where the kernel's checks write their records (COURSE_TRACE_DIR)")

    async def _async_pre_start_kernel(self, **kw):
        # Sockets live in the kernel's working folder, writable inside the jail.
        self.transport = "ipc"
        self.ip = os.path.join(self._short_path(kw.get("cwd") or os.getcwd()), ".k")
        env = dict(kw.get("env") or os.environ)
        env.pop(ZYGOTE_ENV, None)  # nothing in the kernel needs to know where the zygote is
        if self.trace_dir:
            env["COURSE_TRACE_DIR"] = self.trace_dir
        kw["env"] = env
        return await super()._async_pre_start_kernel(**kw)

    def _short_path(self, folder: str) -> str:
        """`folder`, or a short symlink to it: a Unix socket's path must fit in 107 bytes. The link
        lives in /var/tmp, which a jail leaves visible (its /tmp is private)."""
        if len(folder) < 80:
            return folder
        base = "/var/tmp/course-ipc"
        os.makedirs(base, mode=0o755, exist_ok=True)
        self._ipc_links = getattr(self, "_ipc_links", []) + [tempfile.mkdtemp(dir=base)]
        os.chmod(self._ipc_links[-1], 0o755)  # the jailed kernel (nobody) must pass through
        link = os.path.join(self._ipc_links[-1], "w")
        os.symlink(folder, link)
        return link

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart)
        if not restart:
            for folder in getattr(self, "_ipc_links", []):
                shutil.rmtree(folder, ignore_errors=True)
            self._ipc_links = []
    cleanup_resources = _async_cleanup_resources  # AsyncKernelManager binds the base one by name

    def format_kernel_cmd(self, extra_arguments=None):
        return [sys.executable, RELAY, zygote_socket(), self.connection_file,
                json.dumps(self.jail), *(extra_arguments or [])]
