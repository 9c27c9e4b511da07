"""The device a student's tests ran on, for flags and feedback, in the words the course's
start_grading() prints ("cuda (NVIDIA H200)", "cpu (no accelerator found)").

    expected(jail)   what autograder.grading_device() picks in a grading kernel with that jail
                     (work_area.jail_spec's dict; None: an unconfined kernel), decided in
                     the grader from what the sandbox gives, without initialising CUDA here
    reported(nb)     what the kernel itself printed: the "Graded on:" line of the course's own
                     setup cell in the graded notebook, or None

The grader's expected() is the one to record; a reported() that differs is worth a flag (the
kernel saw another device than the sandbox gave it, or a student's cell rewrote the line)."""
import ctypes
import functools
import os

from classgrader.kernels import accelerator, cgroup

MARKER = "Graded on: "
NO_ACCELERATOR = "cpu (no accelerator found)"  # as autograder.start_grading() says it


def expected(jail: dict | None) -> str:
    import torch
    found, why_not = accelerator.machine()
    if jail is not None:
        if why_not:
            return f"cpu ({why_not})"
        if found and cgroup.unavailable_reason():
            return f"cpu (the GPU is not given to grading kernels: {cgroup.unavailable_reason()})"
        if not found:
            return NO_ACCELERATOR
    elif not found:
        mps = getattr(torch.backends, "mps", None)
        return "mps (Apple GPU)" if mps is not None and mps.is_available() else NO_ACCELERATOR
    if torch.version.cuda is None:
        return f"cpu (this PyTorch {torch.__version__} is built without CUDA)"
    names = gpu_names()
    return f"cuda ({names[0]})" if names else "cpu (the GPU's driver (NVML) lists no device)"


def gpu_names() -> list[str]:
    """The names of the GPUs the driver lists, asked of NVML (no CUDA context is made): those
    CUDA_VISIBLE_DEVICES leaves, in its order where it names them by number."""
    names = list(_nvml_names())
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and all(part.strip().isdigit() for part in visible.split(",") if part.strip()):
        names = [names[int(part)] for part in visible.split(",") if part.strip() and int(part) < len(names)]
    return names


@functools.cache  # asked once per process: a grader asks for every student
def _nvml_names() -> tuple[str, ...]:
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return ()
    if nvml.nvmlInit_v2() != 0:
        return ()
    try:
        count = ctypes.c_uint(0)
        if nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
            return ()
        names = []
        for index in range(count.value):
            handle, name = ctypes.c_void_p(), ctypes.create_string_buffer(96)
            if nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) == 0 and \
                    nvml.nvmlDeviceGetName(handle, name, 96) == 0:
                names.append(name.value.decode(errors="replace"))
    finally:
        nvml.nvmlShutdown()
    return tuple(names)


def reported(nb) -> str | None:
    """The device named on the "Graded on:" line a locked cell of the course printed (the
    first such line), or None. Cells a student wrote or answers in are not read."""
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not meta.get("locked") or meta.get("solution"):
            continue
        for output in cell.get("outputs", []):
            text = output.get("text", "")
            for line in ("".join(text) if isinstance(text, list) else text).splitlines():
                if line.startswith(MARKER):
                    return line[len(MARKER):].strip()
    return None
