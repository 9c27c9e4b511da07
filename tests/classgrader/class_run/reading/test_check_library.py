"""check_library: the names the check library's handed objects hold stay refused, whatever the
notebook names its own attributes."""
import ast

from classgrader.class_run import code_scan
from classgrader.class_run.reading.check_library import _names_in, attribute_names


def test_a_class_s_names_are_its_members_and_what_it_assigns_on_its_objects_not_its_locals():
    tree = ast.parse("class Probe:\n    kind = 'loss'\n    def __init__(self, loader):\n"
                     "        self.loader = loader\n        local = 3\n    def run(self):\n        pass")
    assert _names_in(tree) == {"kind", "__init__", "loader", "run"}


def test_the_probes_names_are_held_and_no_dunder_is():
    names = attribute_names()
    assert {"loader", "markers"} <= names
    assert not any(n.startswith("__") and n.endswith("__") for n in names)


def test_an_own_attribute_named_like_a_probe_s_does_not_make_it_readable():
    code = ("class Trainer:\n    def __init__(self, loader):\n        self.loader = loader\n"
            "def train_epoch(model, loader, optimizer):\n    batches = getattr(loader, 'loader', loader)\n")
    assert any("loader" in f.what for f in code_scan.scan([code]))
