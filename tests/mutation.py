"""The project's own mutation check: wrong variants of every answer, run against the hidden tests.

Each answer cell's reference solution is rewritten by OPERATORS, one site at a time, the way a
student holding one of the curriculum's misconceptions would write it (a dropped
`.to(device)`, a dropped `no_grad`, `keepdim` flipped, `view` for `reshape`, a buffer
registered as a parameter, `weights_only=False`, ...). Hand-written mutants, for what a regex
cannot express, are listed per unit in tests/scenarios/unitNN.py as MUTANTS, and generated
mutants that behave exactly like a correct answer in EQUIVALENT, with the reason.

A mutant is caught when the test cell of the exercise it changes raises. The runner executes the
source notebook itself (setup and helper cells, every answer cell, test cells with their hidden
blocks, as autograde restores them; not the untagged "Try it" cells) in a server process per
unit (or several) that imports torch once and forks a fresh child per job, so no state passes between
mutants. It is far faster than nbgrader, which the end-to-end test still exercises.

    from mutation import run_jobs, generate_mutants
    results = run_jobs("05_no_grad", [{"name": "x", "answers": {...}, "only": ["q1_evaluate_tests"]}])
"""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # coursekit and scenarios, when run as a script
from coursekit import ROOT, nbgrader_meta, read_notebook, solution_code, source_text
from scenarios import Mutant

UNITS = ["unit01", "unit02", "unit03", "unit04", "unit05", "unit06", "unit07", "unit08"]


# ---------------------------------------------------------------------------------------------
# The notebook, as cells to execute.

def notebook_cells(assignment: str) -> list[dict]:
    """The source notebook's cells the grader runs: [{"kind", "grade_id", "code"}] in order;
    "answer" cells hold the reference solution (markers stripped), "test" cells their full
    text, hidden tests included. Markdown and untagged cells are left out."""
    nb = read_notebook(ROOT / "source" / assignment / f"{assignment}.ipynb")
    cells = []
    for cell in nb["cells"]:
        meta = nbgrader_meta(cell)
        if cell["cell_type"] != "code" or not meta:
            continue
        kind = "answer" if meta.get("solution") else "test" if meta.get("grade") else "setup"
        code = solution_code(cell) if kind == "answer" else source_text(cell)
        cells.append({"kind": kind, "grade_id": meta.get("grade_id"), "code": code})
    return cells


def exercises(assignment: str) -> list[str]:
    """The code exercises' answer cells (quiz cells left out)."""
    return [c["grade_id"] for c in notebook_cells(assignment)
            if c["kind"] == "answer" and not c["grade_id"].startswith("quiz")]


def exercise_of(grade_id: str) -> str:
    """The exercise a cell belongs to: q4_run_answer, q4_run_tests and q4_run_safety_tests are
    all q4 (an exercise may have several test cells)."""
    head = grade_id.split("_")[0]
    return head if re.fullmatch(r"q\d+", head) else grade_id.removesuffix("_answer").removesuffix("_tests")


# ---------------------------------------------------------------------------------------------
# Generated mutants.

@dataclass(frozen=True)
class Operator:
    name: str
    pattern: str
    replacement: str
    misconception: str = ""   # the CATALOGUE key it stands for, "" for a plain slip
    flags: int = re.M


