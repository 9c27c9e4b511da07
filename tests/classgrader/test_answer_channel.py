"""answer_channel: a test's questions reach a real kernel through its stdin channel, and a
kernel that hangs or dies while answering ends in KernelLost, never in a wait without end."""
import asyncio

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError

from autograder import trace
from classgrader import answer_channel
from classgrader.judge import KernelLost

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


async def conversation(limits):
    """What the kernel answered to each question, or how it was lost."""
    manager = AsyncKernelManager()
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    outcomes = []
    try:
        await answer_channel.connect_stdin(client, 60)
        await client.execute_interactive(STUDENT, timeout=60)

        async def alive():
            if not await manager.is_alive():
                raise DeadKernelError("dead")
        questions = (call("double", 21), call("double", "ab"), call("hangs"), call("exits"))
        for question, seconds in zip(questions, limits):
            channel = answer_channel.AnswerChannel(client, alive, seconds)
            try:
                outcomes.append(trace.materialize(await channel.ask(question))[:2])
                await channel.close()
            except KernelLost as lost:
                outcomes.append(lost.args[0])
                await manager.restart_kernel(now=True)
                await client.wait_for_ready(timeout=60)
                await answer_channel.connect_stdin(client, 60)
                await client.execute_interactive(STUDENT, timeout=60)
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)
    return outcomes


def test_questions_are_answered_and_a_lost_kernel_is_reported():
    # Generous limits where an answer is due (a loaded machine is slow), a short one for the hang.
    outcomes = asyncio.run(conversation(limits=(60, 60, 2, 60)))
    assert outcomes[0] == ("returned", 42) and outcomes[1] == ("returned", "abab")
    assert outcomes[2] == "TimeoutError" and outcomes[3] == "KernelDied"


def test_only_a_reply_to_this_request_is_an_answer():
    from classgrader import answer_server
    reply = answer_server.encode(("abc", ("returned", 1, [], {})))
    assert answer_channel._decoded(reply, "abc") != answer_channel.NO_ANSWER
    assert answer_channel._decoded(reply, "xyz") == answer_channel.NO_ANSWER   # another request's
    assert answer_channel._decoded("not base64!", "abc") == answer_channel.NO_ANSWER
    assert answer_channel._decoded("A" * (answer_channel.MAX_REPLY + 4), "abc") == answer_channel.NO_ANSWER
