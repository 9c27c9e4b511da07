"""answer_channel: a test's questions reach a real kernel over the grader's socket, and a kernel
that hangs while answering ends in KernelLost, one that dies in no answer: never a wait without
end."""
import asyncio
import os

from jupyter_client.manager import AsyncKernelManager

from autograder import trace
from classgrader.in_kernel import answer_server, protocol
from classgrader.in_kernel.protocol import KernelLost
from classgrader.judging import answer_channel

STUDENT = """
import os
def double(x):
    return x * 2
def hangs():
    while True:
        pass
def exits():
    os._exit(3)
"""


def call(name, *args):
    return {"op": "call", "name": name, "args": trace.portable(list(args)), "kwargs": trace.portable({})}


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
                outcomes.append(trace.materialize(reply)[:2] if reply != answer_channel.NO_ANSWER else "no answer")
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
    assert outcomes[0] == ("returned", 42) and outcomes[1] == ("returned", "abab")
    assert outcomes[2] == ("TimeoutError", "alive") and outcomes[3] == ("no answer", "dead")
    assert list(tmp_path.iterdir()) == []  # each test's socket is gone with it


def test_only_a_reply_to_this_request_is_an_answer(tmp_path):
    """A kernel's end that answers with another token, or with what is not data, gives nothing."""
    import socket
    import threading
    folder_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    channel = answer_channel.AnswerChannel(folder_fd, str(tmp_path), 30)
    replies = [answer_server.encode(("another-token", ("returned", 1, [], {}))), b"not torch data"]

    def forger():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(str(tmp_path / channel.name))
            for reply in replies:
                protocol.read_frame(connection)
                protocol.send_frame(connection, reply)
    thread = threading.Thread(target=forger)
    thread.start()
    assert channel.ask(call("double", 1)) == answer_channel.NO_ANSWER
    assert channel.ask(call("double", 1)) == answer_channel.NO_ANSWER
    thread.join()
    channel.close()
    os.close(folder_fd)
