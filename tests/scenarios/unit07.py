"""Scripted submissions for assignment 07_checkpoints (see unit01.py)."""
from scenarios import Scenario

ASSIGNMENT = "07_checkpoints"
NOTEBOOK = "07_checkpoints.ipynb"

SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_save_checkpoint_answer": '''
def save_checkpoint(path, model, optimizer, epoch, config):
    checkpoint = dict(model=model.state_dict(), optimizer=optimizer.state_dict(), epoch=epoch, config=dict(vars(config)))
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
    }, loses={"q2_load_checkpoint_tests"}, says=["Pitfall: an optimiser built on the old model's parameters"]),
    Scenario("unsafe_load", answers={
        "q3_load_untrusted_answer": '''
def load_untrusted(path):
    checkpoint = torch.load(path, weights_only=False)
    if not isinstance(checkpoint, dict):
        raise ValueError("not a checkpoint dict")
    return checkpoint
''',
    }, loses={"q3_load_untrusted_tests"}, says=["Pitfall: weights_only=False on an untrusted file"]),
    Scenario("quiz_wrong", answers={"quiz_q3_answer": 'q3 = "b"\n'}, loses={"quiz_q3_tests"}),
]
