"""Scripted submissions for assignment 03_broadcasting_views (see unit01.py)."""
from scenarios import Mutant, Scenario

ASSIGNMENT = "03_broadcasting_views"
NOTEBOOK = "03_broadcasting_views.ipynb"

SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_broadcast_shape_answer": '''
from itertools import zip_longest

def broadcast_shape(a, b):
    out = []
    for x, y in zip_longest(reversed(a), reversed(b), fillvalue=1):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError(f"{a} and {b} do not broadcast")
    return tuple(reversed(out))
''',
        "q2_mse_loss_safe_answer": '''
def mse_loss_safe(pred, target):
    if pred.shape[0] != target.shape[0]:
        raise ValueError("one prediction per target")
    return F.mse_loss(pred.view(-1), target.view(-1))
''',
        "q3_shares_storage_answer": '''
def shares_storage(a, b):
    start_a = a.data_ptr() - a.storage_offset() * a.element_size()
    start_b = b.data_ptr() - b.storage_offset() * b.element_size()
    return start_a == start_b
''',
        "q4_flat_copy_answer": '''
def flat_copy(t):
    return t.flatten().clone()
''',
        "q5_centre_first_k_answer": '''
def centre_first_k(x, k):
    head = x[:, :k]
    return torch.cat([head - head.mean(dim=0, keepdim=True), x[:, k:]], dim=1)
''',
    }),
    Scenario("alternative_b", answers={
        "q1_broadcast_shape_answer": '''
def broadcast_shape(a, b):
    if len(a) < len(b):
        a, b = b, a
    b = [1] * (len(a) - len(b)) + list(b)
    result = []
    for x, y in zip(a, b):
        if 1 in (x, y) or x == y:
            result.append(max(x, y) if 0 not in (x, y) else 0)
        else:
            raise ValueError("incompatible shapes")
    return tuple(result)
''',
        "q2_mse_loss_safe_answer": '''
def mse_loss_safe(pred, target):
    p, t = pred.flatten(), target.flatten()
    if p.shape != t.shape:
        raise ValueError(f"{tuple(p.shape)} predictions against {tuple(t.shape)} targets")
    diff = p - t
    return (diff * diff).sum() / diff.numel()
''',
        "q3_shares_storage_answer": '''
def shares_storage(a, b):
    sa, sb = a.untyped_storage(), b.untyped_storage()
    return sa.data_ptr() < sb.data_ptr() + sb.nbytes() and sb.data_ptr() < sa.data_ptr() + sa.nbytes()
''',
        "q4_flat_copy_answer": '''
def flat_copy(t):
    out = torch.empty(t.numel(), dtype=t.dtype, device=t.device)
    out.copy_(t.reshape(-1))
    return out
''',
        "q5_centre_first_k_answer": '''
def centre_first_k(x, k):
    chosen = torch.arange(x.shape[1], device=x.device) < k
    return x - x.mean(dim=0) * chosen
''',
    }),
    Scenario("column_vs_flat_loss", answers={
        "q2_mse_loss_safe_answer": '''
def mse_loss_safe(pred, target):
    return ((pred - target) ** 2).mean()
''',
    }, loses={"q2_mse_loss_safe_tests"}, says=["Pitfall: an (N, 1) prediction against an (N,) target"]),
    Scenario("reshape_always_copies", answers={
        "q4_flat_copy_answer": '''
def flat_copy(t):
    return t.reshape(-1)
''',
    }, loses={"q4_flat_copy_tests"}, says=["Pitfall: assuming reshape always copies"]),
    Scenario("view_start_as_storage", answers={
        "q3_shares_storage_answer": '''
def shares_storage(a, b):
    return a.data_ptr() == b.data_ptr()
''',
    }, loses={"q3_shares_storage_tests"}, says=["Pitfall: sharing judged by where a tensor starts"]),
    Scenario("mutates_through_view", answers={
        "q5_centre_first_k_answer": '''
def centre_first_k(x, k):
    head = x[:, :k]
    head -= head.mean(dim=0)
    return x.clone()
''',
    }, loses={"q5_centre_first_k_tests"}, says=["Pitfall: mutating a caller's tensor through a view"]),
    Scenario("accidental_broadcast", answers={
        "q5_centre_first_k_answer": '''
def centre_first_k(x, k):
    out = x.clone()
    out[:, :k] = x[:, :k] - x[:, :k].mean(dim=1)
    return out
