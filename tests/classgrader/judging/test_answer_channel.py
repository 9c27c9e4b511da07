"""answer_channel: a test's questions reach a real kernel over the grader's socket, and a kernel
that hangs while answering ends in KernelLost, one that dies in no answer: never a wait without
end."""
import asyncio
import contextlib
import os
import threading
import time

import pytest
from jupyter_client.manager import AsyncKernelManager

from autograder import trace
from classgrader.in_kernel import protocol
from classgrader.in_kernel.protocol import KernelLost
from classgrader.judging import answer_channel
from classgrader.judging.remote import caller_state

STUDENT = """
import os
import threading
import time
def double(x):
    return x * 2
def hangs():
    while True:
        pass
def exits():
    os._exit(3)
"""


def call(name, *args):
    return {"op": "call", "name": name, "args": trace.portable(list(args)), "kwargs": trace.portable({}),
            "grad": True, "inference": False, "rng": caller_state()["rng"]}


async def conversation(folder, limits):
    """What the kernel answered to each question, or how it was lost."""
    manager = AsyncKernelManager()
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    outcomes = []
    try:
        await client.execute_interactive(STUDENT, timeout=60)
        questions = (call("double", 21), call("double", "ab"), call("hangs"), call("exits"))
        for question, seconds in zip(questions, limits):
            channel = answer_channel.AnswerChannel(folder_fd, str(folder), seconds)
            client.execute(channel.code, silent=True)
            try:
                reply = await asyncio.to_thread(channel.ask, question)
                answer = protocol.answer(trace.materialize(reply)) if reply != answer_channel.NO_ANSWER else None
                outcomes.append(("called", answer["result"]) if answer else "no answer")
            except KernelLost as lost:
                outcomes.append(lost.args[0])
            channel.close()
            if outcomes[-1] == "no answer":  # the connection closes a moment before the process is gone
                for _ in range(100):
                    if not await manager.is_alive():
                        break
                    await asyncio.sleep(0.1)
            if not await manager.is_alive() or outcomes[-1] == "TimeoutError":
                outcomes[-1] = (outcomes[-1], "alive" if await manager.is_alive() else "dead")
                await manager.restart_kernel(now=True)
                await client.wait_for_ready(timeout=60)
                await client.execute_interactive(STUDENT, timeout=60)
    finally:
        os.close(folder_fd)
        client.stop_channels()
        await manager.shutdown_kernel(now=True)
    return outcomes


def test_questions_are_answered_and_a_lost_kernel_is_reported(tmp_path):
    # Generous limits where an answer is due (a loaded machine is slow), a short one for the hang.
    outcomes = asyncio.run(conversation(tmp_path, limits=(60, 60, 2, 60)))
    assert outcomes[0] == ("called", 42) and outcomes[1] == ("called", "abab")
    assert outcomes[2] == ("TimeoutError", "alive") and outcomes[3] == ("no answer", "dead")
    assert list(tmp_path.iterdir()) == []  # each test's socket is gone with it


def forged_kernel(tmp_path, replies, seconds=30, slow=0.0):
    """A kernel's end that answers each question with the next of `replies` (a function of the
    question's token), `slow` seconds after it came; the channel that asks it (a test of
    `seconds`), and its thread."""
    import socket
    import threading
    import time
    folder_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    channel = answer_channel.AnswerChannel(folder_fd, str(tmp_path), seconds)

    def forger():  # a question the channel gave up on finds its connection closed: no answer sent
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection, contextlib.suppress(OSError):
            connection.connect(str(tmp_path / channel.name))
            for reply in replies:
                token = protocol.asked(protocol.loads(protocol.read_frame(connection)))["token"]
                time.sleep(slow)
                protocol.send_frame(connection, reply(token))
    thread = threading.Thread(target=forger)
    thread.start()
    return channel, thread, folder_fd


def answered(token, answer) -> bytes:
    return protocol.dumps({"token": token, "answer": trace.portable(answer)})


