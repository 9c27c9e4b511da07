"""The only part of the grading pipeline a student's kernel imports, and the only part the
sandbox shows it: the integrity audit, the answer server, the wire protocol both ends speak,
and the kernel halves of identity, autograd and graph replay. Nothing here imports the rest of
classgrader (tests/test_layout.py)."""
