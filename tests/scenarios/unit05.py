"""Scripted submissions for assignment 05_no_grad (see unit01.py)."""
from scenarios import Mutant, Scenario

ASSIGNMENT = "05_no_grad"
NOTEBOOK = "05_no_grad.ipynb"

SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_evaluate_answer": '''
def evaluate(model, loader, loss_fn):
    mode = model.training
    model.eval()
    try:
        with torch.inference_mode():
            weighted = [(loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item(), len(x)) for x, y in loader]
    finally:
        model.train(mode)
    return sum(loss * n for loss, n in weighted) / sum(n for _, n in weighted)
''',
        "q2_train_epoch_answer": '''
def train_epoch(model, loader, loss_fn, optimizer):
    running, seen = torch.zeros((), device=DEVICE), 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.detach() * len(x)
        seen += len(x)
    return running.item() / seen
''',
        "q3_frozen_features_answer": '''
def frozen_features(backbone, x):
    return backbone(x).detach()
''',
        "q4_ema_update_answer": '''
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.copy_(decay * ema_param + (1 - decay) * param)
''',
    }),
    Scenario("alternative_b", answers={
        "q1_evaluate_answer": '''
@torch.no_grad()
def evaluate(model, loader, loss_fn):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    total = count = 0
    for x, y in loader:
        total += float(loss_fn(model(x.to(DEVICE)), y.to(DEVICE))) * x.shape[0]
        count += x.shape[0]
    for m, mode in modes.items():
        m.training = mode
    return total / count
''',
        "q2_train_epoch_answer": '''
def train_epoch(model, loader, loss_fn, optimizer):
    log = []
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x.to(DEVICE)), y.to(DEVICE))
        loss.backward()
        optimizer.step()
        log.append((loss.item(), len(y)))
    return sum(value * n for value, n in log) / sum(n for _, n in log)
''',
        "q3_frozen_features_answer": '''
@torch.no_grad()
def frozen_features(backbone, x):
    return backbone(x)
''',
        "q4_ema_update_answer": '''
@torch.no_grad()
def ema_update(ema_model, model, decay):
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.lerp_(param, 1 - decay)
''',
    }),
    Scenario("alternative_c", answers={
        "q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    device = next(model.parameters()).device
    training = model.training
    model.eval()
    total, count = torch.zeros((), dtype=torch.float64), 0
    with torch.no_grad():
        for x, y in loader:
            loss = loss_fn(model(x.to(device)), y.to(device), reduction="sum")
            total += loss.detach().cpu().double()
            count += y.numel()
    if training:
        model.train()
    return total.item() / count
""",
        "q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    device = next(model.parameters()).device
    weighted, examples = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        weighted += loss.detach().cpu().item() * targets.shape[0]
        examples += targets.shape[0]
    return weighted / examples
""",
        "q3_frozen_features_answer": """
def frozen_features(backbone, x):
    with torch.inference_mode(False), torch.no_grad():
        out = backbone(x)
    return out
""",
        "q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        ema_params = list(ema_model.parameters())
        torch._foreach_mul_(ema_params, decay)
        torch._foreach_add_(ema_params, list(model.parameters()), alpha=1 - decay)
""",
    }),
    Scenario("evaluate_batch_not_moved", answers={
        "q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item() * len(x)
            count += len(x)
    model.train(was_training)
    return total / count
""",
    }, loses={"q1_evaluate_tests"}, says=["Pitfall: model moved but batch not", "Device mismatch in aten."]),
    Scenario("train_epoch_batch_not_moved", answers={
        "q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
""",
    }, loses={"q2_train_epoch_tests"}, says=["Pitfall: model moved but batch not", "Device mismatch in aten."]),
    Scenario("missing_no_grad", answers={
        "q1_evaluate_answer": '''
def evaluate(model, loader, loss_fn):
    total, count = 0.0, 0
    for x, y in loader:
        total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
        count += len(x)
    return total / count
''',
    }, loses={"q1_evaluate_tests"}, says=["Pitfall: missing no_grad"]),
    Scenario("eval_as_no_grad", answers={
        "q1_evaluate_answer": '''
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for x, y in loader:
        total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
        count += len(x)
    model.train(was_training)
    return total / count
''',
    }, loses={"q1_evaluate_tests"}, says=["Pitfall: model.eval() used as if it were no_grad"]),
    Scenario("mode_not_restored", answers={
        "q1_evaluate_answer": '''
def evaluate(model, loader, loss_fn):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
            count += len(x)
    return total / count
''',
    }, loses={"q1_evaluate_tests"}, says=["Pitfall: train mode not restored after evaluation"]),
    Scenario("running_loss_tensor", answers={
        "q2_train_epoch_answer": '''
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss * len(x)
        count += len(x)
    return total.item() / count
