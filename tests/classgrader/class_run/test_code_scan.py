"""code_scan: the means of rewriting the grading process are found by reading a submission, and
no correct answer of the course uses any of them."""
import copy
import importlib
import json

import nbformat
import pytest

from classgrader.class_run import code_scan
from coursekit import ROOT, build_submission, read_notebook

UNITS = [importlib.import_module(f"scenarios.unit0{n}") for n in range(1, 9)]

# Each route, in the fewest lines, and the words its finding must have.
ROUTES = {
    "a method of torch replaced": ("import torch\ntorch.Tensor.detach = lambda self: self", "torch.Tensor.detach"),
    "the same, through an alias": ("from torch import nn\nL = nn.Linear\nL.forward = print", "L.forward"),
    "the same, through type()": ("import torch\ntype(torch.zeros(1)).detach = 1", "through type()"),
    "the same, through a parameter": ("import torch\ndef patch(cls):\n    cls.detach = lambda s: s\n"
                                      "patch(torch.Tensor)", ".detach, the name of a method"),
    "the same, through a method called on a class": ("import torch\nclass P:\n    def go(self):\n"
                                                     "        self.detach = lambda s: s\nP.go(torch.Tensor)",
                                                     ".detach, the name of a method"),
    "a constructor run on a class": ("import torch\nclass P:\n    def __init__(self):\n"
                                     "        setattr(self, 'detach', 1)\nP.__init__(torch.Tensor)", "calls __init__"),
    "a device probe rigged": ("import torch\ntorch.backends.mps.is_available = lambda: True", "mps.is_available"),
    "the interpreter's modules": ("import sys\nsys.modules['classgrader.in_kernel.integrity']", "sys.modules"),
    "the same, reached through torch": ("import torch\ntorch.sys.modules.clear()", "sys.modules"),
    "the grader's own audit": ("import classgrader.in_kernel.integrity as i\ni.ORIGINALS.clear()",
                               "imports classgrader.in_kernel.integrity"),
    "the audit's name in the kernel": ("_course_integrity.ORIGINALS = {}", "never defines"),
    "the check library's records": ("from autograder import trace\ntrace.record('x', 1)", "autograder.trace"),
    "the check library's tables": ("from autograder.misconceptions import CATALOGUE\nCATALOGUE.clear()",
                                   "a table of autograder"),
    "a code object swapped": ("def f():\n    pass\nf.__code__ = (lambda: 1).__code__", ".__code__"),
    "frames": ("try:\n    1 / 0\nexcept Exception as e:\n    g = e.__traceback__.tb_frame.f_globals", "tb_frame"),
    "code made from text": ("exec('import s' + 'ys')", "uses exec"),
    "a computed name on a module": ("import torch\nT = getattr(torch, 'Ten' + 'sor')", "uses getattr"),
    "a module's namespace written": ("import torch\nvars(torch)['no_grad'] = None", "through vars()"),
    "a tensor that is not a tensor": ("import torch\nclass Liar(torch.Tensor):\n    pass",
                                      "a subclass of torch.Tensor"),
    "a class that says it is another": ("class A:\n    @property\n    def __class__(self):\n        return int",
                                        "its own __class__"),
    "equality that always holds": ("class A:\n    def __eq__(self, other):\n        return True", "its own __eq__"),
    "grad mode left off for the session": ("import torch\ntorch.set_grad_enabled(False)", "rest of the session"),
    "the same, as a value": ("import torch\n_ = torch.set_grad_enabled(False)", "rest of the session"),
    "a builtin the tests call, redefined": ("all = lambda items: True", "redefines all"),
    "grad mode held open by a suspended generator": ("import torch\ndef off():\n    with torch.no_grad():\n"
                                                     "        yield\nnext(off())", "across a yield"),
    "the same, through a context manager's generator": (
        "import contextlib, torch\n@contextlib.contextmanager\ndef off():\n    with torch.no_grad():\n"
        "        yield\nnext(off().gen)", "reaches .gen"),
    "attributes copied by name": ("import functools\nfrom autograder.autograd_probe import SavedTensorCount\n"
                                  "def carrier():\n    pass\ncarrier.count = 0\n"
                                  "functools.update_wrapper(SavedTensorCount, carrier, assigned=('count',))",
                                  "copies chosen attributes"),
    "isinstance made to say yes": ("import numbers\nclass Fake:\n    pass\nnumbers.Real.register(Fake)",
                                   "pass isinstance()"),
    "the same, as a def": ("def isinstance(value, kind):\n    return True", "redefines isinstance"),
    "a global hook on every module": ("from torch import nn\nnn.modules.module.register_module_forward_hook(print)",
                                      "register_module_forward_hook"),
    "saved-tensor hooks": ("import torch\nh = torch.autograd.graph.saved_tensors_hooks(print, print)",
                           "torch.autograd.graph"),
    "torch's C internals": ("import torch\ntorch._C._set_grad_enabled(False)", "torch._C"),
    "a shell escape": ("!kill -9 1", "get_ipython"),
    "a magic": ("%load_ext something", "get_ipython"),
    "the session's history": ("tests = In[5]", "never defines"),
    "another process": ("import os\nos.fork()", "os.fork"),
    "a module beyond the course's": ("import gc\ngc.get_objects()", "imports gc"),
    "a pickle that runs code": ("import torch\ntorch.load('x.pt', weights_only=False)", "unpickles"),
    "a relative import": ("from . import helpers", "relative"),
}


