"""identity, the kernel's side: what a call was given is marked, a tensor by the number its
pickle carried, any other object by its place, so that the answer names it instead of copying it
(both sides at once: tests/classgrader/judging/test_identity.py)."""
import torch

from classgrader.in_kernel import identity


def test_what_a_call_returns_that_it_was_given_goes_back_as_a_given():
    identity.MET.clear()
    sent = identity.tagged(0, torch.zeros(2), requires_grad=True)
    assert sent.requires_grad and identity.MET[0] is sent
    inner, fresh = [1.5], torch.ones(1)
    args, kwargs = ([inner, sent],), {"k": 2.5}
    answer = identity.as_given([inner, sent, fresh, {"again": inner}], identity.given_objects(args, kwargs))
    assert answer[0].path == [0, 0, 0] and answer[0].number is None   # args[0][0], by its place
    assert answer[1].number == 0 and answer[1].path is None           # the tensor by its number
    assert answer[2] is fresh and answer[3]["again"].path == [0, 0, 0]
