"""A KernelManager whose kernels are forks of the warm zygote (kernel_zygote.py), optionally
confined by a sandbox jail, talking over Unix sockets (`ipc`), which work across the network
namespace a jail removes. nbclient and nbgrader use it like any other KernelManager."""
import atexit
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Type, Unicode

from classgrader.in_kernel import protocol
from classgrader.kernels.kernel_zygote import ZYGOTE_ENV, Zygote

RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_relay.py")
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


class WarmKernelClient(AsyncKernelClient):
    """Ready as soon as the kernel is. jupyter_client's own wait ends with 0.2 s of IOPub
    silence, which was a third of grading a whole notebook; here the kernel_info request's own
    "idle" on IOPub proves the subscription is live, and nothing else is pending after it. The
    first request often goes before IOPub's subscription has joined (ZeroMQ drops what a
    publisher sends before then), so its "idle" never comes: rather than wait for it, ask again
    at once. Waiting 0.2 s there cost half the kernel starts that long, idle, about a quarter of
    the CPU time of a class run on 2 workers."""

    async def _ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        asked = set()  # the "idle" of any of them proves the subscription
        while True:
            msg_id = self.kernel_info()
            asked.add(msg_id)
            reply = await self._reply_to(self.shell_channel, {msg_id}, "kernel_info_reply", 1.0)
            if reply is not None and await self._reply_to(self.iopub_channel, asked, "status", 0.02,
                                                          state="idle") is not None:
                self._handle_kernel_info_reply(reply)
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")
    wait_for_ready = _ready

    @staticmethod
    async def _reply_to(channel, msg_ids: set, msg_type: str, wait: float, state: str | None = None):
        """The first message of `msg_type` answering one of `msg_ids` within `wait` seconds, else None."""
        until = time.monotonic() + wait
        while (left := until - time.monotonic()) > 0:
            try:
                msg = await channel.get_msg(timeout=left)
            except Empty:
                return None
            if (msg["parent_header"].get("msg_id") in msg_ids and msg["msg_type"] == msg_type
                    and (state is None or msg["content"].get("execution_state") == state)):
                return msg
        return None


class WarmKernelManager(AsyncKernelManager):
    client_factory = Type(WarmKernelClient, klass=AsyncKernelClient)
    jail = Dict(allow_none=True, default_value=None, help="sandbox.Jail fields; None: no sandbox")
    trace_dir = Unicode("", help="where the kernel's checks write their records (COURSE_TRACE_DIR)")

    async def _async_pre_start_kernel(self, **kw):
        # Sockets live in the kernel's records folder when it has one (its own tmpfs, which a
        # student filling the work area cannot fill), else in its working folder.
        self.transport = "ipc"
        self.ip = os.path.join(self._short_path(self.trace_dir or kw.get("cwd") or os.getcwd()), ".k")
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
        self._ipc_links = [*getattr(self, "_ipc_links", []), tempfile.mkdtemp(dir=base)]
        os.chmod(self._ipc_links[-1], 0o755)  # the jailed kernel (nobody) must pass through
        link = os.path.join(self._ipc_links[-1], "w")
        os.symlink(folder, link)
        return link

    async def _async_wait(self, pollinterval: float = 0.005) -> None:
        # jupyter_client polls a killed kernel every 0.1 s until it is gone; a relay dies at
        # once, and those 0.1 s were a fifth of grading a notebook.
        await super()._async_wait(pollinterval)

    def kernel_process(self) -> protocol.KernelStarted | dict[str, Any]:
        """The zygote's word on the running kernel, as its relay left it (kernel_relay.py): its
        pid and its memory cgroup (or None). {} before the kernel was forked."""
        try:
            with open(self.connection_file + ".kernel") as facts:
                return protocol.read_line(protocol.KernelStarted, facts.read())
        except (OSError, ValueError):
            return {}

    def cleanup_connection_file(self) -> None:
        """The connection file and, beside it, the relay's word on the kernel: jupyter_client also
        calls this when a manager that was never shut down is collected (a grader's test that
        killed the relay itself), and the relay's file stayed in the temporary folder."""
        if self.connection_file:
            # OSError: gone already; the others: the interpreter is ending, its modules half gone.
            with contextlib.suppress(OSError, AttributeError, TypeError):
                os.unlink(self.connection_file + ".kernel")
        super().cleanup_connection_file()

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        if restart:  # the restarted kernel's relay writes its own; a full clean-up is cleanup_connection_file's
            with contextlib.suppress(OSError):
                os.unlink(self.connection_file + ".kernel")
        await super()._async_cleanup_resources(restart)
        if not restart:
            for folder in getattr(self, "_ipc_links", []):
                shutil.rmtree(folder, ignore_errors=True)
            self._ipc_links = []
    cleanup_resources = _async_cleanup_resources  # AsyncKernelManager binds the base one by name

    def format_kernel_cmd(self, extra_arguments=None):
        # -I -S: the relay needs only the standard library, and starts faster without site.
        return [sys.executable, "-I", "-S", RELAY, zygote_socket(), self.connection_file,
                json.dumps(self.jail), *(extra_arguments or [])]
