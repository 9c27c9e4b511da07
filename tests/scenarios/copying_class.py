"""A class that copied, built from the scenarios' correct answers (tests/classgrader/commands/
test_similarity.py, benchmarks/similarity.py).

Honest students answer every exercise with one of the course's correct variants, each in their own
hand (restyle: the choices two people writing the same idea make differently). Copiers take a
classmate's notebook and disguise it: names renamed, comments and layout redone, independent
statements reordered, a debugging print added, part of an answer moved into a helper in a cell of
its own. Every rewrite keeps what the code does."""
import ast
import importlib
import io
import json
import keyword
import random
import tokenize
from typing import ClassVar

from coursekit import ROOT, build_submission, nbgrader_meta, read_notebook, solution_code

QUIZ = "quiz_"
UNITS = ["unit01", "unit02", "unit03", "unit04", "unit05", "unit06", "unit07", "unit08"]


def correct_variants(unit: str) -> dict[str, list[str]]:
    """{answer cell: [each correct answer the scenarios have]}, the solution first, quizzes left out."""
    module = importlib.import_module(f"scenarios.{unit}")
    source = read_notebook(ROOT / "source" / module.ASSIGNMENT / module.NOTEBOOK)
    variants = {nbgrader_meta(c)["grade_id"]: [solution_code(c)] for c in source["cells"]
                if nbgrader_meta(c).get("solution") and not nbgrader_meta(c)["grade_id"].startswith(QUIZ)}
    for scenario in module.SCENARIOS:
        if scenario.answers and not scenario.loses and not scenario.extra_cells:
            for gid, code in scenario.answers.items():
                if gid in variants and code not in variants[gid]:
                    variants[gid].append(code)
    return variants


# -- an honest student's own hand -------------------------------------------------------------

class _Restyle(ast.NodeTransformer):
    """Each choice kept or not by the student's seeded coin: a result named before it is returned, a
    call's first argument computed on a line of its own, a loop's (x, y) unpacked inside the loop,
    a + b written b + a, a < b written b > a, t.sum(0) written t.sum(dim=0) or torch.sum(t, 0), a
    dict's entries in another order."""
    FUNCTIONS = frozenset({"sum", "mean", "abs", "exp", "log", "sqrt", "flatten", "reshape", "matmul", "allclose",
                           "equal", "argmax", "amax", "clamp"})      # t.f(...) is torch.f(t, ...)
    DIM_FIRST = frozenset({"sum", "mean", "amax", "amin", "std", "var", "prod", "argmax", "argmin", "softmax",
                           "log_softmax", "cumsum", "squeeze", "unsqueeze"})   # t.f(0) is t.f(dim=0)
    FLIPPED: ClassVar[dict[type, type]] = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE,
                                           ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}

    def __init__(self, seed: int):
        self.rng, self.count = random.Random(seed), 0

    def _coin(self, p: float = 0.5) -> bool:
        return self.rng.random() < p

    def _name(self) -> str:
        self.count += 1
        return f"tmp{self.count}"

    def _body(self, body: list) -> list:
        out = []
        for stmt in body:
            value = getattr(stmt, "value", None)
            if (isinstance(stmt, (ast.Return, ast.Assign)) and isinstance(value, ast.Call) and value.args
                    and isinstance(value.args[0], ast.Call) and self._coin()):
                name = self._name()
                out.append(ast.Assign([ast.Name(name, ast.Store())], value.args[0], lineno=0))
                value.args[0] = ast.Name(name, ast.Load())
            if (isinstance(stmt, ast.Return) and stmt.value is not None and not isinstance(stmt.value, ast.Name)
                    and self._coin()):
                name = self._name()
                out.append(ast.Assign([ast.Name(name, ast.Store())], stmt.value, lineno=0))
                stmt = ast.Return(ast.Name(name, ast.Load()))
            if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Tuple) and self._coin():
                name = self._name()
                stmt.body.insert(0, ast.Assign([stmt.target], ast.Name(name, ast.Load()), lineno=0))
                stmt.target = ast.Name(name, ast.Store())
            out.append(stmt)
        return out

    def generic_visit(self, node):
        super().generic_visit(node)
        for attr in ("body", "orelse", "finalbody"):
            if isinstance(getattr(node, attr, None), list) and getattr(node, attr):
                setattr(node, attr, self._body(getattr(node, attr)))
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        text = any(isinstance(side, ast.Constant) and isinstance(side.value, str) for side in (node.left, node.right))
        if isinstance(node.op, (ast.Add, ast.Mult)) and not text and self._coin():
            node.left, node.right = node.right, node.left
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]) in self.FLIPPED and self._coin():
            return ast.Compare(node.comparators[0], [self.FLIPPED[type(node.ops[0])]()], [node.left])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Attribute):
            return node
        if (func.attr in self.DIM_FIRST and len(node.args) == 1 and not node.keywords
                and isinstance(node.args[0], (ast.Constant, ast.UnaryOp)) and self._coin()):
            node.keywords, node.args = [ast.keyword("dim", node.args[0])], []
        module = isinstance(func.value, ast.Name) and func.value.id in ("torch", "F", "nn")
        if func.attr in self.FUNCTIONS and not module and self._coin():
            return ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), func.attr, ast.Load()),
                            [func.value, *node.args], node.keywords)
        return node

    def visit_Dict(self, node):
        self.generic_visit(node)
        if len(node.keys) > 1 and None not in node.keys and self._coin(0.7):
            entries = list(zip(node.keys, node.values, strict=True))
            self.rng.shuffle(entries)
            node.keys, node.values = [k for k, _ in entries], [v for _, v in entries]
        return node


