"""kernel_relay: the stand-in a KernelManager launches, run for real as the script it is,
against a zygote's side of the socket played by the test (the real zygote's side is in
test_kernel_zygote.py): what it asks for, the exit status it passes back, signals it forwards."""
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from classgrader.in_kernel import protocol
from classgrader.kernels import kernel_relay

RELAY = kernel_relay.__file__


def zygote_side(tmp_path) -> tuple[str, socket.socket]:
    path = str(tmp_path / "z.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    return path, server


def relay_command(path, *arguments):
    return [sys.executable, "-I", "-S", RELAY, path, "conn.json", '{"workdir": "/w"}', *arguments]


def start_relay(tmp_path, *arguments):
    path, server = zygote_side(tmp_path)
    # JPY_PARENT_PID: jupyter_client names the relay's parent so, as here
    relay = subprocess.Popen(relay_command(path, *arguments), cwd=tmp_path, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "COURSE_MARK": "relayed", "JPY_PARENT_PID": str(os.getpid())})
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


def relay_of_a_worker(tmp_path):
    """A relay started by a stand-in grading worker, which tells the relay's pid and then waits."""
    path, server = zygote_side(tmp_path)
    script = ("import os, subprocess, sys, time\n"
              f"relay = subprocess.Popen({relay_command(path)!r}, stdin=subprocess.DEVNULL, start_new_session=True,"
              " env=dict(os.environ, JPY_PARENT_PID=str(os.getpid())))\n"
              "print(relay.pid, flush=True)\ntime.sleep(600)\n")
    worker = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    relay_pid = int(worker.stdout.readline())
    conn, _ = server.accept()
    socket.recv_fds(conn, 1 << 20, 3)
    server.close()
    return worker, relay_pid, conn


def ended(pid: int, seconds: float = 10) -> bool:
    """Whether `pid`, a process of another parent's, has gone (or is a zombie) within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.01)
    return False


def test_a_relay_whose_worker_is_killed_ends_so_its_kernel_does(tmp_path, covered):
    """Its connection's end is what makes the zygote kill the kernel; an orphaned relay kept a
    killed worker's kernel (a stalled one spinning) until the class run's end."""
    for kernel_started in (False, True):
        (tmp_path / str(kernel_started)).mkdir()
        worker, relay_pid, conn = relay_of_a_worker(tmp_path / str(kernel_started))
        try:
            if kernel_started:
                conn.sendall(protocol.line({"pid": 999999, "memory": None}))
                deadline = time.monotonic() + 10
                while not (tmp_path / str(kernel_started) / "conn.json.kernel").exists():
                    assert time.monotonic() < deadline, "the relay never took the kernel's start"
                    time.sleep(0.01)
            worker.kill()
            worker.wait()
            conn.settimeout(10)
            assert conn.recv(1) == b"", "the relay kept its connection to the zygote"
            assert ended(relay_pid)
        finally:
            worker.kill()
            with contextlib.suppress(ProcessLookupError):
                os.kill(relay_pid, signal.SIGKILL)
            conn.close()
    covered("a kernel's relay ends when the process that started it (a grading worker) is killed, "
            "before or after its kernel started, so the zygote ends the kernel")


def test_a_relay_whose_parent_ended_before_it_looked_asks_for_nothing(tmp_path):
    path, server = zygote_side(tmp_path)
    server.settimeout(2)
    relay = subprocess.run(relay_command(path), cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
                           env={**os.environ, "JPY_PARENT_PID": "1"}, timeout=30)
    assert relay.returncode == 1
    with pytest.raises(TimeoutError):
        server.accept()
    server.close()