@pytest.mark.parametrize("route", ROUTES)
def test_each_route_is_found_and_named(route):
    code, words = ROUTES[route]
    findings = code_scan.scan([code])
    assert findings and any(words in f.what for f in findings), (route, [str(f) for f in findings])


def test_plain_code_of_every_kind_the_course_teaches_is_clean():
    code = '''
import os, sys, copy, math, pickle, types, functools, operator
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._pytree import tree_map

class Net(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.relu = nn.ReLU()
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            setattr(self, f"fc{i}", nn.Linear(a, b))
        self.register_buffer("mean", torch.zeros(sizes[0]))

    def forward(self, x):
        for i in range(2):
            x = self.relu(getattr(self, f"fc{i}")(x))
        return x

    def fit(self, x):
        self.mean, self.std = x.mean(0), x.std(0)

model = Net([2, 3, 3])
for p in model.parameters():
    p.requires_grad = False
    p.grad = None
with torch.no_grad():
    y = model(torch.zeros(1, 2))
mps = getattr(torch.backends, "mps", None)
config = types.SimpleNamespace(lr=0.1, device="cpu")
config.device = "cpu"
plain = dict(vars(config))
path = os.path.join("a", "b.pt")
print("note", file=sys.stderr)
try:
    torch.load(path, weights_only=True)
except (pickle.UnpicklingError, FileNotFoundError):
    pass
n = functools.reduce(operator.mul, (2, 3), 1)

def logged(function):
    @functools.wraps(function)
    def wrapper(*args):
        return function(*args)
    return wrapper

import contextlib

@contextlib.contextmanager
def evaluating(net):
    was = net.training
    net.eval()
    with torch.no_grad():
        yield net
    net.train(was)
torch._foreach_mul_([torch.ones(1)], 0.5)
name = type(model).__name__
input = torch.zeros(3)
input[0] = 1
torch.backends.cudnn.benchmark = True
'''
    assert code_scan.scan([code]) == []
    assert code_scan.scan(["from __future__ import annotations", "import torch\nmodel = torch.nn.Linear(2, 1)",
                           "%timeit model(torch.zeros(1, 2))",
                           "%%time\ny = model(torch.zeros(1, 2))", "%matplotlib inline"]) == []
    assert code_scan.scan(["%timeit exec('1')"])  # what a plain magic runs is read too


def test_a_helper_of_the_course_s_own_cells_redefined_as_code_is_found():
    """What the course's setup and visible test cells define, the tests call: an empty loader
    in its place would make them pass vacuously. A value of the same name is no finding."""
    release = nbformat.read(ROOT / "release" / "05_no_grad" / "05_no_grad.ipynb", as_version=4)
    nb = copy.deepcopy(release)
    for code in ("def make_loader(n=32, batch_size=8):\n    return []",
                 "def reset():\n    global make_loader\n    make_loader = lambda *a, **k: []\nreset()",
                 "for make_loader in [lambda *a, **k: []]:\n    pass",
                 "if (make_loader := lambda *a, **k: []):\n    pass",
                 "from itertools import repeat as make_loader"):
        nb = copy.deepcopy(release)
        nb.cells.append(nbformat.v4.new_code_cell(code))
        found = code_scan.notebook_findings(nb, release)
        assert [f.what for f in found] == ["redefines make_loader, which the tests call, as code of its own"], code
    nb = copy.deepcopy(release)
    nb.cells.append(nbformat.v4.new_code_cell("DEVICE = torch.device('cpu')\nwith torch.no_grad():\n    pass\n"
                                              "for input, target in make_loader():\n    pass\n"
                                              "class Mine(nn.Module):\n    pass\nmodel = Mine()"))
    assert code_scan.notebook_findings(nb, release) == []
    nb.cells.append(nbformat.v4.new_code_cell("F = 3"))  # the module the tests call F.cross_entropy on
    assert [f.what for f in code_scan.notebook_findings(nb, release)] == [
        "rebinds F, which the course's own cells import"]


