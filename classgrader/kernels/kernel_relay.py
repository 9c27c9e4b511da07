"""The process a KernelManager launches in place of a kernel (see warm_kernel.py): it asks
the zygote for a forked kernel, then stands in for it. Signals it gets are passed on; when
the kernel ends it exits with the kernel's status; if it is killed, the zygote kills the
kernel. It leaves the zygote's word on the kernel (its pid, its memory group) in
CONNECTION_FILE.kernel for the grader. Run as a script, not as `-m autograder...`, so it starts without importing torch.

    python kernel_relay.py ZYGOTE_SOCKET CONNECTION_FILE JAIL_JSON [KERNEL ARGS...]
"""
import json
import os
import signal
import socket
import sys


def main(zygote: str, connection_file: str, jail: str, *arguments: str) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(zygote)
    request = {"connection_file": os.path.abspath(connection_file), "cwd": os.getcwd(),
               "env": dict(os.environ), "jail": json.loads(jail), "arguments": list(arguments)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    replies = conn.makefile()
    first = replies.readline()
    if not first:  # the zygote failed while importing, or was stopped
        print("kernel start failed: the kernel zygote closed the connection", file=sys.stderr, flush=True)
        return 1
    started = json.loads(first)
    pid = started["pid"]
    # Where the grader finds the kernel's process and memory group (kernel_memory.py); beside
    # the connection file, in the grader's own runtime folder, which no kernel can write.
    facts = request["connection_file"] + ".kernel"
    with open(facts + ".tmp", "w") as handle:
        json.dump(started, handle)
    os.replace(facts + ".tmp", facts)

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    line = replies.readline()  # blocks until the zygote reports the kernel's end
    status = json.loads(line)["exit"] if line else 1
    return os.waitstatus_to_exitcode(status) % 256 if line else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
