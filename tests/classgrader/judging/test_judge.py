"""judge: a test run in the grader, the student's kernel answering only with data.

The student's side here is the real answer server over a namespace in this process
(tests/answering.py); tests/test_class_grading.py runs the same through real sandboxed kernels."""
import os
import textwrap

import pytest
import torch

from answering import SETUP, Student, error_of
from autograder import trace
from classgrader.in_kernel import protocol
from classgrader.judging import judge

CHANNEL_MEANS_TEST = textwrap.dedent("""
    img = torch.randint(0, 256, (5, 4, 3), dtype=torch.uint8)
    before = img.clone()
    expected = img.double().mean(dim=(0, 1)).float()
    check_tensor(channel_means(img), expected, name="channel_means(img)")
    check_tensor(img, before, name="the image you were given (it must not change)")
""")


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
    mutates = Student("def channel_means(img):\n    means = img.float().mean(dim=(0, 1))\n"
                      "    img.zero_()\n    return means\n")
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
    {"given": 3},                                                  # a tensor the grader never sent
    {"given": True},
    {"given_path": {"list": [{"plain": 0}, {"plain": 9}]}},        # no argument at that place
    {"given_path": {"list": [{"plain": 0}, {"plain": 0}, {"plain": "__class__"}]}},  # nor inside one
])
def test_a_forged_reply_is_refused_without_acting_on_it(forged):
    def ask(request):
        if request["op"] != "call":
            return trace.portable({"kind": "found", "callables": ["f"], "values": {}})
        called = {"kind": {"plain": "called"}, "result": forged, "args": {"list": []}, "kwargs": {"dict": []},
                  "call": {"plain": None}}
        return {"dict": [[{"plain": field}, record] for field, record in called.items()]}
    outputs = judge.Judge(SETUP, {"f"}, ask).run("f('x')")
    error = error_of(outputs)
    assert error.startswith(("ValueError: not a", "ValueError: no ")) or "without values" in error


def test_the_setup_cells_folders_last_until_the_student_is_done():
    """A helper cell's scratch folder (07's `folder`) is there for every test, and gone after close()."""
    student = Student("def f():\n    return 1\n")
    judged = judge.Judge([*SETUP, "import tempfile\nfolder = tempfile.mkdtemp()"], {"f"}, student.ask)
    outputs = judged.run("import os\nassert os.path.isdir(folder)\nprint(folder)")
    assert error_of(outputs) is None
    folder = outputs[0].text.strip()
    assert os.path.isdir(folder)  # a test's own folders go when it ends; the setup's stay
    judged.close()
    assert not os.path.exists(folder)


def test_a_lost_kernel_is_not_a_test_failure_the_test_could_catch():
    def ask(request):
        raise protocol.KernelLost("KernelDied", "the kernel stopped")
    with pytest.raises(protocol.KernelLost):
        judge.Judge(SETUP, {"f"}, ask).run("try:\n    f()\nexcept Exception:\n    pass")


