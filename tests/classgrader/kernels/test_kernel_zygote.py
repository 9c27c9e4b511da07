"""kernel_zygote + kernel_relay: a kernel lives exactly as long as the relay that stands in for
it, so a grader killed at any moment leaves no kernel running student code."""
import asyncio
import os
import signal
import time

from classgrader.kernels.kernel_zygote import Zygote
from classgrader.kernels.warm_kernel import ZYGOTE_ENV, WarmKernelManager


def alive(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().split(") ")[1][0] != "Z"
    except OSError:
        return False


async def run_in_a_forked_kernel(folder, code: str, shut_down: bool) -> tuple[int, list[str]]:
    """(the relay's pid, what `code` printed) in a kernel of the zygote named in the environment;
    the kernel is left running unless `shut_down`."""
    km = WarmKernelManager()
    await km.start_kernel(cwd=str(folder))
    client = km.client()
    client.start_channels()
    await client.wait_for_ready(timeout=120)
    outputs = []
    reply = await client.execute_interactive(code, timeout=30, output_hook=outputs.append)
    assert reply["content"]["status"] == "ok"
    client.stop_channels()
    relay = km.provisioner.process.pid
    if shut_down:
        await km.shutdown_kernel(now=True)
    return relay, [m["content"]["text"] for m in outputs if m["msg_type"] == "stream"]


def test_killing_the_relay_kills_its_kernel(tmp_path, monkeypatch, covered):
    zygote = Zygote()
    monkeypatch.setenv(ZYGOTE_ENV, zygote.socket_path)
    try:
        relay, printed = asyncio.run(run_in_a_forked_kernel(tmp_path, "import os; print(os.getpid())", False))
        kernel = int(printed[0])
        assert alive(kernel) and kernel != relay
        os.kill(relay, signal.SIGKILL)
        deadline = time.time() + 10
        while alive(kernel) and time.time() < deadline:
            time.sleep(0.05)
        assert not alive(kernel), "the kernel outlived its relay"
        assert zygote.process.poll() is None, "the zygote must keep serving"
        deadline = time.time() + 5
        while os.path.exists(f"/proc/{kernel}") and time.time() < deadline:
            time.sleep(0.05)
        assert not os.path.exists(f"/proc/{kernel}"), "the killed kernel was left a zombie"
        covered("a relay killed with SIGKILL takes its forked kernel with it, which is collected; "
                "the zygote serves on")
    finally:
        zygote.stop()


def test_kernels_asked_for_while_the_zygote_loads_start_once_it_is_ready(tmp_path, monkeypatch, covered):
    """A class run starts its workers without waiting for the zygote's imports."""
    zygote = Zygote(wait=False)
    monkeypatch.setenv(ZYGOTE_ENV, zygote.socket_path)
    try:
        assert os.path.exists(zygote.socket_path) and zygote.failed() is None
        assert asyncio.run(run_in_a_forked_kernel(tmp_path, "print(6 * 7)", True))[1] == ["42\n"]
        assert zygote.process.stdout.readline().strip() == "ready"
        covered("a kernel asked for while the zygote still imports torch starts once it is ready")
    finally:
        zygote.stop()


def test_a_request_of_no_kind_starts_nothing_and_the_zygote_serves_on(tmp_path):
    import socket
    zygote = Zygote()
    try:
        for forged in (b"not json\n", b'{"connection_file": "/x", "cwd": "/", "env": {}, "jail": null}\n',
                       b'{"connection_file": "/x", "cwd": "/", "env": {}, "jail": null, "arguments": "-f"}\n'):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as relay:
                relay.connect(zygote.socket_path)
                with open(os.devnull) as null:
                    socket.send_fds(relay, [forged], [null.fileno()] * 3)
                relay.settimeout(30)
                assert relay.recv(1024) == b""  # hung up on: no KernelStarted, so no kernel
        assert zygote.process.poll() is None
    finally:
        zygote.stop()


def test_a_zygote_whose_grader_is_killed_leaves_nothing_in_tmp():
    """A grader killed with SIGKILL runs no clean-up; its zygote gets SIGTERM (die_with_parent) and
    removes its socket and the socket's folder itself."""
    zygote = Zygote()
    try:
        assert os.path.exists(zygote.socket_path)
        zygote.process.send_signal(signal.SIGTERM)  # what the grader's death sends it
        assert zygote.process.wait(timeout=60) == 0
        assert not os.path.exists(zygote.socket_path) and not os.path.exists(zygote.dir)
    finally:
        zygote.stop()


def test_a_zygote_that_fails_says_so(tmp_path):
    zygote = Zygote(socket_path=str(tmp_path / "no-such-folder" / "zygote.sock"), wait=False)
    zygote.process.wait(timeout=60)
    assert "the kernel zygote stopped" in zygote.failed()
    zygote.stop()