OPERATORS = [
    # Devices (unit 02 and every graded function that takes a device).
    Operator("drop-to-device", r"\.to\((?:device|DEVICE)\)", "", "batch-not-moved"),
    Operator("to-not-assigned", r"^(\s*)(\w+), (\w+) = \2\.to\((\w+)\), \3\.to\(\4\)$", r"\1\2.to(\4), \3.to(\4)",
             "to-not-assigned"),
    Operator("drop-device-kwarg", r",\s*device=[\w.]+", "", "created-on-default-device"),
    Operator("drop-dtype-kwarg", r",\s*dtype=[\w.]+", ""),
    Operator("drop-map-location", r"map_location=\w+,\s*", ""),
    Operator("assumed-device", r"\b(?!self\b)\w+\.device\b(?!\s*[=(])", "DEVICE", "created-on-default-device"),
    Operator("hardcoded-float32", r"dtype=\w+\.dtype", "dtype=torch.float32"),
    # Dtypes and counts (unit 01).
    Operator("drop-float-cast", r"\.float\(\)", "", "integer-truncation"),
    Operator("floor-division", r"return (\w+) / (\w+)$", r"return \1 // \2", "integer-truncation"),
    Operator("numel-as-len", r"(\w+)\.numel\(\)", r"len(\1)", "len-as-numel"),
    Operator("prod-as-len", r"math\.prod\((\w+)\)", r"len(\1)", "len-as-numel"),
    Operator("shape-as-size", r"tuple\((\w+)\.shape\)", r"\1.size", "size-not-called"),
    # Broadcasting and views (unit 03).
    Operator("keepdim-on", r"\.(mean|sum|var|std)\(((?:dim=)?(?:0|\(0, 1\)))\)", r".\1(\2, keepdim=True)",
             "accidental-broadcast"),
    Operator("keepdim-flip", r"keepdim=True", "keepdim=False", "accidental-broadcast"),
    Operator("reduce-other-dim", r"\.(mean|sum|var|std)\((dim=)?0\b", r".\1(\g<2>1", "accidental-broadcast"),
    Operator("reshape-to-view", r"\.reshape\(", ".view(", "reshape-always-copies"),
    Operator("drop-reshape", r"\.reshape\(-1\)", "", "column-vs-flat-loss"),
    Operator("drop-squeeze", r"\.squeeze\(-1\)", "", "column-vs-flat-loss"),
    Operator("drop-clone", r"\.clone\(\)", "", "mutates-through-view"),
    Operator("clone-as-detach", r"\.clone\(\)", ".detach()", "mutates-through-view"),
    Operator("clone-as-contiguous", r"\.clone\(\)", ".contiguous()", "reshape-always-copies"),
    # Autograd (units 04 and 05).
    Operator("drop-zero-grad", r"^(\s*)\S*(?:zero_grad\(.*\)|\.grad\.zero_\(\))$", r"\1pass", "grad-accumulates"),
    Operator("drop-no-grad", r"with torch\.(?:no_grad|inference_mode)\(\):", "if True:", "missing-no-grad"),
    Operator("no-grad-as-enable-grad", r"torch\.(?:no_grad|inference_mode)\(\)", "torch.enable_grad()",
             "missing-no-grad"),
    Operator("drop-no-grad-decorator", r"^\s*@torch\.no_grad\(\)\n", "", "missing-no-grad"),
    Operator("drop-detach", r"\.detach\(\)", "", "running-loss-tensor"),
    Operator("drop-item", r"\.item\(\)", "", "running-loss-tensor"),
    Operator("item-as-detach", r"\.item\(\)", ".detach()", "running-loss-tensor"),
    # Gradients never asked for: a slip the requires_grad check names as it is, not a non-leaf's .grad.
    Operator("drop-requires-grad", r"\.requires_grad_\((?:True)?\)", ""),
    Operator("drop-optimizer-step", r"^(\s*)optimizer\.step\(\)$", r"\1pass"),
    # The batch-size weighting the task text asks for, left out: a slip, no curriculum misconception.
    Operator("unweighted-mean", r"(\.item\(\)|\)\)) \* len\(\w+\)", r"\1"),
    Operator("mean-as-sum", r"\.mean\(\)", ".sum()"),
    Operator("train-for-eval", r"^(\s*)model\.eval\(\)$", r"\1model.train()", "eval-as-no-grad"),
    Operator("restore-to-train", r"^(\s*)model\.train\(\w+\)$", r"\1model.train()", "mode-not-restored"),
    Operator("drop-eval", r"^(\s*)model\.eval\(\)$", r"\1pass", "eval-as-no-grad"),
    Operator("drop-mode-restore", r"^(\s*)model\.train\(\w+\)$", r"\1pass", "mode-not-restored"),
    # Modules (unit 06).
    Operator("buffer-as-parameter", r'self\.register_buffer\("(\w+)", (.+)\)$', r"self.\1 = nn.Parameter(\2)",
             "statistics-as-parameter"),
    Operator("buffer-as-attribute", r'self\.register_buffer\("(\w+)", (.+)\)$', r"self.\1 = \2",
             "bare-tensor-attribute"),
    Operator("modulelist-as-list", r"nn\.ModuleList\(", "list(", "python-list-of-layers"),
    Operator("last-layer-too", r"len\(self\.layers\) - 1", "len(self.layers)"),
    Operator("update-in-eval", r"^(\s*)if self\.training:$", r"\1if True:", "buffer-updated-in-eval"),
    # Checkpoints (unit 07).
    Operator("save-model-object", r'("model": model)\.state_dict\(\)', r"\1", "saved-model-object"),
    Operator("drop-optimizer-state", r'"optimizer": optimizer\.state_dict\(\)', '"optimizer": {}',
             "optimizer-state-dropped"),
    Operator("drop-optimizer-load", r"^(\s*)optimizer\.load_state_dict\(.*\)$", r"\1pass", "optimizer-state-dropped"),
    Operator("config-object", r"dataclasses\.asdict\((\w+)\)", r"\1", "config-not-plain"),
    Operator("unsafe-load", r"weights_only=True", "weights_only=False", "unsafe-load"),
    Operator("non-strict-load", r"(\bmodel\.load_state_dict\((?:[^()]|\([^()]*\))*?)\)$", r"\1, strict=False)",
             "non-strict-load"),
    # Arguments and pairings a symmetric input would hide.
    Operator("swap-loss-arguments", r"loss_fn\(model\(((?:[^()]|\([^()]*\))*)\), ((?:[^()]|\([^()]*\))*)\)",
             r"loss_fn(\2, model(\1))", "swapped-loss-arguments"),
    Operator("pair-with-state-dict", r"zip\((\w+)\.parameters\(\), (\w+)\.parameters\(\)\)",
             r"zip(\1.parameters(), \2.state_dict().values())", "state-dict-as-parameters"),
]


