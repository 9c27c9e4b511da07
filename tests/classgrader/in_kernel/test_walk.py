"""walk: the one walk over nested data, its order, its paths, its depth and the kinds it opens."""
from collections import OrderedDict, namedtuple

from classgrader.in_kernel import walk


def nested(levels: int):
    """A list `levels` deep around "bottom"."""
    value = "bottom"
    for _ in range(levels):
        value = [value]
    return value


def test_nodes_come_containers_first_in_order_with_the_keys_that_lead_to_them():
    data = [1, {"a": (2, 3), "b": 4}]
    assert [(path, node) for path, node in walk.nodes(data) if not walk.exactly(node)] == \
        [([0], 1), ([1, "a", 0], 2), ([1, "a", 1], 3), ([1, "b"], 4)]
    assert next(walk.nodes(data)) == ([], data)


def test_values_meets_what_nodes_meets_in_the_same_order():
    inner = [5]
    data = ([1, {"a": inner, "b": (inner, 2)}], {}, nested(walk.DEPTH + 3), "s")
    assert list(walk.values(data)) == [node for _, node in walk.nodes(data)]
    assert [node for node in walk.values(data) if node is inner] == [inner, inner]  # met at each place


def test_a_dicts_values_are_walked_never_its_keys():
    assert [node for _, node in walk.nodes({("k", 1): "v"})][1:] == ["v"]


def test_nodes_go_depth_levels_down_and_take_what_is_below_whole():
    at_limit = [node for _, node in walk.nodes(nested(walk.DEPTH))]
    assert at_limit[-1] == "bottom"
    past = [(path, node) for path, node in walk.nodes(nested(walk.DEPTH + 1))]
    assert len(past[-1][0]) == walk.DEPTH and past[-1][1] == ["bottom"]
    assert list(walk.values(nested(walk.DEPTH + 1)))[-1] == ["bottom"]


def test_exactly_opens_the_builtin_kinds_alone_and_loosely_their_subclasses_too():
    Pair = namedtuple("Pair", "x y")
    for value in (Pair(1, 2), OrderedDict(a=1)):
        assert [node for _, node in walk.nodes(value)] == [value]
        assert [node for _, node in walk.nodes(value, walk.loosely)][1:] == [1, 2][:len(value)]
        assert list(walk.values(value)) == [value] and list(walk.values(value, walk.loosely))[1:] == [1, 2][:len(value)]


def test_rebuilt_builds_each_kind_again_around_what_change_replaced():
    data = [1, (2, [3]), {"k": 4}, "s"]
    out = walk.rebuilt(data, lambda node: node * 10 if type(node) is int else walk.INTO)
    assert out == [10, (20, [30]), {"k": 40}, "s"]
    assert type(out[1]) is tuple and out[1] is not data[1]


def test_rebuilt_replaces_a_container_whole_and_the_root_itself():
    inner = [1, 2]
    data = [inner, [3]]
    assert walk.rebuilt(data, lambda node: "inner" if node is inner else walk.INTO) == ["inner", [3]]
    assert walk.rebuilt(data, lambda node: "all") == "all"


def test_rebuilt_keeps_what_is_below_the_depth_and_what_it_does_not_open():
    deep = nested(walk.DEPTH + 1)
    out = walk.rebuilt(deep, lambda node: "changed" if node == "bottom" else walk.INTO)
    assert out == deep  # "bottom" sits one level below the walk
    assert out is not deep
    Pair = namedtuple("Pair", "x y")
    pair = Pair(1, 2)
    assert walk.rebuilt([pair], lambda node: 0 if type(node) is int else walk.INTO)[0] is pair
