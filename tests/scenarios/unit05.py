"""Scripted submissions for assignment 05_no_grad (see unit01.py)."""
from scenarios import Scenario

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
