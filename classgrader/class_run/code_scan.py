"""Code in a submission that could rewrite the grading process, found by reading it: a flag for review.

Some facts only the student's kernel holds: whether autograd recorded, what a loop keeps alive,
which device was tried first, which tensors an optimiser was given. Code in that kernel reports
them (the check library's records, the integrity audit), and code in that kernel can rewrite
the reporter: the helpers, the audit's own tables, torch itself. Nothing inside the kernel can
be trusted to notice. The submitted notebook, though, is data the grader holds.

It is read against a list of what a beginner's answer uses (allowed.toml, asked through
allow_list.py): the builtins without reflection, the modules and names the course's own cells
import, and a set of torch APIs (tensors and their methods, torch.nn, nn.functional, optim,
utils.data, torch.load with weights_only left on and no pickle_module, the grad-mode context
managers). Whatever is not on it is a finding: torch.utils.checkpoint, torch.hub,
functools.update_wrapper, os.environ, an attribute no object of the course has. A construct
the reading did not foresee is then off the list by default. Besides, an honest answer in this
course needs none of the means such rewriting takes, which are named as such:

- code made at run time, and reflection by name: exec, eval, compile, __import__, globals,
  a computed getattr (but the two shapes that read only the student's own object, own_reads.py),
  setattr, vars(), type hints written as text (read as the code they spell), attribute names
  in a format string (given to str.format or string.Formatter, or its .format taken, too; one it
  computes is out of sight), string.Formatter's get_field, a class pattern, a dunder keyword or
  a mapping spread into SimpleNamespace; a module imported by name (a matplotlib backend
  "module://name");
- the process's own files, named by a text (/proc/self/environ holds what os.environ is refused
  for; "proc" or "environ" as a part of a path joined counts too);
- the process's memory: a file moved anywhere but its start (/proc/self/mem), numpy's
  __array_interface__ (a raw pointer), an array made over another's memory (np.ndarray's buffer,
  recarray's buf) at an offset that is not a constant of at least 0 (a negative one starts it
  before, anywhere), or with its arguments unpacked, or numpy's array class (or the class type()
  gives) handed to a call the reading does not follow (partial(np.ndarray, ...));
- the interpreter and the grader: modules beyond the course's (sys beyond its streams, gc,
  ctypes, inspect, importlib, classgrader...), frames and code objects, dunders beyond a name
  and super().__init__ (as attributes or as variables: __builtins__, __annotations__), torch._C,
  global hooks, the private tables of hooks torch's objects run (model._forward_hooks, read or
  written, even where the notebook gives its own objects such a name), the check library's
  records, the names its probes hold (a checked loader's loader), even where the notebook gives
  its own objects such a name, and any module reached through another (torch.sys), each
  resolved against the real module in the grader;
- changing what the tests hand in: a function that writes in place into a parameter it never
  binds again (x.sub_(...), x[:] = 0, x[0] -= 1, x.data = ..., out=x, torch.zero_ and nn.init's
  functions), since a test that computed what it expects from that input after the call would
  agree with a wrong answer (n += 1 on the bare name and batch[k] = v by a string or a name key
  are honest code's everyday shapes, not named; a view taken first, head = x[:, :k], is a name
  of its own, not followed);
- changing what is not the student's: assignments and deletions into modules, into classes
  reached through type() or a computed getattr, onto an object the target does not name, of a
  method's name on anything but a constructor's self, mutating calls on a module's tables; a
  module or a settable class (or the class type() gives, or type taken as a value) handed on
  where the reading does not follow it, by a notebook that writes an attribute by one of its
  names on anything (or, for a module, gives its own objects a name the list refuses on it); a
  decorator that writes methods or attributes (dataclass, total_ordering, typing's and abc's
  markers) applied to anything but the notebook's own class or function, or taken as a value;
- pretending: a subclass of torch.Tensor, a metaclass, a class of its own that redefines
  comparison, truth, conversion or attribute lookup, or writes its annotations as a table (their
  names, any text, become code in what dataclass makes); a module or optimiser of its own that
  redefines what it reports holding (parameters, buffers, layers, state_dict, its mode), as a
  member (its own or a base class's of the notebook's) or as code its constructor assigns to
  self, or a train or eval of its own that never calls torch's (super().train(mode)); a
  subclass of one of torch's layers (nn.Linear, nn.ReLU; not nn.Module nor a container) that
  redefines what the layer computes (forward or __call__, its own, a base class's of the
  notebook's, or forward assigned as code in its constructor): the tests take a layer they find
  in a model (isinstance(m, nn.Linear)) for torch's own and compute what they expect with it; a
  builtin or a helper of the course's own cells redefined as code (the tests would call it);
  grad mode or a default switched anywhere but for a block, or held by a generator suspended
  inside a `with` of anything but a file, a folder or a catch (a @contextmanager by a name
  never rebound is a block); the session's history (In, Out, _i), names the notebook never defines, unpickling
  (torch.load(weights_only=False), allow_pickle=True); numpy's matrix builders given a string
  (np.bmat("In"), np.r_["In"]), which read the caller's variables it names.

Every code cell the student wrote or changed is read (never run) after IPython's own
transformation, so a magic or a shell escape is seen as the call it makes, and so is a cell of
one line that starts with a magic's name (automagic: `env NAME=1`), unless an earlier cell binds
a variable of that name and the line is Python (but spells an option, `store -r`), or with any
name where the line is not Python (the magic of an extension the kernel loads). The class run
flags the notebook with the findings (cell, line, what); an instructor reads the cell. Findings
are about means, never about answers: they change no score, and every correct variant and every
misconception of the course scenarios reads clean (tests/classgrader/class_run/test_code_scan.py).
The grading kernel drops its work folder from the import path, so no file a student ships or
writes can be imported in place of a module named here.

This module puts the reading together (scan) and speaks for it to the class run; its parts are
in reading/: the lists, a cell as IPython runs it, dotted names resolved, the notebook's facts,
and the reader of one cell."""
import ast
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from classgrader.class_run.reading.cells import UNREADABLE, cell_trees
from classgrader.class_run.reading.facts import notebook_facts
from classgrader.class_run.reading.reader import Reader

