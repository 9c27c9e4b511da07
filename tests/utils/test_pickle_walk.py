"""utils.pickle_walk: a pickle's program followed on placeholders, with nothing imported or run.

Covers: the opcode table knows every opcode Python's pickletools does; plain data walked in every
protocol (0 to 5) rebuilds, placeholder by placeholder, exactly what pickle.loads gives (memo,
marks, shared objects, sets and bytes the old protocols build by calls); out-of-band buffers keep
the stack straight; globals are counted in order, REDUCE calls by name, persistent ids kept; the
refusals weights_only would make (SETITEMS into an object that is not a dict, BUILD on a plain
value); the opcodes outside weights_only's set; a pickle without STOP."""
import collections
import io
import pickle
import pickletools

import pytest

from utils import pickle_walk as pw


def walk(data: bytes, allowed=frozenset(), blocked=frozenset()):
    w = pw.Walk(allowed, blocked)
    return w, w.run(io.BytesIO(data))


def plain(x):
    """A placeholder tree of plain data back as Python values (what pickle.loads would build)."""
    if isinstance(x, pw.Dict):
        return {plain(k): plain(v) for k, v in x.items}
    if isinstance(x, pw.List):
        return [plain(v) for v in x.items]
    if isinstance(x, pw.Set):
        return (frozenset if x.frozen else set)(plain(v) for v in x.items)
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    if isinstance(x, pw.Call):                  # how protocols 0-2 spell sets and bytes: calls, walked not run
        name, args = pw.func_name(x), [plain(a) for a in x.args]
        if name in ("builtins.set", "builtins.frozenset"):
            return (set if name == "builtins.set" else frozenset)(args[0] if args else ())
        if name == "_codecs.encode":
            return args[0].encode(args[1])
        if name == "builtins.bytes":
            return bytes(*args)
        raise AssertionError(f"unexpected call {name}")
    assert not isinstance(x, pw.Sym), x
    return x


def test_the_table_knows_every_opcode():
    assert {op.name for op in pickletools.opcodes} == set(pw.Walk.OPS) | {"STOP"}
    assert set(pw.Walk.OPS) | {"STOP"} >= pw.WEIGHTS_ONLY_OPCODES


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_plain_data_rebuilds_exactly_in_every_protocol(protocol):
    shared = [1, 2]
    data = {"ints": [0, 1, -1, 255, 65_535, 2**31, 2**70, -(2**70)], "floats": [0.5, -1e300],
            "text": ["", "x", "é" * 300], "bytes": [b"", b"ab", bytes(300)], "none": None, "bools": (True, False),
            "tuples": [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)], "sets": [{1, 2}, frozenset({3})],
            "nested": {"k": [[], {}, {"deep": [shared]}]}, "shared": (shared, shared), 7: "int key"}
    w, root = walk(pickle.dumps(data, protocol=protocol))
    assert plain(root) == data == pickle.loads(pickle.dumps(data, protocol=protocol))
    again = plain(root)["shared"]
    assert root.items[-2][1][0] is root.items[-2][1][1]         # the memo gives back the same placeholder
    assert again[0] == again[1] and w.protocol == (protocol if protocol >= 2 else None)


def test_out_of_band_buffers_keep_the_stack_straight():
    data = pickle.dumps([pickle.PickleBuffer(b"ab"), 1], protocol=5, buffer_callback=lambda b: False)
    names = [op.name for op, _, _ in pickletools.genops(data)]
    assert "NEXT_BUFFER" in names and "READONLY_BUFFER" in names
    w, root = walk(data)
    assert [type(x) for x in root.items] == [pw.Opaque, int] and root.items[0].what == "an out-of-band buffer"
    assert set(w.unsupported) >= {"NEXT_BUFFER", "READONLY_BUFFER", "FRAME"}


class Plain:
    def __init__(self):
        self.a = 1


class Items:
    """Pickles as "make one, then SETITEMS on it", like a dict subclass would."""

    def __reduce__(self):
        return (Items, (), None, None, iter([("k", 1), ("j", 2)]))


def test_globals_calls_and_refusals_are_recorded_not_run():
    ordered = collections.OrderedDict(a=1)
    w, root = walk(pickle.dumps([ordered, ordered, collections.OrderedDict(b=2), Plain()], protocol=2),
                   allowed=frozenset({"collections.OrderedDict"}))
    name = f"{__name__}.Plain"
    assert w.globals == {"collections.OrderedDict": 1, name: 1}      # named once, then taken from the memo
    assert w.reduced == {"collections.OrderedDict": 2} and w.refusals == []
    assert w.is_safe("collections.OrderedDict") and not w.is_safe(name)
    first, again, other, obj = root.items
    assert first is again and first.items == [("a", 1)] and other.items == [("b", 2)]
    assert (obj.how, pw.func_name(obj), obj.state.items) == ("NEWOBJ", name, [("a", 1)])
    w, _ = walk(pickle.dumps(Items(), protocol=2))
    assert w.refusals == ["SETITEMS into something that is not a dict"]
    w, _ = walk(b"\x80\x02K\x01K\x02b.")                          # BUILD on the number 1
    assert w.refusals == ["BUILD on something that is not an object"]


def test_blocked_modules_stay_unsafe_even_when_allowed():
    w, root = walk(b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00true\x85R.", allowed=frozenset({"os.system"}),
                   blocked=frozenset({"os"}))
    assert w.globals == {"os.system": 1} and not w.is_safe("os.system")
    assert (pw.func_name(root), root.args, root.how) == ("os.system", ("true",), "REDUCE")


class Stored:
    """Saved outside the pickle, as torch saves a tensor's storage: the pickle holds only its id."""

    def __init__(self, key: str):
        self.key = key


class Saver(pickle.Pickler):
    def persistent_id(self, obj):
        return ("storage", obj.key) if isinstance(obj, Stored) else None


def test_persistent_ids_are_kept_in_order():
    buf = io.BytesIO()
    Saver(buf, protocol=2).dump({"a": Stored("0"), "b": Stored("1"), "c": "plain"})
    w, root = walk(buf.getvalue())
    assert w.persistent_ids == [("storage", "0"), ("storage", "1")] and w.refusals == []
    assert [type(v) for _, v in root.items] == [pw.PersId, pw.PersId, str]
    assert w.globals == {}                       # the stored objects' class is never named


def test_a_pickle_without_stop_is_an_error():
    with pytest.raises(ValueError, match="STOP"):
        walk(pickle.dumps(1, protocol=2)[:-1])
