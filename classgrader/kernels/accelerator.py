"""The machine's accelerator, as a sandbox must show it to a grading kernel: its device nodes
and its driver's user-space libraries, found at run time wherever this host keeps them.

For CUDA the nodes are /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools, /dev/nvidia-modeset,
each /dev/nvidiaN and /dev/nvidia-caps/* (MIG), whichever exist as character devices. The
libraries are the driver's (libcuda, libnvidia-*, libcudadebugger), not the CUDA toolkit's,
which come with PyTorch in the Python environment. They are looked for in the dynamic linker's
cache (ldconfig -p), in LD_LIBRARY_PATH's folders and among the libraries this process has
loaded, with every symbolic link on the way to each file. Device nodes without a libcuda
beside them is a machine the sandbox cannot give CUDA to: find() says so, never an empty list
that looks like a machine without a GPU."""
import functools
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass

DEVICE_NAME = re.compile(r"nvidia(ctl|-uvm|-uvm-tools|-modeset|\d+)")
DRIVER_LIBRARY = re.compile(r"lib(cuda|cudadebugger|nvidia-[A-Za-z0-9_-]+)\.so(\.[0-9]+)*")


class AcceleratorError(RuntimeError):
    """The machine has an accelerator's devices, but not what a kernel needs to use them."""


@dataclass(frozen=True)
class Accelerator:
    devices: tuple[str, ...] = ()    # host paths of the device nodes
    libraries: tuple[str, ...] = ()  # host paths of the driver's libraries (links and files)

    def __bool__(self) -> bool:
        return bool(self.devices)


def device_nodes(dev: str = "/dev") -> list[str]:
    """The accelerator's character devices in the folder `dev` (and its nvidia-caps/)."""
    found = []
    for folder, pattern in ((dev, DEVICE_NAME), (os.path.join(dev, "nvidia-caps"), re.compile(r"nvidia-cap\d+"))):
        try:
            names = sorted(os.listdir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            path = os.path.join(folder, name)
            if pattern.fullmatch(name) and stat.S_ISCHR(os.lstat(path).st_mode):
                found.append(path)
    return found


def place_in_jail(path: str) -> str:
    """Where a device node appears in a jail: its place under the dev folder it was found in
    (…/dev/nvidia0 -> /dev/nvidia0, /dev/nvidia-caps/nvidia-cap1 stays where it is)."""
    head = path
    below: list[str] = []
    while head not in ("/", ""):
        head, name = os.path.split(head)
        below.insert(0, name)
        if os.path.basename(head) == "dev":
            return "/dev/" + "/".join(below)
    return "/dev/" + os.path.basename(path)

def driver_libraries() -> list[str]:
    """Every driver library this host's programs could load, each with its chain of links."""
    candidates = set()
    ldconfig = shutil.which("ldconfig") or next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig")
                                                 if os.path.exists(p)), None)
    if ldconfig:
        listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=30).stdout
        for line in listing.splitlines():
            name, arrow, path = line.strip().partition(" => ")
            if arrow and DRIVER_LIBRARY.fullmatch(name.split()[0]):
                candidates.add(path.strip())
    for folder in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        if os.path.isdir(folder):
            candidates |= {os.path.join(folder, n) for n in os.listdir(folder) if DRIVER_LIBRARY.fullmatch(n)}
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if len(fields) >= 6 and DRIVER_LIBRARY.fullmatch(os.path.basename(fields[-1])):
                    candidates.add(fields[-1])
    except FileNotFoundError:
        pass
    return sorted({link for path in candidates if os.path.exists(path) for link in link_chain(path)})


def link_chain(path: str) -> list[str]:
    """path, each link it goes through (with the real folder of each) and the file it ends at;
    first, the linked folders on its way (/run/nvidia -> nvidia-550), so that the path the
    linker's cache names leads to the file in a jail too."""
    chain, prefix = [], "/"
    for part in os.path.dirname(os.path.abspath(path)).strip("/").split("/"):
        step = os.path.join(os.path.realpath(prefix), part)
        if part and os.path.islink(step) and step not in chain:
            chain.append(step)
        prefix = os.path.join(prefix, part)
    while True:
        path = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        if path in chain:
            return chain
        chain.append(path)
        if not os.path.islink(path):
            return chain
        path = os.path.join(os.path.dirname(path), os.readlink(path))


def find(dev: str = "/dev", libraries: list[str] | None = None) -> Accelerator:
    """The accelerator's device nodes and driver libraries (by default, driver_libraries())
    on this machine; an empty Accelerator where it has none. Raises AcceleratorError, saying
    what is missing, where it has the nodes but no driver library a kernel could load."""
    devices = device_nodes(dev)
    if not devices:
        return Accelerator()
    libraries = driver_libraries() if libraries is None else libraries
    if not any(os.path.basename(path).startswith("libcuda.so") for path in libraries):
        version = ""
        if os.path.exists("/proc/driver/nvidia/version"):
            with open("/proc/driver/nvidia/version") as driver:
                version = " (driver: " + driver.readline().strip() + ")"
        raise AcceleratorError(f"found {', '.join(devices)} but no libcuda.so{version} in the linker's "
                               "cache (ldconfig -p), LD_LIBRARY_PATH or this process's libraries")
    return Accelerator(tuple(devices), tuple(libraries))


@functools.cache
def machine() -> tuple[Accelerator, str | None]:
    """(this machine's accelerator, or an empty one; why it cannot be given to kernels, or None).
    Looked up once per process: the zygote does it before forking, for every kernel."""
    try:
        return find(), None
    except (AcceleratorError, OSError, subprocess.SubprocessError) as error:
        return Accelerator(), f"The GPU is not given to grading kernels: {error}"