def restyle(code: str, seed: int) -> str:
    return ast.unparse(ast.fix_missing_locations(_Restyle(seed).visit(ast.parse(code))))


def _shape(code: str) -> str:
    """Code with every name one letter: what a fingerprint sees of it."""
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    return " ".join("V" if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) else tok.string
                    for tok in tokenize.generate_tokens(io.StringIO(code).readline) if tok.type not in skip)


def honest_answers(variants: dict[str, list[str]], count: int, tries: int = 50) -> list[dict[str, str]]:
    """`count` students' answers, each their own: variant (a + b*j) mod n of exercise j for student
    (a, b), so two students pick the same variant on few exercises, in the student's own hand,
    redrawn while another student already wrote exactly that shape (up to `tries` draws: a one-line
    answer has few shapes, and there students do agree)."""
    seen: dict[str, set[str]] = {gid: set() for gid in variants}
    students = []
    for i in range(count):
        a, b = divmod(i, 3)
        answers = {}
        for j, (gid, options) in enumerate(variants.items()):
            base = options[(a + b * j) % len(options)]
            for attempt in range(tries):
                code = restyle(base, 1000 * i + 37 * j + attempt)
                if _shape(code) not in seen[gid]:
                    break
            seen[gid].add(_shape(code))
            answers[gid] = code
        students.append(answers)
    return students


# -- a copier's disguises -----------------------------------------------------------------------

class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node


