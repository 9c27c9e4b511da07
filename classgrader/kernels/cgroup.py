"""Memory limits through the kernel's cgroup memory controller (cgroup v1 or v2).

A limit bounds what a group of processes keeps resident, not its address space, so a CUDA
process, which reserves far more address space than it uses, can live under one. Going over
it makes the kernel's OOM killer end a process of that group, and only of that group.

    limit = limit_memory(pid, 4 * 2**30, "kernel")   # or limit_memory(0, ...) for the caller
    ...
    limit.close()   # kills what is left in the group and removes it (also `with limit_memory(...)`)

A group is made under the cgroup the calling process is in (its own share of the machine, so
an outer limit still holds over it). cgroup v2 gives a group's children a controller only while
the group holds no process, so where the caller's own group holds processes (the grader is one
of them) and does not already give its children memory, groups are made beside it, under its
parent, which gives memory to its children already: limits set there or above still hold.
Where the machine has no usable memory controller, every call raises CgroupUnavailable with
the reason: nothing here falls back to no limit at all.
Linux only; the caller must be root (or own the parent cgroup)."""
import contextlib
import errno
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass

PREFIX = "course-"  # every group made here is named so, under the caller's own cgroup


class CgroupUnavailable(RuntimeError):
    """No memory controller can limit a process here; the message says why."""