''',
    }, loses={"q2_train_epoch_tests"}, says=["Pitfall: running loss kept as a tensor"]),
    Scenario("ema_records", answers={
        "q4_ema_update_answer": '''
def ema_update(ema_model, model, decay):
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        if ema_param.requires_grad:
            ema_param.data.mul_(decay).add_(param.data * (1 - decay))
        else:
            ema_param.mul_(decay).add_(param * (1 - decay))
''',
    }, loses={"q4_ema_update_tests"}, says=["Pitfall: missing no_grad"]),
    Scenario("quiz_wrong", answers={"quiz_q1_answer": 'q1 = "c"\n'}, loses={"quiz_q1_tests"}),
]

# Hand-written wrong answers for the mutation check (tests/mutation.py), where no regex says it.
MUTANTS = [
    Mutant("evaluate/eval-as-no-grad", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for x, y in loader:
        total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
        count += len(x)
    model.train(was_training)
    return total / count
"""}, misconception="eval-as-no-grad"),
    Mutant("evaluate/no-grad-without-eval", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
            count += len(x)
    return total / count
"""}, misconception="eval-as-no-grad"),
    Mutant("evaluate/always-back-to-train", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
            count += len(x)
    model.train()
    return total / count
"""}, misconception="mode-not-restored"),
    Mutant("evaluate/mean-of-batch-means", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        losses = [loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() for x, y in loader]
    model.train(was_training)
    return sum(losses) / len(losses)
"""}),
    Mutant("evaluate/returns-tensor", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total = total + loss_fn(model(x.to(DEVICE)), y.to(DEVICE)) * len(x)
            count += len(x)
    model.train(was_training)
    return total / count
"""}, misconception="running-loss-tensor"),
    Mutant("evaluate/submodules-left-in-eval", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
            count += len(x)
    model.training = was_training
    return total / count
"""}, misconception="mode-not-restored"),
    Mutant("train_epoch/running-loss-tensor", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss * len(x)
        count += len(x)
    return total.item() / count
"""}, misconception="running-loss-tensor"),
    Mutant("train_epoch/list-of-losses", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    losses, sizes = [], []
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss * len(x))
        sizes.append(len(x))
    return float(sum(losses)) / sum(sizes)
"""}, misconception="running-loss-tensor"),
    Mutant("train_epoch/loss-after-step", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        with torch.no_grad():
            total += loss_fn(model(x), y).item() * len(x)
        count += len(x)
    return total / count
"""}),
    Mutant("train_epoch/zero-grad-once", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    optimizer.zero_grad()
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
"""}, misconception="grad-accumulates"),
    Mutant("train_epoch/eval-mode", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    model.eval()
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    model.train()
    return total / count
"""}, misconception="mode-not-restored"),
    Mutant("frozen_features/graph-kept", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    return backbone(x)
"""}, misconception="missing-no-grad"),
    Mutant("frozen_features/eval-as-no-grad", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    backbone.eval()
    return backbone(x)
"""}, misconception="eval-as-no-grad"),
    Mutant("frozen_features/requires-grad-false", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    out = backbone(x)
    out.requires_grad = False
    return out
"""}, misconception="missing-no-grad"),
    Mutant("frozen_features/no-grad-on-input", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    return backbone(x.detach())
"""}, misconception="missing-no-grad"),
    # Features made under inference_mode: no graph, but a head trained on them cannot save them for backward.
    Mutant("frozen_features/inference-mode", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    with torch.inference_mode():
        return backbone(x)
"""}),
    Mutant("ema_update/records", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        if ema_param.requires_grad:
            ema_param.data.mul_(decay).add_(param.data * (1 - decay))
        else:
            ema_param.mul_(decay).add_(param * (1 - decay))
"""}, misconception="missing-no-grad"),
    Mutant("ema_update/rebinds", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param = decay * ema_param + (1 - decay) * param
"""}),
    Mutant("ema_update/swapped-decay", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(1 - decay).add_(param, alpha=decay)
"""}),
    Mutant("ema_update/new-parameters", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for (name, ema_param), param in zip(list(ema_model.named_parameters()), model.parameters()):
            module_name, _, attr = name.rpartition(".")
            owner = ema_model.get_submodule(module_name) if module_name else ema_model
            setattr(owner, attr, nn.Parameter(decay * ema_param + (1 - decay) * param))
"""}),
    Mutant("ema_update/returns-model", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(decay).add_(param, alpha=1 - decay)
    return ema_model
"""}),
    Mutant("evaluate/requires-grad-false", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    model.requires_grad_(False)
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        total += loss_fn(model(x), y).item() * len(x)
        count += len(x)
    model.train(was_training)
    return total / count
"""}, misconception="requires-grad-as-no-grad"),
    # Gradients turned off for the loop and back on for every parameter: a frozen layer comes back trainable.
    Mutant("evaluate/requires-grad-switched-back-on", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    model.requires_grad_(False)
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        total += loss_fn(model(x), y).item() * len(x)
        count += len(x)
    model.requires_grad_(True)
    model.train(was_training)
    return total / count
"""}),
    Mutant("frozen_features/backbone-requires-grad-false", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    backbone.requires_grad_(False)
    return backbone(x)
"""}, misconception="requires-grad-as-no-grad"),
    Mutant("ema_update/state-dict-values", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.state_dict().values()):
            ema_param.mul_(decay).add_(param, alpha=1 - decay)
"""}, misconception="state-dict-as-parameters"),
    Mutant("ema_update/both-state-dicts", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.state_dict().values(), model.state_dict().values()):
            ema_param.mul_(decay).add_(param, alpha=1 - decay)
"""}, misconception="state-dict-as-parameters"),
    Mutant("frozen_features/backbone-left-in-eval", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    backbone.eval()
    with torch.no_grad():
        return backbone(x)
"""}, misconception="mode-not-restored"),
    Mutant("train_epoch/names-cross-entropy", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
"""}),  # calls F.cross_entropy itself instead of the loss_fn handed in
    Mutant("train_epoch/reports-cross-entropy", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        out = model(x)
        loss = loss_fn(out, y)
        loss.backward()
        optimizer.step()
        total += F.cross_entropy(out.detach(), y).item() * len(x)
        count += len(x)
    return total / count
"""}),  # trains on loss_fn, reports F.cross_entropy
    Mutant("evaluate/names-cross-entropy", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was = model.training
    model.eval()
    with torch.no_grad():
        total = sum(F.cross_entropy(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x) for x, y in loader)
    model.train(was)
    return total / sum(len(x) for x, _ in loader)
"""}),  # calls F.cross_entropy itself instead of the loss_fn handed in
    Mutant("ema_update/writes-back", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(decay).add_(param, alpha=1 - decay)
            param.copy_(ema_param)
"""}),  # copies the average back into the trained model too
    Mutant("evaluate/iterates-loader-twice", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        total = sum(loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x) for x, y in loader)
    model.train(was_training)
    return total / sum(len(y) for _, y in loader)
"""}),
    Mutant("train_epoch/zero-grad-after-step", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
"""}, misconception="grad-accumulates"),
    Mutant("train_epoch/iterates-loader-twice", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total = 0.0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
    return total / sum(len(x) for x, _ in loader)
"""}),
    Mutant("train_epoch/len-of-loader", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    for i, (x, y) in enumerate(loader):
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
        if i == len(loader) - 1:
            break
    return total / count
"""}),
    Mutant("frozen_features/toggles-requires-grad", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    backbone.requires_grad_(False)
    out = backbone(x)
    backbone.requires_grad_(True)
    return out
"""}),  # turns every parameter back on, a frozen one included
    Mutant("frozen_features/eval-and-back", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    was = backbone.training
    backbone.eval()
    with torch.no_grad():
        out = backbone(x)
    backbone.train(was)
    return out
"""}),
    Mutant("ema_update/linear-layers-only", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for e, m in zip(ema_model.modules(), model.modules()):
            if isinstance(e, nn.Linear):
                e.weight.mul_(decay).add_(m.weight, alpha=1 - decay)
                e.bias.mul_(decay).add_(m.bias, alpha=1 - decay)
"""}),
    Mutant("ema_update/data-rebound", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    for e, m in zip(ema_model.parameters(), model.parameters()):
        e.data = decay * e.data + (1 - decay) * m.data
"""}),
    Mutant("evaluate/grad-switched-off-globally", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    torch.set_grad_enabled(False)
    total, count = 0.0, 0
    for x, y in loader:
        total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
        count += len(x)
    model.train(was_training)
    return total / count
"""}),
    Mutant("frozen_features/grad-off-globally", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    torch.set_grad_enabled(False)
    return backbone(x)
"""}),
    # The backbone's requires_grad switched off for the call and each flag put back: an x that
    # requires grad is still recorded.
    Mutant("frozen_features/requires-grad-off-and-restored", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    flags = [p.requires_grad for p in backbone.parameters()]
    backbone.requires_grad_(False)
    out = backbone(x)
    for p, flag in zip(backbone.parameters(), flags):
        p.requires_grad_(flag)
    return out
"""}, misconception="missing-no-grad"),
    # Recording switched off, then on at the end, whatever it was when evaluate was called.
    Mutant("evaluate/grad-on-after", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    torch.set_grad_enabled(False)
    total, count = 0.0, 0
    for x, y in loader:
        total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
        count += len(x)
    torch.set_grad_enabled(True)
    model.train(was_training)
    return total / count
"""}),
    # The caller's gradients cleared before the evaluation.
    Mutant("evaluate/zero-grad", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    model.zero_grad()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
            count += len(x)
    model.train(was_training)
    return total / count
"""}),
    # The model sent through half precision and back once evaluated: its weights rounded.
    Mutant("evaluate/half-round-trip", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
            count += len(x)
    model.train(was_training)
    model.half().float()
    return total / count
"""}),
    # The batches consumed as a queue: a list handed over comes back empty.
    Mutant("evaluate/pops-batches", {"q1_evaluate_answer": """
def evaluate(model, loader, loss_fn):
    batches = loader if isinstance(loader, list) else list(loader)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        while batches:
            x, y = batches.pop(0)
            total += loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x)
            count += len(x)
    model.train(was_training)
    return total / count
"""}),
    # Left in eval mode at the end of the epoch, ready for an evaluation.
    Mutant("train_epoch/eval-mode-after", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    model.eval()
    return total / count
"""}),
    # Every parameter made trainable first: a frozen layer comes back trainable, and is trained.
    Mutant("train_epoch/unfreezes", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    model.requires_grad_(True)
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
"""}),
    # Recording switched on for the epoch and off once it is done: off for the caller.
    Mutant("train_epoch/grad-off-after", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    torch.set_grad_enabled(True)
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    torch.set_grad_enabled(False)
    return total / count
"""}),
    # The caller's batches made to require grad (to see the inputs' gradients): backward fills their .grad.
    Mutant("train_epoch/batch-requires-grad", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.requires_grad_().to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
"""}),
    # The batches consumed as a queue: a list handed over comes back empty.
    Mutant("train_epoch/pops-batches", {"q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer):
    batches = loader if isinstance(loader, list) else list(loader)
    total, count = 0.0, 0
    while batches:
        x, y = batches.pop(0)
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
"""}),
    # Recording switched off for the features, then on, whatever it was when frozen_features was called.
    Mutant("frozen_features/grad-on-after", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    torch.set_grad_enabled(False)
    out = backbone(x)
    torch.set_grad_enabled(True)
    return out
"""}),
    # The backbone kept in evaluation mode once used, only its own flag put back: its layers stay in eval.
    Mutant("frozen_features/submodules-left-in-eval", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    was_training = backbone.training
    with torch.no_grad():
        out = backbone(x)
    backbone.eval()
    backbone.training = was_training
    return out
"""}, misconception="mode-not-restored"),
    # x switched off too, so that nothing is recorded from it: the caller's x no longer requires grad.
    Mutant("frozen_features/input-requires-grad-off", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    x.requires_grad_(False)
    with torch.no_grad():
        return backbone(x)
"""}),
    # The input's gradient thrown away, so that nothing flows back into it.
    Mutant("frozen_features/clears-input-grad", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    x.grad = None
    with torch.no_grad():
        return backbone(x)
"""}),
    # The backbone's gradients cleared, so that none reach it.
    Mutant("frozen_features/backbone-zero-grad", {"q3_frozen_features_answer": """
def frozen_features(backbone, x):
    backbone.zero_grad()
    with torch.no_grad():
        return backbone(x)
"""}),
    # Recording switched off for the update, then on, whatever it was when ema_update was called.
    Mutant("ema_update/grad-on-after", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    torch.set_grad_enabled(False)
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.mul_(decay).add_(param, alpha=1 - decay)
    torch.set_grad_enabled(True)
"""}),
    # The EMA copy put in the trained model's mode.
    Mutant("ema_update/mode-copied", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    ema_model.train(model.training)
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(decay).add_(param, alpha=1 - decay)
"""}),
    # The trained model's parameters switched off, so that reading them records nothing.
    Mutant("ema_update/model-requires-grad-off", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    model.requires_grad_(False)
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(decay).add_(param, alpha=1 - decay)
"""}),
    # The trained model's gradients cleared once averaged, ready for the next step.
    Mutant("ema_update/model-zero-grad", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(decay).add_(param, alpha=1 - decay)
    model.zero_grad()
"""}),
    # The EMA copy's gradients cleared, since it is never trained.
    Mutant("ema_update/ema-zero-grad", {"q4_ema_update_answer": """
def ema_update(ema_model, model, decay):
    ema_model.zero_grad()
    with torch.no_grad():
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.mul_(decay).add_(param, alpha=1 - decay)
"""}),
]


# Generated mutants whose code shows another misconception than their operator's default:
# {name: (misconception, why)} (tests/mutation.py, all_mutants).
RELABELLED = {
    "q1_evaluate_answer/drop-no-grad#1": ("eval-as-no-grad", "the code still calls model.eval() and nothing else: "
                                          "it takes eval() for the switch that stops recording"),
    "q1_evaluate_answer/no-grad-as-enable-grad#1": ("eval-as-no-grad", "recording is on around a model put in eval(): "
                                                    "eval() taken for the switch that stops recording"),
}
