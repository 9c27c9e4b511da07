"""Scripted submissions for assignment 06_modules (see unit01.py)."""
from scenarios import Mutant, Scenario

ASSIGNMENT = "06_modules"
NOTEBOOK = "06_modules.ipynb"

SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_running_norm_answer": '''
import torch.nn.functional as F

class RunningNorm(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, training=self.training,
                            momentum=self.momentum, eps=self.eps)
''',
        "q2_mlp_answer": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        layers = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        return self.net(x)
''',
        "q3_positional_scale_answer": '''
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("scale", torch.arange(length, dtype=torch.float32).add(1).reciprocal(), persistent=True)

    def forward(self, x):
        return x * self.scale
''',
        "q4_parameter_count_answer": '''
def parameter_count(model):
    unique = {id(p): p for p in model.parameters()}.values()
    return {"trainable": sum(p.numel() for p in unique if p.requires_grad),
            "frozen": sum(p.numel() for p in unique if not p.requires_grad),
            "buffers": sum(b.numel() for _, b in model.named_buffers())}
''',
    }),
    Scenario("alternative_b", answers={
        "q1_running_norm_answer": '''
class RunningNorm(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / (self.running_var + self.eps).sqrt()
        n = x.shape[0]
        mean = x.mean(dim=0)
        var = ((x - mean) ** 2).mean(dim=0)
        m = self.momentum
        self.running_mean = (1 - m) * self.running_mean + m * mean.detach()
        self.running_var = (1 - m) * self.running_var + m * var.detach() * n / (n - 1)
        return (x - mean) / (var + self.eps).sqrt()
''',
        "q2_mlp_answer": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.count = len(sizes) - 1
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            self.add_module(f"fc{i}", nn.Linear(a, b))

    def forward(self, x):
        for i in range(self.count):
            x = getattr(self, f"fc{i}")(x)
            if i < self.count - 1:
                x = x.clamp(min=0)
        return x
''',
        "q3_positional_scale_answer": '''
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        scale = 1 / torch.arange(1, length + 1, dtype=torch.float32)
        self.register_buffer("scale", scale)

    def forward(self, x):
        return x * self.scale
''',
        "q4_parameter_count_answer": '''
def parameter_count(model):
    counts = {"trainable": 0, "frozen": 0, "buffers": 0}
    for _, p in model.named_parameters():
        counts["trainable" if p.requires_grad else "frozen"] += p.numel()
    for _, b in model.named_buffers():
        counts["buffers"] += b.numel()
    return counts
''',
    }),
    Scenario("alternative_d", answers={
        "q2_mlp_answer": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.depth = len(sizes) - 1
        for index in range(self.depth):
            self.register_module(f"layer_{index}", nn.Linear(sizes[index], sizes[index + 1]))

    def forward(self, x):
        for index in range(self.depth):
            x = getattr(self, f"layer_{index}")(x)
            if index + 1 < self.depth:
                x = torch.relu(x)
        return x
''',
    }),
    Scenario("statistics_as_parameter", answers={
        "q1_running_norm_answer": '''
class RunningNorm(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.running_mean = nn.Parameter(torch.zeros(num_features), requires_grad=False)
        self.running_var = nn.Parameter(torch.ones(num_features), requires_grad=False)

    def forward(self, x):
        if self.training:
            mean, var = x.mean(0), x.var(0, unbiased=False)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)
''',
    }, loses={"q1_running_norm_tests"}, says=["Pitfall: statistics stored as a Parameter"]),
    Scenario("buffer_updated_in_eval", answers={
        "q1_running_norm_answer": '''
class RunningNorm(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
        if self.training:
            mean, var = x.mean(0), x.var(0, unbiased=False)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)
''',
    }, loses={"q1_running_norm_tests"}, says=["Pitfall: a buffer updated in eval mode"]),
    Scenario("python_list_of_layers", answers={
        "q2_mlp_answer": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
''',
    }, loses={"q2_mlp_tests"}, says=["Pitfall: a Python list of layers"]),
    Scenario("bare_tensor_attribute", answers={
        "q3_positional_scale_answer": '''
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.scale = 1.0 / (1.0 + torch.arange(length, dtype=torch.float32))

    def forward(self, x):
        return x * self.scale
''',
    }, loses={"q3_positional_scale_tests"}, says=["Pitfall: a bare tensor attribute"]),
    Scenario("quiz_wrong", answers={"quiz_q2_answer": 'q2 = "c"\n'}, loses={"quiz_q2_tests"}),
]

# Generated mutants that behave exactly like a correct answer, and why.
EQUIVALENT = {
    "q3_positional_scale_answer/drop-dtype-kwarg#1": ("1.0 / (1.0 + an int64 arange) is float32 all the same: "
                                                      "the division promotes to the default float dtype"),
}

RUNNING_NORM = """
class RunningNorm(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        {init}

    def forward(self, x):
        {forward}
"""


def running_norm(init: str, forward: str) -> dict:
    return {"q1_running_norm_answer": RUNNING_NORM.replace("{init}", init).replace("{forward}", forward)}


TRAIN_EVAL = """if self.training:
            mean, var = x.mean(0), x.var(0, unbiased=False)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)"""
BUFFERS = """self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))"""

# Hand-written wrong answers for the mutation check (tests/mutation.py), where no regex says it.
MUTANTS = [
    Mutant("running_norm/statistics-as-parameter", running_norm(
        """self.running_mean = nn.Parameter(torch.zeros(num_features), requires_grad=False)
        self.running_var = nn.Parameter(torch.ones(num_features), requires_grad=False)""", TRAIN_EVAL),
        misconception="statistics-as-parameter"),
    Mutant("running_norm/bare-tensors", running_norm(
        """self.running_mean = torch.zeros(num_features)
        self.running_var = torch.ones(num_features)""", TRAIN_EVAL), misconception="bare-tensor-attribute"),
    Mutant("running_norm/non-persistent", running_norm(
        """self.register_buffer("running_mean", torch.zeros(num_features), persistent=False)
        self.register_buffer("running_var", torch.ones(num_features), persistent=False)""", TRAIN_EVAL)),
    Mutant("running_norm/updated-in-eval", running_norm(BUFFERS, """mean, var = x.mean(0), x.var(0, unbiased=False)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
        if not self.training:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)"""), misconception="buffer-updated-in-eval"),
    Mutant("running_norm/batch-stats-in-eval", running_norm(BUFFERS, """mean, var = x.mean(0), x.var(0, unbiased=False)
        if self.training:
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
        return (x - mean) / torch.sqrt(var + self.eps)""")),
    Mutant("running_norm/rebinds-with-graph", running_norm(BUFFERS, """if self.training:
            mean, var = x.mean(0), x.var(0, unbiased=False)
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * x.var(0, unbiased=True)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)"""), misconception="missing-no-grad"),
    Mutant("running_norm/biased-running-var", running_norm(BUFFERS, TRAIN_EVAL.replace(
        "x.var(0, unbiased=True)", "var"))),
    Mutant("running_norm/momentum-swapped", running_norm(BUFFERS, TRAIN_EVAL.replace(
        "mul_(1 - self.momentum).add_(self.momentum * mean)", "mul_(self.momentum).add_((1 - self.momentum) * mean)"))),
    Mutant("mlp/python-list", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
"""}, misconception="python-list-of-layers"),
    Mutant("mlp/relu-after-last", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.net = nn.Sequential(*[m for a, b in zip(sizes[:-1], sizes[1:]) for m in (nn.Linear(a, b), nn.ReLU())])

    def forward(self, x):
        return self.net(x)
"""}),
    Mutant("mlp/first-layer-registered-only", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.first = nn.Linear(sizes[0], sizes[1])
        self.rest = [nn.Linear(a, b) for a, b in zip(sizes[1:-1], sizes[2:])]  # only the first is registered

    def forward(self, x):
        x = self.first(x)
        for layer in self.rest:
            x = layer(torch.relu(x))
        return x
"""}, misconception="python-list-of-layers"),
    Mutant("mlp/tanh", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.tanh(x)
        return x
"""}),
    Mutant("positional_scale/bare-tensor", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.scale = 1.0 / (1.0 + torch.arange(length, dtype=torch.float32))

    def forward(self, x):
        return x * self.scale
"""}, misconception="bare-tensor-attribute"),
    Mutant("positional_scale/frozen-parameter", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.scale = nn.Parameter(1.0 / (1.0 + torch.arange(length, dtype=torch.float32)), requires_grad=False)

    def forward(self, x):
        return x * self.scale
"""}, misconception="statistics-as-parameter"),
    Mutant("positional_scale/non-persistent", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("scale", 1.0 / (1.0 + torch.arange(length, dtype=torch.float32)), persistent=False)

    def forward(self, x):
        return x * self.scale
"""}),
    Mutant("positional_scale/off-by-one", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("scale", 1.0 / torch.arange(1, length + 2, dtype=torch.float32)[1:])

    def forward(self, x):
        return x * self.scale
"""}),
    Mutant("parameter_count/state-dict", {"q4_parameter_count_answer": """
def parameter_count(model):
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    buffers = sum(v.numel() for v in model.state_dict().values()) - trainable - frozen
    return {"trainable": trainable, "frozen": frozen, "buffers": buffers}
"""}),
    Mutant("parameter_count/shared-counted-twice", {"q4_parameter_count_answer": """
def parameter_count(model):
    params = [p for m in model.modules() for p in m.parameters(recurse=False)]
    return {"trainable": sum(p.numel() for p in params if p.requires_grad),
            "frozen": sum(p.numel() for p in params if not p.requires_grad),
            "buffers": sum(b.numel() for b in model.buffers())}
"""}),
    Mutant("parameter_count/frozen-as-buffers", {"q4_parameter_count_answer": """
def parameter_count(model):
    return {"trainable": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "frozen": 0,
            "buffers": sum(b.numel() for b in model.buffers()) + """
"""sum(p.numel() for p in model.parameters() if not p.requires_grad)}
"""}),
    Mutant("parameter_count/tensors-not-elements", {"q4_parameter_count_answer": """
def parameter_count(model):
    return {"trainable": sum(1 for p in model.parameters() if p.requires_grad),
            "frozen": sum(1 for p in model.parameters() if not p.requires_grad),
            "buffers": sum(1 for b in model.buffers())}
"""}, misconception="len-as-numel"),
    Mutant("running_norm/training-branch-under-no-grad", {"q1_running_norm_answer": """
class RunningNorm(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                mean, var = x.mean(0), x.var(0, unbiased=False)
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)
"""}, misconception="batch-statistics-under-no-grad"),
    Mutant("running_norm/whole-forward-under-no-grad", {"q1_running_norm_answer": """
class RunningNorm(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                mean, var = x.mean(0), x.var(0, unbiased=False)
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
                return (x - mean) / torch.sqrt(var + self.eps)
        return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
"""}, misconception="batch-statistics-under-no-grad"),
    Mutant("running_norm/eps-argument-ignored", {"q1_running_norm_answer": """
class RunningNorm(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if self.training:
            mean, var = x.mean(0), x.var(0, unbiased=False)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + 1e-5)
"""}),
    Mutant("mlp/relu-on-the-input-in-place", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        x.relu_()
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
"""}),  # a ReLU before the first layer too, written into the caller's input
    Mutant("mlp/weights-held-as-buffers", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        for layer in self.layers:
            weight = layer.weight
            del layer.weight
            layer.register_parameter("stored_weight", weight)
            layer.register_buffer("weight", weight.detach(), persistent=False)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
"""}),  # each layer computes with a detached copy of the parameter the optimiser trains: same numbers, no learning
    Mutant("mlp/bias-detached-behind-a-property", {"q2_mlp_answer": """
class Dense(nn.Linear):
    @property
    def bias(self):
        held = dict(self.named_parameters(recurse=False))
        if "bias" not in held:
            raise AttributeError("bias")
        return held["bias"].detach()

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(Dense(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
"""}),  # forward and the layer's attribute both answer with a detached bias: the biases never learn
    Mutant("mlp/hidden-bias-ignored", {"q2_mlp_answer": """
import torch.nn.functional as F

class BiaslessLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, self.weight)

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        pairs = list(zip(sizes[:-1], sizes[1:]))
        self.layers = nn.ModuleList([BiaslessLinear(a, b) for a, b in pairs[:-1]] + [nn.Linear(*pairs[-1])])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
"""}),  # the hidden layers' biases registered and never added
    Mutant("mlp/squeezes-one-output", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        *hidden, last = self.layers
        for layer in hidden:
            x = torch.relu(layer(x))
        out = last(x)
        return out.squeeze(-1) if out.shape[-1] == 1 and len(self.layers) > 2 else out
"""}),
    Mutant("positional_scale/length-fixed", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("scale", 1.0 / (1.0 + torch.arange(8, dtype=torch.float32))[:length])

    def forward(self, x):
        return x * self.scale
"""}),
    Mutant("running_norm/default-eps-changed", {"q1_running_norm_answer": running_norm(BUFFERS, TRAIN_EVAL)[
        "q1_running_norm_answer"].replace("eps=1e-5", "eps=1e-8")}),  # a default eps other than 1e-5
    Mutant("mlp/relu6", {"q2_mlp_answer": """
import torch.nn.functional as F

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = F.relu6(x)
        return x
"""}),  # ReLU capped at 6: the same numbers until a hidden value passes 6
    Mutant("mlp/one-layer-per-shape", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        made = {}
        self.layers = nn.ModuleList(made.setdefault((a, b), nn.Linear(a, b)) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
"""}),  # two layers of the same size are one shared layer
    Mutant("positional_scale/in-place-forward", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("scale", 1.0 / (1.0 + torch.arange(length, dtype=torch.float32)))

    def forward(self, x):
        return x.mul_(self.scale)
"""}),  # the caller's x scaled too
    Mutant("positional_scale/row-buffer", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("scale", 1.0 / (1.0 + torch.arange(length, dtype=torch.float32)).unsqueeze(0))

    def forward(self, x):
        return x * self.scale
"""}),  # a (1, length) scale: right for a batch of rows, a (1, length) result for an x of shape (length,)
    Mutant("parameter_count/children-only", {"q4_parameter_count_answer": """
def parameter_count(model):
    params = {id(p): p for child in model.children() for p in child.parameters()}.values()
    return {"trainable": sum(p.numel() for p in params if p.requires_grad),
            "frozen": sum(p.numel() for p in params if not p.requires_grad),
            "buffers": sum(b.numel() for b in model.buffers())}
"""}),  # a module's own parameters, as a lone nn.Linear holds them, never counted
    Mutant("parameter_count/data-ptr-dedup", {"q4_parameter_count_answer": """
def parameter_count(model):
    unique = {p.data_ptr(): p for p in model.parameters()}.values()
    return {"trainable": sum(p.numel() for p in unique if p.requires_grad),
            "frozen": sum(p.numel() for p in unique if not p.requires_grad),
            "buffers": sum(b.numel() for b in model.buffers())}
"""}),  # on meta every tensor's data_ptr() is 0: all parameters taken for one
    Mutant("parameter_count/equal-values-deduplicated", {"q4_parameter_count_answer": """
def parameter_count(model):
    unique = []
    for p in model.parameters():
        if not any(p.shape == q.shape and torch.equal(p, q) for q in unique):
            unique.append(p)
    return {"trainable": sum(p.numel() for p in unique if p.requires_grad),
            "frozen": sum(p.numel() for p in unique if not p.requires_grad),
            "buffers": sum(b.numel() for b in model.buffers())}
"""}),  # a parameter taken for shared when another holds the same numbers
    # In eval, the caller's x normalised too.
    Mutant("running_norm/eval-normalises-x-in-place", running_norm(BUFFERS, """if self.training:
            mean, var = x.mean(0), x.var(0, unbiased=False)
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
            return (x - mean) / torch.sqrt(var + self.eps)
        return x.sub_(self.running_mean).div_(torch.sqrt(self.running_var + self.eps))""")),
    Mutant("running_norm/grad-mode-switched-on-after-update", running_norm(BUFFERS, """if self.training:
            mean, var = x.mean(0), x.var(0, unbiased=False)
            torch.set_grad_enabled(False)
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var(0, unbiased=True))
            torch.set_grad_enabled(True)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)""")),  # a forward under no_grad leaves grad mode on
    Mutant("mlp/input-grad-switched-off", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        if x.is_leaf:
            x.requires_grad_(False)  # only the weights learn
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
"""}),  # the caller's x stops requiring grad
    Mutant("mlp/grad-mode-set-from-training", {"q2_mlp_answer": """
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        torch.set_grad_enabled(self.training)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x
"""}),  # eval() taken to mean no_grad, and grad mode left as the model's mode says
    Mutant("positional_scale/grad-mode-set-from-input", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("scale", 1.0 / (1.0 + torch.arange(length, dtype=torch.float32)))

    def forward(self, x):
        torch.set_grad_enabled(x.requires_grad)
        return x * self.scale
"""}),  # grad mode switched to what x asks for, and left so
    Mutant("positional_scale/clears-input-grad", {"q3_positional_scale_answer": """
class PositionalScale(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.register_buffer("scale", 1.0 / (1.0 + torch.arange(length, dtype=torch.float32)))

    def forward(self, x):
        if x.grad is not None:
            x.grad.zero_()
        return x * self.scale
"""}),  # the caller's x.grad zeroed
    Mutant("parameter_count/zero-grad-first", {"q4_parameter_count_answer": """
def parameter_count(model):
    model.zero_grad()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    return {"trainable": trainable, "frozen": frozen, "buffers": sum(b.numel() for b in model.buffers())}
"""}),  # the model's gradients dropped
    Mutant("parameter_count/eval-first", {"q4_parameter_count_answer": """
def parameter_count(model):
    was_training = model.training
    model.eval()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    model.train(was_training)
    return {"trainable": trainable, "frozen": frozen, "buffers": sum(b.numel() for b in model.buffers())}
"""}),  # the top module's mode put back, and with it every submodule's: one in another mode than its parent is not
    Mutant("parameter_count/no-grad-switched-on", {"q4_parameter_count_answer": """
def parameter_count(model):
    torch.set_grad_enabled(False)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    torch.set_grad_enabled(True)
    return {"trainable": trainable, "frozen": frozen, "buffers": sum(b.numel() for b in model.buffers())}
"""}),  # grad mode left on, whatever it was
    Mutant("parameter_count/unfreezes-after-counting", {"q4_parameter_count_answer": """
def parameter_count(model):
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    model.requires_grad_(False)
    frozen = sum(p.numel() for p in model.parameters()) - trainable
    model.requires_grad_(True)
    return {"trainable": trainable, "frozen": frozen, "buffers": sum(b.numel() for b in model.buffers())}
"""}),  # every parameter left requiring grad, the frozen ones too
]
