"""Writes into what a function was handed: a test that computes its expected value from its
input after calling the student's function agrees with whatever the function left there.

    def fit_normaliser(self, x):
        x.sub_(x.mean(0)).div_(x.std(0))   # the test's x.std(0) is now 1, and so is the buffer

A parameter the function never binds again (a plain method's own object aside) is written in
place by a tensor method that ends in `_` (requires_grad_ changes no value), by a function of
torch's that does (torch.zero_(x), nn.init.normal_(x)) or writes into `out=x`, by a slice or an
index assigned, plainly or augmented (x[:, 0] = 1, x[0] -= 1), or through its `.data`
(x.data = ..., x.data[k] = 0). Two shapes that honest code writes every day are not writes the
reading names, since it cannot tell them from a tensor's: an augmented assignment to the bare
name (n += 1 on an integer binds a new value), and an item assigned by a string or a name
(batch[k] = v fills a dict). A name bound again (x = x.clone()) is the function's own value from
there on, and a view of a parameter (head = x[:, :k]) is a name of its own: the reading follows
names, not storage."""
import ast
import functools

import torch

KEEPS_VALUES = {"requires_grad_"}  # in place, but on the graph's flag, which the tests read themselves


@functools.cache
def _tensor_writers() -> frozenset:
    return frozenset(name for name in dir(torch.Tensor)
                     if name.endswith("_") and not name.startswith("_") and name not in KEEPS_VALUES)


def _body_nodes(function):
    """The nodes of `function`'s own body: a nested def or class binds and writes its own names."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _handed(target, names) -> str:
    """The parameter `target` writes into (x, x.data, x[...], x.data[...]), or "" if none."""
    while isinstance(target, ast.Subscript) or (isinstance(target, ast.Attribute) and target.attr == "data"):
        target = target.value
    return target.id if isinstance(target, ast.Name) and target.id in names else ""


def writes(function, in_class: bool, imported) -> list[tuple[ast.AST, str]]:
    """(node, parameter) for each write in place into a parameter of `function` it never binds again;
    `imported`: the names the notebook binds by importing (torch, nn, init, zeros_)."""
    arguments = function.args
    ordered = [*arguments.posonlyargs, *arguments.args]
    own = ordered[0].arg if in_class and ordered and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list) else None
    names = {a.arg for a in [*ordered, *arguments.kwonlyargs]} - {own}
    nodes = list(_body_nodes(function))
    bound = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
             and not any(isinstance(a, ast.AugAssign) and a.target is n for a in nodes)}
    names -= bound
    found: list[tuple[ast.AST, str]] = []
    for node in nodes if names else ():
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _tensor_writers() and _handed(func.value, names):
                found.append((node, _handed(func.value, names)))
            elif _imported_writer(func, imported) and node.args and _handed(node.args[0], names):
                found.append((node, _handed(node.args[0], names)))
            found.extend((node, _handed(k.value, names)) for k in node.keywords
                         if k.arg == "out" and _handed(k.value, names))
        elif isinstance(node, ast.Assign):
            found.extend((node, _handed(t, names)) for t in node.targets if _written(t) and _handed(t, names))
        elif isinstance(node, ast.AugAssign) and _written(node.target) and _handed(node.target, names):
            found.append((node, _handed(node.target, names)))
    return found


def _written(target) -> bool:
    """Whether assigning to `target` writes into what it names: its `.data`, or an item of it
    keyed by a slice or an index (x[:] = 0, x[0] -= 1), not the bare name (n += 1 binds anew)
    nor an item keyed by a string or a name (batch[k] = v, batch["x"] = v: a dict filled)."""
    if not isinstance(target, (ast.Subscript, ast.Attribute)):
        return False
    chain: ast.expr = target
    while isinstance(chain, (ast.Subscript, ast.Attribute)):
        if isinstance(chain, ast.Attribute) and chain.attr == "data":
            return True
        chain = chain.value
    key = target.slice if isinstance(target, ast.Subscript) else None
    return not (isinstance(key, ast.Name) or (isinstance(key, ast.Constant) and isinstance(key.value, str)))


def _imported_writer(func, imported) -> bool:
    """torch.zero_, nn.init.normal_, an imported zeros_: a function of an import's that writes its first argument."""
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return isinstance(root, ast.Name) and root.id in imported and name in _tensor_writers() | _init_writers()


@functools.cache
def _init_writers() -> frozenset:
    return frozenset(name for name in dir(torch.nn.init) if name.endswith("_") and not name.startswith("_"))
