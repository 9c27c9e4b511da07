"""Scripted submissions, one module per assignment, for the end-to-end grading test."""
from dataclasses import dataclass, field


@dataclass
class Scenario:
    student: str
    answers: dict[str, str] | None = field(default_factory=dict)  # None: the untouched release
    loses: set[str] = field(default_factory=set)                   # test cells scoring 0
    says: list[str] = field(default_factory=list)                  # feedback must contain these
    extra_cells: dict[str, str] = field(default_factory=dict)      # code cells a student added
