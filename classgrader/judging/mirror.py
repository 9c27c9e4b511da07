"""The test's own files around a call into the student's kernel (judge.py, remote.py): a
checkpoint the test writes for the student's function to load, or one the function saves. The
kernel's file system is its own (a private /tmp), so each file is mirrored there before the call
and read back after it, only in folders the running test made itself (tempfile.mkdtemp, watched
while it runs): never a path a student's function returned. Root opens nothing through a link
and takes back bytes only; the test reads them as data (torch.load(weights_only=True))."""
import contextlib
import os
import shutil
import stat
import tempfile

_made_by_test: list[str] = []  # the folders the running test made (tempfile.mkdtemp), real paths


@contextlib.contextmanager
def noting_mkdtemp(made: list[str]):
    """While this runs, note in `made` each folder tempfile.mkdtemp makes (TemporaryDirectory too),
    as its real path with a trailing separator."""
    original = tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        folder = original(*args, **kwargs)
        made.append(os.path.realpath(folder) + os.sep)
        return folder
    tempfile.mkdtemp = mkdtemp
    try:
        yield
    finally:
        tempfile.mkdtemp = original


def remove(folders: list[str]) -> None:
    """The grader's own folders (noted by noting_mkdtemp), removed; rmtree follows no link in them."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    folders.clear()


@contextlib.contextmanager
def watching_mkdtemp():
    """While a test runs here, note each folder it makes with tempfile.mkdtemp (TemporaryDirectory
    too): only there are its files mirrored. A path that merely names some folder (one the
    student's function returned, say) is never read or written by root. The folders go when the
    test ends: what a kernel sent back into them never piles up in the grader's /tmp."""
    try:
        with noting_mkdtemp(_made_by_test):
            yield
    finally:
        remove(_made_by_test)


def test_files(values) -> list[str]:
    """Paths among `values` (a call's inputs, flattened) that lie in a folder the running test
    made (tempfile.mkdtemp): the student's function may read or write them, so they are mirrored
    in the kernel's own file system around the call."""
    found = []
    for value in values:
        if isinstance(value, (str, os.PathLike)):
            path = os.fspath(value)
            if isinstance(path, str) and path not in found and any(
                    os.path.realpath(path).startswith(folder) or os.path.realpath(path) + os.sep == folder
                    for folder in _made_by_test):
                found.append(path)
    return found


def read_own(path: str) -> bytes | None:
    """A file of the test's, read without following a link (None when there is none)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read() if stat.S_ISREG(os.fstat(handle.fileno()).st_mode) else None


def own_folder(path: str) -> list:
    if not os.path.isdir(path) or os.path.islink(path):
        return []
    return [(name, read_own(os.path.join(path, name))) for name in sorted(os.listdir(path))
            if os.path.isfile(os.path.join(path, name))]


def _write_own(path: str, data) -> None:
    """What the kernel sent for a file of the test's, written there (never through a link).
    Only bytes: the test reads it as data (torch.load(weights_only=True))."""
    if type(data) is not bytes:
        return
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def take_file(path: str, sent) -> None:
    if os.path.isdir(path) and isinstance(sent, list):
        for pair in sent:
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and os.sep not in pair[0] \
                    and pair[0] not in (".", ".."):
                _write_own(os.path.join(path, pair[0]), pair[1])
    elif not os.path.isdir(path):
        _write_own(path, sent)
