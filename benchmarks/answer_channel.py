"""How long one question of a judged test takes to the student's kernel and back: over the
grader's socket (answer_channel.py) against the same call run as a cell (a silent execute
through Jupyter's messages, waiting for its reply), in one plain kernel on this machine.

    .venv/bin/python benchmarks/answer_channel.py [--questions N]

Prints the median per question for each way, and the load average while it ran."""
import argparse
import asyncio
import os
import statistics
import tempfile
import time

from jupyter_client.manager import AsyncKernelManager

from autograder import trace
from classgrader.judging import answer_channel, remote

STUDENT = "def double(x):\n    return x * 2\n"


async def measure(questions: int) -> dict[str, float]:
    manager = AsyncKernelManager()
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)
    await client.execute_interactive(STUDENT, timeout=60)
    folder = tempfile.mkdtemp()
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    question = {"op": "call", "name": "double", "args": trace.portable([21]), "kwargs": trace.portable({}),
                **remote.caller_state()}
    try:
        channel = answer_channel.AnswerChannel(folder_fd, folder, 60)
        client.execute(channel.code, silent=True)
        await asyncio.to_thread(channel.ask, question)  # the connection is made on the first
        socket_times = []
        for _ in range(questions):
            start = time.perf_counter()
            await asyncio.to_thread(channel.ask, question)
            socket_times.append(time.perf_counter() - start)
        channel.close()
        jupyter_times = []
        for _ in range(questions):
            start = time.perf_counter()
            await client.execute_interactive("double(21)", silent=True, timeout=60)
            jupyter_times.append(time.perf_counter() - start)
    finally:
        os.close(folder_fd)
        client.stop_channels()
        await manager.shutdown_kernel(now=True)
    return {"socket": statistics.median(socket_times), "as a cell": statistics.median(jupyter_times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    times = asyncio.run(measure(parser.parse_args().questions))
    load = os.getloadavg()[0]
    for way, seconds in times.items():
        print(f"{way:9} {seconds * 1000:.2f} ms a question (median; load average {load:.1f}, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
