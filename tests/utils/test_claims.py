"""claim(): returns the value when it matches, raises ClaimFailed (an AssertionError) when not.

Covers: floats (exact, NaN), ints vs bools vs floats, tensors (values, dtype and shape all count),
other objects (torch.Size, dtypes, devices) and the message a failure carries."""
import math

import pytest
import torch

from utils.claims import ClaimFailed, claim


def test_returns_the_value_so_a_cell_displays_it():
    assert claim(torch.tensor(2049.0, dtype=torch.float16).item(), 2048.0) == 2048.0
    assert claim(torch.zeros(2, 3).shape, torch.Size([2, 3])) == (2, 3)
    assert claim(torch.float16, torch.float16) is torch.float16


def test_float_claims_are_exact_and_nan_matches_nan():
    assert math.isnan(claim(float("nan"), float("nan")))
    assert claim(3, 3.0) == 3           # an int equal to the float is fine
    with pytest.raises(ClaimFailed):
        claim(0.1 + 0.2, 0.3)           # no tolerance: a claim is exact


def test_types_must_agree_outside_floats():
    with pytest.raises(ClaimFailed):
        claim(1, True)                  # bool is not int here
    with pytest.raises(ClaimFailed):
        claim("cpu", torch.device("cpu"))


def test_tensor_claims_check_values_dtype_and_shape():
    assert claim(torch.tensor([2, -2]), torch.tensor([2, -2])).tolist() == [2, -2]
    with pytest.raises(ClaimFailed):
        claim(torch.tensor([2, -2], dtype=torch.int32), torch.tensor([2, -2]))  # dtype differs
    with pytest.raises(ClaimFailed):
        claim(torch.tensor([[2, -2]]), torch.tensor([2, -2]))                   # shape differs
    with pytest.raises(ClaimFailed):
        claim([2, -2], torch.tensor([2, -2]))                                   # not a tensor


def test_failure_names_both_values_and_is_an_assertion_error(covered):
    with pytest.raises(AssertionError, match=r"claims 2048\.0.*gives 2049\.0"):
        claim(2049.0, 2048.0)
    covered("claim: floats exact (NaN == NaN), types strict, tensors by value, dtype and shape")
