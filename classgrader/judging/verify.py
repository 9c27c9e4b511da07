"""The grader's own judgement of a test cell that passed in the kernel: read back the records
its checks wrote (trace.py) and re-do each comparison here, in a process no student code ran
in. A pass that recorded nothing, or whose values do not hold up here, is not a pass."""
import json
import os
import stat

import torch

from autograder import checks, quiz, trace
from autograder.checks import GradingError
from classgrader.in_kernel import bounds

MAX_RECORD_BYTES = 64 * 2**20


def read_records(paths, dir_fd=None) -> list[dict]:
    """Every record in the files (one list per cell), in the order they were written.
    JSON or weights_only: a record is data; loading a forged one cannot run code here.
    Files are opened without following links (the kernel writes the folder they are in),
    relative to dir_fd when given, and must be regular files of a bounded size."""
    return [entry for path in sorted(paths, key=_order) for entry in _read(path, dir_fd)]


def _read(path, dir_fd=None) -> list:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RECORD_BYTES:
            raise ValueError(f"{os.path.basename(path)}: not a record file")
        if not path.endswith(".json"):
            return bounds.check(torch.load(handle, weights_only=True))
        records = bounds.check(json.load(handle))
    if trace.needs_torch_save(records):  # never written as JSON: forged
        raise ValueError(f"{os.path.basename(path)}: tensor evidence in a file written without tensors")
    return records


def _order(path):
    pid, number = os.path.splitext(os.path.basename(path))[0].split("-")
    return int(number), int(pid)


class Unverifiable(Exception):
    """A value that exists only as code in the kernel (an object of a student's class)."""


def rebuild(data):
    """The plain value a portable() record stands for (trace.materialize), each tensor left as
    its record (compared field by field in _tensor_problem); an object that is not data cannot
    be checked here."""
    return trace.materialize(data, tensor=lambda record: record, opaque=_unverifiable)


def _unverifiable(record: dict):
    raise Unverifiable(f"an object of type {record['object']}")


def _device(text: str) -> tuple[str, int]:
    device = torch.device(text)
    return device.type, device.index or 0


def _tensor_problem(name, got, expected, options) -> str | None:
    if "tensor" not in got:
        return f"{name}: not a plain torch.Tensor outside the kernel"
    for field in ("shape", "dtype"):
        if got[field] != expected[field]:
            return f"{name}: {field} {got[field]} where {expected[field]} was checked"
    if _device(got["device"]) != _device(expected["device"]):
        return f"{name}: device {got['device']} where {expected['device']} was checked"
    if got["requires_grad"] != expected["requires_grad"] or (
            expected["requires_grad"] and got["is_leaf"] != expected["is_leaf"]):
        return f"{name}: autograd flags differ from what was checked"
    if options.get("check_values", True) and got["tensor"] is not None and expected["tensor"] is not None:
        try:
            checks._check_values(got["tensor"], expected["tensor"], name, options.get("rtol"), options.get("atol"))
        except GradingError as error:
            return str(error)
    return None


def problem(entry: dict) -> str | None:
    """Why this passed check does not hold up outside the kernel, or None when it does."""
    kind, name = entry["kind"], entry["name"]
    try:
        options = {k: rebuild(v) for k, v in entry["options"].items()}
        if kind == "tensor":
            return _tensor_problem(name, entry["got"], entry["expected"], options)
        got, expected = rebuild(entry["got"]), rebuild(entry["expected"])
        if kind == "value":
            checks.check_value(got, expected, name=name, **options)
        elif kind == "keys":
            missing = [k for k in expected if k not in got]
            if missing:
                return f"{name}: keys {missing} missing"
        elif kind == "choice":
            quiz.check_choice(got, expected, name=name)
        elif kind == "answer":
            quiz.check_answer(got, expected, name=name, hint="")
    except Unverifiable as error:
        return f"{name}: {error} cannot be checked outside the kernel"
    except (GradingError, TypeError, ValueError) as error:
        return str(error)
    return None


def same_data(a, b) -> bool:
    """Are two portable() records of a value the same data (tensors compared exactly)?"""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan()) if a.is_floating_point()
                                                 else (a == b)).all()))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_data(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(same_data, a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True  # NaN
    return type(a) is type(b) and a == b


def against_reference(checked: list[dict], reference: list[dict]) -> list[str]:
    """Where the student's records of a test cell part from the grader's own run of the solution
    (a kernel no student code ran in): other checks, or other expected values. Each is a reason to
    look (a flag), not a verdict: an honest answer that draws random numbers differently (layers
    built in another order, say) changes the values and even the names a test goes on to check."""
    ran = [(e["kind"], e["name"]) for e in checked]
    wanted = [(e["kind"], e["name"]) for e in reference]
    if ran != wanted:
        missing = [name for kind, name in wanted if (kind, name) not in ran]
        return [f"its checks differ from the grader's own run ({len(ran)} recorded, {len(wanted)} expected"
                + (f"; missing: {', '.join(missing[:3])}" if missing else "") + ")"]
    return [f"{entry['name']}: the expected value differs from the grader's own run"
            for entry, own in zip(checked, reference)
            if not same_data(entry["expected"], own["expected"]) or not same_data(entry["options"], own["options"])]


def judge(entries: list[dict], reference: list[dict] | None = None) -> tuple[list[str], list[str]]:
    """(reasons the test fails, reasons to review it) for a test cell that passed in the kernel.
    It fails when its checks recorded nothing or a recorded value does not hold up here; it is
    reviewed when its records part from `reference`, the same cell's records from the grader's
    own run of the solution (see against_reference)."""
    checked = [e for e in entries if e["kind"] != "audit"]
    if not checked:
        return ["its checks recorded nothing: the test did not run as written"], []
    review = against_reference(checked, [e for e in reference if e["kind"] != "audit"]) if reference is not None else []
    return [p for p in map(problem, checked) if p], review