def test_the_release_cells_are_the_course_s_own_and_not_read():
    course_cell = "import sys\nprint(sys.modules['torch'])"
    assert code_scan.scan([course_cell], given={course_cell}) == []
    assert code_scan.scan([course_cell + "\n"]) != []


def cases(unit):
    for scenario in unit.SCENARIOS:
        yield scenario.student, scenario.answers, scenario.extra_cells, not scenario.loses
    for mutant in unit.MUTANTS:
        yield f"mutant {mutant.name}", mutant.answers, None, False


@pytest.mark.parametrize("unit", UNITS, ids=[u.ASSIGNMENT for u in UNITS])
def test_every_correct_answer_of_the_course_reads_clean(unit):
    """Every correct variant passes unflagged; a wrong answer is flagged only for unpickling or
    changing an object through its name (the misconceptions that are such means themselves)."""
    source = read_notebook(ROOT / "source" / unit.ASSIGNMENT / unit.NOTEBOOK)
    release = read_notebook(ROOT / "release" / unit.ASSIGNMENT / unit.NOTEBOOK)
    as_read = nbformat.reads(json.dumps(release), as_version=4)
    for name, answers, extra, correct in cases(unit):
        nb = nbformat.reads(json.dumps(build_submission(source, release, answers, extra)), as_version=4)
        findings = code_scan.notebook_findings(nb, as_read)
        if correct:
            assert not findings, (name, [str(f) for f in findings])
        for finding in findings:
            assert any(w in finding.what for w in ("unpickles", "safe_globals", "setattr")), (name, str(finding))


def test_the_flag_names_the_first_places_and_counts_the_rest():
    findings = code_scan.scan(["import gc\nimport ctypes\nimport inspect\nimport dis"])
    reason = code_scan.flag_reason(findings)
    assert reason.startswith(code_scan.REASON + ": cell 1, line 1: imports gc;") and "(and 1 more)" in reason


# Facts only the kernel holds, forged there: wrong code whose kernel-side evidence is rewritten
# through a parameter (no module named at the assignment), as a reader of the grader would.
FORGED_FACTS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
import autograder
from autograder.autograd_probe import SavedTensorCount

def evaluate(model, batches):  # no torch.no_grad(): every batch records a graph
    return sum(F.mse_loss(model(x), y).item() for x, y in batches) / len(batches)

def pick_device():  # mps tried before cuda
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")

def blind(probe):  # the saved-tensor probe counts nothing
    probe._pack = staticmethod(lambda tensor: tensor)

def rig(library):  # "pretend both" pretends CUDA alone
    real = library.pretend_accelerators
    library.pretend_accelerators = lambda cuda=False, mps=False: real(cuda=cuda, mps=mps and not cuda)
'''
SHOW_THEM = '''
model, batches = nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1))]
def observed():
    with SavedTensorCount() as saved:
        evaluate(model, batches)
    with autograder.pretend_accelerators(cuda=True, mps=True):
        picked = pick_device().type
    return saved.count, picked
honest = observed()
blind(SavedTensorCount)
rig(autograder)
print(honest, observed())
'''


def test_forged_kernel_facts_pass_the_kernel_s_own_probes_and_are_flagged(tmp_path):
    """The route, working: in a fresh interpreter the probes a hidden test uses see the wrong
    code for what it is, then, once rewritten, see nothing wrong. Then stopped: the grader's
    reading of the same code flags it, naming both rewrites."""
    import subprocess
    import sys
    script = tmp_path / "forged.py"
    script.write_text(FORGED_FACTS + SHOW_THEM)
    shown = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert shown.returncode == 0, shown.stderr[-2000:]
    honest, forged = shown.stdout.strip().split(") (")
    assert honest.startswith("(") and not honest.startswith("(0,") and "'mps'" in honest, shown.stdout
    assert forged.startswith("0,") and "'cuda'" in forged, shown.stdout
    found = [f.what for f in code_scan.scan([FORGED_FACTS])]
    assert any("._pack" in what for what in found) and any(".pretend_accelerators" in what for what in found), found


def test_a_module_that_cannot_be_imported_is_no_finding():
    """The kernel runs on the grader's own environment, without its work folder on the import
    path: a module missing here is missing there (an ImportError, no means of anything)."""
    assert code_scan.scan(["import torch_rounding_helpers\nfrom my_helpers import f"]) == []


def test_code_too_deep_to_read_is_a_finding_not_a_crash():
    """A reader of the grader may nest its code past what a walk of it can take: the cell is
    then flagged as unread, and the reading goes on with the others."""
    deep = "x = 1\ny = " + " + ".join(["x"] * 50_000)
    found = code_scan.scan([deep, "import gc"])
    assert [f.what for f in found][0].startswith("is too deep") and any("gc" in f.what for f in found), found
