"""answer_server: the student's kernel answers the grader's questions with data only."""
import base64
import io

import torch

from autograder import trace
from classgrader import answer_server, verify


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


def test_serve_writes_one_reply_record_the_grader_reads_as_data(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_TRACE_DIR", str(tmp_path))
    buffer = io.BytesIO()
    torch.save({"op": "names", "names": ["q2"], "token": "abc123"}, buffer)
    answer_server.serve({"q2": "b"}, base64.b64encode(buffer.getvalue()).decode())
    [entry] = verify.read_records([str(p) for p in tmp_path.iterdir()])
    assert entry["kind"] == "reply" and entry["name"] == "abc123"
    assert trace.materialize(entry["got"]) == {"q2": ("value", "b")}


def test_the_loop_answers_each_request_it_reads_until_an_empty_one(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_TRACE_DIR", str(tmp_path))
    requests = []
    for token in ("first", "second"):
        buffer = io.BytesIO()
        torch.save({"op": "names", "names": ["q1"], "token": token}, buffer)
        requests.append(base64.b64encode(buffer.getvalue()).decode())
    lines = iter([*requests, ""])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))  # the kernel's stdin channel
    answer_server.serve_loop({"q1": "d"})
    entries = verify.read_records([str(p) for p in tmp_path.iterdir()])
    assert [e["name"] for e in entries] == ["first", "second"]
