"""What nearly every graded notebook runs, run once in a process that forks a child per run (the
grading kernels' zygote, the Validate button's worker): PyTorch's lazy set-up (operator dispatch,
autograd, the meta device, serialization) and the checks' first call are then paid before the
fork, not by each child. One intra-op thread: parallelism comes from children running side by
side, and a process whose thread pool never started is safe to fork."""
import io

import torch

from .checks import check_tensor, check_value
from .device_strict import strict_devices


def exercise_torch() -> None:
    torch.set_num_threads(1)
    x = torch.randn(4, 3, requires_grad=True)
    layer = torch.nn.Linear(3, 2)
    loss = torch.nn.functional.mse_loss(layer(x), torch.zeros(4, 2))
    if not accelerator_built():
        loss.backward()
    with torch.no_grad(), strict_devices():
        y = (x.to(torch.float64) @ torch.ones(3, 2, dtype=torch.float64)).mean(dim=0)
    check_tensor(y.clone(), y, name="warm-up")
    check_value(int(torch.zeros(2, 3, device="meta").numel()), 6, name="warm-up")
    buffer = io.BytesIO()
    torch.save(layer.state_dict(), buffer)
    buffer.seek(0)
    torch.load(buffer, weights_only=True)


def accelerator_built() -> bool:
    """Whether this PyTorch has CUDA or MPS compiled in. Then the warm-up runs no backward: the
    first one starts autograd's device threads, which ask each compiled-in device API how many
    devices there are, and on CUDA that initialises the driver (GPU or not): a process that has
    cannot fork children that use the GPU (they get 'CUDA error: initialization error'), and
    every grading kernel and every Validate press is such a child."""
    mps = getattr(torch.backends, "mps", None)
    return torch.backends.cuda.is_built() or bool(mps is not None and mps.is_built())
