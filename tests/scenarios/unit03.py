"""Scripted submissions for assignment 03_broadcasting_views (see unit01.py)."""
from scenarios import Scenario

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
    diff = pred.flatten() - target.flatten()
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
    Scenario("quiz_wrong", answers={"quiz_q3_answer": 'q3 = "c"\n'}, loses={"quiz_q3_tests"}),
]
