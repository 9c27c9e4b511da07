"""rules: the lists name what exists, so a misspelt entry cannot leave a way in open unseen."""
import importlib
import importlib.util

import pytest

from classgrader.class_run.reading import rules

OPTIONAL = {"tqdm", "PIL"}  # allowed where a student has them; the course does not install them


def _exists(dotted: str) -> bool:
    """A module by that name, or an attribute of the longest module its prefix names."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            value = importlib.import_module(module)
            for part in parts[cut:]:
                if not hasattr(value, part):
                    return False
                value = getattr(value, part)
            return True
    return False


@pytest.mark.parametrize("module", sorted(set(rules.MODULES) - OPTIONAL))
def test_every_module_an_answer_may_import_exists(module):
    assert _exists(module), f"{module} is allowed but cannot be imported here"


@pytest.mark.parametrize("dotted", rules.REACHES_PROCESS + tuple(sorted(rules.SETTINGS)))
def test_every_part_named_as_reaching_the_process_or_a_setting_exists(dotted):
    assert _exists(dotted), f"{dotted} names nothing: a misspelt entry guards nothing"


def test_a_misspelt_name_is_told_apart():
    assert not _exists("torch.autograd.grph") and not _exists("torch.nn.Module.no_such_method")


def test_a_student_s_class_may_define_no_dunder_that_pretends():
    pretending = {"__eq__", "__bool__", "__getattr__", "__getattribute__", "__class__", "__annotations__",
                  "__torch_function__", "__init_subclass__", "__set_name__", "__del__"}
    assert not pretending & rules.OWN_METHODS
