"""judge: a test run in the grader, the student's kernel answering only with data.

The student's side here is the real answer server over a namespace in this process, with every
request and reply passed through torch.save / torch.load(weights_only=True) as across the real
channel; tests/test_class_grading.py runs the same through real sandboxed kernels."""
import io
import textwrap

import pytest
import torch

from autograder import trace
from classgrader import answer_server, judge

SETUP = ["import math\nimport torch\nfrom autograder import check_tensor, check_value, check_answer, check_raises"]

CHANNEL_MEANS_TEST = textwrap.dedent("""
    img = torch.randint(0, 256, (5, 4, 3), dtype=torch.uint8)
    before = img.clone()
    expected = img.double().mean(dim=(0, 1)).float()
    check_tensor(channel_means(img), expected, name="channel_means(img)")
    check_tensor(img, before, name="the image you were given (it must not change)")
""")


def over_the_wire(value):
    buffer = io.BytesIO()
    torch.save(value, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


class Student:
    """A student's kernel namespace and the questions it was asked."""

    def __init__(self, code: str):
        self.namespace = {"torch": torch}
        exec(textwrap.dedent(code), self.namespace)
        self.requests, self.handles = [], answer_server.Handles()

    def ask(self, request):
        request = over_the_wire(request)
        self.requests.append(request)
        reply = answer_server.answer(self.namespace, request, self.handles)
        return over_the_wire(trace.portable(reply, self.handles.record))

    def judged(self, test: str, answers: set[str]):
        return judge.Judge(SETUP, answers, self.ask).run(textwrap.dedent(test))


def error_of(outputs) -> str | None:
    errors = [o for o in outputs if o.output_type == "error"]
    return f"{errors[0].ename}: {errors[0].evalue}" if errors else None


CORRECT = "def channel_means(img):\n    return img.float().mean(dim=(0, 1))\n"
# Reads the expected value out of its caller's frame: in the kernel's own test, that is the test.
FRAME_PEEKER = """
import sys
def channel_means(img):
    caller = sys._getframe(1).f_locals
    return caller["expected"] if "expected" in caller else torch.zeros(img.shape[-1])
"""


def test_the_correct_answer_passes_and_a_wrong_one_fails_with_the_checks_own_message():
    assert error_of(Student(CORRECT).judged(CHANNEL_MEANS_TEST, {"channel_means"})) is None
    wrong = Student("def channel_means(img):\n    return img.mean(dim=(0, 1), dtype=torch.float64)\n")
    assert error_of(wrong.judged(CHANNEL_MEANS_TEST, {"channel_means"})) == \
        "GradingError: channel_means(img): wrong dtype. Expected torch.float32, got torch.float64."


def test_a_function_that_reads_the_test_from_its_callers_frame_gets_nothing():
    peeker = Student(FRAME_PEEKER)
    # Without the defence: the test runs where the student's function runs, and the peek works.
    in_kernel = dict(peeker.namespace)
    exec(SETUP[0], in_kernel)
    exec(CHANNEL_MEANS_TEST, in_kernel)  # no exception: full marks for a wrong answer
    # Judged here, its caller is the answer server, which holds no expected value.
    assert "wrong values" in error_of(peeker.judged(CHANNEL_MEANS_TEST, {"channel_means"}))


def test_expected_values_never_reach_the_students_process():
    student = Student('q1 = "a"\n')
    outputs = student.judged('check_answer(q1, "c", name="q1", hint="Re-read section 1.")', {"q1"})
    assert error_of(outputs).startswith("GradingError: q1")
    sent = repr(student.requests)
    assert '"c"' not in sent and "'c'" not in sent and "Re-read" not in sent
    assert [r["op"] for r in student.requests] == ["names"]


def test_what_the_function_does_to_its_inputs_is_seen_by_the_test():
    mutates = Student("def channel_means(img):\n    means = img.float().mean(dim=(0, 1))\n    img.zero_()\n    return means\n")
    assert "the image you were given" in error_of(mutates.judged(CHANNEL_MEANS_TEST, {"channel_means"}))


def test_the_students_exceptions_keep_their_class():
    student = Student("def size_of(n):\n    if n < 0:\n        raise ValueError('negative')\n    return n\n")
    test = "check_raises(lambda: size_of(-1), ValueError, name='size_of(-1)')\ncheck_value(size_of(3), 3)"
    assert error_of(student.judged(test, {"size_of"})) is None
    broken = Student("def size_of(n):\n    return undefined_name\n")
    assert error_of(broken.judged("size_of(3)", {"size_of"})) == "NameError: name 'undefined_name' is not defined"


def test_an_uncalled_method_keeps_its_hint_and_a_missing_name_is_a_name_error():
    student = Student("def describe(t):\n    return {'shape': t.size}\n")
    test = "check_value(describe(torch.zeros(2, 3))['shape'], (2, 3), name='shape')"
    assert "did you forget to call it with ()" in error_of(student.judged(test, {"describe"}))
    assert error_of(Student("").judged("describe", {"describe"})) == "NameError: name 'describe' is not defined"


@pytest.mark.parametrize("forged", [
    {"tensor": None, "shape": [10**6, 10**6], "dtype": "torch.float32", "device": "cpu",
     "requires_grad": False, "is_leaf": True},                   # a size it never had the values of
    {"dtype": "load"},                                             # a torch function, not a dtype
    {"numpy": "load", "plain": "/etc/passwd"},                     # a NumPy function, not a scalar type
])
def test_a_forged_reply_is_refused_without_acting_on_it(forged):
    def ask(request):
        return {"tuple": [{"plain": "returned"}, forged, {"list": []}, {"dict": []}]} \
            if request["op"] == "call" else {"dict": [[{"plain": "f"}, {"tuple": [{"plain": "callable"}]}]]}
    outputs = judge.Judge(SETUP, {"f"}, ask).run("f()")
    assert error_of(outputs).startswith("ValueError: not a") or "without values" in error_of(outputs)


def test_a_lost_kernel_is_not_a_test_failure_the_test_could_catch():
    def ask(request):
        raise judge.KernelLost("KernelDied", "the kernel stopped")
    with pytest.raises(judge.KernelLost):
        judge.Judge(SETUP, {"f"}, ask).run("try:\n    f()\nexcept Exception:\n    pass")


@pytest.mark.parametrize("code, reason", [
    ("check_value(flat_copy(t).data_ptr() != t.data_ptr(), True)", ".data_ptr"),
    ("y = f(x)\ny.sum().backward()\ncheck_tensor(x.grad, g)", ".backward"),
    ("check_value(g(m) is m, True)", "identities"),
    ("check_value(id(a) == id(b), True)", "uses id"),
    ("check_value(describe(t) is None, False)", None),
    ("check_tensor(channel_means(img), expected)", None),
    # strict device checks, warnings made errors, a pretended GPU: they change this process only
    ("with strict_devices():\n    got = f(x.to('meta'))", "inside a `with` block"),
    ("with pretend_accelerators(cuda=True):\n    got = f()", "inside a `with` block"),
    ("warnings.simplefilter('error')\ncheck_value(f(1), 2)", "simplefilter"),
    # what ran in the process: a checkpoint's payload, the graphs a loop keeps
    ("before = PAYLOAD_RAN['count']\nf(path)\npitfall_if(PAYLOAD_RAN['count'] != before, 'unsafe-load')", "PAYLOAD_RAN"),
    ("probe = GraphLeakProbe(loss)\nf(model, probe)", "GraphLeakProbe"),
    ("with torch.no_grad():\n    p6 = a * b\ncheck_value(f, {'p6': p6.requires_grad})", None),
])
def test_what_only_exists_inside_a_process_keeps_a_test_in_the_kernel(code, reason):
    found = judge.observes_process(code, frozenset({"f", "flat_copy", "describe", "channel_means", "g"}))
    assert (found is None) if reason is None else (reason in found)


def test_an_answer_cells_names_are_its_definitions_not_its_imports():
    code = "import math\ndef f(x):\n    y = 1\n    return y\nclass Net:\n    pass\nq1 = 'c'\na, (b, c) = 1, (2, 3)"
    assert judge.defined_names(code) == {"f", "Net", "q1", "a", "b", "c"}


QUIZ_TEST = 'check_choice(q1, "abcd", name="q1")\ncheck_answer(q1, "c", name="q1", hint="Re-read section 1.")'
# An audit hook reads each piece of code as it is run and sets the quiz variable to the letter
# the test is about to compare with: nothing is patched, every check really passes.
READS_TEST_CODE = '''
import sys
from autograder import check_answer, check_choice
namespace = {"q1": "a", "check_answer": check_answer, "check_choice": check_choice}

def answer_from_the_test(event, args):
    if event == "exec" and hasattr(args[0], "co_consts") and "check_answer" in args[0].co_names:
        letters = [c for c in args[0].co_consts if isinstance(c, str) and len(c) == 1]
        namespace["q1"] = letters[-1]

sys.addaudithook(answer_from_the_test)
exec(compile(sys.argv[1], "<cell>", "exec"), namespace)
print("passed with", namespace["q1"])
'''


def test_a_hook_that_reads_the_tests_code_gets_nothing_when_the_test_runs_here():
    import subprocess
    import sys
    # Without the defence (the test run in the student's process), the hook answers for them.
    ran = subprocess.run([sys.executable, "-c", READS_TEST_CODE, QUIZ_TEST], capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0 and "passed with c" in ran.stdout, ran.stderr
    # Judged here, the student's process only ever hears the name q1.
    student = Student('q1 = "a"\n')
    outputs = judge.Judge(SETUP + ["from autograder import check_choice"], {"q1"}, student.ask).run(QUIZ_TEST)
    assert error_of(outputs).startswith("GradingError: q1")


def test_every_student_meets_the_same_inputs_whatever_ran_before():
    student = Student("def first(x):\n    return x\n")
    test = "print(torch.randn(3).tolist())"
    seen = set()
    for draws_before in (0, 5):
        torch.randn(draws_before)  # another student's tests, graded earlier in the same worker
        [printed] = judge.Judge(SETUP, {"first"}, student.ask).run(test)
        seen.add(printed.text)
    assert len(seen) == 1


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
check_value(sorted(dict(model.named_parameters())), ["layers.0.bias", "layers.0.weight", "layers.1.bias", "layers.1.weight"], name="names", reveal=True)
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
    assert judge.torch_class("torch.nn.modules.linear.Linear") is torch.nn.Linear
    assert judge.torch_class("os.system") is None and judge.torch_class("torch.load") is None
    assert judge.torch_class("torch.no_such_module.X") is None


# -- shadows: the value checks of a test that must run in the kernel, done here too ----------
SHADOW_SETUP = SETUP + ["from autograder.device_strict import strict_devices"]
GRAPH_TEST = """
x = torch.randn(4, 3)
w = torch.randn(3, 2, requires_grad=True)
expected = 2 * (x @ w)
with strict_devices():
    got = scaled(x, w)
check_value(got.grad_fn is not None, True, name="scaled(x, w) is part of the graph")
check_tensor(got, expected, name="scaled(x, w)")
for n in range(1, 4):
    xs = torch.randn(n, 3)
    expected = 2 * (xs @ w)
    check_tensor(scaled(xs, w), expected, name=f"scaled(<{n} rows>, w)")
torch.set_default_dtype(torch.float64)
"""
SCALED = "def scaled(x, w):\n    return 2 * (x @ w)\n"
SCALED_ALTERNATIVE = "def scaled(x, w):\n    return torch.matmul(x, w) + torch.matmul(x, w)\n"
SCALED_PEEKER = """
import sys
def scaled(x, w):
    caller = sys._getframe(1).f_locals
    return caller["expected"] if "expected" in caller else x @ w   # wrong unless it finds the test's value
"""


def test_a_shadow_catches_a_wrong_answer_that_passes_where_the_test_runs_in_the_kernel():
    peeker = Student(SCALED_PEEKER)
    in_kernel = dict(peeker.namespace)
    exec(SHADOW_SETUP[0] + "\n" + SHADOW_SETUP[1], in_kernel)
    exec(GRAPH_TEST, in_kernel)
    torch.set_default_dtype(torch.float32)  # the in-kernel run above set it, as the test does
    # Without the defence, it passes in its own process (the values are the test's). The shadow
    # calls it from the grader's process, where no frame holds an expected value.
    reference, _ = judge.Judge(SHADOW_SETUP, {"scaled"}, Student(SCALED).ask).shadow(GRAPH_TEST)
    passed, failed = judge.Judge(SHADOW_SETUP, {"scaled"}, peeker.ask).shadow(GRAPH_TEST)
    missing = judge.missing_checks(reference, passed)
    assert missing == ["scaled(x, w)", "scaled(<1 rows>, w)", "scaled(<2 rows>, w)", "scaled(<3 rows>, w)"]
    assert any("scaled(x, w): wrong values" in message for message in failed)


def test_a_shadow_passes_every_correct_answer_and_changes_nothing_in_the_graders_process():
    reference, failed = judge.Judge(SHADOW_SETUP, {"scaled"}, Student(SCALED).ask).shadow(GRAPH_TEST)
    # A result comes back as data that keeps its requires_grad and whether it is a leaf.
    assert [name for _, name in reference] == ["scaled(x, w) is part of the graph", "scaled(x, w)",
                                               "scaled(<1 rows>, w)", "scaled(<2 rows>, w)", "scaled(<3 rows>, w)"]
    assert failed == []
    alternative, _ = judge.Judge(SHADOW_SETUP, {"scaled"}, Student(SCALED_ALTERNATIVE).ask).shadow(GRAPH_TEST)
    assert judge.missing_checks(reference, alternative) == []
    # Neither the strict device mode nor the default dtype the test sets reached this process.
    assert torch.get_default_dtype() == torch.float32
    from torch.utils._python_dispatch import _get_current_dispatch_mode
    assert _get_current_dispatch_mode() is None


def test_a_kernel_lost_during_a_shadow_is_not_swallowed_by_its_guards():
    def ask(request):
        raise judge.KernelLost("KernelDied", "the kernel stopped")
    with pytest.raises(judge.KernelLost):
        judge.Judge(SHADOW_SETUP, {"scaled"}, ask).shadow(GRAPH_TEST)


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
check_tensor(optimizer.state[model[2].bias]["momentum_buffer"], reference_optimizer.state[reference[2].bias]["momentum_buffer"], name="momentum")
"""


def test_what_the_test_builds_goes_to_the_kernel_as_copies_and_comes_back_changed():
    setup = SETUP + [TRAIN_STEP.replace("def train_step(", "def train_step_here(")]
    student = Student(TRAIN_STEP)
    assert error_of(judge.Judge(setup, {"train_step"}, student.ask).run(TRAIN_STEP_TEST)) is None
    assert any("pickled" in request for request in student.requests)
    assert {request["op"] for request in student.requests} >= {"call", "state"}


def test_a_function_the_test_defines_is_sent_by_name_and_the_notebook_has_none():
    student = Student("def apply(f, x):\n    return f(x)\n")
    outputs = student.judged("check_tensor(apply(lambda v: v * 2, torch.ones(2)), torch.full((2,), 2.0))", {"apply"})
    assert error_of(outputs) == "AttributeError: the notebook defines no <lambda>"
    # What cannot be pickled at all reaches it by its type name only.
    outputs = student.judged("import threading\napply(threading.Lock(), 1)", {"apply"})
    assert error_of(outputs) == "TypeError: 'lock' object is not callable"


def test_what_the_setup_cells_define_is_taken_from_the_notebooks_own_run_of_them():
    setup = SETUP + ["import dataclasses\n@dataclasses.dataclass\nclass Config:\n    lr: float = 0.1"]
    student = Student("import dataclasses\n@dataclasses.dataclass\nclass Config:\n    lr: float = 0.1\n"
                      "def rate(config):\n    return config.lr * 2\n")
    outputs = judge.Judge(setup, {"rate"}, student.ask).run("check_value(rate(Config(lr=0.25)), 0.5, name='rate')")
    assert error_of(outputs) is None


# -- the test's own files: a checkpoint written or read by the student's function --------------
# The kernel's file system is its own: here, paths under another root stand for it.
SAVES_AND_LOADS = """
import torch
def save(path, value):
    torch.save({"value": value}, KERNEL_ROOT + str(path))

def load(path):
    return torch.load(KERNEL_ROOT + str(path), weights_only=True)["value"]
"""
FILES_TEST = """
import tempfile
from pathlib import Path
folder = Path(tempfile.mkdtemp())
save(folder / "a.pt", torch.arange(3))
check_tensor(torch.load(folder / "a.pt", weights_only=True)["value"], torch.arange(3), name="what save() wrote")
torch.save({"value": torch.ones(2)}, folder / "b.pt")
check_tensor(load(folder / "b.pt"), torch.ones(2), name="what load() read")
"""


def test_the_tests_files_are_mirrored_in_the_kernel_around_each_call(tmp_path, monkeypatch):
    kernel_tmp = tmp_path / "kernel"
    kernel_tmp.mkdir()
    student = Student(SAVES_AND_LOADS)
    student.namespace["KERNEL_ROOT"] = str(kernel_tmp)
    real_answer = answer_server._file

    def in_kernel(request):
        return real_answer({**request, "path": str(kernel_tmp) + str(request["path"])})
    monkeypatch.setattr(answer_server, "_file", in_kernel)
    assert error_of(student.judged(FILES_TEST, {"save", "load"})) is None
    assert [r["op"] for r in student.requests].count("fetch") == 2
    assert list(kernel_tmp.rglob("a.pt")) and list(kernel_tmp.rglob("b.pt"))


def test_a_file_the_kernel_sends_is_written_only_as_bytes_and_never_through_a_link(tmp_path):
    target, link = tmp_path / "elsewhere", tmp_path / "checkpoint.pt"
    target.write_bytes(b"untouched")
    link.symlink_to(target)
    with pytest.raises(OSError):
        judge._take_file(str(link), b"forged")
    assert target.read_bytes() == b"untouched"
    judge._take_file(str(tmp_path / "new.pt"), {"not": "bytes"})
    assert not (tmp_path / "new.pt").exists()
    judge._take_file(str(tmp_path), [["../escape.pt", b"x"], ["ok.pt", b"y"]])
    assert not (tmp_path.parent / "escape.pt").exists() and (tmp_path / "ok.pt").read_bytes() == b"y"


def test_every_source_test_reads_files_as_data_only():
    """A test's shadow runs in the grader, on files the student's kernel wrote: each such read
    must run nothing (torch.load with weights_only=True; never pickle, never np.load with pickles)."""
    import json
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[2] / "source"
    for path in root.glob("*/*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if not cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
                continue
            code = "".join(cell["source"])
            for call in re.findall(r"torch\.load\([^\n]*", code):
                assert "weights_only=True" in call, f"{path.name}: {call}"
            assert "pickle" not in code.replace("pickled", ""), path.name
            assert "allow_pickle=True" not in code, path.name


def test_a_shadow_starts_from_the_setup_cells_whichever_tests_ran_before():
    student = Student(SCALED)
    grader = judge.Judge(SHADOW_SETUP, {"scaled"}, student.ask)
    alone, _ = grader.shadow("check_value(type(got).__name__, 'Tensor', name='got')")
    grader.shadow("got = scaled(torch.ones(1, 3), torch.ones(3, 1))")  # an earlier test, for some students only
    after, failed = grader.shadow("check_value(type(got).__name__, 'Tensor', name='got')")
    assert alone == after == [] and failed == ["NameError: name 'got' is not defined"]


def test_only_folders_the_test_made_are_mirrored_never_a_path_the_student_names(tmp_path):
    secret = tmp_path / "secret.pt"
    secret.write_bytes(b"the grader's own file")
    student = Student("def where():\n    return " + repr(str(secret)) + "\ndef load(path):\n    return 0\n")
    outputs = student.judged("load(where())\nimport tempfile\nload(tempfile.mkdtemp() + '/mine.pt')", {"where", "load"})
    assert error_of(outputs) is None
    puts = [r for r in student.requests if r["op"] in ("put", "fetch")]
    assert puts and all("mine.pt" in str(r["path"]) for r in puts)  # never the path the student named
    assert secret.read_bytes() == b"the grader's own file"