''',
    }, loses={"q5_centre_first_k_tests"}, says=["Pitfall: a result broadcast to the right shape by accident"]),
    # What the text forbids, seen in the student's kernel, where the grader routes the test.
    Scenario("asks_pytorch", answers={"q1_broadcast_shape_answer": """
def broadcast_shape(a, b):
    try:
        return tuple(torch.broadcast_shapes(a, b))
    except RuntimeError as error:
        raise ValueError(str(error)) from None
"""}, loses={"q1_broadcast_shape_tests"}, says=["asked PyTorch (torch.broadcast_shapes)"]),
    Scenario("quiz_wrong", answers={"quiz_q3_answer": 'q3 = "c"\n'}, loses={"quiz_q3_tests"}),
]

# Generated mutants that behave exactly like a correct answer, and why.
EQUIVALENT = {
    "q2_mse_loss_safe_answer/numel-as-len#1": "pred is (N,) or (N, 1), so len(pred) == pred.numel()",
    "q2_mse_loss_safe_answer/numel-as-len#2": "target is (N,) or (N, 1), so len(target) == target.numel()",
    "q2_mse_loss_safe_answer/reshape-to-view#1": ("an (N,) or (N, 1) tensor can always be viewed as (N,): "
                                                  "a size-1 dimension never blocks a view"),
    "q2_mse_loss_safe_answer/reshape-to-view#2": ("an (N,) or (N, 1) tensor can always be viewed as (N,): "
                                                  "a size-1 dimension never blocks a view"),
    "q5_centre_first_k_answer/keepdim-on#1": "a (1, k) mean broadcasts over the rows exactly as a (k,) one does",
}

# Hand-written wrong answers for the mutation check (tests/mutation.py), where no regex says it.
MUTANTS = [
    Mutant("broadcast_shape/asks-torch", {"q1_broadcast_shape_answer": """
def broadcast_shape(a, b):
    try:
        return tuple(torch.broadcast_shapes(a, b))
    except RuntimeError as error:
        raise ValueError(str(error)) from None
"""}),  # PyTorch asked, where the exercise asks for the rules worked out
    Mutant("broadcast_shape/asks-meta-tensors", {"q1_broadcast_shape_answer": """
def broadcast_shape(a, b):
    try:
        return tuple((torch.empty(a, device="meta") + torch.empty(b, device="meta")).shape)
    except RuntimeError as error:
        raise ValueError(str(error)) from None
"""}),  # tensors of no memory, broadcast by PyTorch all the same
    Mutant("broadcast_shape/align-left", {"q1_broadcast_shape_answer": """
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a = tuple(a) + (1,) * (n - len(a))
    b = tuple(b) + (1,) * (n - len(b))
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError("no")
        out.append(max(x, y))
    return tuple(out)
"""}),
    Mutant("broadcast_shape/max-with-zero", {"q1_broadcast_shape_answer": """
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError("no")
        out.append(max(x, y))
    return tuple(out)
"""}),
    Mutant("broadcast_shape/runtime-error", {"q1_broadcast_shape_answer": """
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"{x} against {y}")
    return tuple(y if x == 1 else x for x, y in zip(a, b))
"""}),  # the rules right, but the error PyTorch raises, not the ValueError asked for
    Mutant("broadcast_shape/list", {"q1_broadcast_shape_answer": """
def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"{x} against {y}")
    return [y if x == 1 else x for x, y in zip(a, b)]
"""}),
    Mutant("mse_loss_safe/column-vs-flat", {"q2_mse_loss_safe_answer": """
def mse_loss_safe(pred, target):
    return ((pred - target) ** 2).mean()
"""}, misconception="column-vs-flat-loss"),
    # The right loss for (N,) and (N, 1) inputs alike, but one value against N broadcasts: no error.
    Mutant("mse_loss_safe/squeeze-all", {"q2_mse_loss_safe_answer": """
def mse_loss_safe(pred, target):
    return ((pred.squeeze() - target.squeeze()) ** 2).mean()
"""}),
    Mutant("mse_loss_safe/no-grad", {"q2_mse_loss_safe_answer": """
def mse_loss_safe(pred, target):
    return torch.tensor(((pred.detach().reshape(-1) - target.reshape(-1)) ** 2).mean().item())
"""}),
    Mutant("mse_loss_safe/sum-not-mean", {"q2_mse_loss_safe_answer": """
def mse_loss_safe(pred, target):
    return ((pred.reshape(-1) - target.reshape(-1)) ** 2).sum()
"""}),
    Mutant("shares_storage/data-ptr", {"q3_shares_storage_answer": """
def shares_storage(a, b):
    return a.data_ptr() == b.data_ptr()
"""}, misconception="view-start-as-storage"),  # a view that starts later in the storage, t[1:], has another data_ptr
    Mutant("shares_storage/is", {"q3_shares_storage_answer": """
def shares_storage(a, b):
    return a is b or a._base is b or b._base is a
"""}),
    Mutant("shares_storage/equal-values", {"q3_shares_storage_answer": """
def shares_storage(a, b):
    return a.numel() <= b.numel() and bool(torch.isin(a.flatten(), b.flatten()).all())
"""}),
    Mutant("flat_copy/reshape-always-copies", {"q4_flat_copy_answer": """
def flat_copy(t):
    return t.reshape(-1)
"""}, misconception="reshape-always-copies"),
    Mutant("flat_copy/view", {"q4_flat_copy_answer": """
def flat_copy(t):
    return t.view(-1).clone()
"""}, misconception="reshape-always-copies"),
    Mutant("flat_copy/storage-order", {"q4_flat_copy_answer": """
def flat_copy(t):
    return torch.as_strided(t, (t.numel(),), (1,)).clone()
"""}),
    Mutant("flat_copy/flatten", {"q4_flat_copy_answer": """
def flat_copy(t):
    return t.flatten()
"""}, misconception="reshape-always-copies"),
    Mutant("centre_first_k/mutates-through-view", {"q5_centre_first_k_answer": """
def centre_first_k(x, k):
    part = x[:, :k]
    part -= part.mean(dim=0)
    return x
"""}, misconception="mutates-through-view"),
    Mutant("centre_first_k/row-means", {"q5_centre_first_k_answer": """
def centre_first_k(x, k):
    out = x.clone()
    out[:, :k] -= x[:, :k].mean(dim=1, keepdim=True)
    return out
"""}, misconception="accidental-broadcast"),
    Mutant("centre_first_k/all-columns", {"q5_centre_first_k_answer": """
def centre_first_k(x, k):
    return x - x.mean(dim=0)
"""}),
    Mutant("centre_first_k/only-the-k", {"q5_centre_first_k_answer": """
def centre_first_k(x, k):
    return x[:, :k] - x[:, :k].mean(dim=0)
"""}),  # only the k columns come back: a slip the shape check names, no broadcast involved
    Mutant("mse_loss_safe/no-count-check", {"q2_mse_loss_safe_answer": """
def mse_loss_safe(pred, target):
    return ((pred.reshape(-1) - target.reshape(-1)) ** 2).mean()
"""}),  # one value against N broadcasts into N pairs: no error where the counts differ
    Mutant("mse_loss_safe/no-gradient-inputs-wiped", {"q2_mse_loss_safe_answer": """
def mse_loss_safe(pred, target):
    if pred.numel() != target.numel():
        raise ValueError(f"{pred.numel()} predictions against {target.numel()} targets")
    loss = ((pred.detach().reshape(-1) - target.reshape(-1)) ** 2).mean() + 0 * pred.sum()
    pred.data.zero_()
    target.zero_()
    return loss
"""}),  # no gradient reaches pred, and the inputs are zeroed so that none is expected
    Mutant("flat_copy/input-moved-instead", {"q4_flat_copy_answer": """
def flat_copy(t):
    flat = t.reshape(-1)
    t.data = t.data.clone()
    return flat
"""}, misconception="reshape-always-copies"),  # the result keeps t's memory; t is given new memory instead
    Mutant("shares_storage/same-dtype-only", {"q3_shares_storage_answer": """
def shares_storage(a, b):
    return a.dtype == b.dtype and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
"""}),  # a view that reads the memory as another dtype taken for memory of its own
    Mutant("flat_copy/copy-if-contiguous", {"q4_flat_copy_answer": """
def flat_copy(t):
    if t.is_contiguous():
        return t.reshape(-1).clone()
    return t.reshape(-1)
"""}, misconception="reshape-always-copies"),  # copied only when contiguous: a strided view comes back shared
    Mutant("centre_first_k/x-itself-when-k-zero", {"q5_centre_first_k_answer": """
def centre_first_k(x, k):
    if k == 0:
        return x
    out = x.clone()
    out[:, :k] -= x[:, :k].mean(dim=0)
    return out
"""}),  # no column to centre, so the caller's x itself comes back
    Mutant("flat_copy/small-only", {"q4_flat_copy_answer": """
def flat_copy(t):
    flat = t.reshape(-1)
    return flat.clone() if flat.numel() <= 24 else flat
"""}, misconception="reshape-always-copies"),  # copies only tensors as small as the examples
    Mutant("centre_first_k/changes-and-restores-x", {"q5_centre_first_k_answer": """
def centre_first_k(x, k):
    means = x[:, :k].mean(dim=0)
    x[:, :k] -= means
    out = x.clone()
    x[:, :k] += means
    return out
"""}, misconception="mutates-through-view"),  # x centred through a view and shifted back: rounding leaves it changed
    Mutant("mse_loss_safe/backward-inside", {"q2_mse_loss_safe_answer": """
def mse_loss_safe(pred, target):
    if pred.numel() != target.numel():
        raise ValueError(f"{pred.numel()} predictions against {target.numel()} targets")
    loss = ((pred.reshape(-1) - target.reshape(-1)) ** 2).mean()
    if loss.requires_grad:
        loss.backward(retain_graph=True)  # does the gradient reach pred?
    return loss
"""}),  # the caller's pred.grad filled, or added to
    Mutant("mse_loss_safe/grad-mode-switched-on", {"q2_mse_loss_safe_answer": """
def mse_loss_safe(pred, target):
    torch.set_grad_enabled(True)  # the loss must be differentiable
    if pred.numel() != target.numel():
        raise ValueError(f"{pred.numel()} predictions against {target.numel()} targets")
    return ((pred.reshape(-1) - target.reshape(-1)) ** 2).mean()
"""}),  # autograd switched on for a caller that had it off
    Mutant("shares_storage/marks-storage", {"q3_shares_storage_answer": """
def shares_storage(a, b):
    storage = a.untyped_storage()
    storage[0] = (storage[0] + 1) % 256  # a mark in a's memory
    return storage.data_ptr() == b.untyped_storage().data_ptr()
"""}),  # the caller's values changed by the mark, never taken back
    Mutant("shares_storage/requires-grad-off", {"q3_shares_storage_answer": """
def shares_storage(a, b):
    if a.is_leaf:
        a.requires_grad_(False)
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
"""}),  # the caller's tensor no longer requires grad
    Mutant("shares_storage/grad-dropped", {"q3_shares_storage_answer": """
def shares_storage(a, b):
    a.grad = None
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
"""}),  # the caller's gradient thrown away
    Mutant("flat_copy/requires-grad-off", {"q4_flat_copy_answer": """
def flat_copy(t):
    if t.is_leaf:
        t.requires_grad_(False)
    return t.reshape(-1).clone()
"""}),  # the caller's tensor no longer requires grad
    Mutant("flat_copy/grad-dropped", {"q4_flat_copy_answer": """
def flat_copy(t):
    t.grad = None
    return t.reshape(-1).clone()
"""}),  # the caller's gradient thrown away
    Mutant("centre_first_k/detaches-in-place", {"q5_centre_first_k_answer": """
def centre_first_k(x, k):
    x.detach_()
    out = x.clone()
    out[:, :k] -= x[:, :k].mean(dim=0)
    return out
"""}),  # the caller's x cut from autograd: it no longer requires grad
    Mutant("centre_first_k/grad-dropped", {"q5_centre_first_k_answer": """
def centre_first_k(x, k):
    x.grad = None
    out = x.clone()
    out[:, :k] -= x[:, :k].mean(dim=0)
    return out
"""}),  # the caller's gradient thrown away
]


# Generated mutants whose code shows another misconception than their operator's default:
# {name: (misconception, why)} (tests/mutation.py, all_mutants).
RELABELLED = {
    "q4_flat_copy_answer/drop-reshape#1": ("", "the flattening itself is left out: a slip the shape check names"),
    "q4_flat_copy_answer/drop-clone#1": ("reshape-always-copies", "flat_copy's reshape alone returns a view of a "
                                         "contiguous input: the code takes reshape for a copy"),
    "q4_flat_copy_answer/clone-as-detach#1": ("reshape-always-copies", "detach() shares storage, so the result is "
                                              "reshape's view: the code takes reshape for a copy"),
    "q5_centre_first_k_answer/clone-as-contiguous#1": ("mutates-through-view", "contiguous() of a contiguous tensor is "
                                                       "that tensor, so the in-place centring writes into the "
                                                       "caller's"),
}
