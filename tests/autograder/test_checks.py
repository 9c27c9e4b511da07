"""Tests for autograder/checks.py: format_shape (shared with utils), _same_device, default_tolerances,
check_tensor (the fixed order type, shape, dtype, device, requires_grad/graph, values; a graph
that reaches other tensors that require grad than the expected one's; the
exact wording of each message; values messages that never show the expected values; the
"call it with ()" hint; meta tensors; per-dtype tolerances, integer exactness, NaN) and
check_value (type strictness, objects that claim to equal everything, reveal, float
tolerances, tuples against torch.Size, dtypes and devices)."""
import math

import numpy as np
import pytest
import torch

from autograder.checks import GradingError, _same_device, check_tensor, check_value, default_tolerances, format_shape


def message(check, *args, **kwargs) -> str:
    """The GradingError message `check` raises; fails the test if it raises nothing."""
    with pytest.raises(GradingError) as info:
        check(*args, **kwargs)
    return str(info.value)


class Liar:
    """Claims to equal everything, the way a careless (or clever) answer might."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


# --- format_shape --------------------------------------------------------------------------

def test_format_shape_is_the_one_the_widgets_use():
    # One notation course-wide: feedback and widgets write a shape the same way (tested in
    # tests/utils/test_formatting.py); notebooks may import it from autograder.
    import autograder
    import utils.formatting
    assert autograder.format_shape is format_shape is utils.formatting.format_shape
    assert format_shape(torch.Size([7])) == "(7,)"


# --- _same_device --------------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "same"), [
    ("cuda", "cuda:0", True),
    ("cuda:0", "cuda", True),
    ("cuda", "cuda", True),
    ("cuda:0", "cuda:1", False),
    ("cuda", "cuda:1", False),
    ("cpu", "cpu", True),
    ("cpu", "cuda", False),
    ("cpu", "meta", False),
    ("meta", "meta", True),
    ("mps", "mps:0", True),
])
def test_same_device(a, b, same):
    assert _same_device(torch.device(a), torch.device(b)) is same


# --- check_tensor: order -------------------------------------------------------------------

def test_not_a_tensor_reports_type_before_anything_else():
    assert message(check_tensor, [[1.0, 2.0]], torch.zeros(3, 4)) == (
        "your result: wrong type. Expected a torch.Tensor, got list.")


def test_wrong_shape_and_dtype_reports_shape():
    got = torch.zeros(3, 4, dtype=torch.int64)
    assert message(check_tensor, got, torch.zeros(2, 4)) == (
        "your result: wrong shape. Expected (2, 4), got (3, 4).")


def test_wrong_dtype_and_device_reports_dtype():
    got = torch.zeros(3, 4, dtype=torch.int64, device="meta")
    assert message(check_tensor, got, torch.zeros(3, 4)) == (
        "your result: wrong dtype. Expected torch.float32, got torch.int64.")


def test_wrong_device_and_requires_grad_reports_device():
    got = torch.zeros(3, device="meta", requires_grad=True)
    assert message(check_tensor, got, torch.zeros(3)) == (
        "your result: wrong device. Expected cpu, got meta.")


def test_wrong_requires_grad_and_values_reports_requires_grad():
    got = torch.full((3,), 9.0, requires_grad=True)
    assert message(check_tensor, got, torch.zeros(3)) == (
        "your result: wrong requires_grad. Expected False, got True.")


# --- check_tensor: type --------------------------------------------------------------------

def test_type_message_names_numpy_array():
    assert message(check_tensor, np.zeros((3, 4), dtype=np.float32), torch.zeros(3, 4)) == (
        "your result: wrong type. Expected a torch.Tensor, got numpy.ndarray.")


def test_bound_method_gets_the_call_hint():
    t = torch.zeros(3, 4)
    assert message(check_tensor, t.size, t) == (
        "your result: wrong type. Expected a torch.Tensor, got builtin_function_or_method."
        " It is a function or method: did you forget to call it with ()?")


def test_plain_function_gets_the_call_hint():
    def make():
        return torch.zeros(2)
    assert "did you forget to call it with ()?" in message(check_tensor, make, torch.zeros(2))


def test_non_callable_gets_no_call_hint():
    assert "call it with ()" not in message(check_tensor, 3.0, torch.tensor(3.0))


def test_name_is_the_message_prefix():
    assert message(check_tensor, None, torch.zeros(1), name="`scaled`").startswith(
        "`scaled`: wrong type. Expected a torch.Tensor, got NoneType.")


# --- check_tensor: device and meta tensors -------------------------------------------------

def test_device_mismatch_cpu_expected_meta_got():
    assert message(check_tensor, torch.zeros(2, 2, device="meta"), torch.zeros(2, 2)) == (
        "your result: wrong device. Expected cpu, got meta.")


def test_device_mismatch_meta_expected_cpu_got():
    assert message(check_tensor, torch.zeros(2, 2), torch.zeros(2, 2, device="meta")) == (
        "your result: wrong device. Expected meta, got cpu.")


def test_meta_against_meta_skips_values():
    # Meta tensors have no values; the check must not try to read any.
    check_tensor(torch.empty(2, 3, device="meta"), torch.empty(2, 3, device="meta"))


def test_meta_against_meta_still_checks_shape():
    assert message(check_tensor, torch.empty(3, 2, device="meta"),
                   torch.empty(2, 3, device="meta")) == (
        "your result: wrong shape. Expected (2, 3), got (3, 2).")


def test_meta_against_meta_still_checks_the_graph():
    got = torch.empty(2, device="meta", requires_grad=True)
    assert "wrong requires_grad" in message(check_tensor, got, torch.empty(2, device="meta"))


def test_check_values_false_skips_values_but_true_does_not():
    check_tensor(torch.ones(3), torch.zeros(3), check_values=False)
    assert "wrong values" in message(check_tensor, torch.ones(3), torch.zeros(3))


# --- check_tensor: requires_grad and the graph ---------------------------------------------

def test_requires_grad_got_true_with_graph_names_grad_fn():
    x = torch.ones(3, requires_grad=True)
    assert message(check_tensor, x * 2, torch.full((3,), 2.0)) == (
        "your result: wrong requires_grad. Expected False, got True."
        " It is still attached to an autograd graph (grad_fn=MulBackward0).")


def test_requires_grad_got_true_leaf_has_no_graph_sentence():
    msg = message(check_tensor, torch.ones(3, requires_grad=True), torch.ones(3))
    assert msg == "your result: wrong requires_grad. Expected False, got True."


def test_requires_grad_got_false():
    expected = torch.ones(3, requires_grad=True) * 2
    assert message(check_tensor, torch.full((3,), 2.0), expected) == (
        "your result: wrong requires_grad. Expected True, got False."
        " It is not connected to the autograd graph.")


def test_detached_result_is_reported_as_disconnected():
    x = torch.ones(3, requires_grad=True)
    msg = message(check_tensor, (x * 2).detach(), x * 2)
    assert "Expected True, got False" in msg and "not connected to the autograd graph" in msg


def test_leaf_expected_non_leaf_got():
    got = torch.ones(3, requires_grad=True) * 1
    assert message(check_tensor, got, torch.ones(3, requires_grad=True)) == (
        "your result: wrong place in the graph. Expected a leaf, got a non-leaf "
        "(the result of an operation).")


def test_non_leaf_expected_leaf_got():
    expected = torch.ones(3, requires_grad=True) + 1
    msg = message(check_tensor, torch.full((3,), 2.0, requires_grad=True), expected)
    assert msg == (
        "your result: wrong place in the graph. Expected a non-leaf (the result of an "
        "operation), got a leaf.")
    # The operation that made the expected tensor is part of the answer: never name it.
    assert "AddBackward0" not in msg and "Add" not in msg


def _two_layers():
    first, second = torch.nn.Linear(3, 4), torch.nn.Linear(4, 1)
    return first, second, torch.randn(5, 3)


def test_a_result_cut_off_from_the_tensors_it_is_computed_from_is_the_wrong_graph():
    # The right values, a grad_fn, and yet the first layer gets no gradient: detach() between.
    first, second, x = _two_layers()
    expected = second(torch.relu(first(x)))
    got = second(torch.relu(first(x)).detach())
    assert message(check_tensor, got, expected) == (
        "your result: wrong graph. Its backward reaches 2 tensors that require grad (parameters or inputs); "
        "the expected result's reaches 4. The others get no gradient from it: something on the way cut them "
        "off (a detach(), .data or torch.no_grad()), or they were not used.")
    with torch.no_grad():
        hidden = torch.relu(first(x))
    assert "wrong graph" in message(check_tensor, second(hidden), expected)


def test_a_result_computed_from_more_tensors_that_require_grad_is_the_wrong_graph():
    x = torch.ones(3, requires_grad=True)
    extra = torch.zeros(3, requires_grad=True)
    msg = message(check_tensor, x * 2 + extra, x * 2)
    assert "wrong graph" in msg and "reaches 2" in msg and "reaches 1" in msg and "not computed from" in msg


def test_the_same_leaves_reached_another_way_or_through_a_copy_pass():
    # Another way of computing it, and an expected value computed from a copy of the model.
    import copy
    first, second, x = _two_layers()
    twin_first, twin_second = copy.deepcopy(first), copy.deepcopy(second)
    got = torch.nn.functional.linear(torch.clamp(first(x), min=0), second.weight, second.bias)
    check_tensor(got, twin_second(torch.relu(twin_first(x))))
    w = torch.ones(3, requires_grad=True)
    check_tensor(w * w, w ** 2)  # w reached twice is one tensor


def test_a_graph_with_a_node_defined_in_python_is_not_judged_by_its_reach():
    # A node standing for a call made elsewhere (the grader's bridge to a kernel) says nothing of
    # what its graph reaches there: the values and flags are still checked.
    class Elsewhere(torch.autograd.Function):
        @staticmethod
        def forward(ctx, anchor):
            return torch.full((3,), 2.0)

        @staticmethod
        def backward(ctx, grad):
            return grad.sum()

    x = torch.ones(3, requires_grad=True)
    check_tensor(Elsewhere.apply(torch.zeros((), requires_grad=True)), x * 2 + torch.zeros(3, requires_grad=True))
    assert "wrong values" in message(check_tensor, Elsewhere.apply(torch.zeros((), requires_grad=True)), x * 3)


def test_non_leaf_made_differently_passes():
    # Only leaf-ness is checked, not which operation made the tensor.
    x = torch.ones(3, requires_grad=True)
    check_tensor(x + x, x * 2)


def test_matching_graph_tensor_passes():
    x = torch.arange(3.0, requires_grad=True)
    check_tensor(x * 2, x * 2)


# --- check_tensor: values ------------------------------------------------------------------

def test_values_message_exact_1d():
    got = torch.tensor([1.0, 2.0, 3.0])
    expected = torch.tensor([1.0, 123.456, 3.0])
    msg = message(check_tensor, got, expected)
    assert msg == (
        "your result: wrong values. 1 of 3 elements differs from the expected ones "
        "(tolerance rtol=1.3e-06, atol=1e-05); the first is at index (1,), where you have 2.0.")
    assert "123.45" not in msg


def test_values_message_exact_2d_integer_has_no_tolerance():
    got = torch.tensor([[1, 2], [3, 4]])
    expected = torch.tensor([[1, 2], [3, 123456]])
    msg = message(check_tensor, got, expected)
    assert msg == (
        "your result: wrong values. 1 of 4 elements differs from the expected ones; "
        "the first is at index (1, 1), where you have 4.")
    assert "123456" not in msg


def test_values_message_counts_every_wrong_element_and_reports_the_first():
    got = torch.zeros(2, 3)
    expected = torch.tensor([[0.0, 0.0, 123.456], [123.456, 0.0, 123.456]])
    msg = message(check_tensor, got, expected)
    assert msg == (
        "your result: wrong values. 3 of 6 elements differ from the expected ones "
        "(tolerance rtol=1.3e-06, atol=1e-05); the first is at index (0, 2), where you have 0.0.")
    assert "123.45" not in msg


def test_values_message_never_contains_expected_values():
    expected = torch.tensor([123.456, 654.321, 111.222])
    for got in (torch.zeros(3), torch.tensor([123.456, 0.0, 111.222]),
                torch.tensor([float("nan")] * 3)):
        msg = message(check_tensor, got, expected)
        for shown in ("123.45", "654.32", "111.22"):
            assert shown not in msg, msg
    # Nor for a 0-dim tensor, an integer tensor or a low-precision dtype.
    for got, expected in [(torch.tensor(0.0), torch.tensor(123.456)),
                          (torch.tensor(0), torch.tensor(123456)),
                          (torch.tensor([0, 7]), torch.tensor([0, 123456])),
                          (torch.tensor([0.0], dtype=torch.float16),
                           torch.tensor([123.4], dtype=torch.float16)),
                          (torch.tensor([0.0], dtype=torch.bfloat16),
                           torch.tensor([123.4], dtype=torch.bfloat16))]:
        msg = message(check_tensor, got, expected)
        for shown in ("123", "1.23", "1.2e", "456"):
            assert shown not in msg, msg


def test_scalar_tensor_says_wrong_value():
    msg = message(check_tensor, torch.tensor(2.0), torch.tensor(123.456))
    assert msg == (
        "your result: wrong value (tolerance rtol=1.3e-06, atol=1e-05). You have 2.0.")
    assert "123.45" not in msg


def test_scalar_integer_tensor_has_no_tolerance():
    msg = message(check_tensor, torch.tensor(5), torch.tensor(123456))
    assert msg == "your result: wrong value. You have 5."


def test_scalar_bool_tensor():
    assert message(check_tensor, torch.tensor(True), torch.tensor(False)) == (
        "your result: wrong value. You have True.")


def test_scalar_nan_where_a_number_is_expected():
    assert message(check_tensor, torch.tensor(float("nan")), torch.tensor(1.0)) == (
        "your result: wrong value (tolerance rtol=1.3e-06, atol=1e-05). You have nan.")


def test_one_element_1d_tensor_names_the_index():
    msg = message(check_tensor, torch.tensor([2.0]), torch.tensor([123.456]))
    assert "the first is at index (0,)" in msg


def test_integer_values_are_exact():
    check_tensor(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 3]))
    assert "wrong values" in message(check_tensor, torch.tensor([1, 2, 3]),
                                     torch.tensor([1, 2, 4]))


def test_large_integers_differing_by_one_fail():
    big = 2 ** 60
    assert "wrong values" in message(check_tensor, torch.tensor([big]), torch.tensor([big + 1]))


def test_bool_values_are_exact():
    assert message(check_tensor, torch.tensor([True, False]), torch.tensor([True, True])) == (
        "your result: wrong values. 1 of 2 elements differs from the expected ones; "
        "the first is at index (1,), where you have False.")


def test_values_with_requires_grad_are_compared():
    x = torch.ones(2, requires_grad=True)
    assert message(check_tensor, x * 3, x * 2) == (
        "your result: wrong values. 2 of 2 elements differ from the expected ones "
        "(tolerance rtol=1.3e-06, atol=1e-05); the first is at index (0,), where you have 3.0.")


@pytest.mark.parametrize(("dtype", "value", "shown"), [
    (torch.float32, 0.1, "0.1"),                 # not 0.10000000149011612
    (torch.float32, 1 / 3, "0.33333334"),        # 8 significant digits
    (torch.float16, 0.1, "0.099976"),            # 5 significant digits
    (torch.float16, 1 / 3, "0.33325"),
    (torch.bfloat16, 0.1, "0.1001"),             # 4 significant digits
    (torch.bfloat16, 1 / 3, "0.334"),
    (torch.float64, 0.1, "0.1"),                 # repr: as many digits as it takes
    (torch.float64, 1 / 3, "0.3333333333333333"),
])
def test_value_shown_as_its_dtype_holds_it(dtype, value, shown):
    got = torch.tensor([value], dtype=dtype)
    msg = message(check_tensor, got, torch.tensor([5.0], dtype=dtype))
    assert msg.endswith(f"the first is at index (0,), where you have {shown}."), msg
    assert message(check_tensor, got[0], torch.tensor(5.0, dtype=dtype)).endswith(
        f". You have {shown}.")


def test_integer_value_shown_exactly():
    big = 2 ** 60 + 1
    msg = message(check_tensor, torch.tensor([big]), torch.tensor([0]))
    assert msg.endswith(f"where you have {big}.")


# --- check_tensor: tolerances --------------------------------------------------------------

@pytest.mark.parametrize(("dtype", "tolerances"), [
    (torch.float16, (1e-3, 1e-5)),
    (torch.bfloat16, (1.6e-2, 1e-5)),
    (torch.float32, (1.3e-6, 1e-5)),
    (torch.complex64, (1.3e-6, 1e-5)),
    (torch.float64, (1e-7, 1e-7)),
    (torch.complex128, (1e-7, 1e-7)),
    (torch.int64, (0.0, 0.0)),
    (torch.int32, (0.0, 0.0)),
    (torch.uint8, (0.0, 0.0)),
    (torch.bool, (0.0, 0.0)),
])
def test_default_tolerances(dtype, tolerances):
    assert default_tolerances(dtype) == tolerances


def test_float16_within_1e3_relative_passes():
    # 1 + 2**-10 is float16's next number after 1: a relative difference just under 1e-3.
    got = torch.tensor([1.0 + 2 ** -10, 100.0], dtype=torch.float16)
    check_tensor(got, torch.tensor([1.0, 100.0], dtype=torch.float16))


def test_float16_off_by_1e2_fails():
    got = torch.tensor([1.01], dtype=torch.float16)
    msg = message(check_tensor, got, torch.tensor([1.0], dtype=torch.float16))
    assert "(tolerance rtol=0.001, atol=1e-05)" in msg


def test_float32_off_by_1e3_fails():
    msg = message(check_tensor, torch.tensor([1.001]), torch.tensor([1.0]))
    assert msg.startswith("your result: wrong values. 1 of 1 elements differs from")


def test_float32_rounding_passes():
    check_tensor(torch.tensor([0.1 + 0.2, 1.000001]), torch.tensor([0.3, 1.0]))


def test_float64_off_by_1e6_fails():
    got = torch.tensor([1.000001], dtype=torch.float64)
    assert "wrong values" in message(check_tensor, got, torch.tensor([1.0], dtype=torch.float64))


def test_explicit_tolerances_override_defaults_and_are_shown():
    check_tensor(torch.tensor([1.001]), torch.tensor([1.0]), atol=1e-2)
    msg = message(check_tensor, torch.tensor([1.1]), torch.tensor([1.0]), rtol=0.0, atol=1e-2)
    assert "(tolerance rtol=0, atol=0.01)" in msg


def test_nan_equals_nan():
    nan = float("nan")
    check_tensor(torch.tensor([nan, 1.0]), torch.tensor([nan, 1.0]))


def test_nan_where_a_number_is_expected_fails():
    nan = float("nan")
    msg = message(check_tensor, torch.tensor([1.0, nan]), torch.tensor([1.0, 2.0]))
    assert msg.endswith("the first is at index (1,), where you have nan.")


def test_number_where_nan_is_expected_fails():
    nan = float("nan")
    assert "wrong values" in message(check_tensor, torch.tensor([0.0]), torch.tensor([nan]))


def test_integer_tolerance_is_not_applied_nor_claimed():
    # Integers and bools are exact: an explicit tolerance neither applies nor appears.
    msg = message(check_tensor, torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]), rtol=0.5, atol=1)
    assert msg == (
        "your result: wrong values. 1 of 3 elements differs from the expected ones; "
        "the first is at index (2,), where you have 3.")
    assert "tolerance" not in message(check_tensor, torch.tensor([True]), torch.tensor([False]),
                                      atol=1)


# --- check_value: types --------------------------------------------------------------------

def test_tensor_for_int_mentions_item():
    assert message(check_value, torch.tensor(3), 3) == (
        "your answer: wrong type. Expected a plain Python int, got torch.Tensor."
        " A tensor holding one number becomes a Python number with .item().")


def test_tensor_for_float_mentions_item():
    msg = message(check_value, torch.tensor(0.5), 0.5)
    assert msg.startswith("your answer: wrong type. Expected a plain Python float, got torch.Tensor.")
    assert ".item()" in msg


def test_tensor_for_tuple_gets_no_item_hint():
    msg = message(check_value, torch.tensor([3, 4]), (3, 4))
    assert msg == "your answer: wrong type. Expected a tuple, got torch.Tensor."


def test_bool_for_int_rejected():
    assert message(check_value, True, 1) == (
        "your answer: wrong type. Expected a plain Python int, got bool.")


def test_bool_for_float_rejected():
    assert "Expected a plain Python float, got bool." in message(check_value, False, 0.0)


def test_int_for_bool_rejected():
    assert message(check_value, 1, True) == (
        "your answer: wrong type. Expected a bool (True or False), got int.")


def test_numpy_int64_accepted_for_int():
    check_value(np.int64(12), 12)
    assert message(check_value, np.int64(13), 12) == "your answer: wrong value. You gave 13."


def test_numpy_float64_accepted_for_float():
    check_value(np.float64(0.25), 0.25)
    assert "wrong value" in message(check_value, np.float64(0.5), 0.25)


def test_int_accepted_for_float():
    check_value(2, 2.0)


def test_float_for_int_rejected():
    assert message(check_value, 3.0, 3) == (
        "your answer: wrong type. Expected a plain Python int, got float.")


def test_bound_method_for_tuple_gets_call_hint():
    t = torch.zeros(3, 4)
    assert message(check_value, t.size, (3, 4), name="shape") == (
        "shape: wrong type. Expected a tuple, got builtin_function_or_method."
        " It is a function or method: did you forget to call it with ()?")


def test_bound_method_for_int_gets_call_hint():
    t = torch.zeros(3, 4)
    assert message(check_value, t.numel, 12).endswith("did you forget to call it with ()?")


@pytest.mark.parametrize("expected", [
    3, 2.5, True, "float32", (3, 4), torch.float32, torch.device("cpu"),
], ids=["int", "float", "bool", "str", "tuple", "dtype", "device"])
def test_object_equal_to_everything_is_rejected(expected):
    liar = Liar()
    assert liar == expected  # it really does claim equality
    assert "wrong type." in message(check_value, liar, expected)


def test_str_subclass_is_rejected():
    class Sneaky(str):
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__
    assert "wrong type." in message(check_value, Sneaky("x"), "float32")


def test_int_subclass_that_equals_everything_is_compared_as_int():
    class SneakyInt(int):
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__
    assert message(check_value, SneakyInt(9), 3) == "your answer: wrong value. You gave 9."


def test_float_subclass_that_equals_everything_is_compared_as_float():
    class SneakyFloat(float):
        def __eq__(self, other):
            return True
        __hash__ = float.__hash__
    assert "wrong value" in message(check_value, SneakyFloat(9.0), 3.0)


# --- check_value: values and reveal --------------------------------------------------------

def test_reveal_false_hides_the_expected_value():
    msg = message(check_value, 54321, 12345)
    assert msg == "your answer: wrong value. You gave 54321."
    assert "12345" not in msg


def test_reveal_true_shows_the_expected_value():
    assert message(check_value, 54321, 12345, reveal=True) == (
        "your answer: wrong value. Expected 12345, got 54321.")


def test_reveal_false_hides_an_expected_string_and_dtype():
    assert "float64" not in message(check_value, "float32", "float64")
    assert "float64" not in message(check_value, torch.float32, torch.float64)
    assert message(check_value, torch.float32, torch.float64, reveal=True) == (
        "your answer: wrong value. Expected torch.float64, got torch.float32.")


def test_name_is_the_message_prefix_for_values():
    assert message(check_value, 2, 3, name="`n_rows`") == "`n_rows`: wrong value. You gave 2."


def test_float_default_tolerance_is_tight():
    # rel_tol=1e-9 by default: rounding noise passes, a difference of 1e-7 does not.
    check_value(0.25, 0.25)
    check_value(1.0 + 1e-10, 1.0)
    assert message(check_value, 1.0000001, 1.0) == "your answer: wrong value. You gave 1.0000001."


def test_float_rel_tol():
    check_value(1.0000001, 1.0, rel_tol=1e-6)
    assert "wrong value" in message(check_value, 1.00001, 1.0, rel_tol=1e-6)


def test_float_abs_tol():
    check_value(0.001, 0.0, abs_tol=1e-2)
    assert "wrong value" in message(check_value, 0.1, 0.0, abs_tol=1e-2)


def test_float_nan_equals_nan():
    check_value(float("nan"), float("nan"))
    check_value(np.float64("nan"), math.nan)
    assert message(check_value, float("nan"), 1.0) == "your answer: wrong value. You gave nan."


def test_numpy_float32_shown_as_plain_float():
    msg = message(check_value, np.float32(0.5), 0.25)
    assert msg == "your answer: wrong value. You gave 0.5."


def test_float_rounding_passes_by_default():
    check_value(0.1 + 0.2, 0.3)
    check_value(sum([0.1] * 10), 1.0)


def test_float_explicit_rel_tol_zero_is_exact():
    assert message(check_value, 0.1 + 0.2, 0.3, rel_tol=0.0) == (
        "your answer: wrong value. You gave 0.30000000000000004.")


# --- check_value: tuples, torch.Size, dtypes, devices, strings -----------------------------

def test_torch_size_accepted_for_tuple():
    check_value(torch.zeros(3, 4).shape, (3, 4))
    check_value(torch.zeros(3, 4).size(), (3, 4))


def test_tuple_accepted_for_torch_size():
    check_value((3, 4), torch.Size([3, 4]))


def test_wrong_torch_size_fails_without_revealing():
    msg = message(check_value, torch.Size([4, 3]), (3, 4))
    assert msg == "your answer: wrong value. You gave (4, 3)."


def test_tuple_of_numpy_ints_accepted():
    check_value((np.int64(3), np.int64(4)), (3, 4))


def test_tuple_length_matters():
    assert "wrong value" in message(check_value, (3, 4, 1), (3, 4))
    assert "wrong value" in message(check_value, (3,), (3, 4))


def test_list_for_tuple_rejected():
    assert message(check_value, [3, 4], (3, 4)) == (
        "your answer: wrong type. Expected a tuple, got list.")


def test_tuple_element_types_matter():
    assert "wrong value" in message(check_value, (3.0, 4), (3, 4))
    assert "wrong value" in message(check_value, (True, 4), (1, 4))
    assert "wrong value" in message(check_value, (torch.tensor(3), 4), (3, 4))


def test_tuple_with_liar_element_rejected():
    assert "wrong value" in message(check_value, (Liar(), 4), (3, 4))


def test_tuple_int_for_bool_element_rejected():
    assert message(check_value, (1, 0), (True, False)) == "your answer: wrong value. You gave (1, 0)."
    check_value((True, False), (True, False))


def test_tuple_of_int_subclass_liars_rejected():
    class SneakyInt(int):
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__
    assert message(check_value, (SneakyInt(9),), (3,)) == "your answer: wrong value. You gave (9,)."
    check_value((SneakyInt(3),), (3,))  # an int subclass with the right value still passes


def test_dtype_compared():
    check_value(torch.zeros(1).dtype, torch.float32)
    assert message(check_value, torch.float64, torch.float32) == (
        "your answer: wrong value. You gave torch.float64.")


def test_dtype_as_string_rejected():
    assert message(check_value, "torch.float32", torch.float32) == (
        "your answer: wrong type. Expected a torch.dtype, got str.")


def test_device_cuda_equals_cuda0():
    check_value(torch.device("cuda:0"), torch.device("cuda"))
    check_value(torch.device("cuda"), torch.device("cuda:0"))


def test_device_mismatch():
    assert message(check_value, torch.device("meta"), torch.device("cpu")) == (
        "your answer: wrong value. You gave 'meta'.")


def test_device_mismatch_reveal():
    assert message(check_value, torch.device("meta"), torch.device("cpu"), reveal=True) == (
        "your answer: wrong value. Expected 'cpu', got 'meta'.")


def test_device_index_shown():
    assert message(check_value, torch.device("cuda:1"), torch.device("cuda")) == (
        "your answer: wrong value. You gave 'cuda:1'.")


def test_device_as_string_rejected():
    assert message(check_value, "cpu", torch.device("cpu")) == (
        "your answer: wrong type. Expected a torch.device, got str.")


def test_str_compared():
    check_value("float32", "float32")
    assert message(check_value, "Float32", "float32") == (
        "your answer: wrong value. You gave 'Float32'.")


def test_bool_compared():
    check_value(True, True)
    assert message(check_value, False, True) == "your answer: wrong value. You gave False."


def test_numpy_bool_accepted_for_bool():
    # (a == b).all() on NumPy arrays gives np.bool_, not bool.
    check_value(np.bool_(True), True)
    check_value(np.bool_(False), False)
    check_value(np.array([1, 2]).all(), True)
    assert message(check_value, np.bool_(False), True) == "your answer: wrong value. You gave False."
    assert message(check_value, np.bool_(True), False, reveal=True) == (
        "your answer: wrong value. Expected False, got True.")


def test_numpy_bool_still_rejected_for_int():
    assert message(check_value, np.bool_(True), 1).startswith(
        "your answer: wrong type. Expected a plain Python int, got numpy.")


def test_numpy_int_still_rejected_for_bool():
    assert message(check_value, np.int64(1), True) == (
        "your answer: wrong type. Expected a bool (True or False), got numpy.int64.")


def test_check_raises_accepts_the_expected_error_and_words_the_others():
    """check_raises: passes on the expected type (or tuple), names what happened otherwise."""
    from autograder.checks import check_raises

    def boom(kind):
        def call():
            raise kind("nope")
        return call

    check_raises(boom(ValueError), ValueError)
    check_raises(boom(RuntimeError), (ValueError, RuntimeError))
    with pytest.raises(GradingError) as info:
        check_raises(lambda: 42, ValueError, name="f(bad)")
    assert str(info.value) == "f(bad): expected a ValueError, but it returned 42."
    with pytest.raises(GradingError) as info:
        check_raises(boom(TypeError), (ValueError, RuntimeError), name="f(bad)")
    assert str(info.value) == "f(bad): expected a ValueError or RuntimeError, got TypeError: nope"


# --- wrong_kinds: a diagnosis, not a verdict -------------------------------------------------

def pitfall(check, *args, **kwargs):
    """The PitfallError `check` raises (its key and message); fails the test if it raises another error or none."""
    from autograder.misconceptions import PitfallError
    with pytest.raises(PitfallError) as info:
        check(*args, **kwargs)
    return info.value.key, str(info.value)


def test_a_value_a_mistake_gives_is_named_with_its_lesson_section():
    from autograder.misconceptions import CATALOGUE, LESSON_SECTIONS, misconception_of
    key, text = pitfall(check_value, 1.0, 1.5, name="the loss", wrong_kinds={"integer-truncation": 1.0})
    assert key == "integer-truncation" and misconception_of(text) == key
    assert text.startswith(f"Pitfall: {CATALOGUE[key].name}. ")
    assert "the loss: wrong value. You gave 1.0." in text  # the verdict kept, never the expected value
    assert "1.5" not in text
    assert LESSON_SECTIONS[key][1] in text and LESSON_SECTIONS[key][0] in text
    assert "The lesson notebooks/01_tensors_lesson.ipynb" in text
    # A section after the main path is named as such: the student looks for it there.
    _, text = pitfall(check_value, 1.0, 1.5, name="the loss", wrong_kinds={"non-strict-load": 1.0})
    assert "The optional part of the lesson notebooks/07_checkpoints_lesson.ipynb" in text


def test_a_tensor_matching_a_mistake_is_named_with_the_check_s_own_tolerance():
    expected = torch.tensor([1.0, 2.0, 3.0])
    frozen = torch.tensor([1.0, 2.0, 4.0])
    key, _ = pitfall(check_tensor, frozen + 1e-7, expected, wrong_kinds={"requires-grad-as-no-grad": frozen})
    assert key == "requires-grad-as-no-grad"
    # A shape a mistake gives is named too: shape is part of the comparison.
    column = expected.reshape(1, 3)
    key, text = pitfall(check_tensor, column, expected, wrong_kinds={"accidental-broadcast": column})
    assert key == "accidental-broadcast" and "wrong shape. Expected (3,), got (1, 3)." in text


def test_a_value_no_mistake_gives_keeps_the_generic_verdict():
    assert message(check_value, 2.0, 1.5, name="the loss", wrong_kinds={"integer-truncation": 1.0}) == (
        "the loss: wrong value. You gave 2.0.")
    got = torch.tensor([0.0, 0.0])
    kinds = {"grad-accumulates": torch.tensor([2.0, 2.0])}
    text = message(check_tensor, got, torch.tensor([1.0, 1.0]), wrong_kinds=kinds)
    assert text.startswith("your result: wrong values. 2 of 2 elements differ")


def test_a_mistake_the_inputs_cannot_tell_from_the_right_answer_is_never_named():
    """When the wrong kind gives the right value here, matching it proves nothing: the verdict stays generic."""
    text = message(check_value, 3.0, 1.5, wrong_kinds={"swapped-loss-arguments": 1.5, "integer-truncation": 1.0})
    assert text == "your answer: wrong value. You gave 3.0."


def test_lazy_kinds_are_computed_only_on_failure_and_one_that_raises_stands_for_nothing():
    calls = []

    def expensive():
        calls.append(1)
        return 1.0
    check_value(1.5, 1.5, wrong_kinds={"integer-truncation": expensive})
    assert calls == []

    def broken():
        raise RuntimeError("cannot happen here")
    text = message(check_value, 1.0, 1.5, wrong_kinds={"swapped-loss-arguments": broken})
    assert text == "your answer: wrong value. You gave 1.0."
    kinds = {"swapped-loss-arguments": broken, "integer-truncation": expensive}
    key, _ = pitfall(check_value, 1.0, 1.5, wrong_kinds=kinds)
    assert key == "integer-truncation" and calls == [1]


def test_one_of_names_a_mistake_that_can_give_several_values():
    from autograder.checks import OneOf
    kinds = {"len-as-numel": OneOf((4, 2, 9))}
    assert pitfall(check_value, 2, 20, wrong_kinds=kinds)[0] == "len-as-numel"
    assert pitfall(check_value, 9, 20, wrong_kinds=kinds)[0] == "len-as-numel"
    assert message(check_value, 7, 20, wrong_kinds=kinds) == "your answer: wrong value. You gave 7."


def test_a_bool_wrong_kind_does_not_turn_a_type_error_into_a_diagnosis():
    """A tensor where a bool is wanted fails on its type; a wrong kind of a bool value cannot match it."""
    text = message(check_value, torch.tensor(True), False, wrong_kinds={"mode-not-restored": True})
    assert text.startswith("your answer: wrong type.")


def test_an_unknown_misconception_key_is_a_bug_in_the_test():
    with pytest.raises(KeyError):
        check_value(1.0, 1.5, wrong_kinds={"no-such-misconception": 1.0})


# --- raw errors from student code -----------------------------------------------------------------

@pytest.mark.parametrize(("make", "prop"), [
    (lambda: (_ for _ in ()).throw(AssertionError("Torch not compiled with CUDA enabled")), "device"),
    (lambda: torch.ones(2, device="meta") + torch.ones(2, device="cpu").expand(3, 2), "device"),
    (lambda: torch.ones(2, 3) + torch.ones(4), "shape"),
    (lambda: torch.ones(2, 3) @ torch.ones(2, 3), "shape"),
    (lambda: torch.zeros(3, dtype=torch.uint8).mean(), "dtype"),
    (lambda: torch.ones(2).sum().backward(), "graph"),
])
def test_a_raw_error_is_explained_by_the_tensor_property_it_is_about(make, prop):
    from autograder.checks import explained_errors
    with pytest.raises(GradingError) as info, explained_errors():
        make()
    first, _, below = str(info.value).partition("\n\n")
    named = "requires_grad or graph" if prop == "graph" else prop
    assert f": wrong {named}," in first and first.endswith(".") and "\n" not in first
    from classgrader.class_run.outcomes import category
    assert category("GradingError", first) == prop  # the class report files it under its property
    assert below.startswith("Where it was raised (most recent call last):")  # the traceback, kept below the sentence


def test_the_traceback_shows_the_student_s_frames_and_not_the_test_cell_s():
    """A test cell may be hidden: its own lines never reach the message; the student's code does."""
    import linecache

    from autograder.checks import explained_errors
    student, code = {}, "def forward(x):\n    return x @ x\n"
    # IPython keeps each cell's source where tracebacks look for it
    linecache.cache["<your answer cell>"] = (len(code), None, code.splitlines(True), "<your answer cell>")
    exec(compile(code, "<your answer cell>", "exec"), student)
    test_cell = ("with explained_errors():\n"
                 "    secret = torch.ones(2, 3)  # a hidden test's input\n"
                 "    forward(secret)\n")
    with pytest.raises(GradingError) as info:
        exec(compile(test_cell, "<a test cell>", "exec"), {"explained_errors": explained_errors, "torch": torch,
                                                             "forward": student["forward"]})
    text = str(info.value)
    assert ": wrong shape," in text and "<your answer cell>" in text and "return x @ x" in text
    assert "<a test cell>" not in text and "secret" not in text


