"""Checkpoint files for grading unit 07, made on any machine.

write_payload_checkpoint: a checkpoint whose unpickling runs a function, as a malicious file
    would; the payload is the course's one harmless payload (utils.unsafe_pickle: it raises a
    flag and prints a line), and PAYLOAD_RAN["count"] says how many times it ran, so a grader can
    prove a loader never ran it.
retag_device: a copy of a checkpoint that says its tensors were saved on another device
    (say cuda:0), so loading it on a CPU-only grader needs map_location."""
import zipfile
from collections.abc import Mapping

import torch

from utils import unsafe_pickle


class _RunCount(Mapping):
    """{"count": runs so far}, read live from utils.unsafe_pickle.FLAG: the name graded notebooks use."""

    def __getitem__(self, key):
        if key != "count":
            raise KeyError(key)
        return unsafe_pickle.FLAG["calls"]

    def __iter__(self):
        return iter(("count",))

    def __len__(self):
        return 1


PAYLOAD_RAN = _RunCount()


def write_payload_checkpoint(path, weights=None) -> None:
    """A checkpoint with real weights (`weights`, or a 2x2 of zeros) and an object whose unpickling
    runs the payload."""
    weights = {"weight": torch.zeros(2, 2)} if weights is None else weights
    unsafe_pickle.write_payload_checkpoint(path, state={"model": weights})


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
