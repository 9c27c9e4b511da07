"""Measure what autograd keeps alive: graph nodes and the bytes of the tensors it saved for backward.

Every forward pass through a tensor that requires grad records a graph node per operation, and many
nodes *save* tensors (an input, an output, an activation) so that backward can use them later. As
long as something holds the graph, its saved tensors stay in memory. That is the unit 05 bug: an
evaluation loop that accumulates `total += loss` without `no_grad`, or a training loop that logs
its running loss as a tensor, holds one more graph every iteration.

Exact, repeatable measurements only (RSS moves by megabytes between identical runs, and tracemalloc
does not see torch's allocator at all):

    graph_stats(obj)                      # walk any nested structure: live graph nodes, saved bytes
    with SavedTensorTracker() as tracker: # every tensor autograd saves inside the block, with the
        ...                               # bytes still alive at any moment (they drop when freed)
    with RecordingCounter() as rec: ...   # how many torch calls recorded a graph node (0 = none)
    measure_loop(loop_generator, n)       # per iteration: saved bytes alive, live nodes, allocator
    measure_steps(step, n)                # the same for a step function called n times
    BatchProbe(loader)                    # the same for a function that consumes a loader
    steady_growth(series)                 # the constant per-iteration growth of a measured series

Definitions (the tests pin them on small graphs whose contents are known):

- a **node** is an autograd Node object (`AddmmBackward0`, `ReluBackward0`, `AccumulateGrad`, ...)
  reachable from a tensor's `grad_fn` through `next_functions`; each counted once;
- **saved bytes** are the bytes of the distinct storages behind the tensors those nodes saved for
  backward (`untyped_storage().nbytes()`: a saved view such as `weight.t()` counts the storage it
  reads, and a storage saved twice, like a ReLU's output that the next layer also saves, counts
  once). Tensors a custom autograd.Function keeps as attributes of its ctx count too (graph_stats
  only: they are not packed, so the tracker does not see them). Meta tensors hold no memory and
  count 0; tensors without a storage (sparse) count 0.

`graph_stats` reads the saved tensors through each node's `_raw_saved_*` slots, which neither
unpacks them (so no version check fires) nor calls any hook. `SavedTensorTracker` sees them as
they are packed, through `torch.autograd.graph.saved_tensors_hooks`: its pack hook keeps a
*detached* reference (same storage, no `grad_fn`) inside a small handle and watches the handle with
a weakref. Autograd owns the handle exactly as long as it would have owned the tensor, so the
count drops the moment backward frees the graph or the last tensor holding the graph goes away.
(Keeping the tensor itself would be a reference cycle for a saved output, tensor -> grad_fn ->
packed tensor, that runs through C++ objects the garbage collector cannot see: on 2.13 such a graph
is never freed, not even by gc.collect().) The tracker does not see tensors saved under another
pack hook pushed inside its block (activation checkpointing, save_on_cpu); graph_stats does.
"""
from __future__ import annotations

import collections
import gc
import itertools
import sys
import types
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch.overrides import TorchFunctionMode

__all__ = [
    "Allocated",
    "BatchProbe",
    "GraphStats",
    "LoopMeter",
    "RecordingCounter",
    "SavedTensorTracker",
    "accelerator_allocated",
    "accelerator_name",
    "graph_stats",
    "live_graph_stats",
    "measure_loop",
    "measure_steps",
    "steady_growth",
    "storage_key",
]


# ---- storages: what "the same memory" means ----

def storage_key(t: torch.Tensor) -> tuple[tuple | None, int]:
    """(a key naming t's storage, the storage's bytes); (None, 0) when t holds no memory.

    Two tensors with equal keys share one block of memory (a view and its base, a tensor and its
    detach()). Meta tensors and tensors without a storage (sparse) hold no countable memory."""
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):  # sparse and other storage-less layouts
        return None, 0
    nbytes, ptr = storage.nbytes(), storage.data_ptr()
    if nbytes == 0 or ptr == 0 or t.device.type == "meta":
        return None, 0
    return (str(t.device), ptr), nbytes


