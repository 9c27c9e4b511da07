"""walk: the state and the rules the reader's layers share: a finding noted once, what is on the
course's list, whether a value is code."""
import ast

from classgrader.class_run import code_scan
from classgrader.class_run.reading.facts import notebook_facts
from classgrader.class_run.reading.walk import Walk, is_self


def walk_of(code: str) -> Walk:
    tree = ast.parse(code)
    return Walk(notebook_facts([tree], frozenset(), frozenset(), None), tree)


def test_a_node_is_noted_once_and_off_list_adds_nothing_to_a_node_already_found():
    walk = walk_of("x = 1")
    node = ast.parse("x").body[0]
    walk.note(node, "first")
    walk.off_list(node, "second")
    assert walk.found == [(1, "first")]


def test_a_value_is_code_when_it_is_a_lambda_or_a_function_and_not_when_it_is_data():
    walk = walk_of("def f():\n    pass")
    expression = ast.parse("lambda: 1", mode="eval").body
    assert walk._is_code(expression) and walk._is_code(ast.Name("f")) and walk._is_code(None)
    assert not walk._is_code(ast.Constant(3)) and not walk._is_code(ast.Name("x"))


def test_is_self_is_the_first_parameter_of_the_method_being_read():
    walk = walk_of("x = 1")
    walk.functions.append(("forward", True, "self"))
    assert is_self(ast.Name("self"), walk) and not is_self(ast.Name("other"), walk)


def test_an_attribute_off_the_list_is_a_finding_and_one_the_notebook_gives_its_own_objects_is_not():
    assert "reads ._version" in " ".join(f.what for f in code_scan.scan(["import torch\nx = torch.zeros(1)._version"]))
    assert code_scan.scan(["class A:\n    def __init__(self):\n        self.history = []\n"
                           "a = A()\nh = a.history"]) == []
