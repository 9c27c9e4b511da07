"""The process a KernelManager launches in place of a kernel (see warm_kernel.py): it asks
the zygote for a forked kernel, then stands in for it. Signals it gets are passed on; when
the kernel ends it exits with the kernel's status; if it is killed, or the process that
started it ends (a grading worker killed mid-kernel), it ends and the zygote kills the kernel.
It leaves the zygote's word on the kernel (its pid, its memory group) in
CONNECTION_FILE.kernel for the grader. Run as a script (`python -I -S`), not as a module, so
that it starts without torch; the messages it sends and reads are protocol.py's KernelWanted,
KernelStarted and KernelEnded.

    python kernel_relay.py ZYGOTE_SOCKET CONNECTION_FILE JAIL_JSON [KERNEL ARGS...]
"""
import contextlib
import json
import os
import select
import signal
import socket
import sys

# -I leaves the repository off the import path; protocol.py imports only the standard library.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from classgrader.in_kernel import protocol


class ParentGone(Exception):
    """The process that started the relay has ended."""


def watch_parent() -> int | None:
    """A pidfd of the process that started the relay, readable once that process has ended (None
    where there is none: a Linux before 5.3, another system). jupyter_client names that process
    in JPY_PARENT_PID: a relay orphaned before it got here has another parent by now."""
    parent = os.getppid()
    if os.environ.get("JPY_PARENT_PID", str(parent)) != str(parent):
        raise ParentGone
    if not hasattr(os, "pidfd_open"):
        return None
    try:
        watch = os.pidfd_open(parent)
    except ProcessLookupError:
        raise ParentGone from None
    except OSError:  # ENOSYS: the relay then ends with its kernel, not with its parent
        return None
    if os.getppid() != parent:  # it ended between the two looks
        os.close(watch)
        raise ParentGone
    return watch


def next_line(conn: socket.socket, watch: int | None, pending: bytearray) -> bytes:
    """The zygote's next line, b"" if it hung up; ParentGone once the relay's parent has ended."""
    while b"\n" not in pending:
        ready, _, _ = select.select([conn.fileno()] + ([watch] if watch is not None else []), [], [])
        if watch in ready:
            raise ParentGone
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        pending += chunk
    end = pending.index(b"\n") + 1
    line = bytes(pending[:end])
    del pending[:end]
    return line


def main(zygote: str, connection_file: str, jail: str, *arguments: str) -> int:
    # A relay whose parent has gone has no one to serve; ending closes its connection, and the
    # zygote then ends its kernel (which would else run on, a stalled one spinning, until the
    # zygote's own end).
    try:
        return relay(zygote, connection_file, jail, watch_parent(), *arguments)
    except ParentGone:
        return 1


def relay(zygote: str, connection_file: str, jail: str, watch: int | None, *arguments: str) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(zygote)
    request: protocol.KernelWanted = {
        "connection_file": os.path.abspath(connection_file), "cwd": os.getcwd(), "env": dict(os.environ),
        "jail": json.loads(jail), "arguments": list(arguments)}
    socket.send_fds(conn, [protocol.line(request)], [0, 1, 2])
    pending = bytearray()
    first = next_line(conn, watch, pending)
    if not first:  # the zygote failed while importing, or was stopped
        print("kernel start failed: the kernel zygote closed the connection", file=sys.stderr, flush=True)
        return 1
    started = protocol.read_line(protocol.KernelStarted, first)
    pid = started["pid"]
    # Where the grader finds the kernel's process and memory group (kernel_memory.py); beside
    # the connection file, in the grader's own runtime folder, which no kernel can write.
    facts = request["connection_file"] + ".kernel"
    with open(facts + ".tmp", "w") as handle:
        json.dump(started, handle)
    os.replace(facts + ".tmp", facts)

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    line = next_line(conn, watch, pending)  # until the zygote reports the kernel's end
    if not line:
        return 1
    return os.waitstatus_to_exitcode(protocol.read_line(protocol.KernelEnded, line)["exit"]) % 256


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