# ---- finding tensors in whatever the user holds ----

_ATOMS = frozenset({str, bytes, bytearray, int, float, complex, bool, type(None), torch.dtype,
                    torch.device, torch.Size, range, slice})
_SEQUENCES = (list, tuple, set, frozenset, collections.deque)
_SKIP = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
         types.FrameType, types.CodeType, weakref.ReferenceType, str, bytes, bytearray, int, float,
         complex, torch.dtype, torch.device, range, slice)
_Node = torch.autograd.graph.Node


def _tensors_and_nodes(objs) -> tuple[list[torch.Tensor], list]:
    """Every tensor (and every loose autograd node) reachable from objs, each object visited once.

    Walks tensors, nodes, mappings (keys and values), lists, tuples, sets, deques, generators (their
    suspended frame's local variables) and, for any other object, its __dict__ and __slots__: a
    module's parameters, an optimiser's state, a dataclass, a user's own "stats" object."""
    tensors, nodes, seen, stack = [], [], set(), list(objs)
    tensor_types, atoms = (torch.Tensor, torch.nn.Parameter), _ATOMS
    while stack:
        obj = stack.pop()
        cls = type(obj)
        if cls in atoms:
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if cls in tensor_types or issubclass(cls, torch.Tensor):
            tensors.append(obj)
        elif cls is tuple or cls is list:
            stack.extend(obj)
        elif cls is dict:
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif issubclass(cls, _Node):
            nodes.append(obj)
        elif issubclass(cls, Mapping):
            try:
                items = list(obj.items())
            except Exception:
                continue
            for k, v in items:
                stack.append(k)
                stack.append(v)
        elif issubclass(cls, _SEQUENCES):
            stack.extend(obj)
        elif cls is types.GeneratorType:
            if obj.gi_frame is not None:       # a finished generator holds nothing
                stack.extend(obj.gi_frame.f_locals.values())
        elif issubclass(cls, _SKIP):
            continue
        else:
            try:                                # proxies and lazy objects may raise anything here
                attrs = getattr(obj, "__dict__", None)
                if isinstance(attrs, dict):
                    stack.extend(attrs.values())
                for klass in cls.__mro__:
                    slots = klass.__dict__.get("__slots__", ())
                    stack.extend(getattr(obj, slot) for slot in ((slots,) if isinstance(slots, str) else slots)
                                 if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot))
            except Exception:
                continue
    return tensors, nodes


# ---- walking graphs ----

_RAW_SLOTS: dict[type, tuple[str, ...]] = {}


def _raw_slots(node) -> tuple[str, ...]:
    """The names of a node type's raw saved-tensor slots (`_raw_saved_self`, `_raw_saved_tensors`...)."""
    kind = type(node)
    if kind not in _RAW_SLOTS:
        _RAW_SLOTS[kind] = tuple(n for n in dir(kind) if n.startswith("_raw_saved_"))
    return _RAW_SLOTS[kind]


def _saved_by(node) -> Iterator[torch.Tensor]:
    """The tensors node still holds for backward (nothing once backward has freed them)."""
    for name in _raw_slots(node):
        try:
            raw = getattr(node, name)
        except RuntimeError:       # a custom Function whose saved tensors were already freed
            continue
        for saved in raw if isinstance(raw, (list, tuple)) else (raw,):
            data = getattr(saved, "data", None)      # the stored tensor, or a pack hook's object
            if data is None:                         # freed by backward, or an undefined slot
                continue
            if isinstance(data, torch.Tensor):
                yield data
            elif isinstance(data, _Packed):
                yield data.tensor
            else:                                     # another pack hook's object: look inside
                yield from _tensors_and_nodes([data])[0]
    attrs = getattr(node, "__dict__", None)           # a custom Function's ctx.anything = tensor:
    if attrs:                                         # kept by the node (even after backward)
        yield from _tensors_and_nodes(list(attrs.values()))[0]


