"""The project's own mutation check (tests/mutation.py), on a fixed sample, and the machinery.

The sample holds wrong answers that once passed the hidden tests (a batch or model never moved to the
device, weights_only=False on files from elsewhere, a float16 input promoted to float32, a run that
trains nothing, a normaliser recorded by autograd, statistics as a Parameter) and the correct
answers that once failed them (a loss read with .detach().cpu().item() on meta, a device picker asking
torch.cuda.device_count()): every wrong one must be caught, naming its misconception where it has
one, and every correct one must pass every test cell, in the same runner. The full run is
`python benchmarks/mutation_score.py`."""
import re
import time
from pathlib import Path

import pytest

import mutation
from autograder.misconceptions import CATALOGUE
from scenarios import Mutant

# unit -> (mutants by name that must be caught, correct variants by student that must pass)
# Mutants named in NAMES must also name that misconception in their feedback.
SAMPLE = {
    "unit01": (["same_after_rounding/relative-eps"], ["alternative_a", "alternative_b"]),
    "unit02": (["q3_add_bias_column_answer/drop-dtype-kwarg#1", "train_step/batch-not-moved",
                "move_to/to-not-assigned", "q2_move_to_answer/drop-to-device#1",
                "q4_train_step_answer/swap-loss-arguments#1"], ["alternative_c"]),
    "unit03": (["shares_storage/data-ptr", "broadcast_shape/asks-torch", "broadcast_shape/asks-meta-tensors"],
               ["alternative_a", "alternative_b"]),
    "unit05": (["q1_evaluate_answer/drop-to-device#1", "q2_train_epoch_answer/to-not-assigned#1",
                "evaluate/eval-as-no-grad", "evaluate/requires-grad-false", "ema_update/state-dict-values",
                "frozen_features/backbone-left-in-eval"],
               ["alternative_c"]),
    "unit06": (["running_norm/training-branch-under-no-grad"], ["alternative_b"]),
    "unit07": (["q2_load_checkpoint_answer/drop-to-device#1", "q2_load_checkpoint_answer/unsafe-load#1",
                "q4_load_state_on_answer/unsafe-load#1", "load_checkpoint/optimizer-before-move",
                "q2_load_checkpoint_answer/non-strict-load#1", "load_untrusted/safe-globals-added",
                "load_state_on/to-not-assigned"], ["alternative_a", "alternative_c"]),
    "unit08": (["regressor/statistics-as-parameter", "regressor/fit-records", "q3_evaluate_answer/drop-to-device#1",
                "run/model-not-moved", "run/optimizer-on-another-model", "run/unsafe-load"], ["alternative_c"]),
}

NAMES = {
    # A tolerance of a few eps: the round trip accepted, and the representable values steps away from it too.
    "same_after_rounding/relative-eps": "tolerance-as-rounding",
    # data_ptr() compared: t[1:] starts later in t's storage.
    "shares_storage/data-ptr": "view-start-as-storage",
    # The file's dataclass allowlisted in a loader for files from elsewhere.
    "load_untrusted/safe-globals-added": "allowlisted-untrusted",
    # Loaded onto the cpu, then .to(device) called on each tensor, its result dropped.
    "load_state_on/to-not-assigned": "to-not-assigned",
    "move_to/to-not-assigned": "to-not-assigned",
    # No .to() call at all: the message must not say a move's result was dropped.
    "q2_move_to_answer/drop-to-device#1": "batch-not-moved",
    "q4_train_step_answer/swap-loss-arguments#1": "swapped-loss-arguments",
    "evaluate/requires-grad-false": "requires-grad-as-no-grad",
    "ema_update/state-dict-values": "state-dict-as-parameters",
    "running_norm/training-branch-under-no-grad": "batch-statistics-under-no-grad",
    "q2_load_checkpoint_answer/non-strict-load#1": "non-strict-load",
    "train_step/batch-not-moved": "batch-not-moved",
    "q1_evaluate_answer/drop-to-device#1": "batch-not-moved",
    "q2_train_epoch_answer/to-not-assigned#1": "to-not-assigned",  # x.to() and y.to() called, their results dropped
    "evaluate/eval-as-no-grad": "eval-as-no-grad",
    "frozen_features/backbone-left-in-eval": "mode-not-restored",
    "q2_load_checkpoint_answer/unsafe-load#1": "unsafe-load",
    "q4_load_state_on_answer/unsafe-load#1": "unsafe-load",
    "load_checkpoint/optimizer-before-move": "optimizer-on-old-parameters",
    "regressor/statistics-as-parameter": "statistics-as-parameter",
    "regressor/fit-records": "missing-no-grad",
    "q3_evaluate_answer/drop-to-device#1": "batch-not-moved",
    "run/optimizer-on-another-model": "optimizer-on-old-parameters",
    "run/unsafe-load": "unsafe-load",
}

