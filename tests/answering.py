"""A student's kernel for the judge's tests (tests/classgrader/judging/test_judge.py, test_remote.py,
test_mirror.py): the real answer server over a namespace in this process, every request and reply
passed through the same encoding as across the real channel (protocol.dumps and loads).
tests/test_class_grading.py runs the same through real sandboxed kernels."""
import textwrap

from autograder import trace
from classgrader.in_kernel import answer_server, protocol
from classgrader.judging import judge

SETUP = ["import math\nimport torch\nfrom autograder import check_tensor, check_value, check_answer, check_raises"]


def over_the_wire(value):
    return protocol.loads(protocol.dumps(value))


class Student:
    """A student's kernel namespace and the questions it was asked."""

    def __init__(self, code: str):
        import torch
        self.namespace = {"torch": torch}
        exec(textwrap.dedent(code), self.namespace)
        self.requests, self.handles = [], answer_server.Handles()

    def ask(self, request):
        request = over_the_wire(request)
        self.requests.append(request)
        reply = answer_server.answer(self.namespace, request, self.handles)
        return over_the_wire(trace.portable(reply, self.handles.record))

    def judged(self, test: str, answers: set[str]):
        return judge.Judge(SETUP, answers, self.ask).run(textwrap.dedent(test))


def error_of(outputs) -> str | None:
    errors = [o for o in outputs if o.output_type == "error"]
    return f"{errors[0].ename}: {errors[0].evalue}" if errors else None
