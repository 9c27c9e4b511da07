"""Scripted submissions for assignment 02_devices (see unit01.py for the shape of a scenario)."""
from scenarios import Mutant, Scenario

ASSIGNMENT = "02_devices"
NOTEBOOK = "02_devices.ipynb"

SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_pick_device_answer": '''
def pick_device():
    if torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    return torch.device("cpu")
''',
        "q2_move_to_answer": '''
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return type(batch)((key, move_to(value, device)) for key, value in batch.items())
    if isinstance(batch, list):
        return [move_to(value, device) for value in batch]
    if isinstance(batch, tuple):
        return tuple(move_to(value, device) for value in batch)
    return batch
''',
        "q3_add_bias_column_answer": '''
def add_bias_column(x):
    return torch.cat([x, x.new_ones(x.shape[0], 1)], dim=1)
''',
        "q4_train_step_answer": '''
def train_step(model, batch, loss_fn, optimizer, device):
    inputs, targets = (t.to(device) for t in batch)
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return float(loss)
''',
        "q5_init_weight_answer": '''
def init_weight(shape, device, scale=0.01):
    return torch.empty(shape, device=device).normal_(0.0, scale).requires_grad_(True)
''',
    }),
    Scenario("alternative_b", answers={
        "q1_pick_device_answer": '''
def pick_device():
    mps = getattr(torch.backends, "mps", None)
    name = "cuda" if torch.cuda.is_available() else "mps" if mps is not None and mps.is_available() else "cpu"
    return torch.device(name)
''',
        "q2_move_to_answer": '''
from torch.utils._pytree import tree_map

def move_to(batch, device):
    return tree_map(lambda leaf: leaf.to(device) if torch.is_tensor(leaf) else leaf, batch)
''',
        "q3_add_bias_column_answer": '''
def add_bias_column(x):
    return F.pad(x, (0, 1), value=1.0)
''',
        "q4_train_step_answer": '''
def train_step(model, batch, loss_fn, optimizer, device):
    optimizer.zero_grad(set_to_none=True)
    x, y = batch
    prediction = model(x.to(device))
    loss = loss_fn(prediction, y.to(device))
    loss.backward()
    optimizer.step()
    return loss.detach().item()
''',
        "q5_init_weight_answer": '''
def init_weight(shape, device, scale=0.01):
    return torch.nn.Parameter(torch.randn(shape, device=device) * scale)
''',
    }),
    Scenario("alternative_c", answers={
        "q1_pick_device_answer": """
def pick_device():
    if torch.cuda.device_count() > 0:
        return torch.device("cuda")
    if torch.backends.mps.is_built() and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
""",
        "q2_move_to_answer": """
from collections.abc import Mapping

def move_to(batch, device):
    if torch.is_tensor(batch):
        return batch.to(device=device)
    if isinstance(batch, Mapping):
        return {key: move_to(batch[key], device) for key in batch}
    if isinstance(batch, tuple):
        return tuple(move_to(item, device) for item in batch)
    if isinstance(batch, list):
        moved = []
        for item in batch:
            moved.append(move_to(item, device))
        return moved
    return batch
""",
        "q3_add_bias_column_answer": """
def add_bias_column(x):
    out = torch.empty(x.shape[0], x.shape[1] + 1, dtype=x.dtype, device=x.device)
    out[:, :-1] = x
    out[:, -1] = 1
    return out
""",
        "q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = [t.to(device, non_blocking=True) for t in batch]
    for p in model.parameters():
        p.grad = None
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach().cpu().item()
""",
        "q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    w = torch.randn(*shape, device=device).mul_(scale)
    w.requires_grad = True
    return w
""",
    }),
    # Modules held in a loop variable, and a match statement: honest, but .is_available read on a
    # variable is not on the list of what an answer uses (it cannot tell which module it is).
    Scenario("alternative_d", answers={
        "q1_pick_device_answer": '''
def pick_device():
    for name, backend in (("cuda", torch.cuda), ("mps", torch.backends.mps)):
        if backend.is_available():
            return torch.device(name)
    return torch.device("cpu")
''',
        "q2_move_to_answer": '''
def move_to(batch, device):
    match batch:
        case torch.Tensor():
            return batch.to(device)
        case dict():
            return {key: move_to(value, device) for key, value in batch.items()}
        case list() | tuple():
            return type(batch)(move_to(value, device) for value in batch)
        case _:
            return batch
