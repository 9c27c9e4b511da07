"""The storage explorer: the pure report checked against what the views really hold, then the widget.

Covers shares_storage (views into the middle of a storage, copies, reshape that copies and reshape
that does not, empty tensors), touched_indices (for every offered view and for seeded random chains of
view ops: the storage elements at the touched indices are exactly the view's values, in order),
storage_report (strides, offset, contiguity, data_ptr vs storage), storage_html (the data- hooks),
and StorageExplorer (setting view_picker recomputes view.value)."""
import random

import pytest
import torch

from utils.storage_view import (
    VIEWS,
    StorageExplorer,
    default_base,
    shares_storage,
    storage_elements,
    storage_html,
    storage_report,
    touched_indices,
)

# What each offered view is: True for a view of t's storage, False for a copy.
SHARES = {"t[1]": True, "t[:, 1]": True, "t[1:, 2:]": True, "t[:, ::2]": True, "t.T": True,
          "t.diagonal()": True, "t.view(4, 3)": True, "t.reshape(4, 3)": True, "t.flatten()": True,
          "t[0].expand(3, 4)": True, "t.T.reshape(12)": False, "t.T.contiguous()": False,
          "t[[0, 2]]": False, "t.clone()": False}


def test_every_offered_view_is_classified():
    assert list(VIEWS) == list(SHARES)


@pytest.mark.parametrize("name", list(VIEWS))
def test_touched_indices_read_exactly_the_views_values(name):
    t = default_base()
    v = VIEWS[name](t)
    r = storage_report(t, v)
    assert r.shares_storage is SHARES[name]
    assert [r.view_storage[i] for i in r.touched] == v.flatten().tolist() == list(r.values)
    assert (r.shape, r.stride, r.storage_offset, r.is_contiguous) == (
        tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous())
    assert r.storage == tuple(range(12))
    if r.shares_storage:
        assert r.view_storage == r.storage
        # writing through the view really changes t: the touched cells and only those
        t2 = default_base()
        v2 = VIEWS[name](t2)
        v2 = v2 if v2.stride().count(0) == 0 else v2[0]   # expand refuses writes; write one row of it
        v2.fill_(-1)
        assert sorted(set(touched_indices(v2))) == [i for i, x in enumerate(t2.flatten().tolist()) if x == -1]
    else:
        t2 = default_base()
        VIEWS[name](t2).fill_(-1)
        assert t2.equal(default_base())


def test_known_windows():
    t = default_base()
    r = storage_report(t, t[:, 1])
    assert (r.touched, r.stride, r.storage_offset, r.is_contiguous) == ((1, 5, 9), (4,), 1, False)
    r = storage_report(t, t.T)
    assert r.touched == (0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11) and r.stride == (1, 4)
    r = storage_report(t, t[0].expand(3, 4))
    assert r.touched == (0, 1, 2, 3) * 3 and r.stride == (0, 1)
    assert storage_report(t, t[1]).touched == (4, 5, 6, 7)


def test_middle_views_share_storage_though_data_ptr_differs():
    t = default_base()
    r = storage_report(t, t[1])
    assert r.shares_storage and not r.same_data_ptr and r.storage_offset == 4
    assert t[1].data_ptr() == t.data_ptr() + 4 * t.element_size()
    assert storage_report(t, t.T).same_data_ptr and storage_report(t, t.clone()).same_data_ptr is False


def test_reshape_views_when_it_can_and_copies_when_it_must():
    t = default_base()
    assert shares_storage(t, t.reshape(4, 3)) and shares_storage(t, t.reshape(12))
    assert not shares_storage(t, t.T.reshape(12))                 # .T's elements are not in storage order
    assert shares_storage(t, t.T.reshape(4, 3, 1))                  # ... but adding a dim merges nothing
    assert shares_storage(t, t[:, :2].reshape(3, 2, 1))            # splitting a dim keeps strides
    assert not shares_storage(t, t[:, :2].reshape(6))              # merging gapped rows cannot
    assert shares_storage(t, t.contiguous()) and t.contiguous() is t
    assert not shares_storage(t, t.T.contiguous())
    assert not shares_storage(t, t.clone()) and shares_storage(t, t.detach())
    assert not shares_storage(t, t.float())                         # a dtype change copies
    assert shares_storage(t, t.to(torch.int64))                     # ... and no change returns t


def test_empty_tensors_share_nothing():
    e = torch.empty(0)
    assert not shares_storage(e, e) and not shares_storage(e, torch.empty(0))
    r = storage_report(e, e.view(0, 3))
    assert (r.storage, r.touched, r.values, r.shares_storage) == ((), (), (), False)


