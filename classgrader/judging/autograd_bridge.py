"""The grader's half of in_kernel/autograd_bridge.py: a call made in the student's kernel whose
result requires grad there hangs, here, from one node whose backward asks the kernel to run
backward through the student's graph (a Backward request) and takes the gradients of the test's
inputs it sends back."""
import torch

from classgrader.in_kernel import walk
from classgrader.in_kernel.autograd_bridge import TENSORS, from_graph, tensors_in


class _InKernel(torch.autograd.Function):
    """One node standing for a call in the kernel: its outputs, and a backward done there."""

    @staticmethod
    def forward(ctx, link, anchor, *leaves):
        ctx.link = link
        outputs = tuple(t.detach() for t in link["outputs"])
        ctx.mark_non_differentiable(*[out for out, kept in zip(outputs, link["outputs"]) if not from_graph(kept)])
        return outputs

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        link = ctx.link
        wanted = [grad if from_graph(out) else None for out, grad in zip(link["outputs"], grads)]
        given = link["backward"](wanted)
        given = list(given) if isinstance(given, (list, tuple)) and len(given) == len(link["leaves"]) else []
        return (None, None, *[grad.to(leaf) if isinstance(grad, torch.Tensor) else None
                              for grad, leaf in zip(given or [None] * len(link["leaves"]), link["leaves"])])


def attach(result, leaves: list, backward, keep=()):
    """`result` (the kernel's answer, as data) with its tensors hanging from one node whose
    backward is `backward(grads of the outputs) -> grads of leaves` (a request to the kernel).
    `leaves` are the call's inputs here that require grad, in tensors_in order; a tensor of
    `keep` (one the test sent, returned as itself) stays itself."""
    outputs = list(tensors_in(result))
    link = {"outputs": outputs, "leaves": leaves, "backward": backward}
    anchor = torch.zeros((), requires_grad=True)  # so that a graph the kernel alone holds still gets one
    attached = iter(zip(outputs, _InKernel.apply(link, anchor, *leaves)))
    return _replaced(result, attached, {id(t) for t in keep})


def _replaced(value, attached, keep):
    """`value` with each tensor the kernel computed by its graph (in tensors_in order) replaced
    by its node's output; leaves, tensors without grad and those of `keep` stay as they came."""
    def hanging(node):
        if type(node) not in TENSORS:
            return walk.INTO
        came, output = next(attached)
        return output if from_graph(came) and id(came) not in keep else came
    return walk.rebuilt(value, hanging)
