"""Scripted submissions for assignment 08_capstone (see unit01.py)."""
from scenarios import Mutant, Scenario

ASSIGNMENT = "08_capstone"
NOTEBOOK = "08_capstone.ipynb"

RUN_PREFIX = '''
def make_regressor(config):
    model = Regressor(3, hidden=config["hidden"])
    model.fit_normaliser(make_data(seed=0)[0])
    return model

'''
# The preamble and run's signature, as the task gives it; each answer's body follows on the next line.
RUN_HEAD = RUN_PREFIX + ("\ndef run(folder, epochs, device, stop_after=None, config=None, make_model=make_regressor, "
                         "train_epoch=train_epoch, evaluate=evaluate):")


REGRESSOR = """
class Regressor(nn.Module):
    def __init__(self, in_features, hidden=16):
        super().__init__()
        {statistics}
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def fit_normaliser(self, x):
        {fit}

    def forward(self, x):
        return self.net((x - self.mean) / self.std).squeeze(-1)
"""
BUFFERS = """self.register_buffer("mean", torch.zeros(in_features))
        self.register_buffer("std", torch.ones(in_features))"""
FIT = """with torch.no_grad():
            self.mean.copy_(x.mean(0))
            self.std.copy_(x.std(0))"""


def regressor(statistics: str = BUFFERS, fit: str = FIT) -> dict:
    return {"q1_regressor_answer": REGRESSOR.replace("{statistics}", statistics).replace("{fit}", fit)}


RUN = RUN_HEAD + """
    path = Path(folder) / "checkpoint.pt"
    config = {"hidden": 16, "lr": 0.01} if config is None else dict(config)
    checkpoint = torch.load(path, {load}) if path.exists() else None
    if checkpoint is not None:
        config = checkpoint["config"]
    torch.manual_seed(0)
    {model}
    {optimizer}
    history, done = [], 0
    if checkpoint is not None:
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        history, done = checkpoint["history"], checkpoint["epoch"]
    for epoch in range(done + 1, epochs + 1):
        train_loss = train_epoch(model, batches(*make_data(seed=0)), F.mse_loss, optimizer, device)
        val_loss = evaluate(model, batches(*make_data(seed=1)), F.mse_loss, device)
        history.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss})
        torch.save({"model": {saved}, "optimizer": optimizer.state_dict(), "epoch": epoch, "config": {config},
                    "history": history}, path)
        if stop_after is not None and epoch >= stop_after:
            break
    return history
"""


def run_answer(model="model = make_model(config).to(device)",
               optimizer='optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])',
               load="map_location=device, weights_only=True", saved="model.state_dict()", config="config") -> dict:
    return {"q4_run_answer": RUN.replace("{model}", model).replace("{optimizer}", optimizer)
            .replace("{load}", load).replace("{saved}", saved).replace("{config}", config)}


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
        "q4_run_answer": RUN_HEAD + '''
    checkpoint_path = str(Path(folder) / "checkpoint.pt")
    saved = torch.load(checkpoint_path, map_location="cpu") if Path(checkpoint_path).exists() else None
    settings = saved["config"] if saved else {"hidden": 16, "lr": 0.01, **(config or {})}
    torch.manual_seed(0)
    model = make_model(settings).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings["lr"])
    start, history = 1, []
    if saved:
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
                    "optimizer": optimizer.state_dict(), "config": dict(settings)}, checkpoint_path)
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
        "q4_run_answer": RUN_HEAD + '''
    path = Path(folder) / "checkpoint.pt"
    saved = torch.load(path, map_location=device, weights_only=True) if path.exists() else None
    hidden, lr = (saved["config"]["hidden"], saved["config"]["lr"]) if saved else (
        (config or {}).get("hidden", 16), (config or {}).get("lr", 0.01))
    torch.manual_seed(0)
    model = make_model({"hidden": hidden, "lr": lr}).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    if saved is not None:
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        history = saved["history"]
    last = epochs if stop_after is None else min(epochs, stop_after)
    for epoch in range(len(history) + 1, last + 1):
        train_loss = train_epoch(model, batches(*make_data(seed=0)), F.mse_loss, optimizer, device)
        val_loss = evaluate(model, batches(*make_data(seed=1)), F.mse_loss, device)
        history = history + [{"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss}]
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "history": history,
                    "epoch": int(epoch), "config": {"hidden": int(hidden), "lr": float(lr)}}, path)
    return history
