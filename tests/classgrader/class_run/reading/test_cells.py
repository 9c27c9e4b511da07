"""cells: a cell's source read as IPython runs it (magics, shell escapes, automagic), and a
notebook's cells parsed in order."""
import ast

from classgrader.class_run.reading.cells import UNREADABLE, cell_trees, python_of, top_level_names


def test_magics_and_shell_escapes_are_the_calls_they_make():
    assert python_of("%time x = 1").strip() == "get_ipython().run_line_magic('time', 'x = 1')"
    assert python_of("!ls").strip() == "get_ipython().system('ls')"


def test_a_line_starting_with_a_magic_s_name_is_that_magic():
    assert python_of("env X=1").strip() == "get_ipython().run_line_magic('env', 'X=1')"
    # an extension's magic the grader does not list: a line that is not Python runs as one, or fails
    assert python_of("store -r x").strip() == "get_ipython().run_line_magic('store', '-r x')"


def test_python_stays_python():
    assert python_of("ls = [1, 2]").strip() == "ls = [1, 2]"  # an assignment, never the magic
    assert python_of("print (1)").strip() == "print (1)"  # a builtin's name
    assert python_of("history[-1]", {"history"}).strip() == "history[-1]"  # a variable of the notebook's


def test_a_shadowed_name_keeps_the_magic_where_the_line_is_not_python():
    # the binding may have failed when it ran (run = 1/0): IPython then runs the magic
    assert "run_line_magic('run'" in python_of("run x.py", {"run"})


def test_cells_are_parsed_in_order_with_what_earlier_cells_bind():
    trees = cell_trees(["x = (", "history = [1]", "history[-1]", "y = " + "-" * 200_000 + "1"])
    assert trees[0] is None  # a SyntaxError: nothing of it runs
    assert ast.unparse(trees[2]) == "history[-1]"
    assert trees[3] is UNREADABLE  # deeper than the parser goes: a finding, not a crash


def test_a_name_deleted_anywhere_shadows_nothing():
    trees = cell_trees(["history = [1]", "del history", "history -r"])
    assert "run_line_magic('history'" in ast.unparse(trees[2])


def test_only_a_cell_s_own_top_level_statements_bind_for_later_cells():
    tree = ast.parse("x = 1\nimport a.b as c\nfrom d import e\ndef f(): pass\nclass G: pass\nif x:\n    h = 2")
    assert top_level_names(tree) == {"x", "c", "e", "f", "G"}  # not h: its block may not run