def test_a_device_mismatch_is_a_device_problem():
    from autograder.checks import explain_error
    error = RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                         "cuda:0 and cpu!")
    assert ": wrong device," in explain_error(error)
    assert explain_error(ValueError("3 predictions against 4 targets")) is None
    with pytest.raises(NotImplementedError) as meta_error:
        torch.zeros(3, device="meta").cpu()  # values taken off meta, which has none
    assert ": wrong device, your code took values off the meta device" in explain_error(meta_error.value)


def test_a_view_of_memory_out_of_order_is_told_about_the_layout_not_mismatched_shapes():
    from autograder.checks import explain_error
    with pytest.raises(RuntimeError) as refused:
        torch.zeros(3, 4).t().view(12)  # 12 elements: the shape fits, the memory's order does not
    said = explain_error(refused.value)
    assert ": wrong shape for its memory layout, view() reads a tensor's memory in order" in said
    assert "do not fit together" not in said


def test_checks_own_errors_and_unexplained_ones_pass_through_untouched():
    from autograder.checks import explained_errors
    with pytest.raises(GradingError, match=r"^x: wrong value"), explained_errors():
        check_value(1, 2, name="x")
    with pytest.raises(NotImplementedError), explained_errors():
        raise NotImplementedError()


# --- evidence of what the code did ----------------------------------------------------------------

