"""Warm start: one process imports torch, IPython and the course's helpers once; every grading
kernel is a fork of it, so no kernel pays the ~5 s of start-up and `import torch` again.

The zygote never runs student code: it only forks. Each fork becomes one kernel, confined by
`classgrader.kernels.sandbox` when a jail is given (then the kernel is PID 1 of a namespace of its own,
and the fork only stands in for it), and dies with its run. Nothing a kernel does can
reach the zygote or the next kernel, because each starts from the same untouched image.

A jailed kernel's resident memory is bounded by a memory cgroup of its own (cgroup.py), made
here before the fork and removed once the kernel has ended; going over it kills that kernel
only. Where the machine has a GPU, each kernel gets a share of its memory (GPU_SHARE_ENV,
applied by the kernel when it first initialises CUDA): KERNELS_AT_ONCE_ENV kernels share it.

Protocol, one Unix-socket connection per kernel (opened by `kernel_relay.py`), its messages
in_kernel/protocol.py's, one JSON line each:
  relay -> zygote   KernelWanted (with the relay's stdin, stdout and stderr)
  zygote -> relay   KernelStarted once forked, then KernelEnded when the kernel ends.
If the relay's connection closes first (it was killed), the zygote kills the kernel.
"""
import contextlib
import ctypes
import gc
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from classgrader.in_kernel import protocol
from classgrader.kernels import accelerator, cgroup

PR_SET_PDEATHSIG = 1
ZYGOTE_ENV = "COURSE_ZYGOTE"  # a running zygote's socket, shared by every worker of a class run
KERNELS_AT_ONCE_ENV = "COURSE_KERNELS_AT_ONCE"  # how many kernels may run at once (default: cores + 1)
GPU_SHARE_ENV = "COURSE_GPU_MEMORY_FRACTION"  # in a kernel: the fraction of each GPU's memory it may take
GPU_RESERVE = 0.1  # of each GPU's memory, left to the graders' own inputs and the CUDA contexts
ZYGOTE_FOLDER_PREFIX = "course-zygote-"  # the folder a Zygote makes in /tmp for its socket


