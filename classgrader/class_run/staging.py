"""Reading and copying a student's submission as root without ever following a path the
student controls. A submission may hold symbolic links (to the solutions, to /etc/shadow),
FIFOs that block a reader, or device files: each is refused, never opened, and named in a
flag; every regular file and folder beside it is copied and graded as usual."""
import os
import stat

OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _kind(mode: int) -> str:
    return {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
            stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}.get(stat.S_IFMT(mode), "not a regular file")


def refusal(path: str, name: str) -> str | None:
    """Why path (shown as name) is not graded, or None for a regular file or folder."""
    mode = os.lstat(path).st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    detail = f" to {os.readlink(path)}" if stat.S_ISLNK(mode) else ""
    return f"refused file: {name} is {_kind(mode)}{detail}; links and special files are not graded"


def read_bytes(path: str) -> bytes:
    """A regular file's bytes, refusing a link or anything else (raises OSError)."""
    fd = os.open(path, OPEN_FLAGS)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{os.path.basename(path)} is not a regular file")
        return handle.read()


def walk(folder: str, prefix: str = ""):
    """(path relative to folder, absolute path, refusal or None) for everything under folder,
    folders included, sorted; refused folders are not entered."""
    for name in sorted(os.listdir(folder)):
        path, shown = os.path.join(folder, name), prefix + name
        why = refusal(path, shown)
        yield shown, path, why
        if why is None and stat.S_ISDIR(os.lstat(path).st_mode):
            yield from walk(path, shown + "/")


def copy_tree(source: str, target: str, skip=lambda relative: False) -> list[str]:
    """Copy source's regular files and folders into target (made), following nothing;
    returns a flag for each thing refused."""
    os.makedirs(target, exist_ok=True)
    refused = []
    for relative, path, why in walk(source):
        if why:
            refused.append(why)
        elif skip(relative):
            continue
        elif stat.S_ISDIR(os.lstat(path).st_mode):
            os.mkdir(os.path.join(target, relative), 0o755)
        else:
            write_new(os.path.join(target, relative), read_bytes(path))
    return refused


def write_new(path: str, data: bytes) -> None:
    """Create path (it must not exist, so no link there is followed) holding data."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
