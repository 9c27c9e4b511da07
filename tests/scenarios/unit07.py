"""Scripted submissions for assignment 07_checkpoints (see unit01.py)."""
from scenarios import Mutant, Scenario

ASSIGNMENT = "07_checkpoints"
NOTEBOOK = "07_checkpoints.ipynb"

SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_save_checkpoint_answer": '''
def save_checkpoint(path, model, optimizer, epoch, config):
    checkpoint = dict(model=model.state_dict(), optimizer=optimizer.state_dict(), epoch=epoch, '''
'''config=dict(vars(config)))
    torch.save(checkpoint, str(path))
''',
        "q2_load_checkpoint_answer": '''
def load_checkpoint(path, make_model, make_optimizer, device):
    checkpoint = torch.load(path, map_location="cpu")
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    model = model.to(device)
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, int(checkpoint["epoch"]), dict(checkpoint["config"])
''',
        "q3_load_untrusted_answer": '''
def load_untrusted(path):
    needs = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    if needs:
        raise ValueError(f"{path} needs {needs}")
    return torch.load(path, weights_only=True)
''',
        "q4_load_state_on_answer": '''
def load_state_on(path, device):
    state = torch.load(path, map_location="cpu", weights_only=True)
    return {name: tensor.to(device) for name, tensor in state.items()}
''',
    }),
    Scenario("alternative_b", answers={
        "q1_save_checkpoint_answer": '''
def save_checkpoint(path, model, optimizer, epoch, config):
    plain = {field.name: getattr(config, field.name) for field in dataclasses.fields(config)}
    with open(path, "wb") as handle:
        torch.save({"epoch": epoch, "config": plain, "optimizer": optimizer.state_dict(),
                    "model": model.state_dict()}, handle)
''',
        "q2_load_checkpoint_answer": '''
def load_checkpoint(path, make_model, make_optimizer, device):
    checkpoint = torch.load(path, map_location=lambda storage, location: storage, weights_only=True)
    model = make_model().to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
''',
        "q3_load_untrusted_answer": '''
def load_untrusted(path):
    try:
        return torch.load(path, weights_only=True)
    except Exception as error:
        raise ValueError(str(error)) from error
''',
        "q4_load_state_on_answer": '''
def load_state_on(path, device):
    return torch.load(path, map_location=torch.device(device))
''',
    }),
    Scenario("alternative_c", answers={
        "q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    state = {}
    state["model"] = {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}
    state["optimizer"] = optimizer.state_dict()
    state["epoch"] = epoch
    state["config"] = {"lr": config.lr, "momentum": config.momentum, "hidden": config.hidden}
    torch.save(state, Path(path))
""",
        "q2_load_checkpoint_answer": """
def load_checkpoint(path, make_model, make_optimizer, device):
    with open(path, "rb") as handle:
        checkpoint = torch.load(handle, map_location=str(device), weights_only=True)
    model = make_model()
    model.to(device)
    model.load_state_dict(checkpoint["model"], strict=True)
    optimizer = make_optimizer(list(model.parameters()))
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
""",
        "q3_load_untrusted_answer": """
def load_untrusted(path):
    import pickle
    try:
        with open(path, "rb") as handle:
            return torch.load(handle, weights_only=True, map_location="cpu")
    except (pickle.UnpicklingError, RuntimeError) as error:
        raise ValueError(f"{path} is not plain data: {error}") from error
""",
        "q4_load_state_on_answer": """
def load_state_on(path, device):
    state = torch.load(path, map_location=lambda storage, location: storage, weights_only=True)
    return {name: value.to(device) for name, value in state.items()}
""",
    }),
    Scenario("alternative_d", answers={
        "q1_save_checkpoint_answer": '''
def save_checkpoint(path, model, optimizer, epoch, config):
    from dataclasses import fields
    settings = {}
    for field in fields(config):
        settings[field.name] = getattr(config, field.name)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                "config": settings}, path)