''',
    }),
    Scenario("alternative_c", answers={
        **regressor(fit="""self.mean.copy_(x.detach().mean(0))
        self.std.copy_(x.detach().std(0))"""),
        "q2_train_epoch_answer": """
def train_epoch(model, loader, loss_fn, optimizer, device):
    model.to(device)
    sums = torch.zeros(2, dtype=torch.float64)
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        for p in model.parameters():
            p.grad = None
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        sums += torch.tensor([loss.detach().cpu().item() * len(y), len(y)], dtype=torch.float64)
    return (sums[0] / sums[1]).item()
""",
        "q3_evaluate_answer": """
def evaluate(model, loader, loss_fn, device):
    states = [m.training for m in model.modules()]
    model.eval()
    with torch.inference_mode():
        total = sum(loss_fn(model(x.to(device)), y.to(device), reduction="sum").item() for x, y in loader)
        count = sum(len(y) for _, y in loader)
    for m, state in zip(model.modules(), states):
        m.training = state
    return total / count
""",
        **run_answer(model="model = make_model(config)\n    model.to(device)",
                     load="map_location=torch.device(device), weights_only=True"),
    }),
    # The model's state saved as CPU copies, the model itself left on the device.
    Scenario("alternative_d",
             answers=run_answer(saved="{name: tensor.cpu() for name, tensor in model.state_dict().items()}")),
    Scenario("statistics_as_parameter", answers=regressor(
        statistics="""self.mean = nn.Parameter(torch.zeros(in_features), requires_grad=False)
        self.std = nn.Parameter(torch.ones(in_features), requires_grad=False)"""),
        loses={"q1_regressor_tests"}, says=["Pitfall: statistics stored as a Parameter"]),
    Scenario("fit_normaliser_records", answers=regressor(fit="""self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0))"""),
        loses={"q1_regressor_tests"},
        says=["Pitfall: missing no_grad", "fit_normaliser(x) on an x that requires grad"]),
    Scenario("evaluate_batch_not_moved", answers={
        "q3_evaluate_answer": """
def evaluate(model, loader, loss_fn, device):
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
    }, loses={"q3_evaluate_tests"}, says=["Pitfall: model moved but batch not", "Device mismatch in aten."]),
    Scenario("run_model_not_moved", answers=run_answer(model="model = make_model(config)"),
             loses={"q4_run_safety_tests"}, says=["with meta as the device: Device mismatch in aten."]),
    Scenario("run_trains_nothing", answers=run_answer(
        optimizer='optimizer = torch.optim.Adam(make_model(config).to(device).parameters(), lr=config["lr"])'),
        loses={"q4_run_tests", "q4_run_safety_tests"},
        says=["Pitfall: an optimiser built on the old model's parameters"]),
    Scenario("run_unsafe_load", answers=run_answer(load="map_location=device, weights_only=False"),
             loses={"q4_run_safety_tests"}, says=["Pitfall: weights_only=False on an untrusted file"]),
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
        "q4_run_answer": RUN_HEAD + '''
    path = Path(folder) / "checkpoint.pt"
    config = config or {"hidden": 16, "lr": 0.01}
    checkpoint = torch.load(path, map_location=device, weights_only=True) if path.exists() else None
    config = checkpoint["config"] if checkpoint else config
    torch.manual_seed(0)
    model = make_model(config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    history = []
    if checkpoint:
        model.load_state_dict(checkpoint["model"])
        history = checkpoint["history"]
    for epoch in range(len(history) + 1, epochs + 1):
        train_loss = train_epoch(model, batches(*make_data(seed=0)), F.mse_loss, optimizer, device)
        val_loss = evaluate(model, batches(*make_data(seed=1)), F.mse_loss, device)
        history.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss})
        torch.save({"model": model.state_dict(), "history": history, "epoch": epoch, "config": config}, path)
        if stop_after is not None and epoch >= stop_after:
            break
    return history
