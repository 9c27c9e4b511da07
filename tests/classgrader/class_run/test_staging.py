"""staging: root copies a submission without following anything the student put there."""
import contextlib
import os
import shutil
import stat

from classgrader.class_run import staging


def submission(tmp_path):
    """A submission holding a link to a file only root may read, a FIFO, and honest files."""
    secret = tmp_path / "solutions.txt"
    secret.write_text("the reference solution")
    secret.chmod(0o600)
    folder = tmp_path / "submitted"
    (folder / "scratch").mkdir(parents=True)
    (folder / "data.csv").write_text("a,b\n")
    (folder / "scratch" / "try.py").write_text("print(1)\n")
    (folder / "notes.txt").symlink_to(secret)
    (folder / "scratch" / "linked_folder").symlink_to(tmp_path)
    os.mkfifo(folder / "pipe")
    return folder


def test_copytree_follows_links_and_staging_refuses_them(tmp_path, covered):
    folder = submission(tmp_path)
    os.remove(folder / "pipe")  # copytree would block on it forever
    shutil.copytree(folder, tmp_path / "naive", ignore=shutil.ignore_patterns("linked_folder"))
    assert (tmp_path / "naive" / "notes.txt").read_text() == "the reference solution"  # the route

    os.mkfifo(folder / "pipe")
    refused = staging.copy_tree(str(folder), str(tmp_path / "staged"))
    found = sorted(str(p.relative_to(tmp_path / "staged")) for p in (tmp_path / "staged").rglob("*"))
    assert found == ["data.csv", "scratch", "scratch/try.py"]
    assert all(stat.S_ISREG(p.lstat().st_mode) or p.is_dir() for p in (tmp_path / "staged").rglob("*"))
    assert refused == [
        "refused file: notes.txt is a symbolic link to " + str(tmp_path / "solutions.txt")
        + "; links and special files are not graded",
        "refused file: pipe is a FIFO; links and special files are not graded",
        f"refused file: scratch/linked_folder is a symbolic link to {tmp_path}; links and special files are not graded"]
    covered("shutil.copytree copies a linked root-only file; staging refuses links and FIFOs, "
            "names each, and copies the rest")


def test_reading_a_link_or_fifo_fails_without_blocking(tmp_path):
    folder = submission(tmp_path)
    for name in ("notes.txt", "pipe"):
        try:
            staging.read_bytes(str(folder / name))
        except OSError:
            continue
        raise AssertionError(f"{name} was read")
    assert staging.read_bytes(str(folder / "data.csv")) == b"a,b\n"


def test_write_new_never_writes_through_a_link(tmp_path):
    target = tmp_path / "target"
    target.write_text("untouched")
    (tmp_path / "planted").symlink_to(target)
    with contextlib.suppress(FileExistsError):
        staging.write_new(str(tmp_path / "planted"), b"overwritten")
    assert target.read_text() == "untouched"
