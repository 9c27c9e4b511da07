"""The error every failed check raises: its own module, so that the checks and the misconception
catalogue (whose PitfallError is one) can each import it without importing the other."""


class GradingError(AssertionError):
    """A failed check, worded for the student who will read it in their feedback."""