''',
    }),
    Scenario("promotes_dtype", answers={
        "q3_add_bias_column_answer": """
def add_bias_column(x):
    return torch.cat([x, torch.ones(x.shape[0], 1, device=x.device)], dim=1)
""",
    }, loses={"q3_add_bias_column_tests"}, says=["wrong dtype. Expected torch.float16, got torch.float32"]),
    Scenario("to_not_assigned", answers={
        "q2_move_to_answer": '''
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        batch.to(device)
        return batch
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(value, device) for value in batch)
    return batch
''',
    }, loses={"q2_move_to_tests"}, says=["Pitfall: t.to(device) without assigning the result"]),
    Scenario("created_on_default_device", answers={
        "q3_add_bias_column_answer": '''
def add_bias_column(x):
    return torch.cat([x, torch.ones(x.shape[0], 1, dtype=x.dtype)], dim=1)
''',
    }, loses={"q3_add_bias_column_tests"},
        says=["Pitfall: a tensor created inside forward on the default device", "Device mismatch in aten.cat"]),
    Scenario("batch_not_moved", answers={
        "q4_train_step_answer": '''
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = batch
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
''',
    }, loses={"q4_train_step_tests"}, says=["Pitfall: model moved but batch not"]),
    Scenario("moved_leaf", answers={
        "q5_init_weight_answer": '''
def init_weight(shape, device, scale=0.01):
    return (torch.randn(shape) * scale).requires_grad_().to(device)