# The curriculum map's misconceptions and those the hidden tests' diagnoses found: each must have a
# mutant standing for it.
CURRICULUM = [
    "len-as-numel", "size-not-called", "integer-truncation", "precision-as-bug",
    "to-not-assigned", "batch-not-moved", "created-on-default-device", "moved-leaf-no-grad",
    "column-vs-flat-loss", "mutates-through-view", "reshape-always-copies", "accidental-broadcast",
    "non-leaf-grad", "grad-accumulates", "static-graph",
    "missing-no-grad", "eval-as-no-grad", "running-loss-tensor", "mode-not-restored",
    "bare-tensor-attribute", "python-list-of-layers", "statistics-as-parameter", "buffer-updated-in-eval",
    "saved-model-object", "optimizer-state-dropped", "optimizer-on-old-parameters", "unsafe-load", "config-not-plain",
    "requires-grad-as-no-grad", "state-dict-as-parameters", "batch-statistics-under-no-grad", "swapped-loss-arguments",
    "non-strict-load", "tolerance-as-rounding", "view-start-as-storage", "allowlisted-untrusted",
]


@pytest.fixture(scope="module")
def sample_results():
    """Each sampled unit's mutants and variants, run once: {unit: (mutants, variants, results)}.
    One server runs every unit's jobs (each names its assignment): torch is imported once."""
    picked, jobs, start = {}, [], time.perf_counter()
    for unit, (names, students) in SAMPLE.items():
        by_name = {m.name: m for m in mutation.all_mutants(unit)}
        missing = [n for n in names if n not in by_name]
        assert not missing, f"{unit}: the sample names mutants that no longer exist: {missing}"
        mutants = [by_name[n] for n in names]
        variants = [s for s in mutation.correct_variants(unit) if s.student in students]
        assert len(variants) == len(students), f"{unit}: sampled variants missing"
        picked[unit] = (mutants, variants)
        assignment = mutation.unit_module(unit).ASSIGNMENT
        # Job names repeat across units (variant:alternative_c): the unit prefixes them.
        jobs += [dict(job, name=f"{unit} {job['name']}", assignment=assignment)
                 for job in mutation.mutant_jobs(mutants) + mutation.variant_jobs(unit, variants)]
    results = mutation.run_jobs(None, jobs)
    out = {unit: (mutants, variants, {name.split(" ", 1)[1]: result for name, result in results.items()
                                      if name.split(" ", 1)[0] == unit})
           for unit, (mutants, variants) in picked.items()}
    out["seconds"] = time.perf_counter() - start
    return out


@pytest.mark.parametrize("unit", SAMPLE)
def test_sampled_mutants_are_caught_naming_their_misconception(unit, sample_results, covered):
    mutants, _, results = sample_results[unit]
    survivors = [m.name for m in mutants if not mutation.caught(m, results[m.name])]
    assert not survivors, f"{unit}: mutants the hidden tests let through: {survivors}"
    for m in mutants:
        if m.name in NAMES:
            text = " ".join(results[m.name]["failed"].values())
            name = CATALOGUE[NAMES[m.name]].name
            assert f"Pitfall: {name}." in text, \
                f"{m.name} was caught, but its feedback does not name {name!r}: {text[:400]}"
            assert mutation.named(m, results[m.name]) == (m.misconception == NAMES[m.name]), m.name
    covered(f"{unit}: {len(mutants)} sampled mutants caught")


