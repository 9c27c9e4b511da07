"""The checkpoint reader: what a file holds and needs, read without ever running the file.

Covers inspect_checkpoint on state_dict checkpoints (nested model + optimiser + epoch + config;
every tensor's shape, dtype, device and bytes checked against what torch.load really returns), a
whole pickled module, dataclass / Namespace / NumPy configs (unsafe, named, and safe inside
safe_globals), the harmless payload files of utils.unsafe_pickle (the dangerous global is
reported and the payload's flag stays unset; loading with weights_only=False sets it, so the
check is not vacuous), globals in modules that are never imported, protocol-4, legacy and bare-
pickle files, shared storages and cycles, sizes a file cannot back up, unreadable files; the
prediction loads_with_weights_only against torch.load itself and the unsafe list against
get_unsafe_globals_in_checkpoint. (How the report is drawn: test_checkpoint_inspector.py.)"""
import argparse
import dataclasses
import pickle
import sys
import zipfile

import numpy as np
import pytest
import torch
from torch import nn
from torch.serialization import get_unsafe_globals_in_checkpoint, safe_globals

from autograder.checkpoints import retag_device
from utils import unsafe_pickle
from utils.checkpoint_reader import MAX_DEPTH, MAX_ENTRIES, WEIGHTS_ONLY_OPCODES, allowed_globals, inspect_checkpoint


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        return self.fc(x)


@dataclasses.dataclass
class TrainConfig:
    lr: float = 0.01
    hidden: int = 8


