"""remote: the student's functions and objects, and the test's own inputs, across the process boundary."""

import pytest
import torch

from answering import SETUP, Student, error_of
from classgrader.judging import judge, remote

# -- objects that stay in the student's kernel (judge.RemoteObject) ---------------------------
MODULE_ANSWER = """
from torch import nn
class Net(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls += 1
        for layer in self.layers:
            x = layer(x)
        return x
"""
MODULE_TEST = """
from torch import nn
model = Net([3, 4, 2])
check_value(type(model).__name__, "Net", name="type", reveal=True)
check_value(isinstance(model, nn.Module), True, name="a module")
layers = [m for m in model.modules() if isinstance(m, nn.Linear)]
check_value([(m.in_features, m.out_features) for m in layers], [(3, 4), (4, 2)], name="layers", reveal=True)
check_value(sorted(dict(model.named_parameters())),
            ["layers.0.bias", "layers.0.weight", "layers.1.bias", "layers.1.weight"], name="names", reveal=True)
check_value(len(model.state_dict()), 5, name="state_dict", reveal=True)
x = torch.randn(5, 3)
expected = layers[1](layers[0](x))
check_tensor(model.train()(x), expected, name="model(x)")
check_tensor(model.calls, torch.tensor(1.0), name="its buffer, after one call")
check_value("layers" in vars(model)["_modules"], True, name="vars")
"""


def test_a_students_module_stays_in_their_kernel_and_the_test_uses_it_there():
    student = Student(MODULE_ANSWER)
    assert error_of(student.judged(MODULE_TEST, {"Net"})) is None
    assert {"getattr", "iterate", "len", "vars"} <= {r["op"] for r in student.requests}
    sent = repr(student.requests)
    assert "expected" not in sent and "reference" not in sent
    model = student.handles.objects[0]  # the real module, in the student's namespace
    assert type(model).__name__ == "Net" and int(model.calls) == 1


def test_the_grader_changes_nothing_in_the_kernel_and_claims_only_torchs_classes():
    student = Student(MODULE_ANSWER)
    assert "does not change objects" in error_of(student.judged("Net([1, 1]).layers = None", {"Net"}))
    # A class the kernel names is looked up only among torch's loaded classes, never imported.
    assert remote.torch_class("torch.nn.modules.linear.Linear") is torch.nn.Linear
    assert remote.torch_class("os.system") is None and remote.torch_class("torch.load") is None
    assert remote.torch_class("torch.no_such_module.X") is None


# -- a tensor that is not a tensor ----------------------------------------------------------------
LYING_TENSOR = """
class Shadowy(torch.Tensor):
    def detach(self):  # what a comparison reads: empty, so that nothing differs
        return torch.empty((0, *self.shape), dtype=self.dtype)

def channel_means(img):
    return torch.zeros(3).as_subclass(Shadowy)
"""
LYING_TENSOR_TEST = """
got = channel_means(torch.ones(2, 2, 3))
check_tensor(got, torch.tensor([1.0, 2.0, 3.0]), name="channel_means")
"""


def test_a_tensor_subclass_stays_a_handle_that_claims_no_class_and_no_torch_function_takes(monkeypatch):
    student = Student(LYING_TENSOR)
    assert error_of(student.judged(LYING_TENSOR_TEST, {"channel_means"})) == \
        "GradingError: channel_means: wrong type. Expected a torch.Tensor, got Shadowy."
    handle = student.handles.objects[0]
    assert type(handle).__name__ == "Shadowy", "the kernel kept it: it is not data"
    stand_in = judge.Judge(SETUP, {"channel_means"}, student.ask).handle(student.handles.record(handle))
    assert not isinstance(stand_in, torch.Tensor) and not remote.claimable(torch.Tensor)
    for function in (torch.allclose, torch.equal, torch.isclose):
        try:  # before, torch's C++ parser took the stand-in for a tensor and read its memory (SIGSEGV)
            function(stand_in, torch.zeros(3))
            raise AssertionError(f"{function.__name__} took a stand-in")
        except TypeError:
            pass
    # The route, as it worked when a stand-in claimed its torch bases: the claim holds, every
    # reading is the kernel's, and the empty tensor broadcasts so that no element differs.
    monkeypatch.setattr(remote, "claimable", lambda kind: isinstance(kind, type))
    assert isinstance(stand_in, torch.Tensor) and tuple(stand_in.shape) == (3,)
    empty = stand_in.detach()
    assert empty.shape == (0, 3) and not (~torch.isclose(empty, torch.tensor([1.0, 2.0, 3.0]))).any()
    monkeypatch.undo()
    from autograder import checks
    with pytest.raises(checks.GradingError, match="wrong shape"):  # an empty tensor must not compare as equal
        checks._check_values(empty, torch.tensor([1.0, 2.0, 3.0]), "x", None, None)


def test_two_reads_of_an_object_agree_until_the_students_code_runs_again():
    student = Student(MODULE_ANSWER + """
import itertools
_counter = itertools.count()
class Fickle(nn.Module):
    @property
    def size(self):
        return next(_counter)  # a different answer at every reading
    def forward(self, x):
        return x
""")
    test = """
model = Fickle()
first, second = model.size, model.size
check_value(first == second, True, name="two reads")
model(torch.ones(1))
check_value(model.size != first, True, name="a read after a call is asked afresh")
"""
    assert error_of(student.judged(test, {"Fickle"})) is None


