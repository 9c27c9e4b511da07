"""mirror: the test's own files around each call into the student's kernel."""
import errno
import os

import pytest

from answering import Student, error_of
from classgrader.in_kernel import answer_server
from classgrader.judging import mirror

# -- the test's own files: a checkpoint written or read by the student's function --------------
# The kernel's file system is its own: here, paths under another root stand for it.
SAVES_AND_LOADS = """
import torch
def save(path, value):
    torch.save({"value": value}, KERNEL_ROOT + str(path))

def load(path):
    return torch.load(KERNEL_ROOT + str(path), weights_only=True)["value"]
"""
FILES_TEST = """
import tempfile
from pathlib import Path
folder = Path(tempfile.mkdtemp())
save(folder / "a.pt", torch.arange(3))
check_tensor(torch.load(folder / "a.pt", weights_only=True)["value"], torch.arange(3), name="what save() wrote")
torch.save({"value": torch.ones(2)}, folder / "b.pt")
check_tensor(load(folder / "b.pt"), torch.ones(2), name="what load() read")
"""


def test_the_tests_files_are_mirrored_in_the_kernel_around_each_call(tmp_path, monkeypatch):
    kernel_tmp = tmp_path / "kernel"
    kernel_tmp.mkdir()
    student = Student(SAVES_AND_LOADS)
    student.namespace["KERNEL_ROOT"] = str(kernel_tmp)
    real_answer = answer_server._file

    def in_kernel(request):
        return real_answer({**request, "path": str(kernel_tmp) + str(request["path"])})
    monkeypatch.setattr(answer_server, "_file", in_kernel)
    assert error_of(student.judged(FILES_TEST, {"save", "load"})) is None
    assert [r["op"] for r in student.requests].count("fetch") == 2
    assert list(kernel_tmp.rglob("a.pt")) and list(kernel_tmp.rglob("b.pt"))


def test_a_file_the_kernel_sends_is_written_only_as_bytes_and_never_through_a_link(tmp_path):
    target, link = tmp_path / "elsewhere", tmp_path / "checkpoint.pt"
    target.write_bytes(b"untouched")
    link.symlink_to(target)
    with pytest.raises(OSError, match=rf"^\[Errno {errno.ELOOP}\]"):  # O_NOFOLLOW refuses the link
        mirror.take_file(str(link), b"forged")
    assert target.read_bytes() == b"untouched"
    mirror.take_file(str(tmp_path / "new.pt"), {"not": "bytes"})
    assert not (tmp_path / "new.pt").exists()
    mirror.take_file(str(tmp_path), [["../escape.pt", b"x"], ["ok.pt", b"y"]])
    assert not (tmp_path.parent / "escape.pt").exists() and (tmp_path / "ok.pt").read_bytes() == b"y"


def test_every_source_test_reads_files_as_data_only():
    """A test's shadow runs in the grader, on files the student's kernel wrote: each such read
    must run nothing (torch.load with weights_only=True; never pickle, never np.load with pickles)."""
    import json
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[3] / "source"
    notebooks = sorted(root.glob("*/*.ipynb"))
    assert len(notebooks) >= 8, root  # the course's assignments, not an empty folder
    for path in notebooks:
        for cell in json.loads(path.read_text())["cells"]:
            if not cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
                continue
            code = "".join(cell["source"])
            for call in re.findall(r"torch\.load\([^\n]*", code):
                assert "weights_only=True" in call, f"{path.name}: {call}"
            assert "pickle" not in code.replace("pickled", ""), path.name
            assert "allow_pickle=True" not in code, path.name


def test_only_folders_the_test_made_are_mirrored_never_a_path_the_student_names(tmp_path):
    secret = tmp_path / "secret.pt"
    secret.write_bytes(b"the grader's own file")
    student = Student("def where():\n    return " + repr(str(secret)) + "\ndef load(path):\n    return 0\n")
    outputs = student.judged("load(where())\nimport tempfile\nload(tempfile.mkdtemp() + '/mine.pt')", {"where", "load"})
    assert error_of(outputs) is None
    puts = [r for r in student.requests if r["op"] in ("put", "fetch")]
    assert puts and all("mine.pt" in str(r["path"]) for r in puts)  # never the path the student named
    assert secret.read_bytes() == b"the grader's own file"


def test_the_folders_a_test_made_go_when_it_ends():
    student = Student("def save(path):\n    pass\n")
    outputs = student.judged("import tempfile, pathlib\nfolder = tempfile.mkdtemp()\n"
                             "pathlib.Path(folder, 'sent.pt').write_bytes(b'x')\nsave(folder + '/sent.pt')\n"
                             "print(folder)", {"save"})
    assert error_of(outputs) is None
    folder = outputs[0].text.strip()
    assert folder and not os.path.exists(folder)  # nothing a kernel sent back piles up in /tmp
