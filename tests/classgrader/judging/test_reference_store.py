"""reference_store: a kept reference reads back as it was, only when everything it depends on is
the same; one that is incomplete, torn or not a file of its own is never used."""
import fcntl
import os

import pytest
import torch

from classgrader.judging.reference_run import Reference
from classgrader.judging.reference_store import Store, digest

SETTINGS = {"timeout": 5, "sandbox": True, "limits": {}, "reference_timeouts": 6}


def a_reference(**changes) -> Reference:
    fields = {"outside": {"q1_tests", "q4_tests"},
              "records": {"q2_tests": [{"kind": "tensor", "got": torch.arange(3.0), "expected": float("nan")}]},
              "shadows": {"q2_tests": (["check_tensor x"], ["ValueError: no"])}, "incomplete": {}}
    return Reference(**{**fields, **changes})


def test_a_kept_reference_reads_back_as_it_was(tmp_path):
    store = Store(str(tmp_path / "references"), "k1")
    with store.locked():
        assert store.load() is None
        assert store.save(a_reference())
    back = Store(str(tmp_path / "references"), "k1").load()
    assert back.outside == {"q1_tests", "q4_tests"}
    assert back.shadows == {"q2_tests": (["check_tensor x"], ["ValueError: no"])}
    record = back.records["q2_tests"][0]
    assert torch.equal(record["got"], torch.arange(3.0)) and record["expected"] != record["expected"]
    assert back.incomplete == {}


def test_an_incomplete_reference_is_never_kept(tmp_path):
    store = Store(str(tmp_path), "k2")
    assert not store.save(a_reference(incomplete={"q3_tests": "the solution's test ended with TimeoutError"}))
    assert store.load() is None and not os.path.exists(store.path)


def test_what_is_not_a_kept_reference_is_not_used(tmp_path):
    store = Store(str(tmp_path), "k3")
    (tmp_path / "k3.pt").write_bytes(b"torn")
    assert store.load() is None
    os.remove(store.path)
    torch.save({"format": "something else"}, store.path)
    assert store.load() is None
    os.remove(store.path)
    Store(str(tmp_path), "elsewhere").save(a_reference())
    os.symlink(tmp_path / "elsewhere.pt", store.path)
    assert store.load() is None  # a link is not followed, even to a good one


def test_the_digest_changes_with_everything_a_reference_depends_on(tmp_path):
    config = tmp_path / "nbgrader_config.py"
    config.write_text("c.Execute.timeout = 5\n")
    first = digest(b"source", str(config), SETTINGS)
    assert digest(b"source", str(config), dict(SETTINGS)) == first
    assert digest(b"source!", str(config), SETTINGS) != first
    assert digest(b"source", str(config), {**SETTINGS, "timeout": 6}) != first
    config.write_text("c.Execute.timeout = 6\n")
    assert digest(b"source", str(config), SETTINGS) != first


def test_one_worker_at_a_time_looks_for_and_makes_a_reference(tmp_path):
    store = Store(str(tmp_path), "k4")
    with store.locked():
        other = os.open(tmp_path / "k4.lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another worker waits here
        finally:
            os.close(other)
    other = os.open(tmp_path / "k4.lock", os.O_RDWR)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and gets it once the first is done
    finally:
        os.close(other)
