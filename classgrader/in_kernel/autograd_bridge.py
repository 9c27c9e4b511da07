"""A call made in the student's kernel, inside the test's autograd graph: when what it returns
requires grad there, the grader's copy of it hangs from one node whose backward asks the kernel
to run backward through the student's graph (autograd.backward, with the test's gradients).
The kernel sends back the gradients of the inputs the test passed (their copies there), as
data; the leaves of its own (a model it built) keep theirs, as a single process would. So a test
run here can take a gradient through the student's function, or train a model that lives in
their kernel, and compare the values itself.

Both sides find the tensors of a call in the same order (tensors_in), so the n-th input that
requires grad here is the n-th there. This is the kernel's side (prepare, Calls); the grader's
(attach) is judging/autograd_bridge.py."""
import torch

from classgrader.in_kernel import walk

MAX_CALLS = 1000  # graphs one test's conversation keeps for a later backward


TENSORS = (torch.Tensor, torch.nn.Parameter)  # what portable() sends as data, not as a handle


def tensors_in(value):
    """The tensors in nested lists, tuples and dicts, in order (modules are not looked into)."""
    return (node for node in walk.values(value) if type(node) in TENSORS)


def from_graph(tensor) -> bool:
    """Whether a tensor was computed by autograd's graph: a leaf (a parameter, a fresh tensor
    that requires grad) has no graph behind it, and crosses as a leaf."""
    return tensor.requires_grad and not tensor.is_leaf


def prepare(inputs) -> list:
    """The inputs of a call that require grad, set to keep their gradient (retain_grad on the
    ones that are not leaves), before the call."""
    wanted = [t for t in tensors_in(inputs) if t.requires_grad]
    for tensor in wanted:
        if not tensor.is_leaf:
            tensor.retain_grad()
    return wanted


class Calls:
    """The calls of one conversation whose results require grad: their inputs and outputs,
    kept for the grader's backward."""

    def __init__(self):
        self.records = []

    def keep(self, inputs: list, result) -> int | None:
        """The number of this call's record, or None when nothing it returns requires grad."""
        outputs = list(tensors_in(result))
        if not any(from_graph(t) for t in outputs) or len(self.records) >= MAX_CALLS:
            return None
        self.records.append((inputs, outputs))
        return len(self.records) - 1

    def backward(self, number, grads) -> list:
        """Backward through call `number` with the grader's gradients of its outputs; the
        gradients it gave the call's inputs (None where none reached), which their copies here
        then forget, so that a second backward counts only its own."""
        if type(number) is not int or not 0 <= number < len(self.records):
            raise ValueError(f"no such call: {number!r}")
        inputs, outputs = self.records[number]
        pairs = [(out, grad) for out, grad in zip(outputs, grads)
                 if from_graph(out) and isinstance(grad, torch.Tensor)]
        before = [t.grad for t in inputs]
        for tensor in inputs:
            tensor.grad = None
        if pairs:
            torch.autograd.backward([out for out, _ in pairs], [grad.to(out) for out, grad in pairs], retain_graph=True)
        given = [t.grad for t in inputs]
        for tensor, grad in zip(inputs, before):
            tensor.grad = grad
        return given