@dataclass(frozen=True)
class GraphStats:
    """What a set of live graphs holds.

    nodes: distinct autograd nodes reachable from the tensors' grad_fn (AccumulateGrad included);
    saved_tensors: saved-tensor slots still holding a tensor; saved_bytes: bytes of the distinct
    storages behind them; tensors: the tensors found; node_types: node class name -> count."""
    nodes: int = 0
    saved_tensors: int = 0
    saved_bytes: int = 0
    tensors: int = 0
    node_types: dict = field(default_factory=dict, compare=False)

    @property
    def has_graph(self) -> bool:
        return self.nodes > 0


def graph_stats(*objs, saved: bool = True) -> GraphStats:
    """Walk everything reachable from objs (tensors, floats, nested lists/dicts/tuples, modules,
    generators, plain objects) and count the live graph nodes and the bytes saved for backward.

        graph_stats(loss)                       # one graph
        graph_stats(losses_list, running_total) # everything a loop kept
        graph_stats(1.5) == GraphStats()        # a Python float holds no graph

    saved=False skips the saved-tensor part (faster: nodes only)."""
    tensors, loose = _tensors_and_nodes(objs)
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None] + loose
    nodes: dict[int, object] = {}
    while stack:
        node = stack.pop()
        if node is None or id(node) in nodes:
            continue
        nodes[id(node)] = node
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in nodes:
                stack.append(nxt)
    n_saved, storages = 0, {}
    if saved:
        for node in nodes.values():
            for t in _saved_by(node):
                n_saved += 1
                key, nbytes = storage_key(t)
                if key is not None:
                    storages[key] = nbytes
    return GraphStats(nodes=len(nodes), saved_tensors=n_saved, saved_bytes=sum(storages.values()),
                      tensors=len(tensors),
                      node_types=dict(collections.Counter(type(n).__name__ for n in nodes.values())))


def live_graph_stats() -> GraphStats:
    """graph_stats over every tensor any Python object in this process holds (found through gc).

    Slower (it lists every tracked object: tens of milliseconds) and wider than graph_stats: it also
    counts graphs held by IPython's output history (`_`, `Out`) or by another test. Use it as a
    last check, and graph_stats(what_you_hold) or SavedTensorTracker for exact per-call figures."""
    gc.collect()
    return graph_stats([o for o in gc.get_objects() if issubclass(type(o), torch.Tensor)])


# ---- the tracker: saved tensors as autograd packs them ----