@pytest.mark.parametrize("unit", SAMPLE)
def test_sampled_correct_variants_pass_every_test_cell(unit, sample_results):
    _, variants, results = sample_results[unit]
    for s in variants:
        result = results[f"variant:{s.student}"]
        assert not result["failed"], f"{unit} {s.student}: a correct answer failed: {result['failed']}"
        assert len(result["ran"]) > 0


def test_every_named_mutant_is_in_the_sample(sample_results, covered):
    """NAMES is checked only on the sample: a name for a mutant it leaves out would never be read."""
    sampled = {m.name for unit in SAMPLE for m in sample_results[unit][0]}
    assert set(NAMES) <= sampled, f"NAMES holds mutants the sample does not run: {sorted(set(NAMES) - sampled)}"
    # The time is reported, not asserted: a busy machine takes longer for the same verdicts.
    covered(f"sampled mutation check: {len(sampled)} mutants in {sample_results['seconds']:.1f} s")


@pytest.fixture(scope="module")
def runner_results():
    """One server for 01_tensors, jobs in order (workers=1): a broken answer, a poisoned one that
    breaks torch for whoever comes next, the reference solution, and one that makes a scratch
    folder (as 07's and 08's tests do) and names it in its failure."""
    broken = {"q4_tensor_bytes_answer": "def tensor_bytes(shape, dtype):\n    raise NotImplementedError()\n"}
    poison = {"q1_describe_answer": "import torch\ntorch.zeros = None\ndef describe(t):\n    return {}\n"}
    scratch = {"q1_describe_answer": "import tempfile\nMADE = tempfile.mkdtemp()\n"
                                     "def describe(t):\n    raise RuntimeError(f'made {MADE}')\n"}
    return mutation.run_jobs("01_tensors", [{"name": "broken", "answers": broken, "only": None},
                                            {"name": "poison", "answers": poison, "only": ["q1_describe_tests"]},
                                            {"name": "solution", "answers": {}, "only": None},
                                            {"name": "scratch", "answers": scratch, "only": ["q1_describe_tests"]}],
                             workers=1)


def test_the_runner_fails_what_is_wrong_and_passes_the_solution(runner_results):
    """Guards every test above: an answer that raises fails its test cell and only that one; the
    reference solution fails none; a test cell's message and line come back."""
    assert set(runner_results["broken"]["failed"]) == {"q4_tensor_bytes_tests"}
    assert re.search(r"NotImplementedError.*\(line \d+ of the cell\)",
                     runner_results["broken"]["failed"]["q4_tensor_bytes_tests"])
    assert runner_results["solution"]["failed"] == {}
    assert "q4_tensor_bytes_tests" in runner_results["solution"]["ran"]


def test_each_job_runs_in_a_fresh_process(runner_results):
    """State one mutant leaves behind (a patched torch) never reaches the next job."""
    assert set(runner_results["poison"]["failed"]) == {"q1_describe_tests"}
    assert runner_results["poison"]["ran"] == ["q1_describe_tests"]
    assert runner_results["solution"]["failed"] == {}


def test_a_jobs_scratch_folders_go_with_it(runner_results):
    """What a job's tests make with tempfile lies in the job's own folder, removed with it: a run
    of the suite leaves nothing in the machine's /tmp."""
    made = re.search(r"made (\S+)", runner_results["scratch"]["failed"]["q1_describe_tests"])[1]
    assert Path(made).parent.name.startswith("mutant-"), made
    assert not Path(made).exists() and not Path(made).parent.exists(), made


