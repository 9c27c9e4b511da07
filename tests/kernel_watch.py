"""KernelWatch: hears every process of this one's family take a sandbox's private uid while it
watches, so that a test can look for what its own kernels left behind (processes running as
those uids, work areas mounted for them) without counting another test file's kernels, running
meanwhile in the other pytest-xdist worker. A forked kernel may live only milliseconds, too
briefly for sampling /proc to see, so the watch listens to the kernel's process events instead
(the netlink proc connector: root only; elsewhere it hears nothing and says so in `listening`;
nothing is sandboxed there either)."""
import ctypes
import errno
import os
import select
import socket
import struct
import threading

# A sandboxed kernel runs as a uid of its own in this range (classgrader/kernels/sandbox.private_user).
PRIVATE_UIDS = range(200_000, 1_200_000)
NETLINK_CONNECTOR, CN_IDX_PROC, CN_VAL_PROC, PROC_CN_MCAST_LISTEN, PROC_CN_MCAST_IGNORE = 11, 1, 1, 1, 2
PROC_EVENT_UID = 0x4
EVENT = 16 + 20  # after the netlink header and the connector's: what, cpu, timestamp, then the data


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rpartition(")")[2].split()[1])  # the name, in brackets, may hold spaces


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        pid = _parent(pid)
    return False


def _only_uid_events(sock: socket.socket) -> None:
    """A socket filter (classic BPF) that lets through uid changes alone: the machine's every
    fork, exec and exit never wake the watch."""
    what = int.from_bytes(struct.pack("=I", PROC_EVENT_UID), "big")  # BPF loads words big-endian
    program = [(0x20, 0, 0, EVENT),        # load the event's `what`
               (0x15, 0, 1, what),         # a uid change?
               (0x06, 0, 0, 0xFFFFFFFF),   # keep it whole
               (0x06, 0, 0, 0)]            # drop the rest
    code = b"".join(struct.pack("=HBBI", *op) for op in program)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("HL", len(program), ctypes.addressof(buffer))
    sock.setsockopt(socket.SOL_SOCKET, 26, fprog)  # SO_ATTACH_FILTER; the kernel copies the program


def _listen(sock: socket.socket, op: int) -> None:
    message = struct.pack("=IIIIHH", CN_IDX_PROC, CN_VAL_PROC, 0, 0, 4, 0) + struct.pack("=I", op)
    sock.send(struct.pack("=IHHII", 16 + len(message), 3, 0, 0, os.getpid()) + message)  # NLMSG_DONE


class KernelWatch:
    """`uids`: every private uid a process of this one's family took meanwhile."""

    def __init__(self):
        self.uids: set[int] = set()
        self.listening = False
        self._thread = threading.Thread(target=self._watch, name="kernel-watch", daemon=True)

    def __enter__(self):
        self._me = os.getpid()
        try:
            self._sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)  # bursts of forks
            _only_uid_events(self._sock)
            self._sock.bind((0, CN_IDX_PROC))
            _listen(self._sock, PROC_CN_MCAST_LISTEN)
        except OSError:
            self._sock = None  # not root: no sandbox here either
            return self
        self.listening = True
        self._sock.setblocking(False)
        self._wake, self._woken = os.pipe()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._sock is not None:
            os.write(self._woken, b"x")  # ends the watch now: a timeout would cost each file its length
            self._thread.join()
            self._sock.close()
            os.close(self._wake), os.close(self._woken)

    def _watch(self):
        while True:
            ready, _, _ = select.select([self._sock, self._wake], [], [])
            self._read_queued()
            if self._wake in ready:
                return  # every event of the watched time was queued by then: the kernel sends them as they happen

    def _read_queued(self) -> None:
        while True:
            try:
                data = self._sock.recv(65536)
            except BlockingIOError:
                return
            except OSError as error:
                if error.errno == errno.ENOBUFS:  # events were dropped in a burst; go on with the next
                    continue
                return
            self._event(data)

    def _event(self, data: bytes) -> None:
        if len(data) < EVENT + 32 or struct.unpack_from("=I", data, EVENT)[0] != PROC_EVENT_UID:
            return
        _pid, tgid, ruid, euid = struct.unpack_from("=IIII", data, EVENT + 16)
        taken = {uid for uid in (ruid, euid) if uid in PRIVATE_UIDS} - self.uids
        if not taken:
            return
        try:
            ours = _descends_from(tgid, self._me)
        except (OSError, ValueError, IndexError):  # gone already: nobody can say whose it was
            return
        if ours:
            self.uids |= taken
