"""answer_server: the student's kernel answers the grader's questions with data only, and a
question that is not one of protocol's kinds with Raised."""

import base64

import torch

from autograder import trace
from classgrader.in_kernel import answer_server, protocol

OWN_RNG = base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode()


def call(name, *args, **more):
    """A Call of `name` on data, in the grader's autograd mode and random state."""
    return {"op": "call", "name": name, "args": trace.portable(list(args)), "kwargs": trace.portable({}),
            "grad": True, "inference": False, "rng": OWN_RNG, **more}


def test_names_say_what_each_name_holds_without_running_anything():
    namespace = {"q1": "c", "describe": len, "weights": torch.ones(2)}
    found = answer_server.answer(namespace, {"op": "names", "names": ["q1", "describe", "weights", "gone"]})
    assert found["kind"] == "found" and found["callables"] == ["describe"]
    assert found["values"].keys() == {"q1", "weights"}  # "gone" is in neither: not defined
    assert found["values"]["q1"] == "c" and torch.equal(found["values"]["weights"], torch.ones(2))


def test_a_call_gets_inputs_as_data_and_hands_back_result_and_inputs_after():
    def scale_(t, by):
        t.mul_(by)
        return t.sum()
    called = answer_server.answer({"scale_": scale_}, call("scale_", torch.ones(3), 2.0))
    assert called["kind"] == "called" and called["result"].item() == 6.0
    assert called["call"] is None  # nothing requires grad: no graph kept
    assert torch.equal(called["args"][0], torch.full((3,), 2.0))  # what it did in place comes back too


def test_a_call_draws_from_the_callers_random_state_and_leaves_the_kernels_own_as_it_was():
    caller = torch.Generator().manual_seed(9).get_state()
    request = call("draw", grad=False, rng=base64.b64encode(caller.numpy().tobytes()).decode())
    own = torch.get_rng_state()
    called = answer_server.answer({"draw": lambda: (torch.rand(2), torch.is_grad_enabled())}, request)
    drawn, recording = called["result"]
    assert torch.equal(drawn, torch.rand(2, generator=torch.Generator().manual_seed(9))) and recording is False
    assert torch.equal(torch.get_rng_state(), own) and torch.is_grad_enabled()


def test_whatever_the_function_raises_comes_back_as_a_name_and_a_message():
    def refuse(x):
        raise ValueError("no negative sizes")
    assert answer_server.answer({"refuse": refuse}, call("refuse", 1)) == {
        "kind": "raised", "name": "ValueError", "message": "no negative sizes"}
    assert answer_server.answer({"exits": exit}, call("exits", 1))["name"] == "SystemExit"
    assert answer_server.answer({}, call("undefined", 1))["name"] == "NameError"


def test_a_question_of_no_kind_is_answered_raised_and_runs_nothing():
    ran = []
    namespace = {"f": lambda *args: ran.append(args)}
    for forged in ({"op": "exec", "code": "f()"}, {"op": "call", "name": "f"}, {**call("f"), "name": 3},
                   {**call("f"), "code": "f()"}, {"op": "names", "names": "f"}, "f"):
        answer = answer_server.answer(namespace, forged)
        assert answer["kind"] == "raised" and answer["name"] == "Malformed"
    assert ran == []


def asked(request, token="abc123") -> bytes:
    return protocol.dumps({"token": token, "request": request})


def reply_of(data: bytes):
    answered = protocol.conforming(protocol.Answered, protocol.loads(data))
    return answered["token"], protocol.answer(trace.materialize(answered["answer"]))


def test_an_answer_loads_as_data_only_with_its_requests_token():
    token, answer = reply_of(answer_server.respond({"q2": "b"}, asked({"op": "names", "names": ["q2"]})))
    assert token == "abc123" and answer == {"kind": "found", "callables": [], "values": {"q2": "b"}}
    # A question without a token of its own is answered under none, which no grader asked for.
    token, answer = reply_of(answer_server.respond({}, protocol.dumps({"request": {"op": "len", "handle": 0}})))
    assert token == "" and answer["kind"] == "raised"


def test_serve_answers_each_frame_until_an_empty_one(tmp_path):
    import socket
    path = str(tmp_path / "grader.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(1)
        import threading
        kernel = threading.Thread(target=answer_server.serve, args=({"q1": "d"}, path))
        kernel.start()
        connection, _ = listener.accept()
        tokens = []
        for token in ("first", "second"):
            protocol.send_frame(connection, asked({"op": "names", "names": ["q1"]}, token))
            tokens.append(reply_of(protocol.read_frame(connection))[0])
        protocol.send_frame(connection, b"")
        kernel.join(timeout=30)
        connection.close()
    assert tokens == ["first", "second"] and not kernel.is_alive()
    # A frame over the limit is not read at all.
    left, right = socket.socketpair()
    right.sendall(protocol.HEADER.pack(protocol.MAX_FRAME + 1))
    assert protocol.read_frame(left) is None
    left.close(), right.close()


def test_what_is_not_data_stays_here_as_a_handle_the_grader_asks_about_by_number():
    handles = answer_server.Handles()
    namespace = {"make": lambda: torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())}
    called = answer_server.answer(namespace, call("make"), handles)
    sent = trace.portable(called["result"], handles.record)
    assert sent["handle"] == 0 and sent["object"] == "torch.nn.modules.container.Sequential"
    assert "torch.nn.modules.module.Module" in sent["bases"] and sent["callable"] is True

    def ask(op, **details):
        return answer_server.answer(namespace, {"op": op, "handle": 0, **details}, handles)

    assert ask("len") == {"kind": "returned", "value": 2}
    first = ask("getitem", key={"plain": 0})["value"]
    assert isinstance(first, torch.nn.Linear) and trace.portable(first, handles.record)["handle"] == 1
    assert ask("getattr", attr="training") == {"kind": "returned", "value": True}
    layers = ask("iterate")["value"]  # a Sequential iterates over its layers: kept here too
    assert [handles.record(layer)["handle"] for layer in layers] == [1, 2]
    assert "_modules" in ask("vars")["value"]
    # The same object is the same number; a number never given out is refused.
    assert handles.record(first)["handle"] == 1
    assert answer_server.answer(namespace, {"op": "len", "handle": 7}, handles)["name"] == "ValueError"
    by_handle = {key: value for key, value in call("").items() if key != "name"}
    assert answer_server.answer(namespace, {**by_handle, "handle": True}, handles)["name"] == "Malformed"


def test_a_generator_without_end_is_not_listed_forever():
    import itertools
    handles = answer_server.Handles()
    handles.record(itertools.count())
    assert answer_server.answer({}, {"op": "iterate", "handle": 0}, handles)["name"] == "ValueError"