REASON = "code that can rewrite the grading process"


@dataclass(frozen=True)
class Finding:
    cell: int       # index in the notebook
    line: int       # in the cell's source, from 1
    what: str

    def __str__(self):
        return f"cell {self.cell + 1}, line {self.line}: {self.what}"


def scan(sources: list[str], given: AbstractSet[str] = frozenset(), course_callables: AbstractSet[str] = frozenset(),
         course_imports: AbstractSet[str] = frozenset(), course_modules: dict | None = None) -> list[Finding]:
    """Findings in the code cells `sources` (a notebook's, in order) whose text is not one of
    `given` (the cells the course itself wrote, as released); `course_callables`: the functions
    and classes the course's own cells (not the answers' stubs) define, which the tests call;
    `course_imports`: the names they bind by importing; `course_modules`: module -> the names
    they import from it (allowed to answers too, beside allowed.toml)."""
    trees = cell_trees(sources)
    unread = [index for index, tree in enumerate(trees) if tree is UNREADABLE]
    trees = [None if tree is UNREADABLE else tree for tree in trees]
    notebook = notebook_facts(trees, course_callables, course_imports, course_modules)
    found = [Finding(index, 1, "is too deep or too large for the grader to read") for index in unread]
    for index, (source, tree) in enumerate(zip(sources, trees)):
        if tree is None or source.strip() in given:
            continue
        reader = Reader(notebook, tree)
        try:
            reader.visit(tree)
        except RecursionError:  # nested past what the reading walks: unread is not clean
            reader.found.append((1, "is too deep for the grader to read"))
        found += [Finding(index, line, what) for line, what in sorted(set(reader.found))]
    return sorted(found, key=lambda f: (f.cell, f.line))


def notebook_findings(nb, release) -> list[Finding]:
    """Findings in a submitted notebook's code cells, the release's own cells left out."""
    code = [cell for cell in release.cells if cell.cell_type == "code"]
    given = {cell.source.strip() for cell in code}
    course = [cell.source for cell in code if not cell.metadata.get("nbgrader", {}).get("solution")]
    trees = list(filter(None, cell_trees(course)))
    callables = {node.name for tree in trees for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    imports = {alias.asname or alias.name.split(".")[0] for tree in trees for node in tree.body
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    modules: dict[str, list[str]] = {}
    for node in (node for tree in trees for node in tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.setdefault(alias.name, [])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.setdefault(node.module, []).extend(alias.name for alias in node.names if alias.name != "*")
    positions = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    found = scan([nb.cells[i].source for i in positions], given, callables, imports, modules)
    return [Finding(positions[f.cell], f.line, f.what) for f in found]


def flag_reason(findings: list[Finding], most: int = 3) -> str:
    """One line for flags.csv and the gradebook: what was found, the first few places."""
    shown = "; ".join(map(str, findings[:most]))
    more = f" (and {len(findings) - most} more)" if len(findings) > most else ""
    return f"{REASON}: {shown}{more}"
