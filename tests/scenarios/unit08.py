"""Scripted submissions for assignment 08_capstone (see unit01.py)."""
from scenarios import Scenario

ASSIGNMENT = "08_capstone"
NOTEBOOK = "08_capstone.ipynb"

RUN_PREFIX = '''
def make_regressor():
    model = Regressor(3)
    model.fit_normaliser(make_data(seed=0)[0])
    return model

'''

SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_regressor_answer": '''
class Regressor(nn.Module):
    def __init__(self, in_features, hidden=16):
        super().__init__()
        self.register_buffer("mean", torch.zeros(in_features))
        self.register_buffer("std", torch.ones(in_features))
        self.hidden = nn.Linear(in_features, hidden)
        self.out = nn.Linear(hidden, 1)

    def fit_normaliser(self, x):
        self.mean = x.mean(dim=0).detach().to(self.mean.device)
        self.std = x.std(dim=0).detach().to(self.std.device)

    def forward(self, x):
        z = (x - self.mean) / self.std
        return self.out(torch.relu(self.hidden(z))).view(-1)
''',
        "q2_train_epoch_answer": '''
def train_epoch(model, loader, loss_fn, optimizer, device):
    running, seen = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += float(loss.detach()) * x.shape[0]
        seen += x.shape[0]
    return running / seen
''',
        "q3_evaluate_answer": '''
def evaluate(model, loader, loss_fn, device):
    mode = model.training
    model.eval()
    try:
        with torch.inference_mode():
            parts = [(loss_fn(model(x.to(device)), y.to(device)).item(), len(y)) for x, y in loader]
    finally:
        model.train(mode)
    return sum(l * n for l, n in parts) / sum(n for _, n in parts)
''',
        "q4_run_answer": RUN_PREFIX + '''
def run(folder, epochs, device, stop_after=None, make_model=make_regressor, train_epoch=train_epoch, evaluate=evaluate):
    checkpoint_path = str(Path(folder) / "checkpoint.pt")
    torch.manual_seed(0)
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    start, history = 1, []
    if Path(checkpoint_path).exists():
        saved = torch.load(checkpoint_path, map_location="cpu")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        start, history = saved["epoch"] + 1, list(saved["history"])
    train_data = batches(*make_data(seed=0))
    val_data = batches(*make_data(seed=1))
    epoch = start
    while epoch <= epochs and (stop_after is None or epoch <= stop_after):
        record = {"epoch": epoch,
                  "train_loss": train_epoch(model, train_data, F.mse_loss, optimizer, device),
                  "val_loss": evaluate(model, val_data, F.mse_loss, device)}
        history.append(record)
        torch.save({"epoch": epoch, "history": history, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict()}, checkpoint_path)
        epoch += 1
    return history
''',
    }),
    Scenario("alternative_b", answers={
        "q1_regressor_answer": '''
class Regressor(nn.Module):
    def __init__(self, in_features, hidden=16):
        super().__init__()
        self.register_buffer("mean", torch.zeros(in_features), persistent=True)
        self.register_buffer("std", torch.ones(in_features), persistent=True)
        self.layers = nn.ModuleList([nn.Linear(in_features, hidden), nn.Linear(hidden, 1)])

    def fit_normaliser(self, x):
        with torch.no_grad():
            self.mean[:] = x.mean(0)
            self.std[:] = x.std(0)

    def forward(self, x):
        h = torch.relu(self.layers[0]((x - self.mean) / self.std))
        return self.layers[1](h)[:, 0]
''',
        "q2_train_epoch_answer": '''
def train_epoch(model, loader, loss_fn, optimizer, device):
    losses = []
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
        losses.append((loss.item(), len(x)))
    return sum(l * n for l, n in losses) / sum(n for _, n in losses)
''',
        "q3_evaluate_answer": '''
@torch.no_grad()
def evaluate(model, loader, loss_fn, device):
    previous = model.training
    model.train(False)
    total = count = 0
    for x, y in loader:
        total += loss_fn(model(x.to(device)), y.to(device)).item() * len(x)
        count += len(x)
    model.train(previous)
    return total / count
''',
        "q4_run_answer": RUN_PREFIX + '''
