"""Scripted submissions for assignment 04_autograd (see unit01.py)."""
from scenarios import Scenario

ASSIGNMENT = "04_autograd"
NOTEBOOK = "04_autograd.ipynb"

SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_walk_graph_answer": '''
def walk_graph(t):
    ops, leaves, seen = [], [], set()
    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        for child, _ in node.next_functions:
            visit(child)
    visit(t.grad_fn)
    return {"ops": ops, "leaves": leaves}
''',
        "q2_intermediate_grad_answer": '''
def intermediate_grad(x, w):
    h = x @ w
    h.retain_grad()
    torch.tanh(h).sum().backward()
    return h.grad
''',
        "q3_descend_answer": '''
def descend(f, w0, lr, steps):
    w = w0.detach().clone().requires_grad_()
    optimizer = torch.optim.SGD([w], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        f(w).backward()
        optimizer.step()
    return w.detach()
''',
        "q4_manual_grad_answer": '''
def manual_grad(x, w, b):
    residual = torch.einsum("nd,d->n", x, w) + b
    n = len(x)
    return torch.einsum("nd,n->d", x, residual) * (2 / n), residual.mean() * 2
''',
    }),
    Scenario("alternative_b", answers={
        "q1_walk_graph_answer": '''
from collections import deque

def walk_graph(t):
    ops, leaves, seen = [], [], set()
    queue = deque([t.grad_fn])
    while queue:
        node = queue.popleft()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
            continue
        ops.append(type(node).__name__)
        queue.extend(child for child, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
''',
        "q2_intermediate_grad_answer": '''
def intermediate_grad(x, w):
    h = (x @ w).detach().requires_grad_(True)   # a leaf of its own
    torch.tanh(h).sum().backward()
    return h.grad
''',
        "q3_descend_answer": '''
def descend(f, w0, lr, steps):
    w = w0.clone()
    for _ in range(steps):
        w = w.detach().requires_grad_(True)
        (grad,) = torch.autograd.grad(f(w), w)
        w = w - lr * grad
    return w.detach()
''',
        "q4_manual_grad_answer": '''
def manual_grad(x, w, b):
    residual = x @ w + b
    n = x.shape[0]
    dw = (2.0 / n) * (residual[:, None] * x).sum(dim=0)
    db = (2.0 / n) * residual.sum()
    return (dw, db)
''',
    }),
    Scenario("non_leaf_grad", answers={
        "q2_intermediate_grad_answer": '''
def intermediate_grad(x, w):
    h = x @ w
    torch.tanh(h).sum().backward()
    return h.grad
''',
    }, loses={"q2_intermediate_grad_tests"}, says=["Pitfall: expecting .grad on a non-leaf"]),
    Scenario("grad_accumulates", answers={
        "q3_descend_answer": '''
def descend(f, w0, lr, steps):
    w = w0.clone().requires_grad_(True)
    for _ in range(steps):
        f(w).backward()
        with torch.no_grad():
            w -= lr * w.grad
    return w.detach()
''',
    }, loses={"q3_descend_tests"}, says=["Pitfall: gradients silently doubled by accumulation"]),
    Scenario("static_graph", answers={
        "q3_descend_answer": '''
def descend(f, w0, lr, steps):
    w = w0.clone().requires_grad_(True)
    loss = f(w)
    for _ in range(steps):
        loss.backward(retain_graph=True)
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w.detach()
''',
    }, loses={"q3_descend_tests"}, says=["Pitfall: believing the graph is static"]),
    Scenario("quiz_wrong", answers={"quiz_q1_answer": 'q1 = "a"\n'}, loses={"quiz_q1_tests"}),
    Scenario("recording_by_value", answers={"q5_records_answer": (
        'records = {"p1": False, "p2": True, "p3": False, "p4": False, "p5": True, "p6": False, "p7": True}\n')},
        loses={"q5_records_tests"}, says=["Pitfall: recording decided by values rather than by requires_grad"]),
    Scenario("records_no_grad_confused", answers={"q5_records_answer": (
        'records = {"p1": False, "p2": True, "p3": True, "p4": False, "p5": True, "p6": True, "p7": True}\n')},
        loses={"q5_records_tests"}, says=["a * b under no_grad"]),
]