class _Packed:
    """What the pack hook gives autograd to keep: a detached reference to the saved tensor."""
    __slots__ = ("__weakref__", "tensor")

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class SavedTensorTracker:
    """Count the tensors autograd saves for backward inside `with tracker:`, and how many are still alive.

        with SavedTensorTracker() as tracker:
            loss = model(x).sum()
        tracker.bytes_alive     # > 0: loss's graph holds its saved tensors
        loss.backward()
        tracker.bytes_alive     # 0: backward freed them

    bytes_alive counts distinct storages (a storage saved by two nodes counts once); tensors_alive
    counts saved slots. Both keep following the tensors after the block ends. packed is how many
    tensors were ever saved inside the block: 0 proves the block saved nothing for backward. The
    same tracker can be entered again (not nested in itself); counts carry on."""

    def __init__(self) -> None:
        self.packed = 0              # tensors saved inside the block(s), ever
        self.packed_bytes = 0        # their bytes, a storage counted each time it is saved
        self.peak_bytes = 0          # the largest bytes_alive seen at a pack
        self._alive_bytes = 0
        self._alive_tensors = 0
        self._per_storage: dict[tuple, list[int]] = {}   # key -> [saved slots alive, nbytes]
        self._refs: set[weakref.ref] = set()
        self._hooks: torch.autograd.graph.saved_tensors_hooks | None = None  # while entered

    # the hooks: pack keeps a handle, unpack hands back the detached tensor
    def _pack(self, t: torch.Tensor) -> _Packed:
        handle = _Packed(t.detach())
        key, nbytes = storage_key(t)
        self.packed += 1
        self.packed_bytes += nbytes
        self._alive_tensors += 1
        if key is not None:
            entry = self._per_storage.setdefault(key, [0, nbytes])
            if entry[0] == 0:
                self._alive_bytes += entry[1]
            entry[0] += 1
        self.peak_bytes = max(self.peak_bytes, self._alive_bytes)
        self._refs.add(weakref.ref(handle, self._released(key)))
        return handle

    def _released(self, key):
        def callback(ref):  # runs when autograd drops the handle: backward, or the graph freed
            self._refs.discard(ref)
            self._alive_tensors -= 1
            if key is not None:
                entry = self._per_storage[key]
                entry[0] -= 1
                if entry[0] == 0:
                    self._alive_bytes -= entry[1]
                    del self._per_storage[key]
        return callback

    @staticmethod
    def _unpack(handle: _Packed) -> torch.Tensor:
        return handle.tensor

    def __enter__(self) -> SavedTensorTracker:
        if self._hooks is not None:
            raise RuntimeError("this SavedTensorTracker is already active; use a second tracker to nest")
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        hooks, self._hooks = self._hooks, None
        if hooks is None:
            raise RuntimeError("this SavedTensorTracker was left without being entered")
        hooks.__exit__(*exc)

    @property
    def bytes_alive(self) -> int:
        """Bytes of the distinct storages saved inside the block and still held by a graph."""
        return self._alive_bytes

    @property
    def tensors_alive(self) -> int:
        """Saved-tensor slots from inside the block still held by a graph."""
        return self._alive_tensors

    @property
    def storages_alive(self) -> int:
        return len(self._per_storage)

    def __repr__(self) -> str:
        return (f"SavedTensorTracker(bytes_alive={self.bytes_alive}, tensors_alive={self.tensors_alive}, "
                f"packed={self.packed}, peak_bytes={self.peak_bytes})")


# ---- counting recorded operations: the exact test of "records no graph" ----

class RecordingCounter(TorchFunctionMode):
    """Count the torch calls inside the block whose result carries a new grad_fn (a recorded node).

        with RecordingCounter() as rec:
            with torch.no_grad():
                model(x)
        rec.recorded == 0      # and rec.names lists the first recorded calls otherwise

    It sees calls that go through torch's function API (torch.*, F.*, Tensor methods and operators,
    so every nn layer); a result that already had its grad_fn before the call (an input handed
    back, like `x.contiguous()` of a contiguous x) is not counted. Slows the block down: for tests."""

    def __init__(self, keep_names: int = 20):
        super().__init__()
        self.recorded = 0
        self.calls = 0
        self.names: list[str] = []
        self._keep = keep_names

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        before = {id(t.grad_fn) for t in _tensors_and_nodes([args, kwargs or {}])[0]
                  if t.grad_fn is not None}
        result = func(*args, **(kwargs or {}))
        self.calls += 1
        if isinstance(result, torch.Tensor):
            outs = [result]
        elif isinstance(result, (tuple, list)):
            outs = [r for r in result if isinstance(r, torch.Tensor)]
        else:
            outs = []
        if any(o.grad_fn is not None and id(o.grad_fn) not in before for o in outs):
            self.recorded += 1
            if len(self.names) < self._keep:
                self.names.append(getattr(func, "__name__", repr(func)))
        return result


# ---- the accelerator's allocator, where there is one ----

# Where a meter reads allocated bytes: a function returning them, "auto" (the accelerator's
# allocator, where there is one: accelerator_allocated()) or None (not read).
Allocated = Callable[[], int] | Literal["auto"] | None


def accelerator_allocated() -> Callable[[], int] | None:
    """A function returning the accelerator allocator's live bytes, or None without an accelerator.

    On CUDA this is torch.cuda.memory_allocated(): exact bytes of tensors the caching allocator has
    handed out. On a CPU-only machine there is no such figure (torch.cuda.memory_allocated() is
    just 0 there), so monitors omit it rather than plot a flat zero."""
    accelerator = torch.accelerator.current_accelerator(check_available=True)  # None unless is_available()
    if accelerator is None:
        return None
    if accelerator.type == "cuda":
        return torch.cuda.memory_allocated
    try:                                   # mps, xpu...: the generic API, where this build has it
        torch.accelerator.memory_allocated()
    except (RuntimeError, AttributeError, NotImplementedError):
        return None
    return torch.accelerator.memory_allocated


