"""verify.judge: the grader's own re-check, outside the kernel, of a test cell that passed."""
import pytest
import torch

from autograder import trace
from classgrader.judging import verify


def entry(kind, name, got=None, expected=None, **options):
    return {"kind": kind, "name": name, "got": trace.portable(got), "expected": trace.portable(expected),
            "options": {k: trace.portable(v) for k, v in options.items()}}


def test_a_pass_that_recorded_nothing_is_not_believed():
    assert verify.judge([]) == (["its checks recorded nothing: the test did not run as written"], [])
    assert verify.judge([entry("audit", "integrity", [])])[0]  # an audit alone checks no answer


def test_honest_records_hold_up():
    t = torch.arange(6.0).reshape(2, 3)
    assert verify.judge([entry("tensor", "x", t, t.clone(), rtol=None, atol=None, check_values=True),
                         entry("value", "n", 4, 4, rel_tol=1e-9, abs_tol=0.0),
                         entry("value", "d", torch.float32, torch.float32, rel_tol=1e-9, abs_tol=0.0),
                         entry("answer", "q1", "b", "b"), entry("pitfall", "len-as-numel")]) == ([], [])


def test_values_that_passed_only_inside_the_kernel_are_caught():
    # What a patched torch.isclose lets through: the kernel said equal, the grader disagrees.
    got, want = torch.zeros(3), torch.ones(3)
    [problem], _ = verify.judge([entry("tensor", "channel_means(img)", got, want, rtol=None, atol=None,
                                       check_values=True)])
    assert "wrong values" in problem


def test_objects_and_wrong_types_cannot_pass_outside_the_kernel():
    class Equal:
        def __eq__(self, other):
            return True
    [problem], _ = verify.judge([entry("value", "numel", Equal(), 20, rel_tol=1e-9, abs_tol=0.0)])
    assert "cannot be checked outside the kernel" in problem
    [problem], _ = verify.judge([entry("tensor", "x", torch.zeros(2, dtype=torch.int64), torch.zeros(2),
                                       rtol=None, atol=None, check_values=True)])
    assert "dtype" in problem


def test_records_load_as_data_only(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_TRACE_DIR", str(tmp_path))
    trace.record("value", "n", 3, 3, rel_tol=1e-9, abs_tol=0.0)
    trace.flush()
    [loaded] = verify.read_records([str(p) for p in tmp_path.iterdir()])
    assert loaded["got"] == {"plain": 3} and verify.judge([loaded]) == ([], [])


def test_tensor_records_go_through_torch_save_and_json_cannot_carry_them(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_TRACE_DIR", str(tmp_path))
    trace._pending.clear()  # judge() above re-ran checks, which record while the variable is set
    t = torch.arange(3.0)
    trace.record("tensor", "x", t, t.clone(), rtol=None, atol=None, check_values=True)
    trace.flush()
    trace.record("value", "n", 3, 3, rel_tol=1e-9, abs_tol=0.0)
    trace.record("value", "m", torch.zeros(2, device="meta"), 1, rel_tol=1e-9, abs_tol=0.0)
    trace.flush()
    trace.record("answer", "q1", "tensor", "tensor")  # the word is no tensor
    trace.flush()
    files = sorted(str(p) for p in tmp_path.iterdir())
    assert [p.rsplit(".", 1)[1] for p in files] == ["pt", "pt", "json"]  # meta tensors included
    assert [r["name"] for r in verify.read_records(files)] == ["x", "n", "m", "q1"]
    forged = tmp_path / f"{files[-1].rsplit('/', 1)[1].split('-')[0]}-999999.json"
    forged.write_text('[{"kind": "tensor", "name": "x", "got": {"tensor": [1, 2]}, "expected": {}, "options": {}}]')
    # a JSON record standing for a tensor is refused
    with pytest.raises(ValueError, match="tensor evidence in a file written without tensors"):
        verify.read_records([str(forged)])


def test_records_matching_the_graders_own_run_hold_up():
    t = torch.arange(4.0)
    own = [entry("tensor", "x", t, t.clone(), rtol=None, atol=None, check_values=True),
           entry("value", "n", 4, 4, rel_tol=1e-9, abs_tol=0.0)]
    student = [entry("tensor", "x", t.clone(), t.clone(), rtol=None, atol=None, check_values=True),
               entry("value", "n", 4, 4, rel_tol=1e-9, abs_tol=0.0), entry("audit", "integrity", [])]
    assert verify.judge(student, own) == ([], [])


def test_skipped_checks_and_forged_expected_values_are_flagged(covered):
    own = [entry("value", f"tensor_bytes({n})", 4 * n, 4 * n, rel_tol=1e-9, abs_tol=0.0) for n in (1, 2, 3)]
    # A kernel that made check_value a no-op after the first check: alone, its records pass.
    silent = own[:1]
    assert verify.judge(silent) == ([], [])  # the route, without the grader's own run
    fails, [review] = verify.judge(silent, own)
    assert fails == [] and "differ from the grader's own run (1 recorded, 3 expected" in review
    # A kernel whose check recorded its wrong answers as the expected ones.
    forged = [entry("value", e["name"], 8 * n, 8 * n, rel_tol=1e-9, abs_tol=0.0) for e, n in zip(own, (1, 2, 3))]
    assert verify.judge(forged) == ([], [])  # the route, without the grader's own run
    fails, review = verify.judge(forged, own)
    assert fails == [] and len(review) == 3
    assert all("the expected value differs from the grader's own run" in r for r in review)
    covered("skipped checks and self-consistent forged records pass on the kernel's records alone, "
            "and are flagged for review against the grader's own run of the solution")


def test_an_honest_answer_that_draws_random_numbers_differently_is_reviewed_not_failed():
    """Layers built in another order give other weights, so a test's expected values (computed
    from the student's model) part from the grader's run: a flag to look at, never a zero."""
    torch.manual_seed(0)
    mine, theirs = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    own = [entry("tensor", "MLP(x)", mine(x).detach(), mine(x).detach(), rtol=None, atol=None, check_values=True)]
    student = [entry("tensor", "MLP(x)", theirs(x).detach(), theirs(x).detach(), rtol=None, atol=None,
                     check_values=True)]
    fails, [review] = verify.judge(student, own)
    assert fails == [] and "expected value differs" in review