''',
    }, loses={"q4_run_tests", "q4_run_safety_tests"}, says=["Pitfall: optimiser state dropped"]),
    Scenario("quiz_wrong", answers={"quiz_q1_answer": 'q1 = "b"\n'}, loses={"quiz_q1_tests"}),
]


def with_default_run(*changes: tuple[str, str]) -> dict:
    """The default run (run_answer()) with each (old, new) change made."""
    code = run_answer()["q4_run_answer"]
    for old, new in changes:
        assert old in code, old
        code = code.replace(old, new)
    return {"q4_run_answer": code}


TRAIN_EPOCH = """
def train_epoch(model, loader, loss_fn, optimizer, device):
    total, count = 0.0, 0
    {zero_once}for x, y in loader:
        {move}
        {zero}loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        {log}
        count += len(x)
    return {result}
"""


def train_epoch(move="x, y = x.to(device), y.to(device)", zero="optimizer.zero_grad()\n        ", zero_once="",
                log="total += loss.item() * len(x)", result="total / count") -> dict:
    return {"q2_train_epoch_answer": TRAIN_EPOCH.replace("{move}", move).replace("{zero}", zero)
            .replace("{zero_once}", zero_once).replace("{log}", log).replace("{result}", result)}


EVALUATE = """
def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    {eval}
    total, count = 0.0, 0
    with {context}:
        for x, y in loader:
            total += loss_fn(model({x}), {y}).item() * len(x)
            count += len(x)
    {restore}
    return total / count
"""


def evaluate(eval="model.eval()", context="torch.no_grad()", x="x.to(device)", y="y.to(device)",
             restore="model.train(was_training)") -> dict:
    return {"q3_evaluate_answer": EVALUATE.replace("{eval}", eval).replace("{context}", context)
            .replace("{x}", x).replace("{y}", y).replace("{restore}", restore)}


# Hand-written wrong answers for the mutation check (tests/mutation.py), where no regex says it.
MUTANTS = [
    Mutant("regressor/statistics-as-parameter", regressor(
        statistics="""self.mean = nn.Parameter(torch.zeros(in_features), requires_grad=False)
        self.std = nn.Parameter(torch.ones(in_features), requires_grad=False)"""),
        misconception="statistics-as-parameter"),
    Mutant("regressor/trainable-statistics", regressor(
        statistics="""self.mean = nn.Parameter(torch.zeros(in_features))
        self.std = nn.Parameter(torch.ones(in_features))"""), misconception="statistics-as-parameter"),
    Mutant("regressor/bare-statistics", regressor(
        statistics="""self.mean = torch.zeros(in_features)
        self.std = torch.ones(in_features)""", fit="self.mean, self.std = x.mean(0), x.std(0)"),
        misconception="bare-tensor-attribute"),
    Mutant("regressor/fit-records", regressor(fit="""self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0))"""), misconception="missing-no-grad"),
    Mutant("regressor/fit-rebinds-with-graph", regressor(fit="""self.mean = x.mean(0)
        self.std = x.std(0)"""), misconception="missing-no-grad"),
    Mutant("regressor/biased-std", regressor(fit="""with torch.no_grad():
            self.mean.copy_(x.mean(0))
            self.std.copy_(x.std(0, unbiased=False))""")),
    Mutant("regressor/fit-leaves-statistics-on-cpu", regressor(fit="""with torch.no_grad():
            self.mean = x.mean(0).cpu()
            self.std = x.std(0).cpu()"""), misconception="created-on-default-device"),
    Mutant("regressor/column-output",
           {"q1_regressor_answer": regressor()["q1_regressor_answer"].replace(".squeeze(-1)", "")},
           misconception="column-vs-flat-loss"),
    # A bare squeeze() gives () for one example: a slip with the shape, not a column against a flat target.
    Mutant("regressor/squeeze-all",
           {"q1_regressor_answer": regressor()["q1_regressor_answer"].replace(".squeeze(-1)", ".squeeze()")}),
    # Standardised with the batch's own mean and std: the same numbers on the data it was fitted on only.
    Mutant("regressor/batch-statistics",
           {"q1_regressor_answer": regressor()["q1_regressor_answer"].replace("(x - self.mean) / self.std",
                                                                           "(x - x.mean(0)) / x.std(0)")}),
    Mutant("train_epoch/batch-not-moved", train_epoch(move="pass"), misconception="batch-not-moved"),
    Mutant("train_epoch/target-not-moved", train_epoch(move="x = x.to(device)"), misconception="batch-not-moved"),
    Mutant("train_epoch/to-not-assigned", train_epoch(move="x.to(device), y.to(device)"),
           misconception="to-not-assigned"),
    Mutant("train_epoch/running-loss-tensor",
           train_epoch(log="total = total + loss * len(x)", result="(total / count).item()"),
           misconception="running-loss-tensor"),
    Mutant("train_epoch/returns-tensor", train_epoch(log="total += loss.detach() * len(x)"),
           misconception="running-loss-tensor"),
    Mutant("train_epoch/zero-grad-once", train_epoch(zero="", zero_once="optimizer.zero_grad()\n    "),
           misconception="grad-accumulates"),
    Mutant("train_epoch/unweighted", train_epoch(log="total += loss.item()", result="total / len(loader)")),
    Mutant("evaluate/missing-no-grad", evaluate(context="torch.enable_grad()"), misconception="eval-as-no-grad"),
    Mutant("evaluate/batch-not-moved", evaluate(x="x", y="y"), misconception="batch-not-moved"),
    Mutant("evaluate/target-not-moved", evaluate(y="y"), misconception="batch-not-moved"),
    Mutant("evaluate/no-eval", evaluate(eval="pass"), misconception="eval-as-no-grad"),
    Mutant("evaluate/always-train-after", evaluate(restore="model.train()"), misconception="mode-not-restored"),
    Mutant("evaluate/left-in-eval", evaluate(restore="pass"), misconception="mode-not-restored"),
    Mutant("run/model-not-moved", run_answer(model="model = make_model(config)")),
    Mutant("run/optimizer-on-another-model", run_answer(
        optimizer='optimizer = torch.optim.Adam(make_model(config).to(device).parameters(), lr=config["lr"])'),
        misconception="optimizer-on-old-parameters"),
    Mutant("run/optimizer-before-move", run_answer(
        model='model = make_model(config)\n'
              '    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])\n'
              '    model = model.to(device)',
        optimizer=""), misconception="optimizer-on-old-parameters"),
    Mutant("run/unsafe-load", run_answer(load="map_location=device, weights_only=False"), misconception="unsafe-load"),
    Mutant("run/no-map-location", run_answer(load="weights_only=True")),
    Mutant("run/model-object-saved", run_answer(saved="model"), misconception="saved-model-object"),
    Mutant("run/seed-after-model", with_default_run(
        ("    torch.manual_seed(0)\n    model = make_model(config).to(device)",
         "    model = make_model(config).to(device)\n    torch.manual_seed(0)"))),
    Mutant("run/sgd", run_answer(optimizer='optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])')),
    Mutant("run/lr-fixed", run_answer(optimizer="optimizer = torch.optim.Adam(model.parameters(), lr=0.01)")),
    Mutant("run/history-not-restored", with_default_run(
        ('history, done = checkpoint["history"], checkpoint["epoch"]',
         'history, done = [None] * len(checkpoint["history"]), checkpoint["epoch"]'))),
    Mutant("run/checkpoint-before-training", with_default_run(
        ('        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), '
         '"epoch": epoch, "config": config,\n'
         '                    "history": history}, path)\n', ""),
        ("        train_loss = train_epoch(",
         '        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), '
         '"epoch": epoch - 1, "config": config, "history": history}, path)\n'
         "        train_loss = train_epoch("))),
    Mutant("run/config-from-argument", with_default_run(('        config = checkpoint["config"]\n', "        pass\n"))),
    Mutant("run/config-not-plain",
           {"q4_run_answer": "import types\n" + run_answer(config="types.SimpleNamespace(**config)")["q4_run_answer"]},
           misconception="config-not-plain"),
    Mutant("run/epoch-not-saved", with_default_run(('"epoch": epoch, "config"', '"config"'))),
    Mutant("run/epoch-off-by-one", with_default_run(('"epoch": epoch, "config"', '"epoch": epoch - 1, "config"'))),
    Mutant("run/stop-one-late", with_default_run(("epoch >= stop_after", "epoch > stop_after"))),
    Mutant("run/optimizer-state-dropped",
           with_default_run(('        optimizer.load_state_dict(checkpoint["optimizer"])\n', "")),
           misconception="optimizer-state-dropped"),
    Mutant("evaluate/requires-grad-false", {"q3_evaluate_answer": """
def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    model.requires_grad_(False)
    total, count = 0.0, 0
    for x, y in loader:
        total += loss_fn(model(x.to(device)), y.to(device)).item() * len(x)
        count += len(x)
    model.train(was_training)
    return total / count
"""}, misconception="requires-grad-as-no-grad"),
    # Gradients turned off for the loop and back on for every parameter: a frozen layer comes back trainable.
    Mutant("evaluate/requires-grad-switched-back-on", {"q3_evaluate_answer": """
def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    model.requires_grad_(False)
    total, count = 0.0, 0
    for x, y in loader:
        total += loss_fn(model(x.to(device)), y.to(device)).item() * len(x)
        count += len(x)
    model.requires_grad_(True)
    model.train(was_training)
    return total / count
"""}),
    Mutant("regressor/standardises-its-input", regressor(fit="""with torch.no_grad():
            x.sub_(x.mean(0)).div_(x.std(0))
            self.mean.copy_(x.mean(0))
            self.std.copy_(x.std(0))""")),  # the caller's data standardised in place, statistics 0 and 1 kept
    Mutant("run/config-overwritten", {"q4_run_answer": run_answer()["q4_run_answer"].replace(
        'config = {"hidden": 16, "lr": 0.01} if config is None else dict(config)',
        'config = {"hidden": 16, "lr": 0.01} if config is None else config\n    config.update(hidden=16, lr=0.01)')}),
    # the configuration it is given ignored, and the defaults written into the caller's dict
    Mutant("regressor/bias-ignored", {"q1_regressor_answer": """
class BiaslessLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, self.weight)
""" + regressor()["q1_regressor_answer"].replace("nn.Linear(", "BiaslessLinear(")}),  # biases registered, never added
    # The notebook's DEVICE instead of the device handed in: moved, and kept, but to the wrong device.
    Mutant("train_epoch/global-device", train_epoch(move="x, y = x.to(DEVICE), y.to(DEVICE)"),
           misconception="batch-not-moved"),
    # no_grad switched on for good with torch.set_grad_enabled(False): the caller can no longer train.
    Mutant("evaluate/grad-off-globally", evaluate(eval="model.eval(); torch.set_grad_enabled(False)")),
    # stop_after counted in epochs run since the resume, not as the epoch number.
    Mutant("run/stop-after-counted-from-resume",
           with_default_run(("epoch >= stop_after", "epoch - done >= stop_after"))),
    # The folder saved in the checkpoint as a Path, which weights_only=True refuses: no config to blame.
    Mutant("run/folder-path-saved",
           with_default_run(('"history": history}, path)', '"history": history, "folder": Path(folder)}, path)'))),
    # Zeroed after each step: the first step uses whatever gradients the model came with.
    Mutant("train_epoch/zero-grad-after-step",
           train_epoch(zero="", log="optimizer.zero_grad()\n        total += loss.item() * len(x)"),
           misconception="grad-accumulates"),
    # One save after the loop: a job killed during an epoch leaves no checkpoint of the epochs it finished.
    Mutant("run/saves-only-at-end", with_default_run(
        ("        torch.save(", "        pass  # ("), ("                    \"history\": history}, path)", ""),
        ("    return history", '    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),\n'
                               '                "epoch": history[-1]["epoch"], "config": config,\n'
                               '                "history": history}, path)\n'
                               "    return history"))),
    # The notebook's DEVICE wherever run() was handed `device`.
    Mutant("run/default-device-ignored", with_default_run(
        ("map_location=device", "map_location=DEVICE"), (".to(device)", ".to(DEVICE)"),
        ("optimizer, device)", "optimizer, DEVICE)"), ("F.mse_loss, device)", "F.mse_loss, DEVICE)"))),
    # A resume that drops the optimiser's state, hidden by a cache of the runs finished in this kernel: a resume
    # whose configuration and parts match a finished run hands back that run's history and final checkpoint.
    Mutant("run/cached-history", {"q4_run_answer": "import copy\nFINISHED = {}\n" + with_default_run(
        ('        config = checkpoint["config"]\n',
         '        config = checkpoint["config"]\n'
         '    key = (epochs, tuple(sorted(config.items())), make_model, train_epoch, evaluate)\n'
         '    if checkpoint is not None and stop_after is None and key in FINISHED:\n'
         '        torch.save(FINISHED[key][1], path)\n'
         '        return copy.deepcopy(FINISHED[key][0])\n'),
        ('        optimizer.load_state_dict(checkpoint["optimizer"])\n', ""),
        ("    return history",
         "    if checkpoint is None and stop_after is None:\n"
         "        FINISHED[key] = copy.deepcopy((history, torch.load(path, map_location=device, weights_only=True)))\n"
         "    return history"))["q4_run_answer"]}),
    # The model and optimiser of a stopped run kept in memory by folder, and a resume from that folder trains
    # them on: the file is read for its epoch and history only.
    Mutant("run/resumes-from-memory", {"q4_run_answer": "LIVE = {}\n" + with_default_run(
        ("    history, done = [], 0\n",
         "    history, done = [], 0\n"
         "    if checkpoint is not None and str(folder) in LIVE:\n"
         "        model, optimizer = LIVE[str(folder)]\n"
         "        history, done = checkpoint[\"history\"], checkpoint[\"epoch\"]\n"
         "        checkpoint = None\n"),
        ("    return history", "    LIVE[str(folder)] = (model, optimizer)\n    return history"))["q4_run_answer"]}),
    # hidden=16 is the default the task gives; another width is a model of another size.
    Mutant("regressor/default-hidden",
           {"q1_regressor_answer": regressor()["q1_regressor_answer"].replace("hidden=16", "hidden=32")}),
    # std started at zeros as mean is: an unfitted model divides by zero.
    Mutant("regressor/std-starts-at-zero",
           regressor(statistics=BUFFERS.replace("torch.ones(in_features)", "torch.zeros(in_features)"))),
    # Switched to eval mode for the epoch: dropout off while it trains, and the caller's model left in eval mode.
    Mutant("train_epoch/trains-in-eval-mode",
           {"q2_train_epoch_answer": train_epoch()["q2_train_epoch_answer"].replace(
               "    total, count = 0.0, 0\n", "    model.eval()\n    total, count = 0.0, 0\n")}),
    # The model's own flag set back, its submodules (the dropout among them) left in eval mode.
    Mutant("evaluate/training-flag-set-on-model-only", evaluate(restore="model.training = was_training"),
           misconception="mode-not-restored"),
    # stop_after taken for the last epoch, whatever `epochs` says: a stop past it runs extra epochs.
    Mutant("run/stop-after-past-epochs", with_default_run(
        ("for epoch in range(done + 1, epochs + 1):", "for epoch in range(done + 1, (stop_after or epochs) + 1):"))),
    Mutant("run/stop-after-without-min", with_default_run(
        ("for epoch in range(done + 1, epochs + 1):",
         "last = epochs if stop_after is None else stop_after\n    for epoch in range(done + 1, last + 1):"),
        ("        if stop_after is not None and epoch >= stop_after:\n            break\n", ""))),
    # A config handed to a resume preferred to the one the checkpoint holds.
    Mutant("run/config-argument-over-file", with_default_run(
        ('    path = Path(folder) / "checkpoint.pt"\n',
         '    path = Path(folder) / "checkpoint.pt"\n    given = config\n'),
        ('        config = checkpoint["config"]\n', '        config = given or checkpoint["config"]\n'))),
    # Rebuilt from the file's config, but the config handed in (or the default) saved: the next resume breaks.
    Mutant("run/saves-argument-config", with_default_run(
        ('        config = checkpoint["config"]\n',
         '        saved_config = config\n        config = checkpoint["config"]\n'
         '    else:\n        saved_config = config\n'),
        ('"config": config,', '"config": saved_config,'))),
    # requires_grad switched off on the caller's x to keep autograd from recording the statistics.
    Mutant("regressor/fit-input-requires-grad-off", regressor(fit="""x.requires_grad_(False)
        self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0))""")),
    # The gradient the caller's x held thrown away.
    Mutant("regressor/fit-clears-input-grad", regressor(fit="""x.grad = None
        with torch.no_grad():
            self.mean.copy_(x.mean(0))
            self.std.copy_(x.std(0))""")),
    # Recording switched off for good: the caller can no longer train.
    Mutant("regressor/fit-grad-off-for-good", regressor(fit="""torch.set_grad_enabled(False)
        self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0))""")),
    # Recording switched off, then on, whatever it was when fit_normaliser was called.
    Mutant("regressor/fit-grad-on-after", regressor(fit="""torch.set_grad_enabled(False)
        self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0))
        torch.set_grad_enabled(True)""")),
    # forward standardises the caller's x in place.
    Mutant("regressor/forward-standardises-in-place",
           {"q1_regressor_answer": regressor()["q1_regressor_answer"].replace(
               "self.net((x - self.mean) / self.std)", "self.net(x.sub_(self.mean).div_(self.std))")}),
    # Left in eval mode at the end of the epoch, ready for an evaluation.
    Mutant("train_epoch/eval-mode-after", train_epoch(result="(model.eval(), total / count)[1]")),
    # Every parameter made trainable first: a frozen layer comes back trainable, and is trained.
    Mutant("train_epoch/unfreezes", {"q2_train_epoch_answer": train_epoch()["q2_train_epoch_answer"].replace(
        "    total, count = 0.0, 0\n", "    model.requires_grad_(True)\n    total, count = 0.0, 0\n")}),
    # Recording switched off once the epoch is done.
    Mutant("train_epoch/grad-off-after", train_epoch(result="(torch.set_grad_enabled(False), total / count)[1]")),
    # The caller's batches made to require grad (to see the inputs' gradients): backward fills their .grad.
    Mutant("train_epoch/batch-requires-grad", train_epoch(move="x, y = x.requires_grad_().to(device), y.to(device)")),
    # Recording switched off, then on at the end, whatever it was when evaluate was called.
    Mutant("evaluate/grad-on-after", evaluate(eval="model.eval(); torch.set_grad_enabled(False)",
                                              restore="model.train(was_training); torch.set_grad_enabled(True)")),
    # The caller's gradients cleared before the evaluation.
    Mutant("evaluate/zero-grad", evaluate(eval="model.eval(); model.zero_grad()")),
    # The caller's gradients zeroed in place.
    Mutant("evaluate/zero-grad-in-place", evaluate(eval="model.eval(); model.zero_grad(set_to_none=False)")),
    # The model sent through half precision and back once evaluated: its weights rounded.
    Mutant("evaluate/half-round-trip", evaluate(restore="model.train(was_training); model.half().float()")),
    # The loader consumed as a queue: the caller's list comes back empty.
    Mutant("evaluate/pops-batches", {"q3_evaluate_answer": """
def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        while loader:
            x, y = loader.pop()
            total += loss_fn(model(x.to(device)), y.to(device)).item() * len(x)
            count += len(x)
    model.train(was_training)
    return total / count
"""}),
    # The caller's config dict given the file's configuration on a resume.
    Mutant("run/config-updated-from-file", with_default_run(
        ('config = {"hidden": 16, "lr": 0.01} if config is None else dict(config)',
         'config = {"hidden": 16, "lr": 0.01} if config is None else config'),
        ('        config = checkpoint["config"]\n', '        config.update(checkpoint["config"])\n'))),
    # Recording switched off for each validation and on for each training epoch: off once run returns.
    Mutant("run/grad-off-after-validation", with_default_run(
        ("        train_loss = train_epoch(",
         "        torch.set_grad_enabled(True)\n        train_loss = train_epoch("),
        ("        val_loss = evaluate(", "        torch.set_grad_enabled(False)\n        val_loss = evaluate("))),
]


# Generated mutants whose code shows another misconception than their operator's default:
# {name: (misconception, why)} (tests/mutation.py, all_mutants).
RELABELLED = {
    "q3_evaluate_answer/drop-no-grad#1": ("eval-as-no-grad", "the code still calls model.eval() and nothing else: "
                                          "it takes eval() for the switch that stops recording"),
    "q3_evaluate_answer/no-grad-as-enable-grad#1": ("eval-as-no-grad", "recording is on around a model put in eval(): "
                                                    "eval() taken for the switch that stops recording"),
    "q4_run_answer/drop-to-device#1": ("", "the model, not a batch, is left on the cpu (as run/model-not-moved): "
                                       "a slip with no entry in the catalogue"),
}