def text_spans(code: str) -> list[tuple[int, int]]:
    """Where the strings and comments of `code` are, as character offsets: a change wholly
    inside a docstring, a message or a comment changes no behaviour, so no mutant is made there."""
    import io
    import tokenize
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in (tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_START", -1)):
                (r1, c1), (r2, c2) = token.start, token.end
                spans.append((starts[r1 - 1] + c1, starts[r2 - 1] + c2))
    except (tokenize.TokenError, IndentationError):
        pass
    return spans


def generate_mutants(assignment: str, operators=OPERATORS) -> list[Mutant]:
    """One mutant per operator and per site where it applies, in every code exercise (never
    wholly inside a string or a comment)."""
    solutions = {c["grade_id"]: c["code"] for c in notebook_cells(assignment) if c["kind"] == "answer"}
    mutants = []
    for answer_id in exercises(assignment):
        code = solutions[answer_id]
        for op in operators:
            for k, match in enumerate(sites(op, code)):
                mutated = code[:match.start()] + match.expand(op.replacement) + code[match.end():]
                if mutated != code:
                    mutants.append(Mutant(f"{answer_id}/{op.name}#{k + 1}", {answer_id: mutated},
                                          misconception=op.misconception))
    return mutants


def sites(op, code: str) -> list:
    """Where `op` applies in `code`: its matches, less those wholly inside a string or a comment."""
    spans = text_spans(code)
    return [m for m in re.finditer(op.pattern, code, op.flags)
            if not any(a <= m.start() and m.end() <= b for a, b in spans)]


def unit_module(unit: str):
    import importlib
    return importlib.import_module(f"scenarios.{unit}")


def all_mutants(unit: str) -> list[Mutant]:
    """Generated and hand-written mutants of a unit, each generated one that is listed in the
    unit's EQUIVALENT carrying its reason, and each listed in its RELABELLED standing for the
    misconception given there: an operator's label is a default, and where it lands in code
    that shows another misconception (no_grad dropped from code that calls eval() thinks eval()
    is enough), the unit says which, with the reason."""
    module = unit_module(unit)
    equivalent = getattr(module, "EQUIVALENT", {})
    relabelled = getattr(module, "RELABELLED", {})
    generated = generate_mutants(module.ASSIGNMENT)
    names = {m.name for m in generated}
    stale = (set(equivalent) | set(relabelled)) - names
    assert not stale, f"{unit}.EQUIVALENT or RELABELLED names mutants no operator makes: {sorted(stale)}"
    for m in generated:
        if m.name in equivalent:
            m.equivalent = equivalent[m.name]
        if m.name in relabelled:
            m.misconception = relabelled[m.name][0]
    return generated + list(getattr(module, "MUTANTS", []))


def correct_variants(unit: str) -> list:
    """The unit's scenarios that must score full marks (alternative correct answers)."""
    return [s for s in unit_module(unit).SCENARIOS
            if s.answers is not None and not s.loses and not s.extra_cells]


def target_cells(mutant: Mutant) -> set[str]:
    """The exercises whose test cells should catch the mutant (exercise_of)."""
    return {exercise_of(a) for a in mutant.answers}


# ---------------------------------------------------------------------------------------------
# The runner.

def run_jobs(assignment: str | None, jobs: list[dict], workers: int = 2, timeout: float = 120.0) -> dict[str, dict]:
    """Run each job {"name", "answers": {answer cell: code}, "only": [test cells, or the exercises
    of all their test cells] or None} in a fresh fork of a warm server for `assignment`. Returns
    {name: {"failed": {test cell: "Type: message"}, "ran": [test cells], "seconds": float}}. A job
    with its own "assignment" runs that one's notebook: one server (one torch import) serves
    several units."""
    request = json.dumps({"assignment": assignment, "jobs": jobs, "workers": workers, "timeout": timeout})
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, __file__, "--serve"], input=request, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=timeout * (len(jobs) + 2))
    if done.returncode != 0:
        raise RuntimeError(f"mutation server failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _execute(cells: list[dict], answers: dict[str, str], only) -> dict:
    """In a forked child: every cell in order, in one namespace, like a kernel; test cells
    record their exceptions instead of stopping the run."""
    import types
    main = types.ModuleType("__main__")  # as in a kernel: classes defined here pickle by __main__
    sys.modules["__main__"] = main
    namespace = main.__dict__
    failed, ran = {}, []
    for cell in cells:
        gid = cell["grade_id"]
        if cell["kind"] == "test" and only is not None and exercise_of(gid) not in {exercise_of(o) for o in only}:
            continue
        code = answers.get(gid, cell["code"]) if cell["kind"] == "answer" else cell["code"]
        try:
            exec(compile(code, f"<{gid}>", "exec"), namespace)
        except BaseException as error:
            if cell["kind"] == "test":
                import traceback
                lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == f"<{gid}>"]
                where = f" (line {lines[-1]} of the cell)" if lines else ""
                failed[gid] = f"{type(error).__name__}: {error}"[:2000] + where
        if cell["kind"] == "test":
            ran.append(gid)
    return {"failed": failed, "ran": ran}


