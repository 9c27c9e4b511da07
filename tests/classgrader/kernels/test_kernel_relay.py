"""kernel_relay: the stand-in a KernelManager launches, run for real as the script it is,
against a zygote's side of the socket played by the test (the real zygote's side is in
test_kernel_zygote.py): what it asks for, the exit status it passes back, signals it forwards."""
import os
import signal
import socket
import subprocess
import sys
import time

from classgrader.in_kernel import protocol
from classgrader.kernels import kernel_relay

RELAY = kernel_relay.__file__


def start_relay(tmp_path, *arguments):
    path = str(tmp_path / "z.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    relay = subprocess.Popen([sys.executable, "-I", "-S", RELAY, path, "conn.json", '{"workdir": "/w"}', *arguments],
                             cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "COURSE_MARK": "relayed"})
    conn, _ = server.accept()
    message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    for fd in fds:
        os.close(fd)
    server.close()
    return relay, conn, protocol.read_line(protocol.KernelWanted, message), len(fds)


def wait_until_it_catches(pid: int, signum: int, seconds: float = 10) -> None:
    """Until the kernel's own signal mask says `pid` has a handler for `signum`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as status:
            caught = int(next(row for row in status if row.startswith("SigCgt:")).split()[1], 16)
        if caught >> (signum - 1) & 1:
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never installed a handler for signal {signum}")


def test_asks_for_a_kernel_and_exits_with_its_status(tmp_path):
    relay, conn, request, fds = start_relay(tmp_path, "--IPKernelApp.exec_lines=import x")
    assert fds == 3  # its stdin, stdout and stderr, so the kernel's output reaches the grader
    assert request["connection_file"] == str(tmp_path / "conn.json") and request["cwd"] == str(tmp_path)
    assert request["env"]["COURSE_MARK"] == "relayed" and request["jail"] == {"workdir": "/w"}
    assert request["arguments"] == ["--IPKernelApp.exec_lines=import x"]
    conn.sendall(protocol.line({"pid": 999999, "memory": None}) + protocol.line({"exit": 3 << 8}))  # exited with 3
    assert relay.wait(timeout=10) == 3
    conn.close()


def test_a_zygote_word_of_no_kind_is_a_failed_start_not_a_guess(tmp_path):
    relay, conn, _, _ = start_relay(tmp_path)
    conn.sendall(b'{"pid": "999999", "memory": null}\n')  # a pid that is no int: nothing is signalled
    assert relay.wait(timeout=10) == 1
    assert "Malformed" in relay.stderr.read()
    conn.close()


def test_a_zygote_that_hangs_up_is_a_failed_start(tmp_path):
    relay, conn, _, _ = start_relay(tmp_path)
    conn.close()
    assert relay.wait(timeout=10) == 1
    assert "kernel start failed: the kernel zygote closed the connection" in relay.stderr.read()


def test_signals_reach_the_kernel(tmp_path):
    kernel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    relay, conn, _, _ = start_relay(tmp_path)
    try:
        conn.sendall(protocol.line({"pid": kernel.pid, "memory": None}))
        wait_until_it_catches(relay.pid, signal.SIGTERM)  # its handlers come once it knows the pid
        relay.send_signal(signal.SIGTERM)
        assert kernel.wait(timeout=10) == -signal.SIGTERM
        conn.sendall(protocol.line({"exit": signal.SIGTERM}))
        assert relay.wait(timeout=10) == (-signal.SIGTERM) % 256
    finally:
        kernel.kill()
        relay.kill()
        conn.close()
