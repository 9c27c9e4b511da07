"""Checks for the "check yourself" questions at the end of every assignment."""
from .checks import GradingError
from .trace import record


def check_choice(answer, options: str, name: str) -> None:
    """Visible check: the answer is one of the option letters, given as a string."""
    letters = ", ".join(repr(o) for o in options)
    if not (isinstance(answer, str) and len(answer) == 1 and answer in options):
        raise GradingError(f"{name}: answer with one of {letters} (a one-letter string), "
                           f"got {answer!r}.")
    record("choice", name, answer, options)


def check_answer(answer, correct: str, name: str, hint: str) -> None:
    """Hidden check: the right option; the hint points back to the lesson, not to the answer."""
    if answer != correct:
        raise GradingError(f"{name}: not the right choice. {hint}")
    record("answer", name, answer, correct)
