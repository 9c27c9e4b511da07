"""How big what a kernel sent may be, checked before anything walks it.

A reply or a record file is read as data only (JSON, or torch.load with weights_only), but data
can still be made to cost without end: a pickle's memo lets one list or dict be referred to from
many places, so a chain of 64 dicts that each hold the next one twice is a few KB of bytes and
2^64 nodes to any code that walks it as a tree (materialize, rebuild, a comparison). `check`
counts the nodes a tree walk would meet, each shared part measured once, and refuses data past
the bounds, or data that contains itself, before any such walk starts."""

MAX_NODES = 1_000_000  # a walk's whole cost: far above any honest reply (a state dict, a few batches)
MAX_DEPTH = 100  # nesting: far above any honest reply, well below Python's recursion limit

CONTAINERS = (dict, list, tuple, set, frozenset)


class Unbounded(ValueError):
    """Data past the bounds: the kernel's reply or record is refused unread."""


def _children(node):
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    if isinstance(node, CONTAINERS):
        return list(node)
    return None  # a leaf: a number, a string, bytes, a tensor (its size bounded by the frame's)


def check(data, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH):
    """`data` itself, once the tree a walk of it would meet is known to have at most
    `max_nodes` nodes and `max_depth` levels; Unbounded otherwise, or when it contains itself."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(data, False)]
    while stack:
        node, finished = stack.pop()
        children = _children(node)
        if children is None:
            continue
        key = id(node)
        if finished:
            on_path.discard(key)
            size, depth = 1, 1
            for child in children:
                size += sizes.get(id(child), 1)
                depth = max(depth, depths.get(id(child), 0) + 1)
            if size > max_nodes:
                raise Unbounded(f"more than {max_nodes} values when read")
            if depth > max_depth:
                raise Unbounded(f"nested more than {max_depth} levels deep")
            sizes[key], depths[key] = size, depth
            continue
        if key in sizes:
            continue
        if key in on_path:  # DFS: what is on the path is an ancestor of this node
            raise Unbounded("it contains itself")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if _children(child) is not None and id(child) not in sizes)
    return data
