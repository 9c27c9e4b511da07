"""Checkpoint files for grading unit 07, made on any machine.

write_payload_checkpoint: a checkpoint whose unpickling runs a function, as a malicious file
    would; the function here only counts its calls (PAYLOAD_RAN), so a grader can prove a
    loader never ran it.
retag_device: a copy of a checkpoint that says its tensors were saved on another device
    (say cuda:0), so loading it on a CPU-only grader needs map_location."""
import zipfile

import torch

PAYLOAD_RAN = {"count": 0}


def payload() -> None:
    """What a malicious checkpoint would run on load. This one only counts."""
    PAYLOAD_RAN["count"] += 1


class _RunsOnLoad:
    def __reduce__(self):
        return payload, ()  # unpickling calls payload(): the whole attack, minus the harm


def write_payload_checkpoint(path, weights=None) -> None:
    """A checkpoint with real weights and an object whose unpickling runs payload()."""
    weights = {"weight": torch.zeros(2, 2)} if weights is None else weights
    torch.save({"model": weights, "extra": _RunsOnLoad()}, path)


def retag_device(path, out_path, location: str = "cuda:0") -> None:
    """Copy checkpoint `path` to `out_path`, its CPU tensors marked as saved on `location`.
    torch.save records each storage's device as a short string in data.pkl; only that
    string changes, so the data and every other record stay byte for byte the same."""
    old = b"X\x03\x00\x00\x00cpu"  # the pickled string 'cpu' (BINUNICODE, 4-byte length)
    new = b"X" + len(location).to_bytes(4, "little") + location.encode()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out_path, "w", zipfile.ZIP_STORED) as target:
        for name in source.namelist():
            data = source.read(name)
            if name.endswith("/data.pkl"):
                if old not in data:
                    raise ValueError(f"{path}: no CPU storage to retag")
                data = data.replace(old, new)
            target.writestr(name, data)
