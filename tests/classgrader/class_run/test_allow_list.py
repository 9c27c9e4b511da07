"""allow_list: the data file a reviewer reads (allowed.toml) loads, and answers as it says:
the modules, names, attributes and keywords it lists, and nothing of what it leaves out."""
from classgrader.class_run import allow_list

ALLOWED = allow_list.modules()


def test_the_data_file_is_the_list():
    data = allow_list.data()
    assert {"python", "modules", "torch", "calls", "attributes"} <= set(data)
    assert allow_list.DATA.name == "allowed.toml" and allow_list.DATA.parent.name == "class_run"


def test_what_a_beginner_s_answer_uses_is_on_it():
    for dotted in ("torch.nn.Linear", "torch.nn.functional.cross_entropy", "torch.optim.SGD",
                   "torch.utils.data.DataLoader", "torch.no_grad", "torch.inference_mode", "torch.set_grad_enabled",
                   "torch.load", "torch.save", "torch.mean", "torch.zeros", "torch.cuda.is_available",
                   "torch.backends.mps.is_available", "math.prod", "os.path.join", "dataclasses.asdict"):
        assert allow_list.dotted_allowed(dotted, ALLOWED) == (True, dotted), dotted
    assert allow_list.dotted_allowed("torch.float32.itemsize", ALLOWED) == (True, "torch.float32")
    for attribute in ("shape", "detach", "weight", "training", "param_groups", "next_functions", "state_dict"):
        assert allow_list.attribute_allowed(attribute), attribute
    for builtin in ("len", "isinstance", "super", "range", "ValueError"):
        assert allow_list.builtin_allowed(builtin), builtin


def test_what_reaches_the_process_is_not():
    for dotted in ("torch.utils.checkpoint.checkpoint", "torch.hub.load", "os.environ", "os.putenv",
                   "functools.update_wrapper", "functools.wraps",
                   "torch.nn.modules.module.register_module_forward_hook",
                   "torch.autograd.graph.saved_tensors_hooks", "torch._C._set_grad_enabled", "torch.compile",
                   "torch.jit.script", "torch.utils._pytree.tree_map", "sys.modules", "pickle.loads",
                   "contextlib.ExitStack", "operator.setitem", "torch.set_default_device"):
        assert not allow_list.dotted_allowed(dotted, ALLOWED)[0], dotted
    for module in ("gc", "ctypes", "inspect", "importlib", "threading", "subprocess", "torch.utils.checkpoint"):
        assert module not in ALLOWED, module
    for builtin in ("getattr", "hasattr"):  # with a constant name only: code_scan reads it as the attribute
        assert allow_list.builtin_allowed(builtin)
    for builtin in ("setattr", "delattr", "vars", "globals", "locals", "dir", "exec", "eval", "compile",
                    "__import__", "breakpoint"):
        assert not allow_list.builtin_allowed(builtin), builtin
    for attribute in ("markers", "as_subclass", "register_forward_hook", "_pack", "gi_frame", "f_globals"):
        assert not allow_list.attribute_allowed(attribute), attribute


def test_torch_load_keeps_weights_only_on():
    rules = allow_list.keyword_rules("torch.load")
    assert rules["constant"] == {"weights_only": True} and "pickle_module" in rules["never"]
    assert rules["positional"] == 2


def test_the_course_s_own_imports_are_allowed_by_name():
    allowed = allow_list.modules({"autograder": ["check_value"], "autograder.autograd_probe": ["GraphLeakProbe"]})
    assert allow_list.dotted_allowed("autograder.check_value", allowed)[0]
    assert allow_list.dotted_allowed("autograder.autograd_probe.GraphLeakProbe", allowed)[0]
    assert not allow_list.dotted_allowed("autograder.trace", allowed)[0]
    assert not allow_list.dotted_allowed("autograder.autograd_probe._EVIDENCE", allowed)[0]
