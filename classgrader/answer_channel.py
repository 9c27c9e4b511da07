"""The grader's end of answer_server.serve_loop: the way a test judged outside the kernel
(judge.py) asks the student's kernel its questions, one test at a time.

The loop is started with one cell execution; each request then goes as the answer to the
kernel's input() prompt on Jupyter's stdin channel, and the reply comes back as the text of the
kernel's next prompt. A request costs a message each way, no cell execution and no file.
Replies are decoded as data only (torch.load(weights_only=True)), size first.

Everything the kernel does wrong ends in judge.KernelLost (it died, or the test ran out of
time), or in no answer (the loop ended, or sent back what is not a reply to this request)."""
import base64
import io
import secrets
import time
from queue import Empty

from nbclient.exceptions import DeadKernelError
from nbclient.util import ensure_async

from .judge import KernelLost

SERVE_LOOP = '__import__("classgrader.answer_server", fromlist=["serve_loop"]).serve_loop(globals())'
NO_ANSWER = {"plain": None}
MAX_REPLY = 96 * 2**20  # characters of base64: about 64 MiB of data


def timed_out(seconds) -> KernelLost:
    return KernelLost("TimeoutError", f"this test ran longer than {seconds} s and was stopped; "
                                      "later cells were graded in a fresh kernel")


async def connect_stdin(kc, timeout: float) -> None:
    """Make sure the kernel can reach the client's stdin channel before a test relies on it: a
    kernel drops an input() prompt sent before that connection is up (about one kernel start in
    fifteen), and would then wait for an answer forever. One input() is answered, blindly when
    its prompt does not come (a late answer is read, an early one discarded), until it returns."""
    msg_id = await ensure_async(kc.execute("input()", silent=True, store_history=False, allow_stdin=True))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            await ensure_async(kc.stdin_channel.get_msg(timeout=0.05))
        except Empty:
            pass
        kc.input("")
        try:
            msg = await ensure_async(kc.shell_channel.get_msg(timeout=0.1))
        except Empty:
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            return
    raise RuntimeError("the grading kernel's stdin channel does not connect")


def _decoded(prompt: str | None, token: str):
    """The answer in a reply prompt, as data, if it answers the request `token`; else NO_ANSWER."""
    if not prompt or len(prompt) > MAX_REPLY:
        return NO_ANSWER
    import torch
    try:
        data = torch.load(io.BytesIO(base64.b64decode(prompt, validate=True)), weights_only=True)
        pair = data["tuple"]
        if pair[0] == {"plain": token}:
            return pair[1]
    except Exception:  # whatever the kernel sent, it is not an answer: nothing more is read
        pass
    return NO_ANSWER


class AnswerChannel:
    """One test's conversation with the student's kernel through client `kc`. `check_alive()`
    raises DeadKernelError when the kernel is gone; `seconds` is the test's whole time limit."""

    def __init__(self, kc, check_alive, seconds: float):
        self.kc, self.check_alive = kc, check_alive
        self.seconds, self.deadline = seconds, time.monotonic() + seconds
        self.serving, self.ready = None, False  # the loop's cell, and whether it waits for a request

    async def ask(self, request: dict):
        """The reply to one request, as portable() data (NO_ANSWER when none came)."""
        token = secrets.token_hex(8)
        buffer = io.BytesIO()
        import torch  # loaded by the grader long before: here only to keep the module light
        torch.save({**request, "token": token}, buffer)
        if self.serving is None:
            self.serving = await ensure_async(self.kc.execute(SERVE_LOOP, silent=True, store_history=False,
                                                              allow_stdin=True))
        if not self.ready and await self._prompted() is None:
            return NO_ANSWER
        self.ready = False
        self.kc.input(base64.b64encode(buffer.getvalue()).decode("ascii"))
        prompt = await self._prompted()
        self.ready = prompt is not None
        return _decoded(prompt, token)

    async def close(self) -> None:
        """End the loop with an empty request and wait for its cell to finish."""
        if self.serving is None:
            return
        if self.ready:
            self.kc.input("")
        while self.serving is not None:
            if time.monotonic() > self.deadline:
                raise timed_out(self.seconds)
            if not await self._loop_ended(0.2):
                await self._alive()

    async def _prompted(self) -> str | None:
        """Wait for the loop's next input() prompt: its text when it came, None when the loop's
        cell ended instead."""
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise timed_out(self.seconds)
            try:
                msg = await ensure_async(self.kc.stdin_channel.get_msg(timeout=min(left, 0.2)))
            except Empty:
                await self._alive()
                if await self._loop_ended(0):
                    return None
                continue
            if msg["msg_type"] == "input_request" and msg["parent_header"].get("msg_id") == self.serving:
                return str(msg["content"].get("prompt", ""))

    async def _loop_ended(self, wait: float) -> bool:
        try:
            msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=wait))
        except Empty:
            return False
        if msg["parent_header"].get("msg_id") == self.serving:
            self.serving = None
            return True
        return False

    async def _alive(self) -> None:
        try:
            await self.check_alive()
        except DeadKernelError:
            raise KernelLost("KernelDied", "the kernel stopped while answering this test (it crashed, exited, "
                                           "or ran out of memory); later cells were graded in a fresh kernel")