@pytest.mark.parametrize(("code", "reason"), [
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
    ("before = PAYLOAD_RAN['count']\nf(path)\npitfall_if(PAYLOAD_RAN['count'] != before, 'unsafe-load')",
     "PAYLOAD_RAN"),
    ("probe = GraphLeakProbe(loss)\nf(model, probe)", "GraphLeakProbe"),
    ("asked = broadcasts_asked(lambda: f(a, b), [a, b])", "broadcasts_asked"),
    ("with torch.no_grad():\n    p6 = a * b\ncheck_value(f, {'p6': p6.requires_grad})", None),
    # an error's rewording changes nothing the student's call sees: routed as its body
    ("with explained_errors():\n    check_tensor(channel_means(img), expected)", None),
    ("with explained_errors(), torch.no_grad():\n    check_value(f(1), 2)", None),
    ("with explained_errors():\n    check_value(g(m) is m, True)", "identities"),
    ("with explained_errors() as why:\n    check_value(f(1), 2)", "inside a `with` block"),
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
    outputs = judge.Judge([*SETUP, "from autograder import check_choice"], {"q1"}, student.ask).run(QUIZ_TEST)
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


# -- shadows: the value checks of a test that must run in the kernel, done here too ----------
SHADOW_SETUP = [*SETUP, "from autograder.device_strict import strict_devices"]
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
        raise protocol.KernelLost("KernelDied", "the kernel stopped")
    with pytest.raises(protocol.KernelLost):
        judge.Judge(SHADOW_SETUP, {"scaled"}, ask).shadow(GRAPH_TEST)


def test_a_shadow_starts_from_the_setup_cells_whichever_tests_ran_before():
    student = Student(SCALED)
    grader = judge.Judge(SHADOW_SETUP, {"scaled"}, student.ask)
    alone, _ = grader.shadow("check_value(type(got).__name__, 'Tensor', name='got')")
    grader.shadow("got = scaled(torch.ones(1, 3), torch.ones(3, 1))")  # an earlier test, for some students only
    after, failed = grader.shadow("check_value(type(got).__name__, 'Tensor', name='got')")
    assert alone == after == [] and failed == ["NameError: name 'got' is not defined"]



def test_a_shadow_keeps_autograds_mode_around_the_students_call():
    student = Student("def recording(x):\n    return torch.is_grad_enabled()\n")
    test = "with torch.no_grad():\n    check_value(recording(1), False, name='under no_grad', reveal=True)\n"
    passed, failed = judge.Judge(SHADOW_SETUP, {"recording"}, student.ask).shadow(test)
    assert failed == [] and [name for _, name in passed] == ["under no_grad"]
    # A grad-mode block may hold the student's call in a test judged here too; other contexts may not.
    assert judge.observes_process(test, frozenset({"recording"})) is None
    other_context = test.replace("torch.no_grad()", "strict_devices()")
    assert "inside a `with` block" in judge.observes_process(other_context, frozenset({"recording"}))


MEMORY_TEST = """
from autograder import pitfall_if
from autograder.memory_probe import PeakMemory
with PeakMemory() as memory:
    hold(16)
pitfall_if(memory.grown > 32 * 2**20, "missing-no-grad", f"held {memory.grown / 2**20:.0f} MiB")
"""
# Holds `mib` MiB at once, and 48 more where it should hold nothing; its own process's probe blinded.
HOLDER = """
import torch
from autograder import memory_probe
def hold(mib):
    blocks = [torch.ones(mib * 2**18), torch.ones(48 * 2**18)]
    return None
memory_probe._OwnProcess.grown = lambda self: 0
"""


def test_a_shadow_measures_the_students_process_from_outside_around_the_call(monkeypatch):
    import os

    from autograder import memory_probe
    from classgrader.kernels.kernel_memory import ProcessTree
    monkeypatch.setattr(memory_probe._OwnProcess, "grown", memory_probe._OwnProcess.grown)  # undone after
    holder = Student(HOLDER)  # its side of the conversation runs in this process (tests/answering.py)
    in_kernel = dict(holder.namespace)
    exec(MEMORY_TEST, in_kernel)  # passes: the process's own probe says nothing grew
    # The shadow keeps the measurement around the call, and measures with the meter given: this
    # process read from outside, as a grading kernel is by its memory group.
    outside = lambda: ProcessTree(os.getpid())  # noqa: E731
    passed, failed = judge.Judge(SETUP, {"hold"}, holder.ask, outside).shadow(MEMORY_TEST)
    assert passed == [] and len(failed) == 1 and "missing no_grad" in failed[0] and "held 6" in failed[0], failed
    honest = Student("import torch\ndef hold(mib):\n    block = torch.ones(mib * 2**18)\n")
    passed, failed = judge.Judge(SETUP, {"hold"}, honest.ask, outside).shadow(MEMORY_TEST)
    assert failed == [] and passed == [("pitfall", "missing-no-grad")], failed
    # Kept beside an autograd mode too, as the call carries that mode.
    both = MEMORY_TEST.replace("with PeakMemory() as memory:", "with torch.no_grad(), PeakMemory() as memory:")
    passed, failed = judge.Judge(SETUP, {"hold"}, honest.ask, outside).shadow(both)
    assert failed == [] and passed == [("pitfall", "missing-no-grad")], failed
    # Without a way to measure the kernel, the check fails: it never passes on the kernel's word.
    passed, failed = judge.Judge(SETUP, {"hold"}, honest.ask).shadow(MEMORY_TEST)
    assert passed == [] and any("no way to measure" in message for message in failed), failed


class GroupGone:
    """The meter of a kernel that died during the call: its memory group removed with it."""

    def start(self):
        pass

    def grown(self):
        raise FileNotFoundError("memory.max_usage_in_bytes")


def test_a_kernel_lost_inside_a_measurement_reaches_the_grader():
    student = Student("def hold(mib):\n    return None\n")

    def ask(request):  # the kernel dies while it runs the call
        if request["op"] == "call":
            raise protocol.KernelLost("KernelDied", "the kernel stopped")
        return student.ask(request)
    with pytest.raises(protocol.KernelLost):
        judge.Judge(SETUP, {"hold"}, ask, GroupGone).shadow(MEMORY_TEST)


def test_a_setup_helper_that_calls_the_students_function_finds_it_in_tests_and_shadows_alike():
    setup = [*SHADOW_SETUP, "def twice(x):\n    return scaled(scaled(x, torch.eye(3)), torch.eye(3))"]
    test = "check_tensor(twice(torch.ones(1, 3)), torch.full((1, 3), 4.0), name='twice')"
    grader = judge.Judge(setup, {"scaled"}, Student(SCALED).ask)
    assert error_of(grader.run(test)) is None
    passed, failed = judge.Judge(setup, {"scaled"}, Student(SCALED).ask).shadow(test)
    assert failed == [] and [name for _, name in passed] == ["twice"]
