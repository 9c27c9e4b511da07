"""answer_channel: a test's questions reach a real kernel through its stdin channel, and a
kernel that hangs or dies while answering ends in KernelLost, never in a wait without end."""
import asyncio
import os

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError

from autograder import trace
from classgrader import answer_channel, verify
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


async def conversation(records, limits):
    """What the kernel answered to each question, or how it was lost."""
    manager = AsyncKernelManager()
    await manager.start_kernel(env={**os.environ, "COURSE_TRACE_DIR": str(records)})
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
            channel = answer_channel.AnswerChannel(
                client, lambda: set(os.listdir(records)),
                lambda before: verify.read_records([str(records / n) for n in os.listdir(records) if n not in before]),
                alive, seconds)
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


def test_questions_are_answered_and_a_lost_kernel_is_reported(tmp_path):
    # Generous limits where an answer is due (a loaded machine is slow), a short one for the hang.
    outcomes = asyncio.run(conversation(tmp_path, limits=(60, 60, 2, 60)))
    assert outcomes[0] == ("returned", 42) and outcomes[1] == ("returned", "abab")
    assert outcomes[2] == "TimeoutError" and outcomes[3] == "KernelDied"
