"""classes: a class of the notebook's that pretends: a tensor that is not torch's, its own
dunders, a module that reports what it holds its own way or never sets its mode, a layer of
torch's that computes its own way or answers for a name the layer holds."""
from classgrader.class_run import code_scan


def found(code: str) -> str:
    return " | ".join(f.what for f in code_scan.scan([code]))


MODULE = "import torch\nfrom torch import nn\nclass Net(nn.Module):\n"


def test_a_subclass_of_torch_s_tensor_and_a_dunder_of_its_own_are_findings():
    assert "a subclass of torch.Tensor" in found("import torch\nclass T(torch.Tensor):\n    pass")
    assert "its own __eq__" in found("class A:\n    def __eq__(self, other):\n        return True")


def test_a_module_that_reports_what_it_holds_its_own_way_is_a_finding():
    assert "which the tests read" in found(MODULE + "    def parameters(self, recurse=True):\n        return iter([])")


def test_a_train_that_never_calls_torch_s_is_a_finding_and_one_that_does_is_not():
    assert "never calls torch's" in found(MODULE + "    def train(self, mode=True):\n        return self")
    assert found(MODULE + "    def train(self, mode=True):\n        super().train(mode)\n        return self") == ""


def test_a_layer_of_torch_s_that_computes_its_own_way_is_a_finding_and_one_set_up_its_own_way_is_not():
    layer = "from torch import nn\nclass Dense(nn.Linear):\n"
    assert "a subclass of nn.Linear, its own forward" in found(layer + "    def forward(self, x):\n        return x")
    assert "a subclass of nn.ReLU, its own forward" in found(
        "import torch.nn as nn\nclass Act(nn.ReLU):\n    def forward(self, x):\n        return x")
    assert found(layer + "    def __init__(self, a, b):\n        super().__init__(a, b)\n"
                         "        nn.init.zeros_(self.bias)") == ""
    # a module of its own computes its own way
    assert found(MODULE + "    def forward(self, x):\n        return x") == ""


def test_a_layer_of_torch_s_whose_held_name_a_member_answers_for_is_a_finding():
    layer = "from torch import nn\nclass Dense(nn.Linear):\n"
    held_away = "    @property\n    def bias(self):\n        return None"
    assert "a subclass of nn.Linear, its own bias" in found(layer + held_away)
    assert "a subclass of nn.Linear, its own in_features" in found(layer + "    in_features = 3")
    assert "a subclass of nn.BatchNorm1d, its own running_mean" in found(
        "from torch import nn\nclass Norm(nn.BatchNorm1d):\n    @property\n"
        "    def running_mean(self):\n        return None")
    # what only sets it up, and a name of its own, are not
    assert found(layer + "    def reset_parameters(self):\n        nn.init.zeros_(self.weight)\n"
                         "    @property\n    def fan_in(self):\n        return self.in_features") == ""


def test_a_member_assigned_onto_the_class_after_its_body_meets_the_same_rules():
    assert "assigns Dense.bias, a member of Dense, a subclass of nn.Linear" in found(
        "from torch import nn\nclass Dense(nn.Linear):\n    pass\nDense.bias = property(lambda self: None)")
    assert "assigns Net.state_dict, which the tests read" in found(MODULE + "    pass\nNet.state_dict = property(dict)")
    assert found(MODULE + "    pass\nNet.scale = 2.0") == ""