def qualified(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


pytestmark = pytest.mark.usefixtures("fresh_flag")   # tests/utils/conftest.py


def trained_checkpoint():
    torch.manual_seed(0)
    model = TinyNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
    return {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 7,
            "config": {"lr": 0.1, "hidden": 3, "name": "tiny", "layers": [4, 3]}}


def walk_tensors(obj, prefix=()):
    """(key path, tensor) for every tensor in a loaded dict/list tree."""
    if isinstance(obj, torch.Tensor):
        yield ".".join(prefix), obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk_tensors(v, (*prefix, str(k)))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from walk_tensors(v, (*prefix, str(i)))


def test_state_dict_checkpoint_matches_what_torch_loads(tmp_path, covered):
    path = tmp_path / "ckpt.pt"
    torch.save(trained_checkpoint(), path)
    r = inspect_checkpoint(path)
    assert (r.format, r.protocol, r.error, r.unsafe_globals, r.reasons) == ("zip", 2, None, (), ())
    assert r.loads_with_weights_only and r.safe
    loaded = torch.load(path)                                       # weights_only=True: nothing to run
    tensors = dict(walk_tensors(loaded))
    assert {e.key for e in r.entries() if e.kind == "tensor"} == set(tensors)
    for key, t in tensors.items():
        e = r.entry(key)
        assert (e.shape, e.dtype, e.device, e.nbytes) == (tuple(t.shape), str(t.dtype), "cpu", t.nbytes), key
        assert e.stride == t.stride() and e.safe
    w = r.entry("model.fc.weight")
    assert (w.shape, w.dtype, w.nbytes, w.type_name, w.requires_grad) == ((3, 4), "torch.float32", 48, "Tensor", False)
    assert r.entry("model.calls").dtype == "torch.int64" and r.entry("model.calls").shape == ()
    assert r.entry("optimizer.state.0.momentum_buffer").shape == (3, 4)
    assert r.entry("model").type_name == "OrderedDict" and r.entry("model").kind == "dict"
    assert (r.entry("epoch").kind, r.entry("epoch").value) == ("int", "7")
    assert (r.entry("config.lr").kind, r.entry("config.name").value) == ("float", "'tiny'")
    assert r.entry("config.layers").kind == "list" and r.entry("config.layers.1").value == "3"
    assert r.entry("optimizer.param_groups.0.momentum").value == "0.9"
    assert r.tensor_count == len(tensors) == 5
    assert r.total_bytes == sum(t.untyped_storage().nbytes() for t in tensors.values())
    assert [s.record_bytes for s in r.storages] == [s.nbytes for s in r.storages] and not r.problems
    assert {g.name for g in r.globals} <= allowed_globals()
    assert r.keys()[0] == "" and r.root.kind == "dict" and r.root.length == 4
    covered(f"inspector: state_dict checkpoint, {len(tensors)} tensors' shape/dtype/device/bytes vs torch.load")


def test_whole_pickled_module_is_reported_unsafe(tmp_path):
    path = tmp_path / "whole.pt"
    torch.save(TinyNet(), path)
    r = inspect_checkpoint(path)
    assert r.unsafe_globals == (qualified(TinyNet), "torch.nn.modules.linear.Linear")
    assert not r.loads_with_weights_only
    assert r.root.kind == "object" and r.root.global_name == qualified(TinyNet) and not r.root.safe
    assert r.root.built_by == "instance"
    p = r.entry("_modules.fc._parameters.weight")
    assert (p.kind, p.type_name, p.shape, p.requires_grad) == ("tensor", "Parameter", (3, 4), True)
    assert r.entry("_buffers.calls").dtype == "torch.int64"
    assert r.entry("_modules.fc").global_name == "torch.nn.modules.linear.Linear"
    with pytest.raises(pickle.UnpicklingError, match=f"Unsupported global: GLOBAL {qualified(TinyNet)} "
                                                    "was not an allowed global by default"):
        torch.load(path)


@pytest.mark.parametrize(("config", "names"), [
    (TrainConfig(), [qualified(TrainConfig)]),
    (argparse.Namespace(lr=0.01, hidden=8), ["argparse.Namespace"]),
    (np.float64(0.5), ["numpy._core.multiarray.scalar", "numpy.dtype"]),
], ids=["dataclass", "namespace", "numpy-scalar"])
def test_configs_that_weights_only_refuses_are_named(tmp_path, config, names):
    path = tmp_path / "cfg.pt"
    torch.save({"model": nn.Linear(2, 1).state_dict(), "epoch": 1, "config": config}, path)
    r = inspect_checkpoint(path)
    assert sorted(r.unsafe_globals) == sorted(names) == sorted(get_unsafe_globals_in_checkpoint(path))
    assert not r.loads_with_weights_only and r.entry("config").kind == "object"
    assert not r.entry("config").safe and r.entry("model.weight").safe
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torch.load(path)


def test_allowlisted_config_is_safe_inside_safe_globals(tmp_path):
    path = tmp_path / "cfg.pt"
    torch.save({"config": TrainConfig(lr=0.5)}, path)
    assert not inspect_checkpoint(path).loads_with_weights_only
    with safe_globals([TrainConfig]):
        r = inspect_checkpoint(path)
        assert r.loads_with_weights_only and r.unsafe_globals == () and r.entry("config").safe
        assert r.entry("config.lr").value == "0.5"
        assert torch.load(path)["config"] == TrainConfig(lr=0.5)
    assert not inspect_checkpoint(path).loads_with_weights_only          # the context is over


def test_inspector_never_unpickles(tmp_path, monkeypatch):
    path = unsafe_pickle.write_payload_checkpoint(tmp_path / "payload.pt")

    def forbidden(*args, **kwargs):
        raise AssertionError("the inspector tried to unpickle the file")
    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, forbidden)
    monkeypatch.setattr(torch, "load", forbidden)
    monkeypatch.setattr(torch.serialization, "load", forbidden)
    r = inspect_checkpoint(path)
    assert r.unsafe_globals == ("utils.unsafe_pickle.raise_flag",)
    assert unsafe_pickle.FLAG == {"ran": False, "calls": 0, "message": None}