def test_only_an_answer_to_this_request_in_the_answers_shape_is_an_answer(tmp_path):
    """Another token, what is not data, a payload of another shape: no answer. The shape of the
    answer inside is the reader's to check (remote.answer_of): the channel hands it on as data."""
    good = {"kind": "called", "result": 1, "args": [], "kwargs": {}, "call": None}
    replies = [lambda token: answered("another-token", good),
               lambda token: b"not torch data",
               lambda token: protocol.dumps(trace.portable((token, good))),   # a pair, not an Answered
               lambda token: protocol.dumps({"token": token, "answer": "1"}),  # an answer that is no record
               lambda token: protocol.dumps({"token": token, "answer": {}, "also": 1}),
               lambda token: answered(token, good)]
    channel, thread, folder_fd = forged_kernel(tmp_path, replies)
    outcomes = [channel.ask(call("double", 1)) for _ in replies]
    thread.join()
    channel.close()
    os.close(folder_fd)
    assert outcomes[:-1] == [answer_channel.NO_ANSWER] * (len(replies) - 1)
    assert protocol.answer(trace.materialize(outcomes[-1])) == good


def test_a_question_of_no_kind_is_never_sent(tmp_path):
    folder_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    channel = answer_channel.AnswerChannel(folder_fd, str(tmp_path), 30)
    try:
        for forged in ({"op": "exec", "code": "import os"}, {"op": "call", "name": "double"}):
            with pytest.raises(protocol.Malformed):
                channel.ask(forged)
        assert channel.connection is None  # nothing was sent: the kernel's end was never waited for
    finally:
        channel.close()
        os.close(folder_fd)


def test_the_test_s_limit_counts_the_kernel_s_answers_not_the_grader_s_own_work(tmp_path):
    """Fast or slow, the same verdict: a test whose own work here is slow (a busy machine) is not
    cut short while its kernel answers at once; answers that together take longer than the test's
    limit are a hang all the same, however quickly each came."""
    import time
    good = {"kind": "called", "result": 1, "args": [], "kwargs": {}, "call": None}
    replies = [lambda token: answered(token, good)] * 3
    channel, thread, folder_fd = forged_kernel(tmp_path, replies, seconds=1.0)
    outcomes = []
    for _ in replies:
        outcomes.append(protocol.answer(trace.materialize(channel.ask(call("double", 1))))["result"])
        time.sleep(0.6)  # the grader's own work between questions: 1.8 s in all, past the test's 1 s
    thread.join()
    channel.close()
    os.close(folder_fd)
    assert outcomes == [1, 1, 1]

    channel, thread, folder_fd = forged_kernel(tmp_path, replies, seconds=1.0, slow=0.4)
    try:
        channel.ask(call("double", 1))
        channel.ask(call("double", 1))  # 0.8 s of the test's 1 s waited for
        with pytest.raises(KernelLost, match="ran longer than 1 s"):
            channel.ask(call("double", 1))
        assert channel.waited >= 1.0
    finally:
        channel.close()
        thread.join()
        os.close(folder_fd)


def test_a_test_waiting_for_a_kernel_that_never_connects_is_woken_without_spinning(tmp_path):
    """The kernel's end gone before it connected (its cell ended, or the kernel died): interrupt()
    ends the test's wait with no answer at once, and the wait costs no CPU meanwhile."""
    folder_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    channel = answer_channel.AnswerChannel(folder_fd, str(tmp_path), seconds=600)
    waited = {}

    def ask():
        cpu = time.thread_time()
        waited["reply"] = channel.ask(call("double", 21))
        waited["cpu"] = time.thread_time() - cpu

    asking = threading.Thread(target=ask)
    try:
        asking.start()
        asking.join(0.5)  # mostly waiting by now; if not, it finds the wake-up already there
        channel.interrupt()
        asking.join(60)
        assert not asking.is_alive(), "interrupt() did not end the wait"
        assert waited["reply"] == answer_channel.NO_ANSWER and channel.ended
        assert waited["cpu"] < 0.3, f"the wait spun: {waited['cpu']:.2f} s of CPU"
    finally:
        channel.close()
        os.close(folder_fd)
