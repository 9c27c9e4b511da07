"""Probes that prove what graded code did with autograd, by behaviour rather than by text.

SavedTensorCount: what autograd recorded during a block: the tensors it saved for backward,
    plus every module call that ran recording (grad mode on and an output with a grad_fn,
    seen at the module boundary). None when nothing is recorded, as under no_grad or
    inference_mode. The module boundary counts because saved tensors alone can be hidden by
    plain PyTorch: torch.utils.checkpoint installs saved-tensor hooks of its own, so a block
    evaluated under it records a graph while an outer counter of saved tensors sees nothing.
GraphLeakProbe: wraps a loss function so each batch's graph carries a marker leaf; markers
    of batches older than the previous one that are still alive mean the caller keeps old
    graphs alive (the `total += loss` bug), however many losses a batch computed. It sees only
    the graphs of losses computed through it: when fewer losses came through it than the
    batches of one pass over its batches, it vouches for nothing, and reading most_alive fails
    with the counts.

What a probe observes is kept where the probed code cannot reach it: never in an attribute of
an object handed to that code (a GraphLeakProbe is the loss function it is given), but in this
module's own table, keyed by the probe. The torch functions the probes use are bound when this
module is imported, so code that later rebinds them by name in torch's namespaces
(functools.update_wrapper on a torch module, say) does not blind them."""
import weakref

import torch
from torch.autograd.graph import saved_tensors_hooks as _saved_tensors_hooks
from torch.nn.modules.module import register_module_forward_hook as _register_module_forward_hook

from .errors import GradingError

_ones, _is_grad_enabled, _Tensor = torch.ones, torch.is_grad_enabled, torch.Tensor


def _records(output) -> bool:
    """Whether a module's output (a tensor, or tensors in a tuple, list or dict) has a grad_fn."""
    if isinstance(output, _Tensor):
        return output.grad_fn is not None
    if isinstance(output, (tuple, list)):
        return any(map(_records, output))
    if isinstance(output, dict):
        return any(map(_records, output.values()))
    return False


class SavedTensorCount:
    """with SavedTensorCount() as saved: ...; saved.count is what autograd recorded: the tensors
    it packed for backward plus the module calls whose outputs it recorded (0: nothing)."""

    def __enter__(self):
        self.count = self.saved = self.recorded_modules = 0
        self._hooks = _saved_tensors_hooks(self._pack, self._unpack)
        self._boundary = _register_module_forward_hook(self._module_ran)
        self._hooks.__enter__()
        return self

    def _pack(self, tensor):
        self.saved += 1
        self.count = self.saved + self.recorded_modules
        # A detached alias: returning the tensor itself would make a reference cycle for
        # ops that save their own output, and keep the graph alive after the probe.
        return tensor.detach()

    @staticmethod
    def _unpack(tensor):
        return tensor

    def _module_ran(self, module, args, output):
        if _is_grad_enabled() and _records(output):
            self.recorded_modules += 1
            self.count = self.saved + self.recorded_modules

    def __exit__(self, *exc):
        self._boundary.remove()
        self._hooks.__exit__(*exc)
        return False


class _Evidence:
    """What a GraphLeakProbe has seen, out of reach of the code it is handed to."""

    def __init__(self, loss_fn):
        self.loss_fn = loss_fn
        self.markers = []          # (batches handed out by then, a weak reference), one per loss computed
        self.handed = 0            # batches handed out, every pass
        self.most_alive = 0        # the worst count of stale graphs seen
        self.most_in_a_pass = 0    # the most batches handed out by one pass over the batches

    def stale_graphs(self) -> int:
        """Graphs still alive of losses before the latest batch; with no batch handed out, of losses
        before the latest one. By batch, not by loss: a loop may compute a batch's loss twice (once
        to step, once under no_grad to log it) and still keep no old graph."""
        if not self.handed:
            return sum(ref() is not None for _, ref in self.markers[:-1])
        return sum(ref() is not None for batch, ref in self.markers if batch < self.handed)

    def check(self) -> None:
        self.most_alive = max(self.most_alive, self.stale_graphs())


_EVIDENCE: weakref.WeakKeyDictionary["GraphLeakProbe", _Evidence] = weakref.WeakKeyDictionary()


class GraphLeakProbe:
    """A loss function that marks each batch's graph, and a batch source that checks, before
    handing out each batch, that the graphs of batches before the previous one are gone."""

    def __init__(self, loss_fn):
        _EVIDENCE[self] = _Evidence(loss_fn)

    # A copy (the grader hands a test's probe to the student's kernel pickled) starts a fresh
    # record of its own there, kept in that process's table.
    def __getstate__(self):
        return {"loss_fn": _EVIDENCE[self].loss_fn}

    def __setstate__(self, state):
        _EVIDENCE[self] = _Evidence(state["loss_fn"])

    def __call__(self, prediction, target):
        evidence = _EVIDENCE[self]
        marker = _ones((), device=prediction.device, requires_grad=True)
        evidence.markers.append((evidence.handed, weakref.ref(marker)))
        return evidence.loss_fn(prediction, target) * marker  # same value, marker in the graph

    @property
    def most_alive(self) -> int:
        """The worst count of stale graphs seen before a batch was handed out. A GradingError
        when fewer losses came through the probe than the batches of one pass: the graphs of
        the others, computed by another loss function, are out of its sight."""
        evidence = _EVIDENCE[self]
        if len(evidence.markers) < evidence.most_in_a_pass:
            raise GradingError(
                f"the loss function handed in computed {len(evidence.markers)} losses for "
                f"{evidence.most_in_a_pass} batches: each batch's loss must be computed by the loss "
                "function given (loss_fn(model(x), y)), never by another one named in the code.")
        return evidence.most_alive

    def stale_graphs(self) -> int:
        """Graphs of batches before the latest one still alive (the latest may be held by
        the caller's `loss` variable until it is reassigned)."""
        return _EVIDENCE[self].stale_graphs()

    def batches(self, loader):
        """`loader`, checked before each batch; iterable as often as the loader is."""
        return _Checked(self, loader)


class _Checked:
    def __init__(self, probe, loader):
        self.probe, self.loader = probe, loader  # the probe's evidence is in the table, not on it

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        evidence = _EVIDENCE[self.probe]
        for handed, batch in enumerate(self.loader, 1):
            evidence.check()
            evidence.most_in_a_pass = max(evidence.most_in_a_pass, handed)
            evidence.handed += 1
            yield batch
        evidence.check()
