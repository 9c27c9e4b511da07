"""The grader's end of answer_server.serve: the way a test judged outside the kernel (judge.py)
asks the student's kernel its questions, one test at a time, in the protocol both ends share
(in_kernel/protocol.py).

For each test the grader listens on a Unix socket it makes in the kernel's records area (root's
own folder: the kernel can reach the socket but not replace it, and root only listens, never
connects or follows a path there), starts answer_server.serve in the kernel with one cell
execution, and talks with it over the connection: a request (protocol.Asked) and its answer
(protocol.Answered) are one frame each (a length, then JSON or torch.save bytes:
protocol.dumps), about 0.3 ms a question against 12 ms as a cell
(benchmarks/answer_channel.py). Answers are read as data only (protocol.loads), their size
first, then bounded (bounds.py) before anything walks them, and taken only in the shape
protocol.Answered gives them, under the question's own token.

The test runs in a thread of its own (judge.Judge.run), so this end blocks: a kernel that stops
answering in time ends in protocol.KernelLost; one that closes the connection gives no answer (and
the grader then asks whether the kernel is still alive)."""
import contextlib
import os
import secrets
import select
import socket
import time
from typing import Any

from classgrader.in_kernel import protocol
from classgrader.in_kernel.protocol import KernelLost, Request, dumps, loads, read_frame, send_frame

NO_ANSWER: dict[str, Any] = {"plain": None}  # portable() data of None: no answer of any kind


def timed_out(seconds: float, what: str = "this test") -> KernelLost:
    return KernelLost("TimeoutError", f"{what} ran longer than {seconds:g} s and was stopped")


def serve_code(path: str, seed: int | None = None) -> str:
    """The cell that starts the kernel's end, connecting to `path` (seeding the kernel's random
    state first, when given a seed: one message fewer than a cell of its own)."""
    seeding = f'__import__("autograder").seed_everything({int(seed)}); ' if seed is not None else ""
    return seeding + f'__import__("classgrader.in_kernel.answer_server", fromlist=["serve"]).serve(globals(), {path!r})'


class AnswerChannel:
    """One test's conversation with the student's kernel. `folder_fd` is the records area root
    owns; `kernel_path` the same folder as the kernel sees it; `seconds` the test's time limit,
    `per_answer` what one answer may take (a call of the student's code, as a cell may): a hang
    is found in that time, while a test of many quick questions is not cut short because the
    machine is busy and each hand-over slow. The test's limit counts only the time spent waiting
    for the kernel (its answers, and its end connecting), never the grader's own work on the test
    between questions: on a busy machine that work is slow too, and it is not the student's."""

    def __init__(self, folder_fd: int, kernel_path: str, seconds: float, seed: int | None = None,
                 per_answer: float | None = None):
        self.seconds, self.waited = seconds, 0.0  # seconds spent waiting for the kernel so far
        self.per_answer = per_answer or seconds
        name = f"{secrets.token_hex(8)}.sock"
        self.listener: socket.socket | None = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Bound through the folder's descriptor: no path the kernel could have changed is walked.
        self.listener.bind(f"/proc/self/fd/{folder_fd}/{name}")
        os.chmod(name, 0o666, dir_fd=folder_fd)  # the kernel's own uid must be able to connect
        self.listener.listen(1)
        # interrupt() wakes a wait for the kernel's end to connect through this pair: a listener
        # shut down instead leaves accept() returning at once without a connection, a busy loop.
        self._wake, self._woken = socket.socketpair()
        self.code = serve_code(os.path.join(kernel_path, name), seed)
        self.name, self.folder_fd, self.ended = name, folder_fd, False
        self.connection: socket.socket | None = None

    def ask(self, request: Request) -> dict[str, Any]:
        """The answer to one request, as portable() data (NO_ANSWER when none came); ValueError
        (protocol.Malformed) for a request that is not one of protocol's kinds."""
        if self.ended or self.listener is None:
            return NO_ANSWER
        token = secrets.token_hex(8)
        payload = dumps({"token": token, "request": protocol.request(request)})
        try:
            connection = self._connected()
            left = self._left()  # after connecting: the time that took is the kernel's
            connection.settimeout(min(left, self.per_answer))
            with self._waiting():
                send_frame(connection, payload)
                reply = read_frame(connection)
        except TimeoutError:
            if self.per_answer < left:
                raise timed_out(self.per_answer, "the answer to one of its questions") from None
            raise timed_out(self.seconds) from None
        except OSError:
            reply = None
        if reply is None:
            self.ended = True  # the kernel closed it (its loop ended, or the kernel died)
            return NO_ANSWER
        try:
            answered = protocol.conforming(protocol.Answered, loads(reply))
        except Exception:  # whatever the kernel sent, it is not an answer: nothing more is read
            return NO_ANSWER
        return answered["answer"] if answered["token"] == token else NO_ANSWER

    def interrupt(self) -> None:
        """Wake the test's thread wherever it waits on the kernel (used when the kernel's end
        is gone): it then gets no answer."""
        with contextlib.suppress(OSError):
            self._wake.send(b"!")
        with contextlib.suppress(OSError):
            if self.connection is not None:
                self.connection.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Tell the kernel's end to stop (an empty frame) and take the socket away; a thread
        still waiting on it is woken first."""
        with contextlib.suppress(OSError):
            self._wake.send(b"!")
        try:
            if self.connection is not None and not self.ended:
                self.connection.settimeout(1.0)
                send_frame(self.connection, b"")
        except OSError:
            pass
        for end in (self.connection, self.listener, self._wake, self._woken):
            if end is not None:
                end.close()
        self.connection, self.listener, self.ended = None, None, True
        with contextlib.suppress(OSError):
            os.unlink(self.name, dir_fd=self.folder_fd)

    def _connected(self) -> socket.socket:
        """The kernel's end, once it connects: OSError if interrupted first (no answer),
        KernelLost if the test's time runs out first."""
        if self.connection is None:
            if self.listener is None:
                raise OSError("the channel is closed")
            waiting = select.poll()  # not select(): a worker's descriptors may number over 1024
            waiting.register(self.listener, select.POLLIN)
            waiting.register(self._woken, select.POLLIN)
            left = self._left()
            with self._waiting():
                ready = {fd for fd, _ in waiting.poll(left * 1000)}
            if self._woken.fileno() in ready:
                raise OSError("interrupted: the kernel's end is gone")
            if not ready:
                raise timed_out(self.seconds)
            self.listener.settimeout(0)  # ready: the connection is there (accept does not wait)
            self.connection, _ = self.listener.accept()
        return self.connection

    @contextlib.contextmanager
    def _waiting(self):
        """A wait for the kernel, counted against the test's limit."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.waited += time.monotonic() - start

    def _left(self) -> float:
        left = self.seconds - self.waited
        if left <= 0:
            raise timed_out(self.seconds)
        return left