def die_with_parent(signum: int) -> None:
    """Linux: get `signum` when the parent goes, so a killed grader leaves no kernels running."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum)

# Imported here, before any fork, so every kernel starts with them already loaded: the kernel
# and everything starting an IPython kernel imports (its debugger alone takes 80 ms).
PRELOAD = ["torch", "numpy", "IPython", "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell",
           "ipykernel.debugger", "IPython.core.completerlib", "IPython.core.debugger", "IPython.core.oinspect",
           "IPython.extensions.storemagic", "sqlite3", "tornado.platform.asyncio",
           "autograder", "classgrader.in_kernel.integrity", "autograder.trace"]


class Zygote:
    """A running zygote process, as seen by the grader: start it, pass `socket_path` on, stop it.
    Its socket accepts as soon as the process starts; kernels asked for while it is still
    importing are forked once it is done. wait=False returns at once (check `failed()`)."""

    def __init__(self, socket_path: str | None = None, wait: bool = True, kernels_at_once: int | None = None):
        # A folder of its own for the socket only where none is given: an unused one stayed in /tmp
        # when the grader never stopped the zygote (one that failed to start).
        self.dir = None if socket_path else tempfile.mkdtemp(prefix=ZYGOTE_FOLDER_PREFIX)
        self.socket_path = socket_path or os.path.join(self.dir or "", "zygote.sock")
        env = dict(os.environ, **({KERNELS_AT_ONCE_ENV: str(kernels_at_once)} if kernels_at_once else {}))
        self.process = subprocess.Popen([sys.executable, "-m", "classgrader.kernels.kernel_zygote", self.socket_path],
                                        stdout=subprocess.PIPE, text=True, env=env)
        self._wait_for_socket()
        if wait:
            # The zygote prints "ready" once its imports are done.
            line = self.process.stdout.readline() if self.process.stdout else ""
            if line.strip() != "ready":
                self.process.kill()
                raise RuntimeError(f"the kernel zygote did not start (said {line!r})")

    def _wait_for_socket(self) -> None:
        """The socket appears within milliseconds (before any import); relays need it to exist."""
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket_path) and self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)

    def failed(self) -> str | None:
        """Why the zygote is gone, or None while it runs."""
        code = self.process.poll()
        return None if code is None else f"the kernel zygote stopped (exit status {code}); see its error above"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        with contextlib.suppress(OSError):  # the zygote may have removed it already
            os.unlink(self.socket_path)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)  # this grader's own folder, nothing a student wrote


def _become_kernel(request: protocol.KernelWanted) -> None:
    """In the forked child: confine, then run an IPython kernel on the given connection file."""
    from classgrader.kernels import sandbox
    with open(request["connection_file"]) as file:  # read before losing the rights
        connection = json.load(file)
    os.environ.clear()
    os.environ.update(request["env"])
    # ipykernel exits when its parent is not JPY_PARENT_PID; a forked kernel's parent is the
    # zygote, and the zygote already ends the kernel when its relay goes.
    os.environ.pop("JPY_PARENT_PID", None)
    os.environ.pop(GPU_SHARE_ENV, None)
    if request.get("jail"):
        jail = jail_of(request)
        # Asked before entering: the jail shows no cgroup file system.
        gets_gpu = bool(sandbox.given_accelerator(jail)[0]) and sandbox.memory_bounded(jail.limits)
        sandbox.enter(jail)
        if gets_gpu:
            os.environ[GPU_SHARE_ENV] = f"{gpu_share():.4f}"
    elif accelerator.machine()[0]:  # unconfined, it sees every GPU anyway
        os.environ[GPU_SHARE_ENV] = f"{gpu_share():.4f}"
    os.chdir(request["cwd"])
    die_with_parent(signal.SIGKILL)  # after the sandbox: changing user clears this setting
    # The kernel reads its connection file after confinement, as the sandbox user: give it a copy.
    # In the jail's private /tmp: the work area may be full, or hold a link by that name.
    private = os.path.join("/tmp" if request.get("jail") else request["cwd"], f".kernel-{os.getpid()}.json")
    with open(private, "w") as handle:
        json.dump(connection, handle)
    from ipykernel.kernelapp import IPKernelApp
    arguments = list(request["arguments"])
    # parent_handle=1: no parent polling (the zygote ends a kernel whose relay goes) and none of
    # the banners ipykernel prints when started by hand.
    # The kernel's own exec line (autograder.grading_kernel) comes with the caller's arguments,
    # from nbgrader_config.py, the one place it is set.
    # ignore_cwd: the work folder is not on the import path, so no file a student ships or writes
    # there is imported in place of a module (classgrader/class_run/code_scan.py reads the imports).
    defaults = ["--HistoryManager.hist_file=:memory:", "--IPKernelApp.parent_handle=1", "--IPKernelApp.ignore_cwd=True"]
    # traitlets rejects an option given twice, so the caller's own settings win.
    arguments += [d for d in defaults if d.split("=")[0] not in {a.split("=")[0] for a in arguments}]
    take_a_share_of_the_gpu()
    app = IPKernelApp.instance()
    app.initialize(["-f", private, *arguments])
    os.unlink(private)  # read; nothing else needs it
    if os.environ.get("COURSE_TRACE_DIR"):
        # Every cell then ends with the integrity audit and its checks' records written out.
        from classgrader.in_kernel import integrity
        if app.shell is None:
            raise RuntimeError("the kernel has no shell to audit")
        app.shell.events.register("post_run_cell", integrity.after_cell)
    app.start()


def jail_of(request: protocol.KernelWanted):
    """The sandbox.Jail a request's "jail" (work_area.jail_spec's dict) describes."""
    from classgrader.kernels import sandbox
    spec = dict(request["jail"] or {})
    limits = sandbox.Limits(**spec.pop("limits", {}))
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()}
    return sandbox.Jail(**fields, limits=limits)


def gpu_share() -> float:
    """The fraction of a GPU's memory one kernel may take: what the graders leave, split
    between the kernels that may run at once."""
    at_once = int(os.environ.get(KERNELS_AT_ONCE_ENV) or (os.cpu_count() or 1) + 1)
    return (1 - GPU_RESERVE) / max(1, at_once)


def take_a_share_of_the_gpu() -> None:
    """In a kernel: cap PyTorch's allocator on each GPU at GPU_SHARE_ENV of its memory, when
    CUDA is first initialised (by the kernel itself, never here: a kernel that uses no GPU pays
    nothing). Past it, the student's cell gets torch.OutOfMemoryError; other kernels go on. The
    cap is PyTorch's allocator's, in the kernel's own process: it keeps honest and careless code
    to its share, not code that sets another fraction itself."""
    share = os.environ.get(GPU_SHARE_ENV)
    if not share:
        return
    import torch

    def cap() -> None:
        for index in range(torch.cuda.device_count()):
            torch.cuda.set_per_process_memory_fraction(float(share), index)
    later = getattr(torch.cuda, "_lazy_call", None)  # PyTorch's own hook for work at its lazy CUDA start
    if later is None:  # a kernel must start all the same; gpu_check's probe shows the cap missing
        print(f"kernel: this PyTorch has no torch.cuda._lazy_call: the GPU share {share} is not applied",
              file=sys.stderr, flush=True)
        return
    later(cap)


def memory_group(request: protocol.KernelWanted):
    """A memory cgroup for the jailed kernel `request` asks for, or None (no jail, or no
    controller here: then the sandbox bounds its address space instead)."""
    if not request.get("jail") or cgroup.unavailable_reason() is not None:
        return None
    return cgroup.MemoryLimit.create(jail_of(request).limits.memory_bytes, "kernel")


def _fork_kernel(request: protocol.KernelWanted, stdio: list[int], group=None) -> int:
    zygote = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        if group is not None:  # first of all, before the kernel allocates anything
            group.add()
        # Die with the zygote, and close the race where it died before the request to: a
        # grader killed mid-fork must not leave this kernel running.
        die_with_parent(signal.SIGKILL)
        if os.getppid() != zygote:
            os._exit(1)
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        os.setsid()
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.closerange(3, 65536)  # the zygote's listening socket and every relay's connection
        _become_kernel(request)
        code = 0
    except BaseException as error:  # the kernel never started: say why on the relay's stderr
        print(f"kernel start failed: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
    finally:
        os._exit(code)


def prepare() -> None:
    """Everything the zygote loads and runs before it forks. It must never initialise CUDA: a
    process that has cannot fork children that use it, and every kernel is a fork. So device
    detection asks NVML instead of the CUDA runtime (PyTorch's fork-safe check), and the warm-up
    puts nothing on an accelerator; each kernel initialises CUDA itself, on first use."""
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # else debugpy warns about frozen modules
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # read at each is_available()
    for name in PRELOAD:
        __import__(name)
    warm_up()
    # Found once here, for every kernel: the GPU's nodes and driver, and whether cgroups work.
    found, why_not = accelerator.machine()
    bound = cgroup.unavailable_reason()
    release_nvml()
    for reason in filter(None, [why_not, found and bound and f"The GPU is not given to grading kernels: {bound}"]):
        print(f"kernel zygote: {reason}", file=sys.stderr, flush=True)


def release_nvml() -> None:
    """End NVML in this process, however many times it was started. PyTorch's NVML-based device
    check starts it and never ends it; a kernel forked with it started (its handles then closed
    with the zygote's other descriptors) cannot start it again, and PyTorch asks it for every
    out-of-memory message: the student would get an internal assertion about nvmlInit instead of
    torch.OutOfMemoryError."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return
    for _ in range(64):  # each start is counted; once all are ended it says NVML_ERROR_UNINITIALIZED
        if nvml.nvmlShutdown() != 0:
            return


def warm_up() -> None:
    """autograder.warm_up's torch, the grading device asked once, and IPython's first traceback
    (which loads its highlighter and reads the helpers' source), done before the fork, not in each
    kernel."""
    import torch
    from IPython.core.ultratb import AutoFormattedTB

    from autograder import GradingError, check_tensor, grading_device
    from autograder.warm_up import exercise_torch
    exercise_torch()
    grading_device()  # every notebook's start_grading() asks; fork-safe once prepare() set NVML
    try:
        check_tensor(torch.zeros(2), torch.ones(2), name="warm-up")
    except GradingError:
        AutoFormattedTB(mode="Context").structured_traceback(*sys.exc_info())


def serve(socket_path: str) -> None:
    # The SIGTERM an ending grader sends (die_with_parent) exits through the clean-up below, at any
    # point after the socket is bound: during the imports too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    die_with_parent(signal.SIGTERM)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    zygote = os.getpid()
    try:
        # Listening before the imports: relays that connect meanwhile wait in the backlog, so
        # graders can start (and load their own imports) while this one loads torch.
        listener.listen(64)
        prepare()
        # Kernels share the zygote's memory until they write to it. A garbage collection touches
        # every object it tracks, copying each page it is on: frozen objects are never scanned.
        gc.collect()
        gc.freeze()
        print("ready", flush=True)
        _fork_kernels_for(listener)
    finally:
        if os.getpid() == zygote:  # not in a kernel forked from it (those end through os._exit anyway)
            _remove_socket(socket_path)


def _fork_kernels_for(listener: socket.socket) -> None:
    """Serve relays until the zygote is told to end; then end every kernel it started."""
    kernels: dict[socket.socket, int] = {}  # relay connection -> kernel pid
    groups = {}  # kernel pid -> its memory cgroup, removed once the kernel has ended
    ended = []  # the groups of ended kernels, not yet removed (their last processes still exiting)
    try:
        while True:
            readable, _, _ = select.select([listener, *kernels], [], [], 0.1)
            for conn in readable:
                if conn is listener:
                    relay, _ = listener.accept()
                    # The relay hands over its stdin, stdout and stderr: the kernel's low-level
                    # output then reaches whoever started the relay, as with a normal kernel.
                    try:
                        message, stdio, _, _ = socket.recv_fds(relay, 1 << 20, 3)
                    except OSError:  # a relay that died before it asked: nothing to start
                        relay.close()
                        continue
                    try:
                        request = protocol.read_line(protocol.KernelWanted, message)
                    except protocol.Malformed:  # not a request a relay makes: nothing to start
                        for fd in stdio:
                            os.close(fd)
                        relay.close()
                        continue
                    group = _memory_group_or_say_why(request, relay)
                    # Single-threaded on purpose: forking a process with other threads is unsafe.
                    kernels[relay] = _fork_kernel(request, stdio, group)
                    if group is not None:
                        groups[kernels[relay]] = group
                    for fd in stdio:
                        os.close(fd)
                    try:
                        started: protocol.KernelStarted = {
                            "pid": kernels[relay], "memory": group.path if group is not None else None}
                        relay.sendall(protocol.line(started))
                    except OSError:  # the relay died meanwhile (its worker crashed): only its kernel goes
                        _kill(kernels.pop(relay))
                        relay.close()
                elif not conn.recv(1):  # the relay is gone: so must its kernel be
                    _kill(kernels.pop(conn))
                    conn.close()
            ended += [groups.pop(pid) for pid in _reap(kernels) if pid in groups]
            ended = [group for group in ended if not _removed(group)]
    finally:
        for pid in kernels.values():
            _kill(pid)
        for group in [*groups.values(), *ended]:
            with contextlib.suppress(OSError):
                group.close()


def _remove_socket(socket_path: str) -> None:
    """The socket this zygote bound, and its folder where that is a Zygote's own and now empty: a
    grader killed outright (SIGKILL) never runs Zygote.stop, but its zygote ends on SIGTERM and
    leaves nothing in /tmp. rmdir, not rmtree: a folder holding anything else stays."""
    with contextlib.suppress(OSError):
        os.unlink(socket_path)
    folder = os.path.dirname(socket_path)
    if os.path.basename(folder).startswith(ZYGOTE_FOLDER_PREFIX):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def _memory_group_or_say_why(request: protocol.KernelWanted, relay: socket.socket):
    try:
        return memory_group(request)
    except (OSError, cgroup.CgroupUnavailable) as error:  # the kernel still starts, its address space bounded
        print(f"kernel zygote: no memory cgroup for a kernel: {error}", file=sys.stderr, flush=True)
        return None


def _removed(group) -> bool:
    """Try once to remove an ended kernel's group (killing what is left in it)."""
    try:
        group.close(timeout=0)
        return True
    except OSError:
        return False


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _reap(kernels: dict) -> list[int]:
    """Collect every kernel that ended, killed ones included (else each stays a zombie for the
    rest of the run), and tell a kernel's relay, if it is still there, how it ended. Returns
    the pids collected."""
    relays = {pid: relay for relay, pid in kernels.items()}
    collected: list[int] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # no children at all
            return collected
        if not pid:
            return collected
        collected.append(pid)
        relay = relays.get(pid)
        if relay is not None:
            with contextlib.suppress(OSError):
                relay.sendall(protocol.line({"exit": status}))
            relay.close()
            del kernels[relay]


if __name__ == "__main__":
    serve(sys.argv[1])