@pytest.mark.parametrize("via", ["flag", "exec"])
def test_payload_is_reported_and_never_runs_until_loaded_unsafely(tmp_path, via, capsys, covered):
    path = unsafe_pickle.write_payload_checkpoint(tmp_path / f"{via}.pt", via=via)
    assert unsafe_pickle.FLAG["ran"] is False                       # writing it ran nothing
    r = inspect_checkpoint(path)
    name = unsafe_pickle.PAYLOAD_GLOBALS[via]
    assert r.unsafe_globals == (name,) and not r.loads_with_weights_only
    assert [(g.name, g.safe, g.count) for g in r.globals if not g.safe] == [(name, False, 1)]
    note = r.entry("note")
    assert (note.kind, note.global_name, note.safe, note.built_by) == ("object", name, False, "call")
    assert r.entry("model.weight").shape == (2, 4) and r.entry("epoch").value == "3"
    assert unsafe_pickle.FLAG["ran"] is False                       # inspecting ran nothing
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torch.load(path)                                            # the default refuses ...
    assert unsafe_pickle.FLAG["ran"] is False                       # ... without running it
    assert capsys.readouterr().out == ""
    loaded = torch.load(path, weights_only=False)                   # the positive control: it is real
    assert unsafe_pickle.FLAG["ran"] is True and unsafe_pickle.FLAG["calls"] == 1
    assert "payload ran" in capsys.readouterr().out
    assert loaded["epoch"] == 3 and loaded["model"]["weight"].shape == (2, 4)
    if via == "flag":
        assert loaded["note"] == "payload ran"
    covered(f"inspector: {via} payload named ({name}); flag unset after inspect and refused load, "
            "set after weights_only=False")


def test_print_payload_and_bare_pickle(tmp_path, capsys):
    r = inspect_checkpoint(unsafe_pickle.write_payload_checkpoint(tmp_path / "p.pt", via="print"))
    assert r.unsafe_globals == ("builtins.print",) and r.entry("note").value == "builtins.print('payload ran')"
    bare = unsafe_pickle.write_payload_pickle(tmp_path / "bare.pkl")
    r = inspect_checkpoint(bare)
    assert (r.format, r.unsafe_globals, r.loads_with_weights_only) == (
        "pickle", ("utils.unsafe_pickle.raise_flag",), False)
    assert r.entry("model.weight.1.3").kind == "float" and "bare pickle" in r.reasons[0]
    with pytest.raises(pickle.UnpicklingError):
        torch.load(bare)
    assert unsafe_pickle.FLAG["ran"] is False and capsys.readouterr().out == ""
    # torch.load(weights_only=False) reads the first pickle as its "magic number": it runs the payload
    # and only then says the file is corrupt
    with pytest.raises(RuntimeError, match="Invalid magic number"):
        torch.load(bare, weights_only=False)
    assert unsafe_pickle.FLAG["ran"] is True