def _serve() -> None:
    request = json.loads(sys.stdin.read())
    sys.path.insert(0, str(ROOT))  # the course's autograder/, not the tests/autograder/ folder
    import torch
    torch.set_num_threads(1)
    import torch.nn.functional

    import autograder
    import autograder.autograd_probe
    import autograder.checkpoints
    import autograder.device_strict  # noqa: F401
    torch.zeros(1, device="meta") + 1  # meta set up once
    cells_of = {}  # assignment -> its cells, read before any fork
    for job in request["jobs"]:
        assignment = job.get("assignment") or request["assignment"]
        if assignment not in cells_of:
            cells_of[assignment] = notebook_cells(assignment)
    results, running, queue = {}, {}, list(request["jobs"])
    out = sys.stdout
    while queue or running:
        while queue and len(running) < request["workers"]:
            job = queue.pop(0)
            read_end, write_end = os.pipe()
            folder = tempfile.mkdtemp(prefix="mutant-")  # made and removed here, whatever the child does
            pid = os.fork()
            if pid == 0:  # the child: a private folder, no output, one job, one answer
                os.close(read_end)
                os.chdir(folder)
                tempfile.tempdir = os.environ["TMPDIR"] = folder  # a test's scratch folders go with the job's
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                start = time.perf_counter()
                try:
                    result = _execute(cells_of[job.get("assignment") or request["assignment"]], job["answers"],
                                      job.get("only"))
                except BaseException as error:
                    result = {"failed": {"*": repr(error)}, "ran": []}
                result["seconds"] = time.perf_counter() - start
                with os.fdopen(write_end, "w") as pipe:
                    pipe.write(json.dumps(result))
                os._exit(0)
            os.close(write_end)
            running[read_end] = (pid, job, time.monotonic(), [], folder)
        ready, _, _ = select.select(list(running), [], [], 0.5)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            pid, job, started, parts, folder = running[fd]
            if chunk:
                parts.append(chunk)
                continue
            os.close(fd)
            os.waitpid(pid, 0)
            shutil.rmtree(folder, ignore_errors=True)
            del running[fd]
            try:
                results[job["name"]] = json.loads(b"".join(parts))
            except ValueError:
                results[job["name"]] = {"failed": {"*": "the child died"}, "ran": [], "seconds": 0.0}
        for fd, (pid, job, started, _, folder) in list(running.items()):
            if time.monotonic() - started > request["timeout"]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                shutil.rmtree(folder, ignore_errors=True)
                os.close(fd)
                del running[fd]
                results[job["name"]] = {"failed": {"*": "timed out"}, "ran": [], "seconds": request["timeout"]}
    out.write(json.dumps(results) + "\n")


