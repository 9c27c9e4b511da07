"""answer_server: the student's kernel answers the grader's questions with data only."""

import base64

import torch

from autograder import trace
from classgrader.in_kernel import answer_server, protocol


def test_names_say_what_each_name_holds_without_running_anything():
    namespace = {"q1": "c", "describe": len, "weights": torch.ones(2)}
    reply = answer_server.answer(namespace, {"op": "names", "names": ["q1", "describe", "weights", "gone"]})
    assert reply["q1"] == ("value", "c") and reply["describe"] == ("callable",) and reply["gone"] == ("missing",)
    assert torch.equal(reply["weights"][1], torch.ones(2))


def test_a_call_gets_inputs_as_data_and_hands_back_result_and_inputs_after():
    def scale_(t, by):
        t.mul_(by)
        return t.sum()
    request = {"op": "call", "name": "scale_", "args": trace.portable([torch.ones(3), 2.0]),
               "kwargs": trace.portable({})}
    kind, result, args_after, _, call = answer_server.answer({"scale_": scale_}, request)
    assert kind == "returned" and result.item() == 6.0 and call is None  # nothing requires grad: no graph kept
    assert torch.equal(args_after[0], torch.full((3,), 2.0))  # what it did in place comes back too


def test_a_call_draws_from_the_callers_random_state_and_leaves_the_kernels_own_as_it_was():
    caller = torch.Generator().manual_seed(9).get_state()
    request = {"op": "call", "name": "draw", "args": trace.portable([]), "kwargs": trace.portable({}),
               "grad": False, "rng": base64.b64encode(caller.numpy().tobytes()).decode()}
    own = torch.get_rng_state()
    _, (drawn, recording), *_ = answer_server.answer({"draw": lambda: (torch.rand(2), torch.is_grad_enabled())}, request)
    assert torch.equal(drawn, torch.rand(2, generator=torch.Generator().manual_seed(9))) and recording is False
    assert torch.equal(torch.get_rng_state(), own) and torch.is_grad_enabled()


def test_whatever_the_function_raises_comes_back_as_a_name_and_a_message():
    def refuse(x):
        raise ValueError("no negative sizes")
    request = {"op": "call", "name": "refuse", "args": trace.portable([1]), "kwargs": trace.portable({})}
    assert answer_server.answer({"refuse": refuse}, request) == ("raised", "ValueError", "no negative sizes")
    request["name"] = "exits"
    assert answer_server.answer({"exits": exit}, request)[:2] == ("raised", "SystemExit")
    request["name"] = "undefined"
    assert answer_server.answer({}, request)[:2] == ("raised", "NameError")


def request_bytes(**request) -> bytes:
    return protocol.dumps(request)


def reply_of(data: bytes):
    return trace.materialize(protocol.loads(data))


def test_a_reply_loads_as_data_only_with_its_requests_token():
    token, reply = reply_of(answer_server.respond({"q2": "b"}, request_bytes(op="names", names=["q2"], token="abc123")))
    assert token == "abc123" and reply == {"q2": ("value", "b")}


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
            protocol.send_frame(connection, request_bytes(op="names", names=["q1"], token=token))
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
    reply = answer_server.answer(namespace, {"op": "call", "name": "make", "args": {"list": []}, "kwargs": {"dict": []}},
                                 handles)
    sent = trace.portable(reply, handles.record)["tuple"][1]
    assert sent["handle"] == 0 and sent["object"] == "torch.nn.modules.container.Sequential"
    assert "torch.nn.modules.module.Module" in sent["bases"] and sent["callable"] is True

    def ask(op, **details):
        return answer_server.answer(namespace, {"op": op, "handle": 0, **details}, handles)

    assert ask("len") == ("returned", 2)
    first = ask("getitem", key={"plain": 0})[1]
    assert isinstance(first, torch.nn.Linear) and trace.portable(first, handles.record)["handle"] == 1
    assert ask("getattr", attr="training") == ("returned", True)
    layers = ask("iterate")[1]  # a Sequential iterates over its layers: kept here too
    assert [handles.record(layer)["handle"] for layer in layers] == [1, 2]
    assert "_modules" in ask("vars")[1]
    # The same object is the same number; a number never given out is refused.
    assert handles.record(first)["handle"] == 1
    assert answer_server.answer(namespace, {"op": "len", "handle": 7}, handles)[:2] == ("raised", "ValueError")
    assert answer_server.answer(namespace, {"op": "call", "handle": True, "args": {"list": []},
                                            "kwargs": {"dict": []}}, handles)[:2] == ("raised", "ValueError")


def test_a_generator_without_end_is_not_listed_forever():
    import itertools
    handles = answer_server.Handles()
    handles.record(itertools.count())
    assert answer_server.answer({}, {"op": "iterate", "handle": 0}, handles)[:2] == ("raised", "ValueError")
