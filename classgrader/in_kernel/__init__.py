"""The only part of the grading pipeline a student's kernel imports, and the only part the
sandbox shows it: the integrity audit, the answer server, protocol.py (every wire's messages,
imported by both ends), the kernel halves of identity and autograd (the grader's are in
judging/), the walker over nested data and the bounds on what crosses. Nothing here imports the
rest of classgrader (tests/test_layout.py)."""
