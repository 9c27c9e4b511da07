"""The reading of a student's code, in the parts code_scan.py (its entry, and the statement of
its rules) puts together: rules.py (the lists), cells.py (a cell as IPython runs it), resolving.py
(dotted names and the objects they stand for), facts.py (what the whole notebook binds, writes and
calls), and the reader of one cell, in layers: walk.py (its state and shared rules), names.py,
calls.py, classes.py, reader.py (bindings and definitions: the Reader itself), with in_place.py and
check_library.py as rules they call."""