def accelerator_name() -> str | None:
    accelerator = torch.accelerator.current_accelerator(check_available=True)  # None unless is_available()
    return None if accelerator is None else accelerator.type


# ---- measuring a loop, one iteration at a time ----

def _start(loop) -> Iterator:
    """A loop to measure: a generator (or any iterator), an iterable, or a zero-argument factory."""
    if callable(loop) and not isinstance(loop, (Iterator, Iterable)):
        loop = loop()
    if isinstance(loop, Iterator):
        return loop
    if isinstance(loop, Iterable):
        return iter(loop)
    raise TypeError(f"measure a generator, an iterable or a function that makes one, not {type(loop).__name__}")


_EXHAUSTED = object()


class LoopMeter:
    """Run a loop one iteration at a time and measure after each.

    The loop is a generator that yields once per iteration (or any iterator; or a zero-argument
    function returning one). After each iteration the meter records, in `history`:

    - iteration: 1, 2, 3...
    - saved_bytes, saved_tensors: what autograd saved during this loop's iterations and still holds
      (a SavedTensorTracker active only while the loop's own code runs);
    - nodes: the graph nodes reachable from the loop's local variables (a generator's suspended
      frame) and from what it yielded: everything it could still call backward on;
    - accelerator_bytes (only with an accelerator, or a given `allocated` function): the net change
      in the allocator's live bytes across this loop's own iterations. On a CPU-only machine the key
      is absent.

    own_thread=True runs the loop's code in a thread of its own (the measuring stays in the caller's).
    Grad mode, inference mode, autocast and saved-tensor hooks are per thread, and a generator that
    yields inside `with torch.no_grad():` leaves no-grad switched on in whichever thread resumed it:
    two loops stepped in turn in one thread would switch each other's recording off. In a thread of
    its own, each loop keeps its own modes, as if it ran alone. The thread starts with the caller's
    grad mode; torch function modes the caller has entered (RecordingCounter) do not follow it.
    """

    def __init__(self, loop, allocated: Allocated = "auto", *, own_thread: bool = False):
        self._executor = None
        if own_thread:
            grad_enabled = torch.is_grad_enabled()
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loop-meter")

            def start():
                torch.set_grad_enabled(grad_enabled)
                return _start(loop)
            try:
                self._iterator = self._call(start)
            except BaseException:
                self._executor.shutdown(wait=False)
                raise
        else:
            self._iterator = _start(loop)
        self.tracker = SavedTensorTracker()
        self.allocated = accelerator_allocated() if allocated == "auto" else allocated
        self.history: dict[str, list[int]] = {"iteration": [], "saved_bytes": [], "saved_tensors": [],
                                              "nodes": []}
        if self.allocated is not None:
            self.history["accelerator_bytes"] = []
        self._net_allocated = 0
        self.done = False

    def _call(self, fn):
        """fn() in the loop's thread: the caller's, or its own."""
        if self._executor is None:
            return fn()
        return self._executor.submit(fn).result()

    def _advance(self):
        with self.tracker:
            return next(self._iterator, _EXHAUSTED)

    def step(self) -> dict[str, int] | None:
        """Run one iteration and return its record; None (and done) once the loop is exhausted."""
        if self.done:
            return None
        before = self.allocated() if self.allocated is not None else 0
        value = self._call(self._advance)
        if value is _EXHAUSTED:
            self.done = True
            return None
        nodes = graph_stats(value, self._iterator, saved=False).nodes   # also refreshes frame locals
        del value
        record = {"iteration": len(self.history["iteration"]) + 1,
                  "saved_bytes": self.tracker.bytes_alive, "saved_tensors": self.tracker.tensors_alive,
                  "nodes": nodes}
        if self.allocated is not None:
            self._net_allocated += self.allocated() - before
            record["accelerator_bytes"] = self._net_allocated
        for k, v in record.items():
            self.history[k].append(v)
        return record

    def close(self) -> int:
        """Stop the loop (its variables go away) and return the saved bytes still alive after that."""
        iterator, self._iterator, self.done = self._iterator, iter(()), True
        close = getattr(iterator, "close", None)
        del iterator
        try:
            if close is not None:
                self._call(close)      # in the loop's thread: its `with` blocks exit where they began
        finally:
            del close
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
        return self.tracker.bytes_alive