''',
    }),
    # The model's state copied to the CPU before saving, the model itself left where it is.
    Scenario("alternative_e", answers={
        "q1_save_checkpoint_answer": '''
def save_checkpoint(path, model, optimizer, epoch, config):
    state = {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}
    torch.save({"model": state, "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
''',
    }),
    Scenario("model_not_moved", answers={
        "q2_load_checkpoint_answer": """
def load_checkpoint(path, make_model, make_optimizer, device):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
""",
    }, loses={"q2_load_checkpoint_tests"},
        says=["the devices of the parameters of load_checkpoint(<file>, ..., meta)'s model: wrong value"]),
    Scenario("unsafe_load_checkpoint", answers={
        "q2_load_checkpoint_answer": """
def load_checkpoint(path, make_model, make_optimizer, device):
    checkpoint = torch.load(path, map_location=device, weights_only=False)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
""",
    }, loses={"q2_load_checkpoint_tests"}, says=["Pitfall: weights_only=False on an untrusted file"]),
    Scenario("unsafe_load_state_on", answers={
        "q4_load_state_on_answer": """
def load_state_on(path, device):
    return torch.load(path, map_location=device, weights_only=False)
""",
    }, loses={"q4_load_state_on_tests"}, says=["Pitfall: weights_only=False on an untrusted file"]),
    Scenario("saved_model_object", answers={
        "q1_save_checkpoint_answer": '''
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model, "optimizer": optimizer.state_dict(), "epoch": epoch,
                "config": dataclasses.asdict(config)}, path)
''',
    }, loses={"q1_save_checkpoint_tests"}, says=["Pitfall: saving the model object"]),
    Scenario("config_not_plain", answers={
        "q1_save_checkpoint_answer": '''
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                "config": config}, path)
''',
    }, loses={"q1_save_checkpoint_tests"}, says=["Pitfall: a config that cannot load under weights_only"]),
    Scenario("optimizer_state_dropped", answers={
        "q2_load_checkpoint_answer": '''
def load_checkpoint(path, make_model, make_optimizer, device):
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    return model, make_optimizer(model.parameters()), checkpoint["epoch"], checkpoint["config"]
''',
    }, loses={"q2_load_checkpoint_tests"}, says=["Pitfall: optimiser state dropped"]),
    Scenario("optimizer_on_old_parameters", answers={
        "q2_load_checkpoint_answer": '''
def load_checkpoint(path, make_model, make_optimizer, device):
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model().to(device)
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.load_state_dict(checkpoint["model"], assign=True)
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
''',
    }, loses={"q2_load_checkpoint_tests", "q2_optimizer_parameters_tests"},
        says=["Pitfall: an optimiser built on the old model's parameters"]),
    Scenario("unsafe_load", answers={
        "q3_load_untrusted_answer": '''
def load_untrusted(path):
    checkpoint = torch.load(path, weights_only=False)
    if not isinstance(checkpoint, dict):
        raise ValueError("not a checkpoint dict")
    return checkpoint
''',
    }, loses={"q3_load_untrusted_tests"}, says=["Pitfall: weights_only=False on an untrusted file"]),
    # The file's own class allowed in; each loaded tensor's .to() called, its result dropped.
    Scenario("allowlisted_class_and_move_dropped", answers={
        "q3_load_untrusted_answer": '''
