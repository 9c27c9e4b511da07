"""kernel_zygote + kernel_relay: a kernel lives exactly as long as the relay that stands in for
it, so a grader killed at any moment leaves no kernel running student code."""
import asyncio
import os
import signal
import time

from autograder.kernel_zygote import Zygote
from autograder.warm_kernel import WarmKernelManager, ZYGOTE_ENV


def alive(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_killing_the_relay_kills_its_kernel(tmp_path, monkeypatch, covered):
    zygote = Zygote()
    monkeypatch.setenv(ZYGOTE_ENV, zygote.socket_path)

    async def kernel_pid_and_relay():
        km = WarmKernelManager()
        await km.start_kernel(cwd=str(tmp_path))
        client = km.client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive("import os; print(os.getpid())", timeout=30,
                                                 output_hook=lambda msg: found.append(msg))
        client.stop_channels()
        return km.provisioner.process.pid, reply
    try:
        found = []
        relay, reply = asyncio.run(kernel_pid_and_relay())
        kernel = int(next(m["content"]["text"] for m in found if m["msg_type"] == "stream"))
        assert reply["content"]["status"] == "ok" and alive(kernel) and kernel != relay
        os.kill(relay, signal.SIGKILL)
        deadline = time.time() + 10
        while alive(kernel) and time.time() < deadline:
            time.sleep(0.05)
        assert not alive(kernel), "the kernel outlived its relay"
        assert zygote.process.poll() is None, "the zygote must keep serving"
        covered("a relay killed with SIGKILL takes its forked kernel with it; the zygote serves on")
    finally:
        zygote.stop()
