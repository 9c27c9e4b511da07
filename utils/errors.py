"""show_error(): show a real PyTorch error in a lesson, and check that it still happens.

A lesson that wants to show what a shape mismatch looks like cannot just let the cell raise:
the notebook would stop there and CI would fail. So the lesson writes

    msg = show_error(lambda: torch.ones(3) + torch.ones(4))

which prints `RuntimeError: The size of tensor a (3) must match ...` and returns the message.
If the code stops raising (PyTorch changed, or the lesson is wrong), show_error raises
ClaimFailed, so the lesson cannot go on showing an error that no longer exists."""
from utils.claims import ClaimFailed


def show_error(fn, contains: str | None = None) -> str:
    """Call fn(), which should raise; print `Type: first line of the message`; return the message.

    contains: optional fragment the message must include (the words the lesson's text quotes).
    """
    try:
        fn()
    except ClaimFailed:  # a broken claim inside fn is the lesson failing, not the error it shows
        raise
    except Exception as exc:  # any ordinary error is the one we came to show
        message = str(exc)
        first, *rest = message.splitlines() or [""]
        print(f"{type(exc).__name__}: {first}" + (" [...]" if rest else ""))
        if contains is not None and contains not in message:
            raise ClaimFailed(f"the lesson expected an error containing {contains!r}, "
                              f"but this PyTorch says {message!r}") from exc
        return message
    raise ClaimFailed("the lesson expected this code to raise an error, but it ran without one")