@pytest.mark.parametrize("seed", range(3))
def test_random_chains_of_view_ops(seed, covered):
    rng = random.Random(seed)
    base = torch.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    def transpose(v):
        return v.transpose(rng.randrange(v.dim()), rng.randrange(v.dim())) if v.dim() else v

    def narrow(v):
        if not v.dim() or not v.shape[d := rng.randrange(v.dim())]:
            return v
        start = rng.randrange(v.shape[d])
        return v.narrow(d, start, rng.randint(1, v.shape[d] - start))

    def step(v):
        if not v.dim():
            return v
        return v[(slice(None),) * rng.randrange(v.dim()) + (slice(None, None, rng.randint(1, 3)),)]

    def expand(v):  # a new leading dim of stride 0
        return v.unsqueeze(0).expand(rng.randint(1, 3), *v.shape) if v.dim() < 5 else v

    def select(v):
        if v.dim() < 2 or not v.shape[d := rng.randrange(v.dim())]:
            return v
        return v.select(d, rng.randrange(v.shape[d]))

    def permute(v):
        return v.permute(*rng.sample(range(v.dim()), v.dim()))

    def flat(v):  # views if it can, copies if it must
        return v.reshape(-1)

    ops = [transpose, narrow, step, expand, select, permute, flat]
    kinds = {True: 0, False: 0}
    for _ in range(60):
        v = base
        for _ in range(rng.randint(1, 5)):
            v = rng.choice(ops)(v)
        r = storage_report(base, v)
        assert [r.view_storage[i] for i in r.touched] == v.flatten().tolist()
        if r.shares_storage:                       # the storage is arange: its values are its indices
            assert list(r.touched) == v.flatten().tolist()
        assert r.shares_storage == (v.untyped_storage().data_ptr() == base.untyped_storage().data_ptr())
        kinds[r.shares_storage] += 1
    assert kinds[True] > 10 and kinds[False] > 3, kinds   # views and copies both exercised
    if seed == 0:
        covered("storage_report: 180 random chains of transpose/narrow/step/expand/select/permute/reshape")


def test_base_that_is_itself_a_view():
    big = torch.arange(10.0)
    base = big[2:8].view(2, 3)
    r = storage_report(base, base[:, 1])
    assert r.storage == tuple(float(i) for i in range(10))     # the whole storage, not only base's part
    assert r.base_touched == (2, 3, 4, 5, 6, 7) and r.touched == (3, 6)
    assert storage_elements(base[1]) == [float(i) for i in range(10)]


def test_refuses_meta_and_reinterpreted_dtypes():
    with pytest.raises(ValueError, match="meta"):
        storage_report(torch.ones(3, device="meta"), torch.ones(3, device="meta"))
    t = default_base()
    with pytest.raises(ValueError, match="dtype"):
        storage_report(t, t.view(torch.int32))
    with pytest.raises(TypeError):
        storage_report(t, [1, 2])
    r = storage_report(t, t.double())                              # a copy in another dtype is fine
    assert not r.shares_storage and r.view_storage == tuple(float(i) for i in range(12))


def test_html_has_stable_hooks():
    t = default_base()
    page = storage_html(t, t[:, 1], name="t[:, 1]")
    assert ('<div class="storage-explorer" data-view="t[:, 1]" data-shares="true" data-touched="1,5,9" '
            'data-shape="3" data-stride="4" data-offset="1" data-contiguous="false" '
            'data-same-data-ptr="false">') in page
    assert 'data-index="5" data-value="5" data-touched="true" data-order="1"' in page
    assert 'data-index="4" data-value="4" data-touched="false" data-order=""' in page
    assert page.count('data-touched="true"') == 3
    assert '<table class="storage-row" data-storage="shared" data-size="12"' in page
    assert "<script" not in page and "http" not in page
    copy = storage_html(t, t.T.reshape(12), name="t.T.reshape(12)")
    assert 'data-shares="false"' in copy and 'data-storage="base"' in copy and 'data-storage="own"' in copy
    assert "copy" in copy
    expanded = storage_html(t, t[0].expand(3, 4), name="e")
    assert 'data-index="2" data-value="2" data-touched="true" data-order="2,6,10"' in expanded
    long = torch.arange(1000)
    big = storage_html(long, long[::100])
    assert page.count("storage-cell") == 12 and big.count("storage-cell") == 256 and "744 more" in big


def test_widget_recomputes_when_a_view_is_picked(covered):
    w = StorageExplorer()
    assert list(w.view_picker.options) == list(VIEWS) and w.children[1] is w.view
    assert w.view_picker.value == "t[1]" and 'data-touched="4,5,6,7"' in w.view.value
    w.view_picker.value = "t[:, ::2]"
    assert 'data-view="t[:, ::2]" data-shares="true" data-touched="0,2,4,6,8,10"' in w.view.value
    w.view_picker.value = "t.T.reshape(12)"
    assert 'data-shares="false"' in w.view.value
    for name in VIEWS:
        w.view_picker.value = name
        assert f'data-shares="{str(SHARES[name]).lower()}"' in w.view.value
    # a view that does not fit a custom base is reported, not raised
    w = StorageExplorer(base=torch.arange(6.0))
    assert 'data-view="t[1]" data-shares="true" data-touched="1"' in w.view.value
    w.view_picker.value = "t.view(4, 3)"
    assert 'data-error="shape \'[4, 3]\' is invalid for input of size 6"'.replace("'", "&#x27;") in w.view.value
    w = StorageExplorer(views={"every third": lambda t: t.flatten()[::3]})
    assert w.view_picker.value == "every third" and 'data-touched="0,3,6,9"' in w.view.value
    with pytest.raises(ValueError, match="needs at least one named view"):
        StorageExplorer(views={})
    covered(f"storage explorer: {len(VIEWS)} named views, shares/touched/stride hooks, widget traitlets")
