"""Scripted submissions for assignment 01_tensors.

Each scenario is one student: the answers that differ from the reference solution, the
test cells it must lose, and what its feedback must say. Everything else is the solution,
so a wrong answer must cost exactly the points of the item it breaks."""
from scenarios import Scenario

ASSIGNMENT = "01_tensors"
NOTEBOOK = "01_tensors.ipynb"


SCENARIOS = [
    Scenario("solution"),
    Scenario("untouched", answers=None, loses={"*"}),
    Scenario("alternative_a", answers={
        "q1_describe_answer": '''
def describe(t):
    return {"shape": t.size(), "dtype": t.dtype, "device": t.device, "numel": t.nelement()}
''',
        "q2_classify_error_answer": '''
def classify_error(message):
    lowered = message.lower()
    for word in ("size", "shape", "dimension"):
        if word in lowered:
            return "shape"
    return "device" if "device" in lowered else "dtype"
''',
        "q3_channel_means_answer": '''
def channel_means(img):
    h, w, _ = img.shape
    return img.to(torch.float32).sum(dim=(0, 1)) / (h * w)
''',
        "q4_tensor_bytes_answer": '''
def tensor_bytes(shape, dtype):
    return torch.empty(0, dtype=dtype).element_size() * math.prod(shape)
''',
        "q5_same_after_rounding_answer": '''
def same_after_rounding(value, observed, dtype):
    return torch.full((), value, dtype=dtype).item() == observed
''',
    }),
    Scenario("alternative_b", answers={
        "q1_describe_answer": '''
import functools, operator
def describe(t):
    shape = tuple(int(n) for n in t.shape)
    return dict(shape=shape, dtype=t.dtype, device=t.device,
                numel=functools.reduce(operator.mul, shape, 1))
''',
        "q2_classify_error_answer": '''
import re
def classify_error(message):
    if re.search(r"device", message, re.I):
        return "device"
    if re.search(r"dtype|scalar type|not implemented for|can't be cast|floating point", message, re.I):
        return "dtype"
    return "shape"
''',
        "q3_channel_means_answer": '''
def channel_means(img):
    return img.reshape(-1, img.shape[-1]).double().mean(dim=0).float()
''',
        "q4_tensor_bytes_answer": '''
def tensor_bytes(shape, dtype):
    count = 1
    for n in shape:
        count *= n
    return count * torch.tensor([], dtype=dtype).element_size()
''',
        "q5_same_after_rounding_answer": '''
def same_after_rounding(value, observed, dtype):
    return bool(torch.tensor([value], dtype=torch.float64).to(dtype)[0] == observed)
''',
    }),
    # Correct, but PyTorch warns ("To copy construct from a tensor...") and the student
    # prints to stderr: neither may cost a point.
    Scenario("warns", answers={
        "q3_channel_means_answer": '''
import sys
def channel_means(img):
    print("computing channel means", file=sys.stderr)
    return torch.tensor(img).float().mean(dim=(0, 1))
''',
    }, says=["To copy construct from a tensor"]),
    Scenario("len_as_numel", answers={
        "q1_describe_answer": '''
def describe(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, "numel": len(t)}
''',
    }, loses={"q1_describe_tests"}, says=["Pitfall: len(t) taken for the number of elements"]),
    Scenario("size_not_called", answers={
        "q1_describe_answer": '''
def describe(t):
    return {"shape": t.size, "dtype": t.dtype, "device": t.device, "numel": t.numel()}
''',
    }, loses={"q1_describe_tests"}, says=["Pitfall: t.size without calling it"]),
    Scenario("integer_truncation", answers={
        "q3_channel_means_answer": '''
def channel_means(img):
    h, w, _ = img.shape
    return (img.sum(dim=(0, 1)) // (h * w)).float()
''',
    }, loses={"q3_channel_means_tests"}, says=["Pitfall: integer tensors silently truncating"]),
    Scenario("precision_as_bug", answers={
        "q5_same_after_rounding_answer": '''
def same_after_rounding(value, observed, dtype):
    return abs(value - observed) < 1e-6
''',
    }, loses={"q5_same_after_rounding_tests"}, says=["Pitfall: precision loss read as a bug in the model"]),
    Scenario("ndim_as_numel", answers={
        "q4_tensor_bytes_answer": '''
def tensor_bytes(shape, dtype):
    return len(shape) * dtype.itemsize
''',
    }, loses={"q4_tensor_bytes_tests"}, says=["Pitfall: len(t) taken for the number of elements"]),
    # Fits the visible tests only: the hidden ones, on fresh inputs, must catch it.
    Scenario("hardcoded", answers={
        "q4_tensor_bytes_answer": '''
def tensor_bytes(shape, dtype):
    return {((1000, 1000), torch.float32): 4_000_000, ((10,), torch.int8): 10}.get((shape, dtype), 0)
''',
        "q2_classify_error_answer": '''
def classify_error(message):
    if message.startswith("The size"):
        return "shape"
    if message.startswith("mean()"):
        return "dtype"
    return "device"
''',
    }, loses={"q4_tensor_bytes_tests", "q2_classify_error_tests"}),
    Scenario("quiz_wrong", answers={"quiz_q1_answer": 'q1 = "a"\n', "quiz_q3_answer": 'q3 = "a"\n'},
             loses={"quiz_q1_tests", "quiz_q3_tests"}, says=["q1: not the right choice"]),
]