def load_untrusted(path):
    import pickle
    try:
        with torch.serialization.safe_globals([TrainConfig]):
            return torch.load(path, weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(f"refusing {path}: {error}") from None
''',
        "q4_load_state_on_answer": '''
def load_state_on(path, device):
    state = torch.load(path, map_location="cpu", weights_only=True)
    for tensor in state.values():
        tensor.to(device)
    return state
''',
    }, loses={"q3_load_untrusted_tests", "q4_load_state_on_tests"},
        says=["Pitfall: a class allowlisted for a file from elsewhere",
              "Pitfall: t.to(device) without assigning the result"]),
    Scenario("quiz_wrong", answers={"quiz_q3_answer": 'q3 = "b"\n'}, loses={"quiz_q3_tests"}),
]

LOAD = """
def load_checkpoint(path, make_model, make_optimizer, device):
{body}
"""


def load_checkpoint(body: str) -> dict:
    return {"q2_load_checkpoint_answer": LOAD.replace("{body}", body)}


# Hand-written wrong answers for the mutation check (tests/mutation.py), where no regex says it.
MUTANTS = [
    Mutant("save_checkpoint/model-object", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model, "optimizer": optimizer.state_dict(), "epoch": epoch,
                "config": dataclasses.asdict(config)}, path)
"""}, misconception="saved-model-object"),
    Mutant("save_checkpoint/optimizer-object", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model.state_dict(), "optimizer": optimizer, "epoch": epoch,
                "config": dataclasses.asdict(config)}, path)
"""}, misconception="saved-model-object"),
    Mutant("save_checkpoint/namespace-config", {"q1_save_checkpoint_answer": """
import argparse

def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                "config": argparse.Namespace(**dataclasses.asdict(config))}, path)
"""}, misconception="config-not-plain"),
    Mutant("save_checkpoint/no-optimizer", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model.state_dict(), "optimizer": None, "epoch": epoch,
                "config": dataclasses.asdict(config)}, path)
"""}, misconception="optimizer-state-dropped"),
    Mutant("save_checkpoint/param-groups-only", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model.state_dict(), "optimizer": {"state": {}, "param_groups": """
"""optimizer.state_dict()["param_groups"]},
                "epoch": epoch, "config": dataclasses.asdict(config)}, path)
"""}, misconception="optimizer-state-dropped"),
    Mutant("save_checkpoint/epoch-as-tensor", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": torch.tensor(epoch),
                "config": dataclasses.asdict(config)}, path)
"""}),
    Mutant("load_checkpoint/optimizer-state-dropped", load_checkpoint("""
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    return model, make_optimizer(model.parameters()), checkpoint["epoch"], checkpoint["config"]"""),
        misconception="optimizer-state-dropped"),
    Mutant("load_checkpoint/optimizer-before-move", load_checkpoint("""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    model = model.to(device)
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]"""),
        misconception="optimizer-on-old-parameters"),
    Mutant("load_checkpoint/optimizer-on-another-model", load_checkpoint("""
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    optimizer = make_optimizer(make_model().to(device).parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    model = make_model().to(device)
    model.load_state_dict(checkpoint["model"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]"""),
        misconception="optimizer-on-old-parameters"),
    Mutant("load_checkpoint/assign-after-optimizer", load_checkpoint("""
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model().to(device)
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.load_state_dict(checkpoint["model"], assign=True)
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]"""),
        misconception="optimizer-on-old-parameters"),
    Mutant("load_checkpoint/model-not-moved", load_checkpoint("""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]""")),
    Mutant("load_checkpoint/unsafe", load_checkpoint("""
    checkpoint = torch.load(path, map_location=device, weights_only=False)
    model = make_model().to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]"""), misconception="unsafe-load"),
    Mutant("load_checkpoint/no-map-location", load_checkpoint("""
    checkpoint = torch.load(path, weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]""")),
    Mutant("load_checkpoint/epoch-plus-one", load_checkpoint("""
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"] + 1, checkpoint["config"]""")),
    Mutant("load_checkpoint/config-as-dataclass", load_checkpoint("""
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], TrainConfig(**checkpoint["config"])"""),
        misconception="config-not-plain"),
    Mutant("load_untrusted/unsafe-then-check", {"q3_load_untrusted_answer": """
def load_untrusted(path):
    checkpoint = torch.load(path, weights_only=False)
    if not isinstance(checkpoint, dict):
        raise ValueError("not a checkpoint dict")
    return checkpoint
"""}, misconception="unsafe-load"),
    Mutant("load_untrusted/returns-none", {"q3_load_untrusted_answer": """
def load_untrusted(path):
    try:
        return torch.load(path, weights_only=True)
    except Exception:
        return None
"""}),
    Mutant("load_untrusted/wrong-exception", {"q3_load_untrusted_answer": """
def load_untrusted(path):
    return torch.load(path, weights_only=True)
"""}),
    Mutant("load_untrusted/safe-globals-added", {"q3_load_untrusted_answer": """
def load_untrusted(path):
    import pickle
    needs = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    try:
        with torch.serialization.safe_globals([TrainConfig]):
            return torch.load(path, weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(f"needs {needs}") from None
"""}, misconception="allowlisted-untrusted"),  # the file's own class let in: a forged file may call it as it likes
    Mutant("load_state_on/unsafe", {"q4_load_state_on_answer": """
def load_state_on(path, device):
    return torch.load(path, map_location=device, weights_only=False)
"""}, misconception="unsafe-load"),
    Mutant("load_state_on/no-map-location", {"q4_load_state_on_answer": """
def load_state_on(path, device):
    return {name: t.to(device) for name, t in torch.load(path, weights_only=True).items()}
"""}),
    Mutant("load_state_on/to-not-assigned", {"q4_load_state_on_answer": """
def load_state_on(path, device):
    state = torch.load(path, map_location="cpu", weights_only=True)
    for tensor in state.values():
        tensor.to(device)
    return state
"""}, misconception="to-not-assigned"),
    Mutant("load_untrusted/names-nothing", {"q3_load_untrusted_answer": """
def load_untrusted(path):
    import pickle
    try:
        return torch.load(path, weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError("this file is not plain data") from None
"""}),  # refuses, but the message does not say what the file needs
    Mutant("save_checkpoint/optimizer-state-cleared", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    optimizer.state.clear()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": int(epoch), "config": dataclasses.asdict(config)}, path)
"""}, misconception="optimizer-state-dropped"),  # the momentum is dropped from the caller's optimiser too
    Mutant("save_checkpoint/model-moved-to-cpu", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    model.cpu()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
"""}),
    Mutant("save_checkpoint/zero-grad-before-save", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    optimizer.zero_grad()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
"""}),
    Mutant("save_checkpoint/model-in-eval-before-save", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    model.eval()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
"""}),
    Mutant("load_checkpoint/copies-parameters-by-name", {"q2_load_checkpoint_answer": """
def load_checkpoint(path, make_model, make_optimizer, device):

    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model().to(device)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(checkpoint["model"][name])
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
"""}),
    Mutant("load_checkpoint/extra-keys-filtered", {"q2_load_checkpoint_answer": """
def load_checkpoint(path, make_model, make_optimizer, device):

    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model().to(device)
    wanted = model.state_dict()
    model.load_state_dict({k: v for k, v in checkpoint["model"].items() if k in wanted})
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
"""}),
    Mutant("load_checkpoint/model-left-in-eval", {"q2_load_checkpoint_answer": """
def load_checkpoint(path, make_model, make_optimizer, device):

    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model().to(device)
    model.load_state_dict(checkpoint["model"])
    model.eval()
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]
"""}),
    Mutant("load_untrusted/assumes-dict", {"q3_load_untrusted_answer": """
import pickle
def load_untrusted(path):
    try:
        data = torch.load(path, weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(f"refusing {path}: {error}") from None
    return {k: v for k, v in data.items()}
"""}),
    Mutant("load_untrusted/tensors-only", {"q3_load_untrusted_answer": """
import pickle
def load_untrusted(path):
    try:
        data = torch.load(path, weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(f"refusing {path}: {error}") from None
    plain = (torch.Tensor, dict, list, int, float, str)
    if isinstance(data, dict) and not all(isinstance(v, plain) for v in data.values()):
        raise ValueError("not plain data")
    return data
"""}),
    Mutant("load_state_on/float-everything", {"q4_load_state_on_answer": """
def load_state_on(path, device):
    state = torch.load(path, map_location=device, weights_only=True)
    return {k: v.float() for k, v in state.items()}
"""}),
    Mutant("save_checkpoint/model-to-cpu-string", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model.to("cpu").state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
"""}),
    Mutant("save_checkpoint/extra-key", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config), "saved_to": Path(path)}, path)
"""}),
    Mutant("save_checkpoint/model-put-in-training", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    model.train()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
"""}),
    Mutant("save_checkpoint/eval-then-train", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    model.eval()
    state = model.state_dict()
    model.train()
    torch.save({"model": state, "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
"""}),  # a model handed over in evaluation mode comes back training
    Mutant("save_checkpoint/optimizer-state-moved-to-cpu", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    for state in optimizer.state.values():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                state[key] = value.cpu()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
"""}),  # the caller's optimiser left with its momentum on the cpu, its parameters on the accelerator
    Mutant("load_untrusted/dict-or-list-only", {"q3_load_untrusted_answer": """
import pickle
def load_untrusted(path):
    try:
        data = torch.load(path, weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(f"refusing {path}: {error}") from None
    if not isinstance(data, (dict, list)):
        raise ValueError(f"{path} does not hold a checkpoint")
    return data
"""}),  # a file holding one tensor is plain data too
    Mutant("load_state_on/module-prefix-stripped", {"q4_load_state_on_answer": """
def load_state_on(path, device):
    state = torch.load(path, map_location=device, weights_only=True)
    return {name.removeprefix("module."): tensor for name, tensor in state.items()}
"""}),
    Mutant("load_state_on/cuda0-mapped-only", {"q4_load_state_on_answer": """
def load_state_on(path, device):
    state = torch.load(path, map_location={"cuda:0": "cpu"}, weights_only=True)
    return {name: tensor.to(device) for name, tensor in state.items()}
"""}),  # a file saved on another GPU than the first still asks for it
    Mutant("save_checkpoint/top-mode-restored-as-attribute", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    was_training = model.training
    model.eval()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
    model.training = was_training
"""}),  # the model's own flag put back, its layers left in evaluation mode
    Mutant("save_checkpoint/grad-mode-switched-on-after", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    torch.set_grad_enabled(False)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
    torch.set_grad_enabled(True)
"""}),  # grad mode left on, whatever it was
    Mutant("save_checkpoint/unfreezes-after-saving", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    model.requires_grad_(False)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch),
                "config": dataclasses.asdict(config)}, path)
    model.requires_grad_(True)
"""}),  # a frozen layer comes back trainable
    Mutant("save_checkpoint/epoch-kept-on-config", {"q1_save_checkpoint_answer": """
def save_checkpoint(path, model, optimizer, epoch, config):
    config.epoch = int(epoch)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": config.epoch,
                "config": dataclasses.asdict(config)}, path)
"""}),  # the caller's config object gains an attribute
    Mutant("load_checkpoint/grad-mode-switched-on-after", load_checkpoint("""
    torch.set_grad_enabled(False)
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = make_model()
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    torch.set_grad_enabled(True)
    return model, optimizer, checkpoint["epoch"], checkpoint["config"]""")),  # grad mode left on, whatever it was
    Mutant("load_untrusted/grad-mode-switched-off", {"q3_load_untrusted_answer": """
import pickle
def load_untrusted(path):
    torch.set_grad_enabled(False)  # loading needs no graph
    try:
        return torch.load(path, weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(f"refusing {path}: {error}") from None
"""}),
    Mutant("load_state_on/grad-mode-switched-on-after", {"q4_load_state_on_answer": """
def load_state_on(path, device):
    torch.set_grad_enabled(False)
    state = torch.load(path, map_location=device, weights_only=True)
    torch.set_grad_enabled(True)
    return state
"""}),  # grad mode left on, whatever it was
]


# Generated mutants whose code shows another misconception than their operator's default:
# {name: (misconception, why)} (tests/mutation.py, all_mutants).
RELABELLED = {
    "q2_load_checkpoint_answer/drop-to-device#1": ("", "the model, not a batch, is left on the cpu: "
                                                   "a slip with no entry in the catalogue"),
}
