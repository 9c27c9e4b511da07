"""The student bundle: everything a student needs without a hub, and nothing they must not see.

    python -m classgrader.commands.bundle [OUT.zip]        (or ./course bundle)

It holds the lessons, the student versions of the assignments, the helper packages, the
install files and ./course with its command table (classgrader/cli.py, which offers no
instructor command without the rest of classgrader/); never source/ (solutions and hidden
tests), the grading pipeline, tests/ or runtime/."""
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# hub/uv_installer.py: ./course setup's uv release and package sources (without it, setup falls back to pip).
INCLUDE = ["README.md", "CHANGES.md", "docs", "course", "classgrader/cli.py", "hub/uv_installer.py",
           "requirements.txt", "environment.yml",
           "pyproject.toml", "nbgrader_config.py", "notebooks", "release", "utils", "autograder", "lab"]
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints"}
DEFAULT_OUT = ROOT / "runtime" / "pytorch-course-student.zip"


def bundle_files(root: Path = ROOT) -> list[Path]:
    """The files that go in, relative to `root`, in a stable order."""
    files = []
    for name in INCLUDE:
        path = root / name
        if not path.exists():
            continue
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        files += [p.relative_to(root) for p in candidates if not SKIP_PARTS & set(p.parts)]
    return files


def make_bundle(out: Path = DEFAULT_OUT, root: Path = ROOT) -> Path:
    """Write the bundle as a zip whose entries sit under one top folder."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative in bundle_files(root):
            info = zipfile.ZipInfo(f"pytorch-course/{relative.as_posix()}")
            info.external_attr = ((root / relative).stat().st_mode & 0o777) << 16  # keeps ./course executable
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (root / relative).read_bytes())
    return out


def main(argv=None) -> int:
    from classgrader.cli import parse_or_exit  # the one command table: ./course bundle's arguments
    args = parse_or_exit("bundle", sys.argv[1:] if argv is None else list(argv))
    out = make_bundle(Path(args.out) if args.out else DEFAULT_OUT)
    print(f"{out}: {len(bundle_files())} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
