"""autograd_bridge: a test run in the grader takes gradients through the student's function, and
trains a model that lives in their kernel, with the values computed where the student's code ran."""
from answering import Student, error_of

LOSS = "def loss(pred, target):\n    return ((pred.reshape(-1) - target.reshape(-1)) ** 2).mean()\n"
# The right value, the wrong gradient: half of it is cut off the graph.
LOSS_HALF_DETACHED = ("def loss(pred, target):\n    d = pred.reshape(-1) - target.reshape(-1)\n"
                      "    return (d * d.detach()).mean()\n")
GRADIENT_TEST = """
pred = torch.randn(5, 1, requires_grad=True)
target = torch.randn(5)
got = loss(pred, target)
check_tensor(got.detach(), ((pred.detach().reshape(-1) - target) ** 2).mean(), name="the loss")
(grad,) = torch.autograd.grad(got, pred)
check_tensor(grad, 2 * (pred.detach().reshape(-1) - target).reshape(5, 1) / 5, name="the gradient")
"""


def test_a_gradient_through_the_students_function_is_the_one_their_graph_gives():
    assert error_of(Student(LOSS).judged(GRADIENT_TEST, {"loss"})) is None
    # Its value right, its graph not: only a backward through the kernel's graph can tell.
    assert "the gradient: wrong values" in error_of(Student(LOSS_HALF_DETACHED).judged(GRADIENT_TEST, {"loss"}))


KERNEL_MODEL = """
from torch import nn
def build():
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
"""
TRAIN_HERE_TEST = """
from torch import nn
model, optimizer = build()  # both stay in the student's kernel
torch.manual_seed(3)
mine = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
my_optimizer = torch.optim.SGD(mine.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    for net, opt in [(model, optimizer), (mine, my_optimizer)]:
        opt.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        opt.step()
for (name, got), want in zip(model.named_parameters(), mine.parameters()):
    check_tensor(got.detach(), want.detach(), name=name)
"""


def test_a_model_that_lives_in_the_kernel_trains_from_a_test_run_here():
    student = Student(KERNEL_MODEL)
    assert error_of(student.judged(TRAIN_HERE_TEST, {"build"})) is None
    assert any(request["op"] == "backward" for request in student.requests)


def test_a_leaf_crosses_as_a_leaf_and_a_result_without_grad_without_a_graph():
    student = Student("def fresh(n):\n    return torch.zeros(n, requires_grad=True), torch.ones(n)\n")
    test = """
w, b = fresh(3)
check_value((w.is_leaf, w.requires_grad, b.requires_grad, b.grad_fn is None), (True, True, False, True), name="flags")
"""
    assert error_of(student.judged(test, {"fresh"})) is None