# ---------------------------------------------------------------------------------------------
# Scoring.

def mutant_jobs(mutants: list[Mutant]) -> list[dict]:
    return [{"name": m.name, "answers": m.answers, "only": sorted(target_cells(m))} for m in mutants]


def wrong_scenarios(unit: str) -> list:
    """The unit's scenarios that must lose named items (quiz answers and extra cells left out)."""
    return [s for s in unit_module(unit).SCENARIOS
            if s.answers and s.loses and "*" not in s.loses and not s.extra_cells
            and not any(a.startswith("quiz") for a in s.answers)]


def scenario_verdict(scenario, result: dict) -> str:
    """"" when the scenario lost exactly its items and the messages say what it says, else why not."""
    failed = set(result["failed"])
    if failed != set(scenario.loses):
        return f"lost {sorted(failed)}, expected {sorted(scenario.loses)}: {result['failed']}"
    text = " ".join(result["failed"].values())
    missing = [phrase for phrase in scenario.says if phrase not in text]
    return f"does not say {missing}: {result['failed']}" if missing else ""


def variant_jobs(unit: str, scenarios=None) -> list[dict]:
    return [{"name": f"variant:{s.student}", "answers": s.answers, "only": None}
            for s in (correct_variants(unit) if scenarios is None else scenarios)]


def caught(mutant: Mutant, result: dict) -> bool:
    return bool(target_cells(mutant) & {exercise_of(f) for f in result["failed"]}) or "*" in result["failed"]


def named_keys(result: dict) -> list[str]:
    """The misconception keys the failed test cells' messages name ("Type: message" each, as
    _execute records them), in the order the cells failed."""
    from autograder.misconceptions import misconception_of
    keys = []
    for text in result["failed"].values():
        message = text.split(": ", 1)[1] if ": " in text else text
        key = misconception_of(message)
        if key:
            keys.append(key)
    return keys


def named(mutant: Mutant, result: dict) -> bool:
    """Did the feedback name the misconception the mutant models: the first message of a
    target exercise's test cells that names one names this one?"""
    own = {cell: text for cell, text in result["failed"].items()
           if exercise_of(cell) in target_cells(mutant)}
    keys = named_keys({"failed": own})
    return bool(mutant.misconception) and bool(keys) and keys[0] == mutant.misconception


def score_unit(unit: str, workers: int = 2, mutants=None, variants=None, with_scenarios: bool = True) -> dict:
    """Run a unit's mutants and correct variants; returns the counts and the lists."""
    module = unit_module(unit)
    mutants = all_mutants(unit) if mutants is None else mutants
    variants = correct_variants(unit) if variants is None else variants
    wrong = wrong_scenarios(unit) if with_scenarios else []
    jobs = mutant_jobs(mutants) + variant_jobs(unit, variants) + variant_jobs(unit, wrong)
    results = run_jobs(module.ASSIGNMENT, jobs, workers=workers)
    live = [m for m in mutants if not m.equivalent]
    return {
        "unit": unit, "assignment": module.ASSIGNMENT,
        "caught": [m for m in live if caught(m, results[m.name])],
        # Of the caught mutants that model a misconception: named it, or said something else.
        "named": [m for m in live if m.misconception and caught(m, results[m.name]) and named(m, results[m.name])],
        "unnamed": [m for m in live if m.misconception and caught(m, results[m.name])
                    and not named(m, results[m.name])],
        "survivors": [m for m in live if not caught(m, results[m.name])],
        "equivalent": [m for m in mutants if m.equivalent],
        "equivalent_caught": [m for m in mutants if m.equivalent and caught(m, results[m.name])],
        "variants_failed": {s.student: results[f"variant:{s.student}"]["failed"] for s in variants
                            if results[f"variant:{s.student}"]["failed"]},
        "variants": len(variants), "results": results,
        "scenarios_wrong": {s.student: why for s in wrong
                            if (why := scenario_verdict(s, results[f"variant:{s.student}"]))},
    }


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    _serve()
