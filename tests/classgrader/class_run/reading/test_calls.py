"""calls: what a call is given (torch.load's keywords), arrays over another's memory, grad modes
switched for the session, attributes copied by name."""
from classgrader.class_run import code_scan


def found(code: str) -> str:
    return " | ".join(f.what for f in code_scan.scan([code]))


def test_torch_load_with_pickles_on_is_a_finding_and_a_safe_load_is_not():
    assert "unpickles" in found("import torch\ntorch.load('f.pt', weights_only=False)")
    assert found("import torch\nstate = torch.load('f.pt', map_location='cpu')") == ""


def test_a_grad_mode_switched_for_the_session_is_a_finding_and_a_block_is_not():
    assert "for the rest of the session" in found("import torch\ntorch.set_grad_enabled(False)")
    assert found("import torch\nwith torch.no_grad():\n    y = torch.ones(2) * 2") == ""


def test_an_array_over_another_s_memory_at_a_computed_offset_is_a_finding():
    code = "import numpy as np\na = np.zeros(8, np.uint8)\nnp.ndarray((8,), np.uint8, a, {})"
    assert "offset" in found(code.format("-8"))
    assert "offset" not in found(code.format("0"))


def test_a_magic_called_by_name_is_read_as_the_code_it_runs():
    assert "imports gc" in found("get_ipython().run_line_magic('timeit', 'import gc')")