def run(folder, epochs, device, stop_after=None, make_model=make_regressor, train_epoch=train_epoch, evaluate=evaluate):
    path = Path(folder) / "checkpoint.pt"
    saved = torch.load(path, map_location=device, weights_only=True) if path.exists() else None
    torch.manual_seed(0)
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    history = []
    if saved is not None:
        model.load_state_dict(saved["weights"])
        optimizer.load_state_dict(saved["optimizer_state"])
        history = saved["log"]
    last = epochs if stop_after is None else min(epochs, stop_after)
    for epoch in range(len(history) + 1, last + 1):
        train_loss = train_epoch(model, batches(*make_data(seed=0)), F.mse_loss, optimizer, device)
        val_loss = evaluate(model, batches(*make_data(seed=1)), F.mse_loss, device)
        history = history + [{"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss}]
        torch.save({"weights": model.state_dict(), "optimizer_state": optimizer.state_dict(), "log": history}, path)
    return history
''',
    }),
    Scenario("column_predictions", answers={
        "q1_regressor_answer": '''
class Regressor(nn.Module):
    def __init__(self, in_features, hidden=16):
        super().__init__()
        self.register_buffer("mean", torch.zeros(in_features))
        self.register_buffer("std", torch.ones(in_features))
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    @torch.no_grad()
    def fit_normaliser(self, x):
        self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0))

    def forward(self, x):
        return self.net((x - self.mean) / self.std)
''',
    }, loses={"q1_regressor_tests"}, says=["Pitfall: an (N, 1) prediction against an (N,) target"]),
    Scenario("bare_normaliser", answers={
        "q1_regressor_answer": '''
class Regressor(nn.Module):
    def __init__(self, in_features, hidden=16):
        super().__init__()
        self.mean = torch.zeros(in_features)
        self.std = torch.ones(in_features)
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def fit_normaliser(self, x):
        self.mean, self.std = x.mean(0), x.std(0)

    def forward(self, x):
        return self.net((x - self.mean) / self.std).squeeze(-1)
''',
    }, loses={"q1_regressor_tests"}, says=["Pitfall: a bare tensor attribute"]),
    Scenario("batch_not_moved", answers={
        "q2_train_epoch_answer": '''
def train_epoch(model, loader, loss_fn, optimizer, device):
    total, count = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
''',
    }, loses={"q2_train_epoch_tests"}, says=["Pitfall: model moved but batch not"]),
    Scenario("running_loss_tensor", answers={
        "q2_train_epoch_answer": '''
def train_epoch(model, loader, loss_fn, optimizer, device):
    total, count = 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total = total + loss * len(x)
        count += len(x)
    return (total / count).item()
''',
    }, loses={"q2_train_epoch_tests"}, says=["Pitfall: running loss kept as a tensor"]),
    Scenario("mode_not_restored", answers={
        "q3_evaluate_answer": '''
def evaluate(model, loader, loss_fn, device):
    model.eval()
    with torch.no_grad():
        total = sum(loss_fn(model(x.to(device)), y.to(device)).item() * len(x) for x, y in loader)
    return total / sum(len(x) for x, _ in loader)
''',
    }, loses={"q3_evaluate_tests"}, says=["Pitfall: train mode not restored after evaluation"]),
    Scenario("optimizer_state_dropped", answers={
        "q4_run_answer": RUN_PREFIX + '''
def run(folder, epochs, device, stop_after=None, make_model=make_regressor, train_epoch=train_epoch, evaluate=evaluate):
    path = Path(folder) / "checkpoint.pt"
    torch.manual_seed(0)
    model = make_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    history = []
    if path.exists():
        checkpoint = torch.load(path, map_location=device, weights_only=True)
        model.load_state_dict(checkpoint["model"])
        history = checkpoint["history"]
    for epoch in range(len(history) + 1, epochs + 1):
        train_loss = train_epoch(model, batches(*make_data(seed=0)), F.mse_loss, optimizer, device)
        val_loss = evaluate(model, batches(*make_data(seed=1)), F.mse_loss, device)
        history.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss})
        torch.save({"model": model.state_dict(), "history": history}, path)
        if stop_after is not None and epoch >= stop_after:
            break
    return history
''',
    }, loses={"q4_run_tests"}, says=["Pitfall: optimiser state dropped"]),
    Scenario("quiz_wrong", answers={"quiz_q1_answer": 'q1 = "b"\n'}, loses={"quiz_q1_tests"}),
]
