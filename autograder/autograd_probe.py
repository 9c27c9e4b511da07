"""Probes that prove what graded code did with autograd, by behaviour rather than by text.

SavedTensorCount: how many tensors autograd saved for backward during a block (none when
    nothing is recorded, as under no_grad or inference_mode).
GraphLeakProbe: wraps a loss function so each batch's graph carries a marker leaf; markers
    of batches older than the previous one that are still alive mean the caller keeps old
    graphs alive (the `total += loss` bug)."""
import weakref

import torch


class SavedTensorCount:
    """with SavedTensorCount() as saved: ...; saved.count is what autograd packed."""

    def __enter__(self):
        self.count = 0
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def _pack(self, tensor):
        self.count += 1
        # A detached alias: returning the tensor itself would make a reference cycle for
        # ops that save their own output, and keep the graph alive after the probe.
        return tensor.detach()

    @staticmethod
    def _unpack(tensor):
        return tensor

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        return False


class GraphLeakProbe:
    """A loss function that marks each batch's graph, and a batch source that checks, before
    handing out each batch, that the graphs of batches before the previous one are gone."""

    def __init__(self, loss_fn):
        self.loss_fn = loss_fn
        self.markers = []          # weak references, one per loss computed
        self.most_alive = 0        # the worst count of stale graphs seen

    def __call__(self, prediction, target):
        marker = torch.ones((), device=prediction.device, requires_grad=True)
        self.markers.append(weakref.ref(marker))
        return self.loss_fn(prediction, target) * marker  # same value, marker in the graph

    def stale_graphs(self) -> int:
        """Graphs of batches before the latest one still alive (the latest may be held by
        the caller's `loss` variable until it is reassigned)."""
        return sum(ref() is not None for ref in self.markers[:-1])

    def batches(self, loader):
        """`loader`, checked before each batch; iterable as often as the loader is."""
        return _Checked(self, loader)


class _Checked:
    def __init__(self, probe, loader):
        self.probe, self.loader = probe, loader

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        probe = self.probe
        for batch in self.loader:
            probe.most_alive = max(probe.most_alive, probe.stale_graphs())
            yield batch
        probe.most_alive = max(probe.most_alive, probe.stale_graphs())