# -- objects the test builds itself, handed to the student's function -------------------------
TRAIN_STEP = """
from torch import nn
def train_step(model, batch, optimizer):
    model.train()
    optimizer.zero_grad()
    x, y = batch
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    model[0].weight.requires_grad_(False)  # freezes a layer, as fine-tuning does
    model.eval()
    return loss.item()
"""
TRAIN_STEP_TEST = """
import copy
from torch import nn
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
reference = copy.deepcopy(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    batch = (torch.randn(8, 3), torch.randn(8, 1))
    check_value(train_step(model, batch, optimizer), train_step_here(reference, batch, reference_optimizer),
                rel_tol=1e-5, name=f"loss {step}")
for (name, got), want in zip(model.named_parameters(), reference.parameters()):
    check_tensor(got.detach(), want.detach(), name=name)
check_value(model[0].weight.requires_grad, False, name="requires_grad", reveal=True)
check_value(model.training, False, name="training", reveal=True)
check_tensor(optimizer.state[model[2].bias]["momentum_buffer"],
             reference_optimizer.state[reference[2].bias]["momentum_buffer"], name="momentum")
"""


def test_what_the_test_builds_goes_to_the_kernel_as_copies_and_comes_back_changed():
    setup = [*SETUP, TRAIN_STEP.replace("def train_step(", "def train_step_here(")]
    student = Student(TRAIN_STEP)
    assert error_of(judge.Judge(setup, {"train_step"}, student.ask).run(TRAIN_STEP_TEST)) is None
    assert any("pickled" in request for request in student.requests)
    assert {request["op"] for request in student.requests} >= {"call", "state"}


def test_what_cannot_be_pickled_reaches_the_kernel_by_its_type_name_only():
    student = Student("def apply(f, x):\n    return f(x)\n")
    outputs = student.judged("import threading\napply(threading.Lock(), 1)", {"apply"})
    assert error_of(outputs) == "TypeError: 'lock' object is not callable"


def test_what_the_setup_cells_define_is_taken_from_the_notebooks_own_run_of_them():
    setup = [*SETUP, "import dataclasses\n@dataclasses.dataclass\nclass Config:\n    lr: float = 0.1"]
    student = Student("import dataclasses\n@dataclasses.dataclass\nclass Config:\n    lr: float = 0.1\n"
                      "def rate(config):\n    return config.lr * 2\n")
    outputs = judge.Judge(setup, {"rate"}, student.ask).run("check_value(rate(Config(lr=0.25)), 0.5, name='rate')")
    assert error_of(outputs) is None


# -- what a call carries of the caller's process (remote.caller_state) -------------------------
def test_a_call_runs_in_the_callers_autograd_mode_and_random_stream_and_gives_neither_back():
    student = Student("def drawn(x):\n    return torch.is_grad_enabled(), torch.rand(3)\n")
    test = """
torch.manual_seed(5)
with torch.no_grad():
    recording, noise = drawn(1)
check_value(recording, False, name="autograd's mode inside the call", reveal=True)
check_tensor(noise, torch.manual_seed(5) and torch.rand(3), name="what the call drew: the test's own stream")
torch.manual_seed(5)
drawn(1)
check_tensor(torch.rand(3), torch.manual_seed(5) and torch.rand(3), name="the test's stream after the call: untouched")
check_value(drawn(1)[0], True, name="outside no_grad", reveal=True)
"""
    assert error_of(student.judged(test, {"drawn"})) is None


def test_views_cross_as_views_of_one_storage_and_an_expanded_input_survives_the_call():
    student = Student("def same_memory(a, b):\n"
                      "    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()\n"
                      "def total(t):\n    return t.sum()\n")
    test = """
t = torch.randn(3, 4)
check_value(same_memory(t, t.T), True, name="t, t.T", reveal=True)
check_value(same_memory(t[1:], t.detach()), True, name="t[1:], t.detach()", reveal=True)
check_value(same_memory(t, t.clone()), False, name="t, t.clone()", reveal=True)
check_tensor(total(t[None].expand(2, 3, 4)), 2 * t.sum(), name="an expanded input")
"""
    assert error_of(student.judged(test, {"same_memory", "total"})) is None


def test_a_function_the_test_defines_reaches_the_students_function_as_code_with_the_values_it_names():
    student = Student("def apply_twice(f, x):\n    return f(f(x))\n")
    test = """
import math
shift = torch.tensor(2.0)
def scaled_by(k):
    return lambda v: k * v + shift * math.sqrt(4.0)   # a closure, a global tensor, a module
check_tensor(apply_twice(scaled_by(3.0), torch.ones(2)), torch.full((2,), 3.0 * (3.0 + 4.0) + 4.0),
             name="through a closure")
check_tensor(apply_twice(lambda v: v.flip(0), torch.arange(3.0)), torch.arange(3.0), name="a lambda")
"""
    assert error_of(student.judged(test, {"apply_twice"})) is None
    assert sum("pickled" in request for request in student.requests) == 2