@dataclass(frozen=True)
class Controller:
    version: int  # 1 or 2
    parent: str   # the folder, in the cgroup file system, that groups are made in
    home: str = ""  # the caller's own cgroup's folder, where leave() goes back to ('' : parent)


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, file system type, super options) of each cgroup file system."""
    found = []
    with open("/proc/self/mountinfo") as table:
        for line in table:
            fields = line.split()
            dash = fields.index("-")
            fstype = fields[dash + 1]
            if fstype in ("cgroup", "cgroup2"):
                point = fields[4].replace("\\040", " ")
                found.append((point, fstype, set(fields[dash + 3].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """{controller list, as /proc/self/cgroup names it ('' for v2): the caller's cgroup path}."""
    paths = {}
    with open("/proc/self/cgroup") as table:
        for line in table:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            paths[controllers] = path
    return paths


def find(version: int | None = None) -> Controller:
    """The memory controller to use: v2 where the unified hierarchy has it, else v1 (or only
    `version`). Raises CgroupUnavailable saying what is missing."""
    if not os.path.exists("/proc/self/cgroup"):
        raise CgroupUnavailable("memory limits need Linux cgroups, and this machine has none")
    mounts, own = _mounts(), _own_paths()
    reasons = []
    if version in (None, 2):
        v2 = [point for point, fstype, _ in mounts if fstype == "cgroup2"]
        if not v2:
            reasons.append("no cgroup2 file system is mounted")
        else:
            home = os.path.join(v2[0], own.get("", "/").lstrip("/"))
            controllers = _read(os.path.join(home, "cgroup.controllers")).split()
            if "memory" in controllers:
                return Controller(2, v2_parent(home, v2[0]), home)
            reasons.append(f"the cgroup2 hierarchy at {v2[0]} has no memory controller "
                           f"(it offers: {' '.join(controllers) or 'none'})")
    if version in (None, 1):
        v1 = [point for point, fstype, options in mounts if fstype == "cgroup" and "memory" in options]
        path = next((p for names, p in own.items() if "memory" in names.split(",")), None)
        if not v1 or path is None:
            reasons.append("no cgroup v1 memory hierarchy is mounted")
        else:
            return Controller(1, os.path.join(v1[0], path.lstrip("/")))
    raise CgroupUnavailable("no memory controller to limit processes with: " + "; ".join(reasons))


def v2_parent(home: str, root: str) -> str:
    """Where groups are made on cgroup v2 for a caller in the group `home`, which is offered the
    memory controller and holds the caller: `home` itself where it can give its children memory
    (the root group, which may hold processes, or a group that gives it already), else its
    parent, which gives it to `home` and so to any child."""
    if os.path.normpath(home) == os.path.normpath(root):
        return home
    if "memory" in _read(os.path.join(home, "cgroup.subtree_control")).split():
        return home
    return os.path.dirname(os.path.normpath(home))


@functools.cache
def unavailable_reason() -> str | None:
    """None when memory limits can be set here (a group can be made, limited and removed),
    else a sentence saying why not. Tried once per process."""
    try:
        with MemoryLimit.create(64 * 2**20, "probe"):
            pass
    except (CgroupUnavailable, OSError) as error:
        return f"Memory limits by cgroup are not available: {error}"
    return None


class MemoryLimit:
    """One cgroup of ours with a memory limit. Processes join it with add(); close() kills any
    still in it and removes it. Made by create() (no process in it yet) or limit_memory()."""

    def __init__(self, controller: Controller, path: str, limit_bytes: int):
        self.controller, self.path, self.limit_bytes = controller, path, limit_bytes

    @classmethod
    def create(cls, limit_bytes: int, name: str, version: int | None = None) -> "MemoryLimit":
        if limit_bytes <= 0:
            raise ValueError(f"a memory limit must be a positive number of bytes, not {limit_bytes}")
        controller = find(version)
        if controller.version == 2:
            _enable_memory_for_children(controller.parent)
        path = os.path.join(controller.parent, f"{PREFIX}{name}-{secrets.token_hex(4)}")
        try:
            os.mkdir(path, 0o755)
        except OSError as error:
            raise CgroupUnavailable(f"cannot make a cgroup under {controller.parent}: {error.strerror}") from error
        made = cls(controller, path, limit_bytes)
        try:
            if controller.version == 2:
                _write(path, "memory.max", limit_bytes)
                with contextlib.suppress(FileNotFoundError):  # no swap accounting: nothing to swap to
                    _write(path, "memory.swap.max", 0)
                _write(path, "memory.oom.group", 1)  # the OOM killer ends the whole group at once
            else:
                _write(path, "memory.limit_in_bytes", limit_bytes)
                with contextlib.suppress(FileNotFoundError):  # only where swap is accounted
                    _write(path, "memory.memsw.limit_in_bytes", limit_bytes)
                with contextlib.suppress(OSError):  # swap it as little as the machine allows
                    _write(path, "memory.swappiness", 0)
        except OSError as error:
            made.close()
            raise CgroupUnavailable(f"cannot set a memory limit in {path}: {error.strerror}") from error
        return made

    def add(self, pid: int = 0) -> None:
        """Move process `pid` (0: the caller) into this group; what it forks from now on is in it too."""
        _write(self.path, "cgroup.procs", pid or os.getpid())

    def leave(self, pid: int = 0) -> None:
        """Move process `pid` (0: the caller) back to the cgroup the group was made in: a
        process closing its own group must leave it first, or close() kills it too."""
        _write(self.controller.home or self.controller.parent, "cgroup.procs", pid or os.getpid())

    def pids(self) -> list[int]:
        try:
            return [int(line) for line in _read(os.path.join(self.path, "cgroup.procs")).split()]
        except FileNotFoundError:
            return []

    def peak_bytes(self) -> int:
        """The most this group has held at once."""
        name = "memory.peak" if self.controller.version == 2 else "memory.max_usage_in_bytes"
        return int(_read(os.path.join(self.path, name)))

    def oom_kills(self) -> int:
        """How many times the limit made the kernel kill a process of this group."""
        if self.controller.version == 2:
            events = dict(line.split() for line in _read(os.path.join(self.path, "memory.events")).splitlines())
            return int(events.get("oom_kill", 0))
        control = dict(line.split() for line in _read(os.path.join(self.path, "memory.oom_control")).splitlines())
        return int(control.get("oom_kill", 0))

    def close(self, timeout: float = 5.0) -> None:
        """Kill whatever still runs in the group, then remove it. Idempotent. (A process in the
        group that calls this is killed too: leave() first.)"""
        deadline = time.monotonic() + timeout
        while os.path.isdir(self.path):
            if self.controller.version == 2 and os.path.exists(os.path.join(self.path, "cgroup.kill")):
                with contextlib.suppress(OSError):
                    _write(self.path, "cgroup.kill", 1)
            else:
                for pid in self.pids():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError as error:  # EBUSY while the killed processes are still exiting
                if error.errno != errno.EBUSY or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def __enter__(self) -> "MemoryLimit":
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoryLimit({self.path!r}, {self.limit_bytes} bytes, cgroup v{self.controller.version})"


def limit_memory(pid: int, limit_bytes: int, name: str, version: int | None = None) -> MemoryLimit:
    """Put process `pid` (0: the caller) in a new cgroup of its own named `course-NAME-xxxxxxxx`,
    holding at most `limit_bytes` resident (swap included where it is accounted). Returns the
    group: close() it (or use it as a context manager) to kill what is left in it and remove it.
    Raises CgroupUnavailable with the reason where no memory controller can do it."""
    group = MemoryLimit.create(limit_bytes, name, version)
    try:
        group.add(pid)
    except OSError as error:
        group.close()
        who = pid or os.getpid()
        raise CgroupUnavailable(f"cannot move process {who} into {group.path}: {error.strerror}") from error
    return group


def limit_of(pid: int = 0) -> int | None:
    """The tightest memory limit over process `pid`'s cgroup and its ancestors, in bytes
    (0: the caller), or None when none is set (or no memory controller is there)."""
    try:
        controller = find()
    except CgroupUnavailable:
        return None
    with open(f"/proc/{pid or 'self'}/cgroup") as table:
        lines = [line.rstrip("\n").split(":", 2) for line in table]
    if controller.version == 2:
        own = next((path for _, names, path in lines if names == ""), None)
        name, root = "memory.max", _mount_point(2)
    else:
        own = next((path for _, names, path in lines if "memory" in names.split(",")), None)
        name, root = "memory.limit_in_bytes", _mount_point(1)
    if own is None or root is None:
        return None
    tightest, folder = None, os.path.join(root, own.lstrip("/"))
    while folder.startswith(root):
        with contextlib.suppress(FileNotFoundError, ValueError):
            value = _read(os.path.join(folder, name))
            if value != "max" and int(value) < 2**62:  # v1 says "no limit" with a huge number
                tightest = int(value) if tightest is None else min(tightest, int(value))
        if folder.rstrip("/") == root.rstrip("/"):
            break
        folder = os.path.dirname(folder.rstrip("/"))
    return tightest


def _mount_point(version: int) -> str | None:
    for point, fstype, options in _mounts():
        if (version == 2 and fstype == "cgroup2") or (version == 1 and fstype == "cgroup" and "memory" in options):
            return point
    return None


def _enable_memory_for_children(parent: str) -> None:
    """cgroup v2 gives a group's children a controller only when it is in the group's
    subtree_control, and refuses that while the group itself holds processes."""
    if "memory" in _read(os.path.join(parent, "cgroup.subtree_control")).split():
        return
    try:
        _write(parent, "cgroup.subtree_control", "+memory")
    except OSError as error:
        why = error.strerror
        if error.errno == errno.EBUSY:
            why = ("it holds processes itself, and cgroup v2 gives controllers only to the children of a "
                   "group without any")
        raise CgroupUnavailable(f"cannot give the children of {parent} a memory controller: {why}") from error


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read().strip()


def _write(folder: str, name: str, value) -> None:
    with open(os.path.join(folder, name), "w") as handle:
        handle.write(str(value))