def test_watch_moves_sees_a_move_whose_result_is_dropped():
    from autograder.checks import watch_moves
    x, y = torch.ones(2), torch.zeros(2)
    moves = watch_moves([x, y])
    x.to("meta")  # the result dropped: x stays where it was
    assert moves == [0] and x.device.type == "cpu"
    assert y.to("meta").device.type == "meta" and moves == [0, 1]


def test_broadcasts_asked_sees_pytorch_asked_however_it_is_named_and_not_the_rules():
    from torch.functional import broadcast_shapes as renamed

    from autograder.checks import broadcasts_asked
    a, b = (5, 1, 3), (4, 1)

    def rules():
        n = max(len(a), len(b))
        x, y = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
        return tuple(q if p == 1 else p for p, q in zip(x, y))
    assert broadcasts_asked(rules, [a, b]) == []
    assert broadcasts_asked(lambda: torch.broadcast_shapes(a, b), [a, b]) == ["torch.broadcast_shapes"]
    assert broadcasts_asked(lambda: renamed(a, b), [a, b]) == ["torch.broadcast_shapes"]
    on_meta = broadcasts_asked(lambda: (torch.empty(a, device="meta") + torch.empty(b, device="meta")).shape, [a, b])
    assert "torch's add on tensors of those shapes" in on_meta
    # One that cannot broadcast: the error it raises is dropped, what it asked is kept.
    assert broadcasts_asked(lambda: torch.zeros(5, 3) + torch.zeros(4), [(5, 3), (4,)]) != []
    assert torch.broadcast_shapes((2, 1), (3,)) == (2, 3)  # put back as it was


