"""own_reads: a getattr by a computed name reads clean only where it reads the student's own
object (layers it named itself, a dataclass's own fields); on anything else it is flagged."""
import pytest

from classgrader.class_run import code_scan

LAYERS = '''
import torch
from torch import nn

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.count = len(sizes) - 1
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            self.add_module(f"fc{i}", nn.Linear(a, b))

    def forward(self, x):
        for i in range(self.count):
            x = FORWARD
        return x
'''
FIELDS = '''
import dataclasses

def plain(config):
    return BODY
'''


def layers(read="getattr(self, f\"fc{i}\")(x)", after=""):
    return LAYERS.replace("FORWARD", read) + after


def fields(body="{field.name: getattr(config, field.name) for field in dataclasses.fields(config)}", after=""):
    return FIELDS.replace("BODY", body) + after


HONEST = {
    "layers read back by the pattern they were added by": layers(),
    "the same, with a default": layers("getattr(self, f\"fc{i}\", None)(x)"),
    "the same, in a comprehension": layers("[getattr(self, f\"fc{j}\") for j in range(1)][0](x)"),
    "the model called, which runs forward": layers(after="model = MLP([2, 3])\ny = model(torch.zeros(1, 2))"),
    "a dataclass's fields": fields(),
    "the same, by a name imported from dataclasses": fields().replace(
        "import dataclasses", "from dataclasses import fields").replace("dataclasses.fields", "fields"),
    "the same, in a loop": FIELDS.replace("    return BODY", "    plain = {}\n"
                                          "    for field in dataclasses.fields(config):\n"
                                          "        plain[field.name] = getattr(config, field.name)\n    return plain"),
}

HOSTILE = {
    # the receiver is not the method's own object
    "a module": (layers("getattr(torch, f\"fc{i}\")(x)"), "uses getattr"),
    "an alias of self": (layers("getattr(me, f\"fc{i}\")(x)").replace(
        "        for i in range(self.count):", "        me = self\n        for i in range(self.count):"),
        "uses getattr"),
    "self rebound": (layers().replace("        for i in range(self.count):",
                                      "        self = torch\n        for i in range(self.count):"), "uses getattr"),
    "self shadowed by a lambda": (layers("(lambda self: getattr(self, f\"fc{i}\"))(torch)(x)"), "uses getattr"),
    "an attribute chain": (layers("getattr(self.net, f\"fc{i}\")(x)"), "uses getattr"),
    "a method that is not plain": (layers().replace("    def forward", "    @staticmethod\n    def forward"),
                                   "uses getattr"),
    "a function of its own, not a method": ("import torch\ndef read(self):\n    for i in range(2):\n"
                                            "        getattr(self, f\"fc{i}\")\nread(torch)", "uses getattr"),
    "a nested function": (layers("(lambda: 0)() or x").replace(
        "        return x", "        def inner(self):\n            for i in range(2):\n"
                           "                return getattr(self, f\"fc{i}\")\n        return x"), "uses getattr"),
    # the method run on something else than its object
    "the method taken off its class": (layers(after="MLP.forward(torch, 1)"), "names forward"),
    "the same, by a constant getattr": (layers(after="getattr(MLP, 'forward')(torch, 1)"), "names forward"),
    "the same, by super()": (layers(after="class Sub(MLP):\n    def go(self):\n        return super().forward(torch)"),
                             "names forward"),
    "the same, in the class body": (layers().replace("        return x", "        return x\n\n    run = forward"),
                                    "names forward"),
    "a constructor taken without a call": (layers(after="init = MLP.__init__"), "takes __init__"),
    # the name is not one the notebook gave, or not only a pattern of integers
    "a pattern the notebook never added by": (layers("getattr(self, f\"lo{i}\")(x)"), "uses getattr"),
    "a private pattern": (layers("getattr(self, f\"_fc{i}\")(x)").replace('f"fc{i}"', 'f"_fc{i}"'),
                          "uses getattr"),
    "a pattern that starts with a placeholder": (layers("getattr(self, f\"{i}fc\")(x)").replace(
        'f"fc{i}"', 'f"{i}fc"'), "uses getattr"),
    "a placeholder that is a parameter": (layers("getattr(self, f\"fc{n}\")(x)").replace(
        "def forward(self, x)", "def forward(self, x, n='0')"), "uses getattr"),
    "a placeholder from a list": (layers().replace("for i in range(self.count)", "for i in ['0']"), "uses getattr"),
    "a placeholder also assigned": (layers().replace("        return x", "            i = 'ad'\n        return x"),
                                    "uses getattr"),
    "range redefined": (layers(after="def range(n):\n    return ['ad']"), "uses getattr"),
    "a placeholder with a format": (layers("getattr(self, f\"fc{i!s}\")(x)"), "uses getattr"),
    "a name computed otherwise": (layers("getattr(self, 'fc' + str(i))(x)"), "uses getattr"),
    "setattr by the same pattern": (layers().replace("self.add_module(f\"fc{i}\", nn.Linear(a, b))",
                                                     "setattr(self, f\"fc{i}\", nn.Linear(a, b))"), "uses setattr"),
    # a dataclass's fields, read on something else
    "fields of one object read on another": (fields("{f.name: getattr(torch, f.name) for f in "
                                                    "dataclasses.fields(config)}", ) + "import torch",
                                             "uses getattr"),
    "the receiver rebound meanwhile": (fields("{f.name: getattr(config, f.name) for f in dataclasses.fields(config) "
                                              "if (config := print)}"), "uses getattr"),
    "names that are not fields": (fields("{f.name: getattr(config, f.name) for f in [config]}"), "uses getattr"),
    "a field variable also assigned": (fields("[getattr(config, f.name) for f in dataclasses.fields(config)]").replace(
        "    return", "    f = config\n    return"), "uses getattr"),
    "dataclasses replaced": (fields(after="import types\ndataclasses = types.SimpleNamespace(fields=list)"),
                             "uses getattr"),
    "at the top of a cell": ("import dataclasses\nfrom torch import nn\nconfig = nn\n"
                             "plain = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}",
                             "uses getattr"),
    "vars, still": (fields("dict(vars(config))"), "uses vars"),
}


@pytest.mark.parametrize("case", HONEST)
def test_reading_the_student_s_own_object_is_clean(case):
    assert [str(f) for f in code_scan.scan([HONEST[case]])] == []


@pytest.mark.parametrize("case", HOSTILE)
def test_a_computed_name_on_anything_else_is_found(case):
    code, words = HOSTILE[case]
    found = [f.what for f in code_scan.scan([code])]
    assert any(words in what for what in found), (case, found)
