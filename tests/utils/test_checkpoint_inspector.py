"""The checkpoint inspector's view: a report drawn as HTML, the widget, the command line.

Covers report_html's data- hooks (per entry, per global, the verdict) on real files: a state
checkpoint, a whole pickled module, a payload file, a file retagged to cuda:0, an unreadable file;
the problems and truncation notes on reports made to carry them; escaping of everything a file
chose; CheckpointInspector driven through its traitlets; and `python -m utils.checkpoint_inspector`.
(What the report says about a file: test_checkpoint_reader.py.)"""
import dataclasses
import subprocess
import sys

import pytest
import torch
from torch import nn

from autograder.checkpoints import retag_device
from utils import unsafe_pickle
from utils.checkpoint_inspector import (
    CheckpointInspector,
    checkpoint_html,
    inspect_checkpoint,
    report_html,
    report_text,
)

pytestmark = pytest.mark.usefixtures("fresh_flag")   # tests/utils/conftest.py


def state_checkpoint(path):
    """A small resumable checkpoint: weights in a nested dict, an epoch, a config."""
    torch.save({"model": {"fc.weight": torch.ones(3, 4), "fc.bias": torch.zeros(3)}, "epoch": 7,
                "config": {"lr": 0.1, "layers": [4, 3]}}, path)
    return path


def test_html_has_stable_hooks_and_escapes_what_the_file_says(tmp_path):
    page = checkpoint_html(state_checkpoint(tmp_path / "ckpt.pt"))
    assert '<div class="checkpoint-inspector" data-safe="true"' in page
    assert ('<tr data-key="model.fc.weight" data-kind="tensor" data-shape="3, 4" '
            'data-dtype="torch.float32" data-bytes="48" data-device="cpu"') in page
    assert '<td style="padding:2px 8px;text-align:left;border-bottom:1px solid #ddd">(3,)</td>' in page   # fc.bias
    assert '<tr data-key="epoch" data-kind="int"' in page and "unsafe-global" not in page
    assert "<script" not in page and "http" not in page
    evil = tmp_path / "evil.pt"
    torch.save({"<img src=x onerror=alert(1)>": torch.ones(1), "s": '"><script>alert(1)</script>'}, evil)
    page = checkpoint_html(evil)
    assert "<img" not in page and "<script" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_html_names_what_a_file_needs(tmp_path):
    payload = checkpoint_html(unsafe_pickle.write_payload_checkpoint(tmp_path / "payload.pt"))
    name = unsafe_pickle.PAYLOAD_GLOBALS["flag"]
    assert f'<li class="unsafe-global" data-global="{name}" data-count="1">' in payload
    assert 'data-safe="false"' in payload and "would <b>refuse</b>" in payload
    assert (f'data-kind="object" data-shape="" data-dtype="" data-bytes="" data-device="" data-depth="1" '
            f'data-safe="false" data-global="{name}"') in payload and f"result of calling {name}" in payload
    torch.save(nn.Linear(2, 1), tmp_path / "whole.pt")
    assert "instance of torch.nn.modules.linear.Linear" in checkpoint_html(tmp_path / "whole.pt")
    retag_device(state_checkpoint(tmp_path / "cpu.pt"), tmp_path / "gpu.pt")
    assert ('data-key="model.fc.weight" data-kind="tensor" data-shape="3, 4" data-dtype="torch.float32" '
            'data-bytes="48" data-device="cuda:0"') in checkpoint_html(tmp_path / "gpu.pt")
    assert unsafe_pickle.FLAG["ran"] is False                       # drawing ran nothing


def test_html_says_what_it_could_not_read_or_show(tmp_path):
    (tmp_path / "notes.txt").write_text("not a checkpoint\n")
    page = checkpoint_html(tmp_path / "notes.txt")
    assert 'data-safe="false"' in page and "could not be read" in page and "checkpoint-sizes" not in page
    report = inspect_checkpoint(state_checkpoint(tmp_path / "ckpt.pt"))
    assert "checkpoint-problem" not in report_html(report) and "checkpoint-truncated" not in report_html(report)
    worse = dataclasses.replace(report, problems=("storage 0 claims 4 bytes but the file holds only 1",),
                                truncated=True)
    page = report_html(worse)
    assert '<li class="checkpoint-problem">storage 0 claims 4 bytes but the file holds only 1</li>' in page
    assert '<p class="checkpoint-truncated">' in page


def test_widget_lists_a_folder_and_recomputes(tmp_path, covered):
    state_checkpoint(tmp_path / "a_state.pt")
    unsafe_pickle.write_payload_checkpoint(tmp_path / "b_payload.pt", via="exec")
    (tmp_path / ".hidden").write_text("x")
    w = CheckpointInspector(tmp_path)
    assert [label for label, _ in w.file_picker.options] == ["a_state.pt", "b_payload.pt"]
    assert w.children[1] is w.view and w.report.name == "a_state.pt"
    assert 'data-safe="true" data-file="a_state.pt"' in w.view.value
    w.file_picker.value = str(tmp_path / "b_payload.pt")
    assert 'data-safe="false" data-file="b_payload.pt"' in w.view.value
    assert '<li class="unsafe-global" data-global="builtins.exec"' in w.view.value
    assert w.report.unsafe_globals == ("builtins.exec",) and unsafe_pickle.FLAG["ran"] is False
    torch.save({"x": torch.ones(2)}, tmp_path / "c_new.pt")
    w.rescan()
    assert len(w.file_picker.options) == 3 and w.file_picker.value.endswith("b_payload.pt")
    w.rescan_button.click()
    w = CheckpointInspector(tmp_path / "c_new.pt")                  # a file: its folder, that file chosen
    assert w.file_picker.value == str(tmp_path / "c_new.pt") and 'data-key="x"' in w.view.value
    empty = tmp_path / "empty"
    empty.mkdir()
    w = CheckpointInspector(empty)
    assert w.file_picker.value is None and w.report is None and "No files" in w.view.value
    with pytest.raises(FileNotFoundError):
        CheckpointInspector(tmp_path / "nowhere")
    covered("checkpoint inspector widget: folder listing, file_picker -> view, rescan, empty folder")


def test_command_line_prints_the_report(tmp_path):
    path = unsafe_pickle.write_payload_checkpoint(tmp_path / "payload.pt", via="print")
    out = subprocess.run([sys.executable, "-m", "utils.checkpoint_inspector", str(path)],
                         capture_output=True, text=True, check=True).stdout
    assert out == report_text(inspect_checkpoint(path)) + "\n"
    lines = out.splitlines()
    assert lines[0] == "payload.pt: weights_only would refuse" and lines[1] == "(file): dict 4 items"
    assert "    model.weight: tensor (2, 4) torch.float32 32" in lines and "  model: dict 2 items" in lines
    assert "  note: object builtins.print('payload ran')" in lines and "  epoch: int 3" in lines
    assert lines[-1] == "  refuse: it names globals outside the weights_only allowlist: builtins.print"