''',
    }, loses={"q5_init_weight_tests"},
        says=["Pitfall: torch.randn(3, requires_grad=True).to(dev) giving a non-leaf", "ToCopyBackward0"]),
    Scenario("quiz_wrong", answers={"quiz_q2_answer": 'q2 = "c"\n'}, loses={"quiz_q2_tests"}),
]

# Hand-written wrong answers for the mutation check (tests/mutation.py), where no regex says it.
MUTANTS = [
    Mutant("pick_device/mps-first", {"q1_pick_device_answer": """
def pick_device():
    if torch.backends.mps.is_available():
        return torch.device("mps")
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
"""}),
    Mutant("pick_device/string", {"q1_pick_device_answer": """
def pick_device():
    return "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
"""}),
    Mutant("pick_device/asked-once", {"q1_pick_device_answer": """
_BEST = torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu")

def pick_device():
    return _BEST
"""}),
    Mutant("move_to/to-not-assigned", {"q2_move_to_answer": """
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        batch.to(device)
        return batch
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(value, device) for value in batch)
    return batch
"""}, misconception="to-not-assigned"),
    Mutant("move_to/tuples-become-lists", {"q2_move_to_answer": """
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [move_to(value, device) for value in batch]
    return batch
"""}),
    Mutant("move_to/top-level-only", {"q2_move_to_answer": """
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: value.to(device) if torch.is_tensor(value) else value for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(value.to(device) if torch.is_tensor(value) else value for value in batch)
    return batch
"""}),
    Mutant("move_to/non-tensors-copied", {"q2_move_to_answer": """
import copy

def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(value, device) for value in batch)
    return copy.copy(batch)
"""}),
    Mutant("add_bias_column/ones-on-cpu", {"q3_add_bias_column_answer": """
def add_bias_column(x):
    return torch.cat([x, torch.ones(x.shape[0], 1, dtype=x.dtype)], dim=1)
"""}, misconception="created-on-default-device"),
    Mutant("add_bias_column/float32-ones", {"q3_add_bias_column_answer": """
def add_bias_column(x):
    return torch.cat([x, torch.ones(len(x), 1, device=x.device)], dim=1)
"""}),
    Mutant("add_bias_column/ones-on-grading-device", {"q3_add_bias_column_answer": """
def add_bias_column(x):
    return torch.cat([x, torch.ones(x.shape[0], 1, dtype=x.dtype, device=DEVICE)], dim=1)
"""}, misconception="created-on-default-device"),
    Mutant("train_step/batch-not-moved", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = batch
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
"""}, misconception="batch-not-moved"),
    Mutant("train_step/loss-after-step", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = (t.to(device) for t in batch)
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    optimizer.step()
    with torch.no_grad():
        return loss_fn(model(x), y).item()
"""}),
    Mutant("train_step/returns-tensor", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = (t.to(device) for t in batch)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()
"""}, misconception="running-loss-tensor"),
    Mutant("init_weight/moved-leaf", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    return (torch.randn(shape) * scale).requires_grad_().to(device)
"""}, misconception="moved-leaf-no-grad"),
    Mutant("init_weight/requires-grad-then-scaled", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    return torch.randn(shape, device=device, requires_grad=True) * scale
"""}, misconception="non-leaf-grad"),
    Mutant("init_weight/unscaled", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    return torch.randn(shape, device=device, requires_grad=True)
"""}),
    Mutant("init_weight/scaled-uniform", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    return ((torch.rand(shape, device=device) * 2 - 1) * scale * 3 ** 0.5).requires_grad_()
"""}),  # the right mean and standard deviation, but uniform values, not the normal ones the text asks for
    Mutant("init_weight/float64", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    return (torch.randn(shape, device=device, dtype=torch.float64) * scale).requires_grad_()
"""}),
    Mutant("move_to/squeezes-in-place", {"q2_move_to_answer": """
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.squeeze_().to(device)
    if isinstance(batch, dict):
        for key, value in batch.items():
            batch[key] = move_to(value, device)
        return batch
    if isinstance(batch, list):
        batch[:] = [move_to(value, device) for value in batch]
        return batch
    if isinstance(batch, tuple):
        return tuple(move_to(value, device) for value in batch)
    return batch
"""}),  # size-1 dimensions dropped, in the caller's tensors too: the shapes must be the ones it was given
    Mutant("add_bias_column/rounds-x-in-place", {"q3_add_bias_column_answer": """
def add_bias_column(x):
    x.data = x.data.half().to(x.dtype)
    ones = torch.ones(x.shape[0], 1, dtype=x.dtype, device=x.device)
    return torch.cat([x, ones], dim=1)
"""}),  # the values go through float16, and so do the caller's
    Mutant("train_step/clamps-targets-in-place", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = batch
    y.clamp_(min=0)
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
"""}),  # trains on other targets than the batch holds, and writes them into the caller's batch
    Mutant("init_weight/ignores-scale", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    return (torch.randn(shape, device=device) * 0.1).requires_grad_()
"""}),  # a spread of 0.1 whatever scale asks
    Mutant("pick_device/mps-built", {"q1_pick_device_answer": """
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_built():
        return torch.device("mps")
    return torch.device("cpu")
"""}),  # is_built() says the support is compiled in, not that the device is there
    Mutant("move_to/in-place-dict", {"q2_move_to_answer": """
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        for key in batch:
            batch[key] = move_to(batch[key], device)
        return batch
    if isinstance(batch, list):
        for i in range(len(batch)):
            batch[i] = move_to(batch[i], device)
        return batch
    if isinstance(batch, tuple):
        return tuple(move_to(value, device) for value in batch)
    return batch
"""}),  # the caller's dict and lists rewritten to hold the moved tensors
    Mutant("move_to/float-cast", {"q2_move_to_answer": """
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, torch.float32)
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(value, device) for value in batch)
    return batch
"""}),  # every tensor cast to float32 on the way
    Mutant("train_step/runs-on-cpu", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    model.cpu()
    x, y = batch
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    model.to(device)
    return loss.item()
"""}),  # the step taken on the cpu, the model moved there and back
    Mutant("train_step/losses-kept-in-a-list", {"q4_train_step_answer": """
history = []
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = (t.to(device) for t in batch)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    history.append(loss)
    loss.backward(retain_graph=True)
    optimizer.step()
    return loss.item()
"""}),  # every step's loss tensor kept in a list, with its graph
    Mutant("init_weight/fixed-seed", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    g = torch.Generator(device="cpu").manual_seed(0)
    return (torch.randn(shape, generator=g) * scale).to(device).requires_grad_()
"""}),  # a generator seeded afresh on every call: every weight of a shape alike
    Mutant("init_weight/same-values-each-call", {"q5_init_weight_answer": """
_BASE = {}
def init_weight(shape, device, scale=0.01):
    key = (tuple(shape), str(device))
    if key not in _BASE:
        _BASE[key] = torch.randn(shape, device=device)
    return (_BASE[key] * scale).requires_grad_()
"""}),  # one draw per shape and device, reused by every later call
    Mutant("move_to/bytes-as-sequence", {"q2_move_to_answer": """
from collections.abc import Mapping, Sequence

def move_to(batch, device):
    if torch.is_tensor(batch):
        return batch.to(device)
    if isinstance(batch, Mapping):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, Sequence) and not isinstance(batch, str):
        return type(batch)(move_to(value, device) for value in batch)
    return batch
"""}),  # any Sequence rebuilt: a bytes value comes back as another object, though it is no list or tuple
    Mutant("move_to/empty-containers-kept", {"q2_move_to_answer": """
def move_to(batch, device):
    if torch.is_tensor(batch):
        return batch.to(device)
    if not isinstance(batch, (dict, list, tuple)) or not batch:
        return batch
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    return type(batch)(move_to(value, device) for value in batch)
"""}),  # an empty list or dict handed back itself: the structure returned holds the batch's own containers
    Mutant("move_to/tensor-free-parts-kept", {"q2_move_to_answer": """
def holds_tensor(batch):
    if torch.is_tensor(batch):
        return True
    if isinstance(batch, dict):
        return any(holds_tensor(value) for value in batch.values())
    if isinstance(batch, (list, tuple)):
        return any(holds_tensor(value) for value in batch)
    return False

def move_to(batch, device):
    if not holds_tensor(batch):
        return batch
    if torch.is_tensor(batch):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    return type(batch)(move_to(value, device) for value in batch)
"""}),  # a list or dict with no tensor in it handed back itself, not built anew
    Mutant("add_bias_column/through-float32", {"q3_add_bias_column_answer": """
def add_bias_column(x):
    ones = torch.ones(x.shape[0], 1, device=x.device)
    return torch.cat([x.float(), ones], dim=1).to(x.dtype)
"""}),  # the right dtype in the end, but float64 values rounded to float32 on the way
    Mutant("train_step/batch-cast-to-float32", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = (t.to(device, torch.float32) for t in batch)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
"""}),  # the batch cast on the way to the device: a float64 model gets float32 inputs
    Mutant("init_weight/truncated-normal", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    return torch.nn.init.trunc_normal_(torch.empty(shape, device=device), std=scale).requires_grad_()
"""}),  # values cut off at -2 and 2: not normal, and a spread under scale once scale nears 1
    Mutant("move_to/detaches-in-place", {"q2_move_to_answer": """
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.detach_().to(device)
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(value, device) for value in batch)
    return batch
"""}),  # the caller's tensors cut from autograd: they no longer require grad
    Mutant("move_to/grad-dropped", {"q2_move_to_answer": """
def move_to(batch, device):
    if isinstance(batch, torch.Tensor):
        batch.grad = None
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(value, device) for value in batch)
    return batch
"""}),  # the caller's gradients thrown away
    Mutant("add_bias_column/detaches-in-place", {"q3_add_bias_column_answer": """
def add_bias_column(x):
    ones = torch.ones(x.shape[0], 1, dtype=x.dtype, device=x.device)
    return torch.cat([x.detach_(), ones], dim=1)
"""}),  # the caller's x cut from autograd: it no longer requires grad
    Mutant("add_bias_column/grad-dropped", {"q3_add_bias_column_answer": """
def add_bias_column(x):
    x.grad = None
    ones = torch.ones(x.shape[0], 1, dtype=x.dtype, device=x.device)
    return torch.cat([x, ones], dim=1)
"""}),  # the caller's gradient thrown away
    Mutant("train_step/grad-mode-left-off", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    torch.set_grad_enabled(True)
    x, y = batch
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    torch.set_grad_enabled(False)  # the step is taken: no graph for what follows
    return loss.item()
"""}),  # autograd switched off for the caller
    Mutant("train_step/input-requires-grad", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = batch
    x.requires_grad_()  # the gradient with respect to the input, too
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
"""}),  # the caller's x now requires grad
    Mutant("train_step/eval-after-step", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    x, y = batch
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    model.eval()
    return loss.item()
"""}),  # the caller's model left in eval mode
    Mutant("train_step/parameters-frozen-after-step", {"q4_train_step_answer": """
def train_step(model, batch, loss_fn, optimizer, device):
    model.requires_grad_(True)
    x, y = batch
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    model.requires_grad_(False)  # no gradient until the next step
    return loss.item()
"""}),  # the caller's parameters no longer require grad
    Mutant("init_weight/grad-mode-left-off", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    torch.set_grad_enabled(False)  # drawing the values is no step of training
    return (torch.randn(shape, device=device) * scale).requires_grad_()
"""}),  # autograd switched off for the caller
    Mutant("init_weight/grad-mode-switched-on", {"q5_init_weight_answer": """
def init_weight(shape, device, scale=0.01):
    torch.set_grad_enabled(False)
    w = torch.randn(shape, device=device) * scale
    torch.set_grad_enabled(True)
    return w.requires_grad_()
"""}),  # autograd switched on for a caller that had it off
]
