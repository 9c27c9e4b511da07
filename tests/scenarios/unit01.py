"""Scripted submissions for assignment 01_tensors.

Each scenario is one student: the answers that differ from the reference solution, the
test cells it must lose, and what its feedback must say. Everything else is the solution,
so a wrong answer must cost exactly the points of the item it breaks."""
from scenarios import Mutant, Scenario

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
    return bool(torch.tensor([value], dtype=torch.float64).to(dtype).double()[0] == observed)
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
    Scenario("tolerance_as_rounding", answers={
        "q5_same_after_rounding_answer": '''
def same_after_rounding(value, observed, dtype):
    return abs(value - observed) <= torch.finfo(dtype).eps * abs(value) * 4
''',
    }, loses={"q5_same_after_rounding_tests"}, says=["Pitfall: a difference within a tolerance read as rounding"]),
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

# Hand-written wrong answers for the mutation check (tests/mutation.py), where no regex says it.
MUTANTS = [
    Mutant("describe/len-as-numel", {"q1_describe_answer": """
def describe(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, "numel": len(t)}
"""}, misconception="len-as-numel"),
    Mutant("describe/ndim-as-numel", {"q1_describe_answer": """
def describe(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, "numel": t.dim()}
"""}, misconception="len-as-numel"),
    Mutant("describe/size-not-called", {"q1_describe_answer": """
def describe(t):
    return {"shape": t.size, "dtype": t.dtype, "device": t.device, "numel": t.numel()}
"""}, misconception="size-not-called"),
    Mutant("describe/device-as-string", {"q1_describe_answer": """
def describe(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device.type, "numel": t.numel()}
"""}),
    Mutant("describe/numel-from-sizes-sum", {"q1_describe_answer": """
def describe(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, "numel": sum(t.shape)}
"""}, misconception="len-as-numel"),
    Mutant("classify_error/dtype-first",
           equivalent="no real device error message carries a dtype word, so the order of the two tests never matters",
           answers={"q2_classify_error_answer": """
def classify_error(message):
    text = message.lower()
    if any(word in text for word in ("dtype", "scalar type", "not implemented for", "cast", "floating point")):
        return "dtype"
    if "device" in text:
        return "device"
    return "shape"
"""}),
    Mutant("classify_error/keyword-size", {"q2_classify_error_answer": """
def classify_error(message):
    text = message.lower()
    if "size" in text or "shape" in text:
        return "shape"
    if "device" in text:
        return "device"
    return "dtype"
"""}),
    Mutant("classify_error/only-dtype-word", {"q2_classify_error_answer": """
def classify_error(message):
    text = message.lower()
    if "device" in text:
        return "device"
    if "dtype" in text:
        return "dtype"
    return "shape"
"""}),
    Mutant("channel_means/integer-truncation", {"q3_channel_means_answer": """
def channel_means(img):
    h, w, _ = img.shape
    return (img.sum(dim=(0, 1)) // (h * w)).float()
"""}, misconception="integer-truncation"),
    Mutant("channel_means/uint8-sum-overflows", {"q3_channel_means_answer": """
def channel_means(img):
    h, w, _ = img.shape
    return img.sum(dim=(0, 1), dtype=torch.uint8).float() / (h * w)
"""}, misconception="integer-truncation"),
    Mutant("channel_means/half-precision", {"q3_channel_means_answer": """
def channel_means(img):
    return img.half().mean(dim=(0, 1)).float()
"""}, misconception="precision-as-bug"),
    Mutant("channel_means/float64", {"q3_channel_means_answer": """
def channel_means(img):
    return img.double().mean(dim=(0, 1))
"""}),
    Mutant("channel_means/wrong-axes", {"q3_channel_means_answer": """
def channel_means(img):
    return img.float().mean(dim=(1, 2))
"""}),
    Mutant("tensor_bytes/len-as-numel", {"q4_tensor_bytes_answer": """
def tensor_bytes(shape, dtype):
    return len(shape) * dtype.itemsize
"""}, misconception="len-as-numel"),
    Mutant("tensor_bytes/bits", {"q4_tensor_bytes_answer": """
def tensor_bytes(shape, dtype):
    return math.prod(shape) * torch.finfo(dtype).bits // 8 if dtype.is_floating_point else math.prod(shape) * 8
"""}),
    Mutant("tensor_bytes/empty-shape-zero", {"q4_tensor_bytes_answer": """
def tensor_bytes(shape, dtype):
    if not shape:
        return 0
    return math.prod(shape) * dtype.itemsize
"""}),
    Mutant("tensor_bytes/float32-always", {"q4_tensor_bytes_answer": """
def tensor_bytes(shape, dtype):
    return math.prod(shape) * 4
"""}),
    Mutant("same_after_rounding/precision-as-bug", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    return value == observed
"""}, misconception="precision-as-bug"),
    Mutant("same_after_rounding/tolerance", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    return abs(value - observed) < 1e-3
"""}, misconception="precision-as-bug"),
    Mutant("same_after_rounding/float32-rounding", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    return torch.tensor(value, dtype=torch.float32).item() == observed
"""}, misconception="precision-as-bug"),
    Mutant("same_after_rounding/relative-eps", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    return abs(value - observed) <= torch.finfo(dtype).eps * abs(value) * 4
"""}, misconception="tolerance-as-rounding"),  # accepts the round trip, and the representable values steps away too
    Mutant("same_after_rounding/observed-rounded-too", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    return torch.tensor(value, dtype=dtype).item() == torch.tensor(observed, dtype=dtype).item()
"""}),  # rounds the observed value too, so a number the dtype cannot hold passes for the stored one
    Mutant("describe/numel-from-storage", {"q1_describe_answer": """
def describe(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device,
            "numel": t.untyped_storage().nbytes() // t.element_size()}
"""}),  # the memory behind the tensor counted: a view's holds elements the view does not
    Mutant("tensor_bytes/hand-table", {"q4_tensor_bytes_answer": """
SIZES = {torch.float64: 8, torch.float32: 4, torch.float16: 2, torch.bfloat16: 2, torch.int64: 8, torch.int32: 4,
         torch.int16: 2, torch.int8: 1, torch.uint8: 1, torch.bool: 1, torch.complex64: 8}
def tensor_bytes(shape, dtype):
    return math.prod(shape) * SIZES.get(dtype, 4)
"""}),  # a table of the common dtypes, 4 bytes for any other
    Mutant("same_after_rounding/abs-eps", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    return abs(torch.tensor(value, dtype=dtype).item() - observed) < torch.finfo(dtype).eps
"""}, misconception="tolerance-as-rounding"),  # a tolerance of eps, many steps wide below 1: close taken for exact
    Mutant("same_after_rounding/equal-shortcut", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    if value == observed:
        return True
    return torch.tensor(value, dtype=dtype).item() == observed
"""}),  # value itself taken for what storing gives back, though the dtype cannot hold it
    Mutant("same_after_rounding/half-step-tolerance", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    stored = torch.tensor(value, dtype=dtype)
    step = (torch.nextafter(stored, torch.tensor(float("inf"), dtype=dtype)) - stored).item()
    return abs(stored.item() - observed) < step / 8
"""}),  # a tolerance of an eighth of a step: close is taken for exact
    Mutant("same_after_rounding/abs-value", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    return abs(torch.tensor(value, dtype=dtype).item()) == abs(observed)
"""}),  # the sign left out of the comparison
    Mutant("channel_means/view-flat", {"q3_channel_means_answer": """
def channel_means(img):
    return img.view(-1, img.shape[-1]).float().mean(dim=0)
"""}),  # view() of the pixels: a crop's strides allow no such view
    Mutant("describe/extra-key", {"q1_describe_answer": """
def describe(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, "numel": t.numel(), "ndim": t.dim()}
"""}),  # a fifth key, where the text asks for exactly four
    Mutant("classify_error/type-names-first", {"q2_classify_error_answer": """
def classify_error(message):
    if any(name in message for name in ("Long", "Int", "Float", "Double", "Half", "BFloat16", "Byte", "Bool")):
        return "dtype"
    text = message.lower()
    if "device" in text:
        return "device"
    if any(word in text for word in ("dtype", "scalar type", "not implemented for", "cast")):
        return "dtype"
    return "shape"
"""}),  # a type name read as a dtype error before the noun: expand(torch.FloatTensor{...}) names one in a shape error
    Mutant("classify_error/device-names-first", {"q2_classify_error_answer": """
def classify_error(message):
    text = message.lower()
    if any(word in text for word in ("device", "cpu", "cuda", "mps", "meta")):
        return "device"
    if any(word in text for word in ("dtype", "scalar type", "not implemented for", "cast", "floating point")):
        return "dtype"
    return "shape"
"""}),  # "cpu" in a kernel's name ("mse_cpu" not implemented for 'Int') read as a device error
    Mutant("classify_error/no-floating-point", {"q2_classify_error_answer": """
def classify_error(message):
    text = message.lower()
    if "device" in text:
        return "device"
    if any(word in text for word in ("dtype", "scalar type", "not implemented for", "cast")):
        return "dtype"
    return "shape"
"""}),  # "Expected a floating point or complex tensor as input. Got Long" (norm of integers) taken for a shape error
    Mutant("tensor_bytes/zero-sizes-skipped", {"q4_tensor_bytes_answer": """
def tensor_bytes(shape, dtype):
    return math.prod(n for n in shape if n) * dtype.itemsize
"""}),  # a size of 0 left out of the product: a tensor with no element counted as holding some
    Mutant("tensor_bytes/at-least-one-element", {"q4_tensor_bytes_answer": """
def tensor_bytes(shape, dtype):
    return max(1, math.prod(shape)) * dtype.itemsize
"""}),  # an empty tensor counted as one element
    Mutant("same_after_rounding/mantissa-by-hand", {"q5_same_after_rounding_answer": """
BITS = {torch.float16: 11, torch.bfloat16: 8, torch.float32: 24, torch.float64: 53}
def same_after_rounding(value, observed, dtype):
    if value == 0:
        return observed == 0
    mantissa, exponent = math.frexp(value)
    bits = BITS[dtype]
    return math.ldexp(round(mantissa * 2 ** bits), exponent - bits) == observed
"""}),  # significant bits rounded by hand, the range forgotten: no inf past float16's largest, no subnormals
    Mutant("same_after_rounding/clamped-to-largest", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    largest = torch.finfo(dtype).max
    return torch.tensor(max(-largest, min(largest, value)), dtype=dtype).item() == observed
"""}),  # a value past the dtype's range taken to store as its largest value, not as inf
    Mutant("same_after_rounding/subnormals-flushed", {"q5_same_after_rounding_answer": """
def same_after_rounding(value, observed, dtype):
    if abs(value) < torch.finfo(dtype).tiny:
        return observed == 0.0
    return torch.tensor(value, dtype=dtype).item() == observed
"""}),  # a value below the smallest normal number taken to store as 0
    Mutant("describe/zeroes-input", {"q1_describe_answer": """
def describe(t):
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, "numel": len(t.reshape(-1).zero_())}
"""}),  # counted through a flat view it then zeroes: the caller's values are gone
    Mutant("describe/requires-grad-off", {"q1_describe_answer": """
def describe(t):
    t.requires_grad_(False)
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, "numel": t.numel()}
"""}),  # the caller's tensor no longer requires grad
    Mutant("describe/grad-dropped", {"q1_describe_answer": """
def describe(t):
    t.grad = None
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device, "numel": t.numel()}
"""}),  # the caller's gradient thrown away
]


# Generated mutants whose code shows another misconception than their operator's default:
# {name: (misconception, why)} (tests/mutation.py, all_mutants).
RELABELLED = {
    "q1_describe_answer/assumed-device#1": ("", "describe() reports a device it assumed instead of reading t's: no "
                                            "tensor is created on the default device, a slip the device check names"),
    "q5_same_after_rounding_answer/drop-item#1": ("", "the answer comes back as a 0-d bool tensor, not a Python bool: "
                                                  "no running total, a slip the type check names with its "
                                                  ".item() hint"),
    "q5_same_after_rounding_answer/item-as-detach#1": ("", "the answer comes back as a 0-d bool tensor, not a Python "
                                                       "bool: a slip the type check names with its .item() hint"),
}