def test_operators_make_the_mutants_they_promise():
    code = '''def f(x, device):
    """x.to(device) in a docstring is left alone."""
    y = x.to(device)  # so is x.to(device) in a comment
    with torch.no_grad():
        z = y.reshape(-1).detach().item()
    return z
'''
    made = {}
    for op in mutation.OPERATORS:
        made[op.name] = len(mutation.sites(op, code))
    assert made["drop-to-device"] == 1
    assert made["drop-no-grad"] == 1
    assert made["reshape-to-view"] == 1
    assert made["drop-detach"] == 1 and made["drop-item"] == 1


def test_every_curriculum_misconception_has_a_mutant():
    keys = set()
    for unit in mutation.UNITS:
        keys |= {m.misconception for m in mutation.all_mutants(unit) if not m.equivalent}
    assert set(CURRICULUM) <= set(CATALOGUE)
    missing = [k for k in CURRICULUM if k not in keys]
    assert not missing, f"misconceptions no mutant stands for: {missing}"
    unknown = keys - set(CATALOGUE) - {""}
    assert not unknown, f"mutants name misconceptions the catalogue lacks: {unknown}"


def test_every_equivalent_mutant_gives_its_reason():
    for unit in mutation.UNITS:
        for m in mutation.all_mutants(unit):
            assert isinstance(m, Mutant)
            if m.equivalent:
                assert len(m.equivalent) > 20, f"{unit} {m.name}: an equivalent mutant needs its reason"


def test_every_code_exercise_has_two_correct_variants(covered):
    """Exercises that write code; an answer that is a value (no def, no class) has one right value."""
    counted = 0
    for unit in mutation.UNITS:
        module = mutation.unit_module(unit)
        variants = [s for s in mutation.correct_variants(unit) if s.answers]
        solutions = {c["grade_id"]: c["code"] for c in mutation.notebook_cells(module.ASSIGNMENT)
                     if c["kind"] == "answer"}
        for exercise in mutation.exercises(module.ASSIGNMENT):
            if not re.search(r"^\s*(def|class) ", solutions[exercise], re.M):
                continue
            counted += 1
            count = sum(exercise in s.answers for s in variants)
            assert count >= 2, f"{unit} {exercise}: {count} correct variants, at least 2 wanted"
    covered(f"{counted} code exercises, each with at least 2 correct variants")


def test_named_reads_the_first_misconception_a_target_cell_names():
    """A mutant is named correctly when the first "Pitfall: ..." message of its own exercise's cells
    carries its key; a generic verdict, another key, or a key named only by another exercise's cell
    is not."""
    from autograder.misconceptions import pitfall_message
    m = Mutant("q1_evaluate_answer/x", {"q1_evaluate_answer": ""}, misconception="mode-not-restored")
    own = ("PitfallError: " + pitfall_message("mode-not-restored", "The model was training before.")
           + " (line 3 of the cell)")
    other = "PitfallError: " + pitfall_message("missing-no-grad")
    assert mutation.named(m, {"failed": {"q1_evaluate_tests": own}})
    assert not mutation.named(m, {"failed": {"q1_evaluate_tests": "GradingError: x: wrong value. You gave 1.0."}})
    assert not mutation.named(m, {"failed": {"q1_evaluate_tests": other}})
    assert not mutation.named(m, {"failed": {"q2_train_epoch_tests": own}})
    slip = Mutant("q1_evaluate_answer/y", {"q1_evaluate_answer": ""})
    assert not mutation.named(slip, {"failed": {"q1_evaluate_tests": own}})


def test_every_relabelled_mutant_gives_its_reason():
    for unit in mutation.UNITS:
        for name, (key, why) in getattr(mutation.unit_module(unit), "RELABELLED", {}).items():
            assert key == "" or key in CATALOGUE, f"{unit} {name}: unknown misconception {key!r}"
            assert len(why) > 20, f"{unit} {name}: a relabelled mutant needs its reason"
