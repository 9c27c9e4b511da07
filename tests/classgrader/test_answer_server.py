"""answer_server: the student's kernel answers the grader's questions with data only."""
import base64
import io

import torch

from autograder import trace
from classgrader import answer_server


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
    kind, result, args_after, _ = answer_server.answer({"scale_": scale_}, request)
    assert kind == "returned" and result.item() == 6.0
    assert torch.equal(args_after[0], torch.full((3,), 2.0))  # what it did in place comes back too


def test_whatever_the_function_raises_comes_back_as_a_name_and_a_message():
    def refuse(x):
        raise ValueError("no negative sizes")
    request = {"op": "call", "name": "refuse", "args": trace.portable([1]), "kwargs": trace.portable({})}
    assert answer_server.answer({"refuse": refuse}, request) == ("raised", "ValueError", "no negative sizes")
    request["name"] = "exits"
    assert answer_server.answer({"exits": exit}, request)[:2] == ("raised", "SystemExit")
    request["name"] = "undefined"
    assert answer_server.answer({}, request)[:2] == ("raised", "NameError")


def request_text(**request) -> str:
    buffer = io.BytesIO()
    torch.save(request, buffer)
    return base64.b64encode(buffer.getvalue()).decode()


def reply_of(text: str):
    return trace.materialize(torch.load(io.BytesIO(base64.b64decode(text)), weights_only=True))


def test_a_reply_is_text_that_loads_as_data_only_with_its_requests_token():
    token, reply = reply_of(answer_server.respond({"q2": "b"}, request_text(op="names", names=["q2"], token="abc123")))
    assert token == "abc123" and reply == {"q2": ("value", "b")}


def test_the_loop_answers_each_request_in_its_next_prompt_until_an_empty_one(monkeypatch):
    requests = iter([request_text(op="names", names=["q1"], token="first"),
                     request_text(op="names", names=["q1"], token="second"), ""])
    prompts = []

    def kernel_input(prompt=""):  # what the kernel's stdin channel does: show a prompt, read a line
        prompts.append(prompt)
        return next(requests)
    monkeypatch.setattr("builtins.input", kernel_input)
    answer_server.serve_loop({"q1": "d"})
    assert prompts[0] == "" and [reply_of(p)[0] for p in prompts[1:]] == ["first", "second"]