def hand_made_checkpoint(path, data_pkl: bytes, records=None):
    """A zip laid out like torch.save's, around a pickle written byte by byte (never by pickling)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", data_pkl)
        for key, blob in (records or {}).items():
            zf.writestr(f"archive/data/{key}", blob)
        zf.writestr("archive/version", "3\n")
    return path


def test_globals_are_named_not_imported(tmp_path):
    # GLOBAL never_imported_xyz.boom ; 'hi' ; TUPLE1 ; REDUCE ; STOP: "call boom('hi')"
    path = hand_made_checkpoint(tmp_path / "x.pt", b"\x80\x02cnever_imported_xyz\nboom\nX\x02\x00\x00\x00hi\x85R.")
    r = inspect_checkpoint(path)
    assert r.unsafe_globals == ("never_imported_xyz.boom",) and "never_imported_xyz" not in sys.modules
    assert r.root.value == "never_imported_xyz.boom('hi')"
    assert get_unsafe_globals_in_checkpoint(path) == ["never_imported_xyz.boom"]
    # os.system is refused even when someone allowlisted it: the os module is blocked outright
    path = hand_made_checkpoint(tmp_path / "os.pt", b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00true\x85R.")
    with safe_globals([(print, "os.system")]):
        assert "os.system" in allowed_globals()
        assert inspect_checkpoint(path).unsafe_globals == ("os.system",)
        with pytest.raises(pickle.UnpicklingError, match="whose module os is blocked"):
            torch.load(path)


def test_sizes_the_file_cannot_back_up_are_reported_without_loading(tmp_path):
    # a tensor of 10**12 floats whose record holds 48 bytes: read the claim, allocate nothing
    numel = 10**12
    long1 = b"\x8a" + bytes([len(pickle.encode_long(numel))]) + pickle.encode_long(numel)
    pkl = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(("
           b"X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
           + long1 + b"tQK\x00" + long1
           + b"\x85K\x01\x85\x89ccollections\nOrderedDict\n)Rtq\x00R.")
    r = inspect_checkpoint(hand_made_checkpoint(tmp_path / "big.pt", pkl, {"0": bytes(48)}))
    assert r.root.kind == "tensor" and r.root.shape == (numel,) and r.root.nbytes == 4 * numel
    assert r.total_bytes == 4 * numel and r.loads_with_weights_only      # weights_only does not check sizes
    assert r.problems == (f"storage 0 claims {4 * numel:,} bytes but the file holds only 48",)


def test_protocol_4_is_read_and_predicted_to_fail(tmp_path):
    path = tmp_path / "p4.pt"
    torch.save({"w": torch.ones(2, 3), "name": "x"}, path, pickle_protocol=4)
    r = inspect_checkpoint(path)
    assert r.protocol == 4 and r.unsafe_globals == () and r.entry("w").shape == (2, 3)
    assert set(r.unsupported_opcodes) >= {"FRAME", "STACK_GLOBAL"} and not r.loads_with_weights_only
    with pytest.raises(pickle.UnpicklingError, match="Unsupported operand"):
        get_unsafe_globals_in_checkpoint(path)                          # torch's lister gives up here
    with pytest.warns(UserWarning, match="protocol 4"), pytest.raises(pickle.UnpicklingError):
        torch.load(path)


def test_legacy_format_meta_and_new_dtypes(tmp_path):
    path = tmp_path / "legacy.pt"
    base = torch.arange(10.0)
    torch.save({"w": torch.ones(2, 3), "view": base[2:5]}, path, _use_new_zipfile_serialization=False)
    r = inspect_checkpoint(path)
    assert r.format == "legacy" and r.loads_with_weights_only and torch.load(path)["view"].tolist() == [2, 3, 4]
    assert r.entry("view").nbytes == 12 and r.total_bytes == 24 + 40     # the whole storage is saved
    path = tmp_path / "meta.pt"
    torch.save({"m": torch.ones(5, device="meta"), "u": torch.ones(3, dtype=torch.uint16),
                "h": torch.ones(2, dtype=torch.bfloat16), "b": torch.ones(4, dtype=torch.bool)}, path)
    r = inspect_checkpoint(path)
    assert (r.entry("m").device, r.entry("m").dtype, r.entry("m").storage) == ("meta", "torch.float32", None)
    assert [(r.entry(k).dtype, r.entry(k).nbytes) for k in "uhb"] == [
        ("torch.uint16", 6), ("torch.bfloat16", 4), ("torch.bool", 4)]
    assert r.total_bytes == 14 and r.loads_with_weights_only


def test_reports_the_device_the_file_records(tmp_path):
    cpu_file, gpu_file = tmp_path / "cpu.pt", tmp_path / "gpu.pt"
    torch.save({"w": torch.ones(2, 3), "b": torch.zeros(3)}, cpu_file)
    retag_device(cpu_file, gpu_file, "cuda:0")                      # only the location strings change
    r = inspect_checkpoint(gpu_file)
    assert [(r.entry(k).device, r.entry(k).shape) for k in "wb"] == [("cuda:0", (2, 3)), ("cuda:0", (3,))]
    assert {s.device for s in r.storages} == {"cuda:0"}
    assert torch.load(gpu_file, map_location="cpu")["w"].shape == (2, 3)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            torch.load(gpu_file)


def test_shared_storage_and_repeated_objects(tmp_path):
    base = torch.arange(12.0)
    shared = {"all": base, "first_row": base[:4], "tied": base}
    looped: list = [1]
    looped.append(looped)
    path = tmp_path / "shared.pt"
    torch.save({"t": shared, "loop": looped, "again": shared}, path)
    r = inspect_checkpoint(path)
    assert r.entry("t.all").storage == r.entry("t.first_row").storage and len(r.storages) == 1
    assert r.entry("t.first_row").nbytes == 16 and r.total_bytes == 48
    assert r.entry("t.tied").kind == "reference" and r.entry("t.tied").value == "same object as t.all"
    assert r.entry("loop.1").kind == "reference" and r.entry("again").value == "same object as t"
    assert r.loads_with_weights_only


def test_allowed_plain_types(tmp_path):
    path = tmp_path / "plain.pt"
    torch.save({"size": torch.Size([2, 3]), "dev": torch.device("cpu"), "dt": torch.float16,
                "s": {1, 2}, "c": 1 + 2j, "b": b"ab", "big": 2**70, "none": None, "t": (1, "x")}, path)
    r = inspect_checkpoint(path)
    kinds = {k: r.entry(k).kind for k in ("size", "dev", "dt", "s", "c", "b", "big", "none", "t")}
    assert kinds == {"size": "tuple", "dev": "device", "dt": "dtype", "s": "set", "c": "complex",
                     "b": "bytes", "big": "int", "none": "none", "t": "tuple"}
    assert (r.entry("dt").dtype, r.entry("dev").device, r.entry("size").value) == ("torch.float16", "cpu", "(2, 3)")
    assert r.entry("big").value == str(2**70) and r.loads_with_weights_only and torch.load(path)["c"] == 1 + 2j


@pytest.mark.parametrize("make", ["state", "module", "dataclass", "payload", "numpy-array"])
def test_prediction_agrees_with_torch(tmp_path, make):
    path = tmp_path / f"{make}.pt"
    obj = {"state": lambda: trained_checkpoint(), "module": lambda: nn.Sequential(nn.Linear(2, 2), nn.ReLU()),
           "dataclass": lambda: {"cfg": TrainConfig()}, "payload": lambda: {"x": unsafe_pickle.payload()},
           "numpy-array": lambda: {"a": np.zeros(3)}}[make]()
    torch.save(obj, path)
    r = inspect_checkpoint(path)
    assert sorted(r.unsafe_globals) == sorted(get_unsafe_globals_in_checkpoint(path))
    try:
        torch.load(path)
        loaded = True
    except pickle.UnpicklingError:
        loaded = False
    assert r.loads_with_weights_only is loaded and unsafe_pickle.FLAG["ran"] is False


def test_unreadable_files_are_reported_not_raised(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a checkpoint\n")
    r = inspect_checkpoint(text)
    assert r.error is not None and not r.loads_with_weights_only and r.root is None
    assert r.format == "unknown" and r.reasons[-1].startswith("it cannot be read as a checkpoint (")
    empty_zip = tmp_path / "empty.pt"
    zipfile.ZipFile(empty_zip, "w").close()
    assert inspect_checkpoint(empty_zip).error is not None
    broken = inspect_checkpoint(hand_made_checkpoint(tmp_path / "broken.pt", b"\x80\x02K\x01"))   # no STOP
    assert (broken.format, broken.protocol, broken.root) == ("zip", 2, None) and "STOP" in broken.error
    with pytest.raises(FileNotFoundError):
        inspect_checkpoint(tmp_path / "missing.pt")
    assert "STACK_GLOBAL" not in WEIGHTS_ONLY_OPCODES and "GLOBAL" in WEIGHTS_ONLY_OPCODES


def test_big_and_deep_files_are_cut_short_but_counted(tmp_path):
    base = torch.arange(4200.0)
    many = {f"t{i}": base[2 * i:2 * i + 2] for i in range(2100)}     # 2100 views of one storage
    torch.save({"many": many, "after": 1}, tmp_path / "big.pt")
    r = inspect_checkpoint(tmp_path / "big.pt")
    assert r.truncated and MAX_ENTRIES <= len(r.entries()) <= MAX_ENTRIES + 3 and r.loads_with_weights_only
    assert r.tensor_count == 2100 and r.total_bytes == 4200 * 4 and len(r.storages) == 1   # all counted
    assert r.entry("many....").value.endswith("more not shown")
    deep: list = []
    inner = deep
    for _ in range(150):
        inner.append([])
        inner = inner[0]
    torch.save({"deep": deep, "wide": tuple(range(50))}, tmp_path / "deep.pt")
    r = inspect_checkpoint(tmp_path / "deep.pt")
    assert r.truncated and max(e.depth for e in r.entries()) == MAX_DEPTH + 1
    assert any(e.value == f"nested more than {MAX_DEPTH} levels deep" for e in r.entries())
    assert r.entry("wide").value == "(0, 1, 2, 3, 4, 5, 6, 7, ...)" and r.entry("wide").length == 50
