"""The one way nested data is walked, in the kernel and in the grader: into lists, tuples and
dicts (a dict's values, under their keys), DEPTH levels down at most; below that, and for any
other value, a value is taken whole.

    values(value)             the value and every value in it, in order
    nodes(value)              the same, each with its path (the keys and indices to it)
    rebuilt(value, change)    the value built again of the same kinds, with what change() replaced

Which containers a walk opens is `into`'s say: `exactly` the built-in kinds alone (what a call's
data is made of; a subclass's methods are code of whoever made it), `loosely` their subclasses
too (a named tuple, an OrderedDict the test built)."""
DEPTH = 20  # far below Python's recursion limit, far above any honest call's nesting

INTO = object()  # change()'s answer for a value it leaves to the walk


def exactly(value) -> bool:
    return type(value) in (list, tuple, dict)


def loosely(value) -> bool:
    return isinstance(value, (list, tuple, dict))


def _items(container):
    return iter(container.items() if isinstance(container, dict) else enumerate(container))


def values(value, into=exactly):
    """`value` and every value in it, each container before what it holds, in order."""
    yield value
    stack = [iter(value.values() if isinstance(value, dict) else value)] if into(value) else []
    while stack:  # an iterator a level, not recursion: the same order, a fixed cost a value
        for node in stack[-1]:
            yield node
            if len(stack) < DEPTH and into(node):
                stack.append(iter(node.values() if isinstance(node, dict) else node))
                break
        else:
            stack.pop()


def nodes(value, into=exactly):
    """(path, node) for what values() meets: a path is the keys and indices that lead to its
    node from `value` (whose path is [])."""
    yield [], value
    path: list = []
    stack = [_items(value)] if into(value) else []
    while stack:
        for key, node in stack[-1]:
            yield [*path, key], node
            if len(stack) < DEPTH and into(node):
                path.append(key)
                stack.append(_items(node))
                break
        else:
            stack.pop()
            if path:
                path.pop()


def rebuilt(value, change):
    """`value` with each value in it (itself included) replaced by change(value), unless that is
    INTO: then a list, tuple or dict within DEPTH is built again of its own kind from its values
    rebuilt, and anything else stays as it is."""
    def at(node, depth):
        changed = change(node)
        if changed is not INTO:
            return changed
        if depth < DEPTH and exactly(node):
            if type(node) is dict:
                return {key: at(item, depth + 1) for key, item in node.items()}
            return type(node)(at(item, depth + 1) for item in node)
        return node
    return at(value, 0)
