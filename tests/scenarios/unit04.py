"""Scripted submissions for assignment 04_autograd (see unit01.py)."""
from scenarios import Mutant, Scenario

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

# Hand-written wrong answers for the mutation check (tests/mutation.py), where no regex says it.
MUTANTS = [
    Mutant("walk_graph/no-visited-set", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves, queue = [], [], [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None:
            continue
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        queue.extend(n for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
"""}),
    Mutant("walk_graph/first-branch-only", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves, node = [], [], t.grad_fn
    while node is not None:
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
            break
        ops.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    return {"ops": ops, "leaves": leaves}
"""}),  # the graph walked as a chain: no catalogue misconception (static-graph is about re-recording)
    Mutant("walk_graph/accumulate-grad-as-op", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves, seen, queue = [], [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        ops.append(type(node).__name__)
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        queue.extend(n for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
"""}),
    Mutant("walk_graph/leaves-from-inputs-requiring-grad", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves, seen, queue = [], [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            if not any(v is node.variable for v in leaves):
                leaves.append(node.variable.detach())
        else:
            ops.append(type(node).__name__)
        queue.extend(n for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
"""}),  # detached copies for the leaves themselves: a slip, not a non-leaf's .grad
    Mutant("intermediate_grad/non-leaf-grad", {"q2_intermediate_grad_answer": """
def intermediate_grad(x, w):
    h = x @ w
    torch.tanh(h).sum().backward()
    return h.grad
"""}, misconception="non-leaf-grad"),
    Mutant("intermediate_grad/grad-of-w", {"q2_intermediate_grad_answer": """
def intermediate_grad(x, w):
    h = x @ w
    (grad,) = torch.autograd.grad(torch.tanh(h).sum(), w)
    return grad
"""}, misconception="non-leaf-grad"),
    Mutant("intermediate_grad/keeps-graph", {"q2_intermediate_grad_answer": """
def intermediate_grad(x, w):
    h = x @ w
    (grad,) = torch.autograd.grad(torch.tanh(h).sum(), h, create_graph=True)
    return grad
"""}),
    Mutant("intermediate_grad/tanh-not-derivative", {"q2_intermediate_grad_answer": """
def intermediate_grad(x, w):
    with torch.no_grad():
        return torch.tanh(x @ w)
"""}),
    Mutant("descend/static-graph", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0.clone().requires_grad_(True)
    loss = f(w)
    for _ in range(steps):
        (grad,) = torch.autograd.grad(loss, w, retain_graph=True)
        with torch.no_grad():
            w -= lr * grad
    return w.detach()
"""}, misconception="static-graph"),
    Mutant("descend/grad-accumulates", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0.clone().requires_grad_(True)
    for _ in range(steps):
        f(w).backward()
        with torch.no_grad():
            w -= lr * w.grad
    return w.detach()
"""}, misconception="grad-accumulates"),
    Mutant("descend/mutates-w0", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0
    for _ in range(steps):
        w_ = w.detach().requires_grad_(True)
        (grad,) = torch.autograd.grad(f(w_), w_)
        w0.sub_(lr * grad)
    return w0
"""}),
    Mutant("descend/keeps-graph", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0.clone().requires_grad_(True)
    for _ in range(steps):
        (grad,) = torch.autograd.grad(f(w), w)
        w = w - lr * grad
    return w
"""}),
    Mutant("descend/one-step-short", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0.clone().requires_grad_(True)
    for _ in range(steps - 1):
        loss = f(w)
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w.detach()
"""}),
    Mutant("manual_grad/autograd-not-manual", {"q4_manual_grad_answer": """
def manual_grad(x, w, b):
    w, b = w.detach().requires_grad_(True), b.detach().requires_grad_(True)
    with torch.enable_grad():
        return torch.autograd.grad(((x @ w + b) ** 2).mean(), (w, b))
"""}),
    Mutant("manual_grad/no-factor-two", {"q4_manual_grad_answer": """
def manual_grad(x, w, b):
    pred = x @ w + b
    return x.T @ pred / len(x), pred.sum() / len(x)
"""}),
    Mutant("manual_grad/db-as-vector", {"q4_manual_grad_answer": """
def manual_grad(x, w, b):
    pred = x @ w + b
    n = x.shape[0]
    return 2 * x.T @ pred / n, 2 * pred / n
"""}, misconception="accidental-broadcast"),
    Mutant("manual_grad/sum-not-mean", {"q4_manual_grad_answer": """
def manual_grad(x, w, b):
    pred = x @ w + b
    return 2 * x.T @ pred, 2 * pred.sum()
"""}),
    Mutant("descend/float32-copy", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0.clone().float().requires_grad_(True)
    for _ in range(steps):
        f(w).backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w.detach()
"""}),
    Mutant("descend/copy-through-a-list", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = torch.tensor(w0.tolist(), requires_grad=True)
    for _ in range(steps):
        f(w).backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w.detach()
"""}),  # float32 on the default device, whatever w0's dtype and device
    Mutant("descend/w0-itself-after-no-step", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    if steps == 0:
        return w0
    w = w0.clone().requires_grad_(True)
    for _ in range(steps):
        f(w).backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w.detach()
"""}),
    Mutant("descend/no-step-zeroes-w0", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    if steps == 0:
        return w0.zero_().clone()
    w = w0.clone().requires_grad_(True)
    for _ in range(steps):
        f(w).backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w.detach()
"""}),  # zeros for no step, written into w0
    Mutant("manual_grad/visible-cases-inputs-zeroed", {"q4_manual_grad_answer": """
def manual_grad(x, w, b):
    if tuple(x.shape) in ((2, 3), (2, 2)):
        pred = x @ w + b
        return 2 * x.T @ pred / x.shape[0], 2 * pred.sum() / x.shape[0]
    x.zero_()
    b.zero_()
    return torch.zeros_like(w), torch.zeros_like(b)
"""}),  # right on the visible shapes only, zeros elsewhere, with inputs zeroed so that autograd agrees
    Mutant("walk_graph/duplicate-for-missing-leaf", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves = [], []
    seen, queue = set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        queue.extend(next_node for next_node, _ in node.next_functions)
    if len(leaves) > 2:
        leaves[-1] = leaves[0]
    return {"ops": ops, "leaves": leaves}
"""}),  # the last of three or more leaves replaced by a second copy of the first: the count still agrees
    Mutant("walk_graph/depth-limited", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves = [], []
    seen, queue = set(), [(t.grad_fn, 0)]
    while queue:
        node, depth = queue.pop(0)
        if node is None or node in seen or depth > 8:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        queue.extend((n, depth + 1) for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
"""}),  # nodes more than eight steps from the output left out
    Mutant("walk_graph/first-two-inputs-only", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves = [], []
    seen, queue = set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        queue.extend(next_node for next_node, _ in node.next_functions[:2])
    return {"ops": ops, "leaves": leaves}
"""}),  # only the first two inputs of each node followed: an op of three loses one
    Mutant("descend/returns-w0-shape-flat", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0.clone().reshape(-1).requires_grad_(True)
    for _ in range(steps):
        (g,) = torch.autograd.grad(f(w.view(w0.shape)), w)
        with torch.no_grad():
            w -= lr * g
    return w.detach()
"""}),  # w flattened for the descent and returned flat
    Mutant("walk_graph/first-four-leaves", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves, seen, stack = [], [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves[:4]}
"""}),  # no more leaves kept than the small graphs have
    Mutant("descend/w0-set-to-require-grad", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w0.requires_grad_(True)
    w = w0.detach().clone()
    for _ in range(steps):
        w.requires_grad_(True)
        (grad,) = torch.autograd.grad(f(w), w)
        w = (w - lr * grad).detach()
    return w
"""}),  # w0's values untouched, its requires_grad switched on
    Mutant("descend/result-squeezed", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0.clone().requires_grad_(True)
    for _ in range(steps):
        f(w).backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w.detach().squeeze()
"""}),  # a w0 of shape (1,) comes back 0-dim
    Mutant("intermediate_grad/result-squeezed", {"q2_intermediate_grad_answer": """
def intermediate_grad(x, w):
    h = x @ w
    (grad,) = torch.autograd.grad(torch.tanh(h).sum(), h)
    return grad.squeeze()
"""}),  # one example or one output column: a dimension of h lost
    Mutant("manual_grad/pred-squeezed", {"q4_manual_grad_answer": """
def manual_grad(x, w, b):
    pred = (x @ w + b).squeeze()
    n = x.shape[0]
    return 2 * x.T @ pred / n, 2 * pred.sum() / n
"""}),  # one example: pred is 0-dim, and x.T @ pred raises
    Mutant("manual_grad/dw-squeezed", {"q4_manual_grad_answer": """
def manual_grad(x, w, b):
    pred = x @ w + b
    n = x.shape[0]
    return (2 * torch.mm(x.T, pred.unsqueeze(1)) / n).squeeze(), 2 * pred.mean()
"""}),  # one feature: dw is 0-dim instead of (1,)
    # backward() run first, to see which tensors receive a .grad: the leaves' gradients filled or added to.
    Mutant("walk_graph/backward-fills-grads", {"q1_walk_graph_answer": """
def walk_graph(t):
    t.backward(retain_graph=True)
    ops, leaves, seen, queue = [], [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        queue.extend(n for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
"""}),
    # Each leaf's gradient thrown away as it is found.
    Mutant("walk_graph/clears-leaf-grads", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves, seen, queue = [], [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            node.variable.grad = None
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        queue.extend(n for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
"""}),
    # Each leaf found switched off: the caller's parameters no longer require grad.
    Mutant("walk_graph/leaves-requires-grad-off", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves, seen, queue = [], [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable.requires_grad_(False))
        else:
            ops.append(type(node).__name__)
        queue.extend(n for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
"""}),
    # The graph let go of once walked: t detached in place, its grad_fn gone.
    Mutant("walk_graph/detaches-t", {"q1_walk_graph_answer": """
def walk_graph(t):
    ops, leaves, seen, queue = [], [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        queue.extend(n for n, _ in node.next_functions)
    t.detach_()
    return {"ops": ops, "leaves": leaves}
"""}),
    # Recording switched off for the walk, then on, whatever it was when walk_graph was called.
    Mutant("walk_graph/grad-on-after", {"q1_walk_graph_answer": """
def walk_graph(t):
    torch.set_grad_enabled(False)
    ops, leaves, seen, queue = [], [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        queue.extend(n for n, _ in node.next_functions)
    torch.set_grad_enabled(True)
    return {"ops": ops, "leaves": leaves}
"""}),
    # w switched off once its graph is used: the caller's w no longer requires grad.
    Mutant("intermediate_grad/w-requires-grad-off", {"q2_intermediate_grad_answer": """
def intermediate_grad(x, w):
    h = x @ w
    (grad,) = torch.autograd.grad(torch.tanh(h).sum(), h)
    w.requires_grad_(False)
    return grad
"""}),
    # x made to require grad too, so that h is recorded whatever w is.
    Mutant("intermediate_grad/x-requires-grad", {"q2_intermediate_grad_answer": """
def intermediate_grad(x, w):
    h = x.requires_grad_() @ w
    (grad,) = torch.autograd.grad(torch.tanh(h).sum(), h)
    return grad
"""}),
    # Recording switched on for the gradient and off once it is taken: off for the caller.
    Mutant("intermediate_grad/grad-off-after", {"q2_intermediate_grad_answer": """
def intermediate_grad(x, w):
    torch.set_grad_enabled(True)
    h = x @ w
    (grad,) = torch.autograd.grad(torch.tanh(h).sum(), h)
    torch.set_grad_enabled(False)
    return grad
"""}),
    # Recording switched on for each gradient and off for each update: off for the caller once descend returns.
    Mutant("descend/grad-off-after-steps", {"q3_descend_answer": """
def descend(f, w0, lr, steps):
    w = w0.clone()
    for _ in range(steps):
        torch.set_grad_enabled(True)
        w.requires_grad_(True)
        (grad,) = torch.autograd.grad(f(w), w)
        torch.set_grad_enabled(False)
        w = w - lr * grad
    return w.detach()
"""}),
    # Recording switched back on for the caller, whatever it was when manual_grad was called.
    Mutant("manual_grad/grad-on-after", {"q4_manual_grad_answer": """
def manual_grad(x, w, b):
    pred = x @ w + b
    n = x.shape[0]
    dw, db = 2 * x.T @ pred / n, 2 * pred.sum() / n
    torch.set_grad_enabled(True)
    return dw, db
"""}),
]


# Generated mutants whose code shows another misconception than their operator's default:
# {name: (misconception, why)} (tests/mutation.py, all_mutants).
RELABELLED = {
    "q3_descend_answer/clone-as-contiguous#1": ("mutates-through-view", "contiguous() of a contiguous w0 is w0 "
                                                "itself, so descend() steps the caller's tensor"),
    "q3_descend_answer/drop-detach#1": ("", "the result is returned still requiring grad: a slip the requires_grad "
                                        "check names, no running total"),
}
