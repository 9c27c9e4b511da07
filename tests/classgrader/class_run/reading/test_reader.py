"""reader: the Reader, every layer's rules together; here, what bindings and definitions write,
and each finding at its cell and line."""
from classgrader.class_run import code_scan


def found(code: str) -> str:
    return " | ".join(f.what for f in code_scan.scan([code]))


def test_each_finding_is_at_its_cell_and_line():
    found_ = code_scan.scan(["x = 1", "import torch\ny = 2\nimport gc"])
    assert [(f.cell, f.line) for f in found_] == [(1, 3)] and "imports gc" in found_[0].what


def test_a_cell_the_course_wrote_is_not_read():
    assert code_scan.scan(["import gc"], given={"import gc"}) == []


def test_a_binding_of_someone_elses_object_is_a_finding_and_the_notebooks_own_is_not():
    assert "torch.Tensor.detach" in found("import torch\ntorch.Tensor.detach = lambda self: self")
    assert found("class Box:\n    pass\nbox = Box()\nbox.size = 3") == ""


def test_a_generator_holding_a_grad_mode_across_a_yield_is_a_finding_and_a_context_manager_is_not():
    held = "import torch\ndef gen():\n    with torch.no_grad():\n        yield 1"
    assert "across a yield" in found(held)
    assert found("import torch\nfrom contextlib import contextmanager\n@contextmanager\n" + held[13:]) == ""


def test_an_annotation_written_as_text_is_read_as_the_code_it_spells():
    assert "uses __import__" in found("def f(x: '__import__(\"gc\")'):\n    return x")
    assert found("def f(x: 'list[int]'):\n    return x") == ""