def test_watch_loss_order_tells_a_swapped_call_from_a_right_one():
    from autograder.checks import watch_loss_order
    model = torch.nn.Linear(2, 1)
    x, y = torch.ones(3, 2), torch.zeros(3, 1)
    loss, swapped = watch_loss_order(model, torch.nn.functional.mse_loss)
    loss(model(x), y)
    loss(y, model(x))
    loss(input=model(x), target=y)
    assert swapped == [False, True, False]


def test_watch_loss_order_sees_the_models_output_reshaped_or_computed_on():
    """A swap is seen through a view of the output (view_as, squeeze) and through arithmetic on
    it, under no_grad too where it is a view; the batch's own tensors never count as the model's."""
    from autograder.checks import watch_loss_order
    model = torch.nn.Linear(2, 1)
    x, y = torch.ones(3, 2), torch.zeros(3, 1)
    loss, swapped = watch_loss_order(model, torch.nn.functional.mse_loss)
    loss(y, model(x).view_as(y))
    loss(y.squeeze(1), model(x).squeeze(1) * 2)
    loss(model(x).view_as(y), y)
    with torch.no_grad():
        loss(y, model(x).view_as(y))
        loss(model(x).view_as(y), y.view_as(y))
    assert swapped == [True, True, False, True, False]