def rename(code: str, salt: str) -> str:
    """Every name the code binds (arguments, assigned names, loop targets) renamed; the functions and
    classes the tests call keep theirs. Comments and layout go with ast.unparse; one is added."""
    tree = ast.parse(code)
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg) and n.arg not in ("self", "cls")}
    names = {name: f"{salt}{i}" for i, name in enumerate(sorted(bound))}
    return "# my own work\n" + ast.unparse(_Renamer(names).visit(tree))


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _loads(stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def reorder(code: str) -> str:
    """Every pair of adjacent simple statements that do not depend on each other, swapped."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        i = 0
        while i < len(body) - 1:
            first, second = body[i], body[i + 1]
            if (isinstance(first, (ast.Assign, ast.Expr)) and isinstance(second, (ast.Assign, ast.Expr))
                    and not _is_docstring(first) and not _stores(first) & (_loads(second) | _stores(second))
                    and not _stores(second) & _loads(first)):
                body[i], body[i + 1] = second, first
                i += 1
            i += 1
    return ast.unparse(tree)


def add_print(code: str) -> str:
    """A debugging print after the first statement of the first function."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.body:
            at = 2 if _is_docstring(node.body[0]) and len(node.body) > 2 else 1
            node.body.insert(at, ast.parse('print("checking", flush=True)').body[0])
            break
    return ast.unparse(tree)


def split_helper(code: str, helper: str) -> tuple[str, str]:
    """The first function's final `return EXPR` computed by a helper: (the answer, the helper's cell)."""
    tree = ast.parse(code)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and isinstance(node.body[-1], ast.Return) and node.body[-1].value:
            ret = node.body[-1]
            free = ", ".join(sorted(_loads(ret) - {"torch", "nn", "F", "math"}))
            helper_def = ast.parse(f"def {helper}({free}):\n    return 0").body[0]
            helper_def.body[0].value = ret.value
            ret.value = ast.parse(f"{helper}({free})", mode="eval").body
            return ast.unparse(tree), ast.unparse(helper_def)
    return code, ""


def copied(notebook: dict, disguises: set[str], salt: str) -> dict:
    """A classmate's notebook with each answer disguised: "rename", "reorder", "print" (in its last
    answer), "split" (its first answer's result computed by a helper in a cell of its own)."""
    nb = json.loads(json.dumps(notebook))
    answer_ids = [nbgrader_meta(c)["grade_id"] for c in nb["cells"] if nbgrader_meta(c).get("solution")
                  and not nbgrader_meta(c)["grade_id"].startswith(QUIZ)]
    cells = []
    for cell in nb["cells"]:
        cells.append(cell)
        gid = nbgrader_meta(cell).get("grade_id", "")
        if gid not in answer_ids:
            continue
        code = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        code = rename(code, salt) if "rename" in disguises else code
        code = reorder(code) if "reorder" in disguises else code
        code = add_print(code) if "print" in disguises and gid == answer_ids[-1] else code
        helper = ""
        if "split" in disguises and gid == answer_ids[0]:
            code, helper = split_helper(code, f"_{salt}_part")
        cell["source"] = code
        if helper:
            cells.append({"cell_type": "code", "execution_count": None, "id": f"helper-{salt}", "metadata": {},
                          "outputs": [], "source": helper})
    nb["cells"] = cells
    return nb


# -- the class ----------------------------------------------------------------------------------

HONEST = [f"h{i:02d}" for i in range(9)]
CAPSTONE_COPIER = "k10"    # honest in 01-07, copied 08 from h03
# copier: (whose notebook, disguises)
COPIERS = {"c1": ("h00", {"rename", "print"}),
           "c2": ("h05", {"reorder", "split"}),
           "t1": ("h07", {"rename", "reorder"}),      # t1 and t2 both copied h07: a trio
           "t2": ("h07", {"print", "split"})}


def copied_pairs(unit: str) -> set[tuple[str, str]]:
    """The pairs where one copied the other, sorted within each pair."""
    pairs = {tuple(sorted((copier, source))) for copier, (source, _) in COPIERS.items()}
    pairs.add(("t1", "t2"))
    if unit == "unit08":
        pairs.add(tuple(sorted((CAPSTONE_COPIER, "h03"))))
    return pairs


def build(unit: str) -> tuple[dict[str, dict], dict]:
    """({student: notebook}, the release) for one unit's assignment."""
    module = importlib.import_module(f"scenarios.{unit}")
    source = read_notebook(ROOT / "source" / module.ASSIGNMENT / module.NOTEBOOK)
    release = read_notebook(ROOT / "release" / module.ASSIGNMENT / module.NOTEBOOK)
    honest = honest_answers(correct_variants(unit), len(HONEST) + 1)
    notebooks = {name: build_submission(source, release, answers) for name, answers in zip(HONEST, honest)}
    notebooks[CAPSTONE_COPIER] = build_submission(source, release, honest[-1])
    if unit == "unit08":
        notebooks[CAPSTONE_COPIER] = copied(notebooks["h03"], {"rename", "reorder"}, "k")
    for copier, (original, disguises) in COPIERS.items():
        notebooks[copier] = copied(notebooks[original], disguises, copier)
    return notebooks, release
