"""A checkpoint that runs code when it is unpickled: a HARMLESS one, for the lesson and the tests.

Pickle does not store objects; it stores instructions for rebuilding them, and one instruction is
"call this function with these arguments". Any class can choose that function through
`__reduce__`, so a file can make the loader call anything importable. Loading with
`torch.load(path, weights_only=False)` (or `pickle.load`) follows the instructions; the default
`weights_only=True` refuses every function outside its allowlist before calling anything.

Everything this module builds is harmless by construction: the payload only sets a flag in the
module-level dict FLAG and prints one line. It touches no file, no environment variable, no
network, and writes nothing but the one file you ask for.

    FLAG                                      # {"ran": False, "calls": 0, "message": None}
    reset_flag()                              # back to that
    write_payload_checkpoint(path)            # a torch.save file whose payload calls raise_flag
    write_payload_checkpoint(path, via="print")   # ... calls builtins.print instead
    write_payload_checkpoint(path, via="exec")    # ... calls builtins.exec on a fixed line
    write_payload_checkpoint(path, state={"model": weights})   # ... around weights of your own
    write_payload_pickle(path)                # the same payload as a bare pickle (pickle.dump)
    PAYLOAD_GLOBALS[via]                      # the global each variant makes the loader call

A real attacker would name `os.system` or `builtins.exec` with their own code where we name
`raise_flag`; the inspector in utils.checkpoint_inspector reports the global either way without
running it. The graders' payload file (autograder.checkpoints) is built here too, and counts its
runs in FLAG["calls"]."""
import pickle
from pathlib import Path

import torch

MESSAGE = "payload ran"

# What the payload changes: this dict and nothing else (plus one printed line).
FLAG: dict = {"ran": False, "calls": 0, "message": None}


def reset_flag() -> None:
    """Put FLAG back to "never ran"."""
    FLAG.update(ran=False, calls=0, message=None)


def raise_flag(message: str = MESSAGE) -> str:
    """The payload: record that it ran, print one line, return the message (which the loader keeps)."""
    FLAG["ran"] = True
    FLAG["calls"] += 1
    FLAG["message"] = message
    print(message)
    return message


# The one line the exec variant runs: it imports this module and raises the flag. Fixed, so this
# module never writes caller-supplied code into a file.
EXEC_SOURCE = f"import utils.unsafe_pickle as m; m.raise_flag({MESSAGE + ' (through exec)'!r})"


class Payload:
    """Pickles as "call utils.unsafe_pickle.raise_flag(message)": unpickling it runs raise_flag."""

    def __init__(self, message: str = MESSAGE):
        self.message = str(message)

    def __reduce__(self):
        return (raise_flag, (self.message,))


class PrintPayload:
    """Pickles as "call print(message)": the smallest visible payload (no flag, only a printed line)."""

    def __init__(self, message: str = MESSAGE):
        self.message = str(message)

    def __reduce__(self):
        return (print, (self.message,))


class ExecPayload:
    """Pickles as "call exec(EXEC_SOURCE, {})": the shape of a real attack, with a harmless line."""

    def __reduce__(self):
        return (exec, (EXEC_SOURCE, {}))


PAYLOADS = {"flag": Payload, "print": PrintPayload, "exec": ExecPayload}
PAYLOAD_GLOBALS = {"flag": "utils.unsafe_pickle.raise_flag", "print": "builtins.print",
                   "exec": "builtins.exec"}


def payload(via: str = "flag", message: str = MESSAGE):
    """An object whose unpickling calls raise_flag ("flag"), print ("print") or exec ("exec")."""
    if via not in PAYLOADS:
        raise ValueError(f"via must be one of {sorted(PAYLOADS)}, got {via!r}")
    return ExecPayload() if via == "exec" else PAYLOADS[via](message)


def innocent_looking_state() -> dict:
    """What the file seems to hold: a small model's weights, an epoch and a config, all plain."""
    layer = torch.nn.Linear(4, 2)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(8.0).reshape(2, 4) / 10)
        layer.bias.zero_()
    return {"model": layer.state_dict(), "epoch": 3, "config": {"lr": 0.01, "hidden": 4}}


def write_payload_checkpoint(path, via: str = "flag", message: str = MESSAGE, *, state: dict | None = None) -> Path:
    """torch.save a normal-looking checkpoint with the payload under the key "note"; return the path.

    The file holds {"model": a Linear(4, 2) state_dict, "epoch": 3, "config": {...}, "note": payload},
    or `state` plus the note (the grader puts a student's own weights there).
    torch.load(path) refuses it (weights_only=True) without calling anything; torch.load(path,
    weights_only=False) calls the payload and returns the dict with note = what the payload returned."""
    path = Path(path)
    state = innocent_looking_state() if state is None else state
    torch.save({**state, "note": payload(via, message)}, path)
    return path


def write_payload_pickle(path, via: str = "flag", message: str = MESSAGE) -> Path:
    """The same content written with plain pickle.dump (not torch.save): what a bare .pkl "checkpoint" is.

    The weights are stored as nested lists (a pickled tensor would bring torch's own rebuild
    functions into the file); the payload is the same. torch.load refuses the file either way
    (it is not a torch.save file), but with weights_only=False it unpickles it first, so the
    payload runs before the "Invalid magic number" error."""
    path = Path(path)
    state = innocent_looking_state()
    state["model"] = {key: value.tolist() for key, value in state["model"].items()}
    with open(path, "wb") as f:
        pickle.dump({**state, "note": payload(via, message)}, f, protocol=2)
    return path