def measure_loop(loop, iterations: int | None = None, *,
                 allocated: Allocated = "auto") -> dict[str, list[int]]:
    """Run `loop` for `iterations` iterations (all of them if None) and return its history.

        def leaky_eval(model, batches):
            total = 0.0
            for x, y in batches:
                total += F.mse_loss(model(x), y)     # a tensor: every graph stays alive
                yield                                # one iteration done
        h = measure_loop(leaky_eval(model, batches), 20)
        steady_growth(h["saved_bytes"])              # bytes added per iteration

    The loop is closed at the end, which frees what its variables held."""
    meter = LoopMeter(loop, allocated=allocated)
    try:
        while iterations is None or len(meter.history["iteration"]) < iterations:
            if meter.step() is None:
                break
    finally:
        meter.close()
    return meter.history


def measure_steps(step: Callable[[int], object], iterations: int, *, keep=None,
                  allocated: Allocated = "auto") -> dict[str, list[int]]:
    """measure_loop for a step function: call step(i) for i in range(iterations); after each call
    count the nodes reachable from its return value and from `keep` (the state it updates)."""
    def loop():
        for i in range(iterations):
            yield step(i), keep
    return measure_loop(loop(), iterations, allocated=allocated)


class BatchProbe:
    """A loader wrapper that measures the loop consuming it: for code that is not a generator.

        probe = BatchProbe(loader)
        with SavedTensorTracker() as tracker:
            probe.tracker = tracker
            train_epoch(model, probe, loss_fn, optimizer)      # the code under test
        steady_growth(probe.history["nodes"], skip=0)          # 0: no graph kept across iterations

    Each time the code under test asks for the next batch (so once its previous iteration is over),
    and once more when the loader runs out, the probe records the graph nodes reachable from the
    asking function's local variables, and the tracker's saved bytes alive if it has a tracker. The
    first request (before any iteration) records nothing. Iterable as often as the loader is."""

    def __init__(self, loader, tracker: SavedTensorTracker | None = None):
        self.loader = loader
        self.tracker = tracker
        self.history: dict[str, list[int]] = {"iteration": [], "nodes": [], "saved_bytes": []}

    def _record(self, frame) -> None:
        nodes = graph_stats(frame.f_locals, saved=False).nodes   # also refreshes the locals snapshot
        self.history["iteration"].append(len(self.history["iteration"]) + 1)
        self.history["nodes"].append(nodes)
        self.history["saved_bytes"].append(self.tracker.bytes_alive if self.tracker is not None else 0)

    def __iter__(self):
        started = False
        for batch in self.loader:
            if started:
                self._record(sys._getframe(1))   # the frame that asked for this batch
            started = True
            yield batch
        if started:
            self._record(sys._getframe(1))


def steady_growth(series, skip: int = 1) -> int:
    """The constant amount a measured series grows by each iteration, after the first `skip` values.

    Raises ValueError when the steps differ (say which), so a claim built on it cannot pass by
    accident. 0 means flat."""
    values = list(series)[skip:]
    if len(values) < 2:
        raise ValueError(f"need at least {skip + 2} values to see a steady growth, got {len(series)}")
    steps = {b - a for a, b in itertools.pairwise(values)}
    if len(steps) != 1:
        raise ValueError(f"the series does not grow steadily: its steps are {sorted(steps)}")
    return steps.pop()
