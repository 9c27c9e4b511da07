"""facts: what the whole notebook binds, imports, writes, calls and aliases."""
import ast

from classgrader.class_run.reading.facts import (
    attributes_given,
    attributes_written,
    binding_counts,
    calls_made,
    class_bases,
    class_defines,
    class_members,
    constant_strings,
    made_by_type,
    module_aliases,
    name_aliases,
    notebook_facts,
    notebook_names,
)

NOTEBOOK = [ast.parse(cell) for cell in (
    "import torch\nimport torch.nn.functional as F\nfrom dataclasses import fields\nx = 1",
    "class Net(torch.nn.Module):\n    size: int = 2\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = torch.nn.Linear(2, 2)\n        self.register_buffer('scale', torch.ones(2))",
    "m = Net()\nm.fc.weight.requires_grad = False\nT = torch.Tensor\nt = torch\nfmt = '{:.2f}'\nx = 2",
    "fields(Net)\nK = type(x)",
)]


def test_names_bound_foreign_and_imported():
    bound, foreign, imported = notebook_names(NOTEBOOK)
    assert {"torch", "F", "fields", "x", "Net", "m", "T", "t", "fmt", "K"} <= bound
    assert {"F", "K", "len"} <= foreign and "x" not in foreign  # modules, type()'s class, builtins
    assert imported["F"] == "torch.nn.functional" and imported["fields"] == "dataclasses.fields"


def test_bindings_are_counted():
    counts = binding_counts(NOTEBOOK)
    assert counts["x"] == 2 and counts["fmt"] == 1


def test_a_name_bound_to_constant_text_alone_is_known_by_its_text():
    assert constant_strings(NOTEBOOK, binding_counts(NOTEBOOK)) == {"fmt": ["{:.2f}"]}


def test_attributes_given_and_written():
    given = attributes_given(NOTEBOOK)
    assert {"fc", "scale", "size", "__init__"} <= given  # assigned, registered, a class's members
    assert "requires_grad" in attributes_written(NOTEBOOK)
    assert class_members(NOTEBOOK[1].body[0].body) == ["size", "__init__"]


def test_calls_are_named_as_imported():
    assert "dataclasses.fields" in calls_made(NOTEBOOK, notebook_names(NOTEBOOK)[2])


def test_aliases_of_names_and_of_modules():
    aliases = name_aliases(NOTEBOOK)
    assert aliases["T"] == "torch.Tensor" and aliases["t"] == "torch"
    assert module_aliases(aliases, notebook_names(NOTEBOOK)[2]) == {"T": "torch.Tensor", "t": "torch"}


def test_the_notebook_s_facts_are_found_once_for_every_cell():
    notebook = notebook_facts(NOTEBOOK, course_callables={"describe"}, course_imports={"start_grading"})
    assert "Net" in notebook.defined and notebook.field_types  # it calls dataclasses.fields
    assert {"describe", "start_grading", "print"} <= notebook.protected  # the tests call these
    assert notebook.texts == {"fmt": ["{:.2f}"]} and notebook.imported["t"] == "torch"
    assert {"fc", "scale"} <= notebook.own_attributes <= notebook.own
    assert "torch" in notebook.allowed and "start_grading" in notebook.methods


def test_classes_their_bases_and_what_their_bodies_define():
    assert class_bases(NOTEBOOK) == {"Net": ["torch.nn.Module"]}
    assert class_defines(NOTEBOOK) == {"Net": frozenset({"size", "__init__"})}
    assert made_by_type(NOTEBOOK) == {"K"}  # K = type(x): a class, called like one
