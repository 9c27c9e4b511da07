"""resolving: dotted names, the chains expressions hang from, and the objects names stand for
in the grader's own process."""
import ast
import os

import torch

from classgrader.class_run.reading.resolving import (
    class_names,
    dotted_name,
    full_name,
    method_names,
    module_exists,
    reaches_namespace,
    resolve,
    root_of,
)


def expression(text: str):
    return ast.parse(text, mode="eval").body


def test_a_dotted_name_read_through_getattr_by_a_constant_is_the_same_name():
    assert dotted_name(expression("torch.nn.Module")) == "torch.nn.Module"
    assert dotted_name(expression('getattr(torch.nn, "Module")')) == "torch.nn.Module"
    assert dotted_name(expression("f().x")) is None  # a call's result is no name


def test_an_imported_alias_is_read_as_the_module_it_names():
    assert full_name("g.x", {"g": "torch.autograd.graph"}) == "torch.autograd.graph.x"
    assert full_name("torch.zeros", {}) == "torch.zeros"


def test_a_chain_hangs_from_its_first_name():
    assert ast.unparse(root_of(expression("a.b[0].c"))) == "a"


def test_calls_that_hand_back_someone_else_s_class_or_namespace():
    assert reaches_namespace(expression("type(x)")) and reaches_namespace(expression("vars(x)"))
    assert reaches_namespace(expression("getattr(x, name)"))  # a computed name
    assert not reaches_namespace(expression('getattr(x, "weight")'))  # an attribute read, spelt as a call


def test_a_name_resolves_to_the_grader_s_own_object():
    assert resolve("torch.nn.Module") is torch.nn.Module
    assert resolve("os.system") is os.system
    assert resolve("no_such_module.x") is None


def test_modules_are_found_without_being_run():
    assert module_exists("torch") and not module_exists("no_such_module_of_the_course")


def test_method_and_class_names_include_the_course_s_own_helpers():
    # read from autograder/ and utils/ beside this package: an empty read would let their names pass
    assert {"start_grading", "check_tensor", "backward", "state_dict"} <= method_names()
    assert {"grad_fn", "requires_grad", "zero_grad"} <= class_names()
