#!/usr/bin/env bash
# The GPU check as one command on a lent GPU machine, from this checkout's root, with .whl/
# carried (benchmarks/gpu_wheels.py made it). That machine's python3 holds a CUDA build of
# PyTorch and nothing of the course's: the wheels go into that same environment (a grading
# kernel's sandbox shows it the interpreter's own prefix, nothing beside it), this checkout is
# put on its path as an editable install puts it, then gpu_check.py runs. The machine, the
# install log and the table land in $OUT.
#     bash benchmarks/gpu_run.sh [gpu_check.py's arguments]
set -uo pipefail
out="${OUT:-/tmp/gpu-check}"
mkdir -p "$out"
py="$(command -v python3)"
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
if ! "$py" -m pip install --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check \
     .whl/*.whl >"$out/install.log" 2>&1; then
  tail -n 20 "$out/install.log"; echo "gpu_run: the carried wheels did not install" >&2; exit 1
fi
echo "$PWD" >"$site/pytorch_course_checkout.pth"
# A kernel's jail is given the driver's libraries found through the linker's cache or
# LD_LIBRARY_PATH (classgrader/kernels/accelerator.py); where neither names libcuda, its folder is added.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so'; then
  lib="$(find /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 -name 'libcuda.so.1' 2>/dev/null | head -n 1)"
  [ -n "$lib" ] && export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
{ date -u '+%Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$py" -c 'import os, sys, torch; print("python", sys.version.split()[0], "| torch", torch.__version__,
            "| CUDA", torch.version.cuda, "| available", torch.cuda.is_available(), "| cores", os.cpu_count())'
  uname -r; cat /proc/loadavg
  echo "cgroup: $(stat -fc %T /sys/fs/cgroup) | libcuda: $(ldconfig -p | grep -m1 -o '/.*libcuda\.so[.0-9]*')" \
       "| LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
} 2>&1 | tee "$out/machine.txt"
# Bounded inside the device call's own limit, so that the log still comes back.
PYTHONUNBUFFERED=1 timeout "${GPU_CHECK_SECONDS:-480}" "$py" benchmarks/gpu_check.py "$@" 2>&1 |
  grep --line-buffered -v 'Kernel is running over TCP without encryption' | tee "$out/gpu_check.log"
