"""The reading of a student's code, in the parts code_scan.py (its entry, and the statement of
its rules) puts together: rules.py (the lists), cells.py (a cell as IPython runs it), resolving.py
(dotted names and the objects they stand for), facts.py (what the whole notebook binds, writes and
calls), reader.py (one cell's tree walked against the rules)."""
