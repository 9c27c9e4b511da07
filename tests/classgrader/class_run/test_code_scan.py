"""code_scan: the means of rewriting the grading process are found by reading a submission, and
no correct answer of the course uses any of them."""
import copy
import importlib
import json

import nbformat
import pytest

from classgrader.class_run import code_scan
from coursekit import ROOT, build_submission, read_notebook

UNITS = [importlib.import_module(f"scenarios.unit0{n}") for n in range(1, 9)]

# Each route, in the fewest lines, and the words its finding must have.
ROUTES = {
    "a method of torch replaced": ("import torch\ntorch.Tensor.detach = lambda self: self", "torch.Tensor.detach"),
    "the same, through an alias": ("from torch import nn\nL = nn.Linear\nL.forward = print", "L.forward"),
    "the same, through type()": ("import torch\ntype(torch.zeros(1)).detach = 1", "through type()"),
    "the same, through a parameter": ("import torch\ndef patch(cls):\n    cls.detach = lambda s: s\n"
                                      "patch(torch.Tensor)", ".detach, the name of a method"),
    "the same, through a method called on a class": ("import torch\nclass P:\n    def go(self):\n"
                                                     "        self.detach = lambda s: s\nP.go(torch.Tensor)",
                                                     ".detach, the name of a method"),
    "a constructor run on a class": ("import torch\nclass P:\n    def __init__(self):\n"
                                     "        setattr(self, 'detach', 1)\nP.__init__(torch.Tensor)", "calls __init__"),
    "a device probe rigged": ("import torch\ntorch.backends.mps.is_available = lambda: True", "mps.is_available"),
    "the interpreter's modules": ("import sys\nsys.modules['classgrader.in_kernel.integrity']", "sys.modules"),
    "the same, reached through torch": ("import torch\ntorch.sys.modules.clear()", "sys.modules"),
    "the grader's own audit": ("import classgrader.in_kernel.integrity as i\ni.ORIGINALS.clear()",
                               "imports classgrader.in_kernel.integrity"),
    "the audit's name in the kernel": ("_course_integrity.ORIGINALS = {}", "never defines"),
    "the check library's records": ("from autograder import trace\ntrace.record('x', 1)", "autograder.trace"),
    "the check library's tables": ("from autograder.misconceptions import CATALOGUE\nCATALOGUE.clear()",
                                   "a table of autograder"),
    "a code object swapped": ("def f():\n    pass\nf.__code__ = (lambda: 1).__code__", ".__code__"),
    "frames": ("try:\n    1 / 0\nexcept Exception as e:\n    g = e.__traceback__.tb_frame.f_globals", "tb_frame"),
    "code made from text": ("exec('import s' + 'ys')", "uses exec"),
    "a computed name on a module": ("import torch\nT = getattr(torch, 'Ten' + 'sor')", "uses getattr"),
    "a module's namespace written": ("import torch\nvars(torch)['no_grad'] = None", "through vars()"),
    "a tensor that is not a tensor": ("import torch\nclass Liar(torch.Tensor):\n    pass",
                                      "a subclass of torch.Tensor"),
    "a class that says it is another": ("class A:\n    @property\n    def __class__(self):\n        return int",
                                        "its own __class__"),
    "equality that always holds": ("class A:\n    def __eq__(self, other):\n        return True", "its own __eq__"),
    "grad mode left off for the session": ("import torch\ntorch.set_grad_enabled(False)", "rest of the session"),
    "the same, as a value": ("import torch\n_ = torch.set_grad_enabled(False)", "rest of the session"),
    "a builtin the tests call, redefined": ("all = lambda items: True", "redefines all"),
    "grad mode held open by a suspended generator": ("import torch\ndef off():\n    with torch.no_grad():\n"
                                                     "        yield\nnext(off())", "across a yield"),
    "the same, through a context manager's generator": (
        "import contextlib, torch\n@contextlib.contextmanager\ndef off():\n    with torch.no_grad():\n"
        "        yield\nnext(off().gen)", "reaches .gen"),
    "attributes copied by name": ("import functools\nfrom autograder.autograd_probe import SavedTensorCount\n"
                                  "def carrier():\n    pass\ncarrier.count = 0\n"
                                  "functools.update_wrapper(SavedTensorCount, carrier, assigned=('count',))",
                                  "copies chosen attributes"),
    "isinstance made to say yes": ("import numbers\nclass Fake:\n    pass\nnumbers.Real.register(Fake)",
                                   "pass isinstance()"),
    "the same, as a def": ("def isinstance(value, kind):\n    return True", "redefines isinstance"),
    "a global hook on every module": ("from torch import nn\nnn.modules.module.register_module_forward_hook(print)",
                                      "register_module_forward_hook"),
    "saved-tensor hooks": ("import torch\nh = torch.autograd.graph.saved_tensors_hooks(print, print)",
                           "torch.autograd.graph"),
    "torch's C internals": ("import torch\ntorch._C._set_grad_enabled(False)", "torch._C"),
    "a shell escape": ("!kill -9 1", "get_ipython"),
    "a magic": ("%load_ext something", "get_ipython"),
    "the session's history": ("tests = In[5]", "never defines"),
    "another process": ("import os\nos.fork()", "os.fork"),
    "a module beyond the course's": ("import gc\ngc.get_objects()", "imports gc"),
    "a pickle that runs code": ("import torch\ntorch.load('x.pt', weights_only=False)", "unpickles"),
    "a relative import": ("from . import helpers", "relative"),
    # Constructs no list of means named: each is off the list of what an answer uses.
    "code run from data, by a pickle module": ("import pickle, torch\nstate = torch.load('w.pt', pickle_module=pickle)",
                                               "pickle_module"),
    "the same, by position": ("import pickle, torch\nstate = torch.load('w.pt', None, pickle)", "by position"),
    "the same, by the environment": ("import os, torch\nos.environ['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = '1'\n"
                                     "state = torch.load('w.pt')", "os.environ"),
    "code imported by path": ("import torch\nrig = torch.hub.load('.', 'rig', source='local')", "torch.hub"),
    "a namespace written through a library call": (
        "import functools, types, torch\nfunctools.update_wrapper(torch.autograd, types.SimpleNamespace())",
        "functools.update_wrapper"),
    "the same, through wraps": ("import functools, torch\nfunctools.wraps(print)(torch.autograd)", "functools.wraps"),
    "evaluation that hides what it records": (
        "import torch\nfrom torch.utils.checkpoint import checkpoint\n"
        "loss = checkpoint(lambda: 1, use_reentrant=False)",
        "torch.utils.checkpoint"),
    "the same, by its dotted name": ("import torch\nimport torch.utils.checkpoint\n"
                                     "f = torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint"),
    "a probe's evidence cleared through the argument": (
        "def train_epoch(model, loader, loss_fn, optimizer):\n    loss_fn.markers.clear()", ".markers"),
    "an attribute set by a computed name": ("class A:\n    def __init__(self, n):\n"
                                            "        setattr(self, f'fc{n}', 1)", "setattr"),
    "an attribute read by a computed name": ("def f(x, n):\n    return getattr(x, n)", "getattr"),
    "a hook on a module handed in": ("def evaluate(model):\n    model.register_forward_hook(print)",
                                     ".register_forward_hook"),
    # the grader's own forward of that module then gives zeros
    "a module's private hooks table, its name given to a class of the notebook's": (
        "class Box:\n    def __init__(self):\n        self._forward_hooks = {}\ndef evaluate(model):\n"
        "    model._forward_hooks[0] = lambda module, args, output: output * 0", "reads ._forward_hooks"),
    "a tensor's private hooks table assigned": (
        "def loss(pred):\n    pred._backward_hooks = {0: lambda g: g * 0}\n    return (pred ** 2).sum()",
        "a table of hooks"),
    # statistics kept as parameters, listed as buffers: the tests' reading of the module is the class's word
    "a module of its own that redefines what it reports holding": (
        "import torch\nfrom torch import nn\nclass Norm(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.mean = nn.Parameter(torch.zeros(2))\n"
        "    def named_parameters(self, *args, **kwargs):\n        return iter([])", "its own named_parameters"),
    "the same, through a base class of its own": (
        "from torch import nn\nBase = nn.Module\nclass A(Base):\n    pass\nclass B(A):\n"
        "    def named_buffers(self, *args, **kwargs):\n        return iter([])", "its own named_buffers"),
    "the same, from a plain class of its own first in the bases": (
        "from torch import nn\nclass Lie:\n    def named_parameters(self, *args, **kwargs):\n        return iter([])\n"
        "class Norm(Lie, nn.Module):\n    pass", "Lie's own named_parameters"),
    "the same, as the object's own attribute": (
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.parameters = lambda recurse=True: iter([])", "assigns self.parameters as code"),
    "an optimiser of its own that redefines what it reports": (
        "import torch\nclass O(torch.optim.SGD):\n    def state_dict(self):\n        return {}", "its own state_dict"),
    # the grader's own autograd.grad(got, pred) then gives what the hook returns, not the answer's gradient
    "a gradient hook on a tensor handed in": ("def loss(pred, target):\n    pred.register_hook(lambda g: g * 0)\n"
                                              "    return (pred - target).pow(2).mean()", ".register_hook"),
    "a gradient hook on a graph's node": ("def loss(pred):\n    out = pred * 2\n"
                                          "    out.grad_fn.register_hook(lambda gi, go: gi)\n    return out",
                                          ".register_hook"),
    "C access through an array": ("import numpy as np\nlibc = np.zeros(1).ctypes._ctypes.CDLL(None)", ".ctypes"),
    "a private name made readable by a parameter of that name": (
        "def spelled(_pack):\n    return None\nclass Box:\n    pass\nfound = Box()._pack", "reads ._pack"),
    "a method's name given code a function of the notebook makes": (
        "def passing():\n    def pack(self, tensor):\n        return tensor\n    return pack\n"
        "def rig(probe):\n    probe._pack = passing()", "._pack, the name of a method"),
    "equality that always holds, as an annotated class attribute": (
        "class A:\n    __eq__: object = lambda self, other: True", "its own __eq__"),
    "a tensor that is not a tensor, through an alias": (
        "import torch\nBase = torch.Tensor\nclass Liar(Base):\n    pass", "a subclass of torch.Tensor"),
    "an answer that behaves otherwise on meta": (
        "def load(model, device):\n    if device.type == 'meta':\n        model.to(device)\n    return model",
        "singles out the meta device"),
    "the same, by the tensor's flag": ("def f(x):\n    return x if x.is_meta else x * 2",
                                       "singles out the meta device"),
    "a module reached through an alias of torch": (
        "import torch\nclass A:\n    def __init__(self):\n        self.sys = 1\nt = torch\nmods = t.sys.modules",
        "sys.modules"),
    "a module reached through a parameter": (
        "import torch\nclass Cfg:\n    sys = None\ndef pick(m):\n    return m.sys\nmods = pick(torch).modules",
        "reads .sys"),
    "a method replaced through an annotated alias": (
        "import torch\nT: object = torch.Tensor\nT.detach = next(iter([lambda s: s]))", "T.detach"),
    "the same, through a loop variable": (
        "import torch\nfor T in [torch.Tensor]:\n    T.detach = next(iter([lambda s: s]))", "T.detach"),
    "the same, on an object handed in, whatever the value": (
        "import torch\ndef f(m):\n    m.detach = None\nf(torch.Tensor)", "on an object handed in"),
    "a pickle that runs code, through an alias": (
        "import torch\nL = torch.load\nsd = L('w.pt', weights_only=False)", "unpickles"),
    "the same, through partial": ("import functools, torch\n"
                                  "sd = functools.partial(torch.load, weights_only=False)('w.pt')",
                                  "takes torch.load as a value"),
    "the same, numpy's, through an alias": (
        "import numpy as np\nld = np.load\na = ld('w.npy', allow_pickle=True)", "allow_pickle"),
    "grad mode switched through an alias": ("import torch\ng = torch.set_grad_enabled\ng(False)",
                                            "torch.set_grad_enabled"),
    "the same, through map": ("import torch\nlist(map(torch.set_grad_enabled, [False]))",
                              "takes torch.set_grad_enabled as a value"),
    "grad mode held open under a decorator named like contextmanager": (
        "import torch\ndef my_contextmanager(f):\n    return f\n@my_contextmanager\ndef off():\n"
        "    with torch.no_grad():\n        yield\nheld = off()\nnext(held)", "across a yield"),
    "a builtin rebound by a loop": ("for isinstance in [[lambda a, b: True]][0]:\n    pass", "redefines isinstance"),
    "the same, by with ... as": ("import contextlib\nwith contextlib.nullcontext(lambda a, b: True) as isinstance:\n"
                                 "    pass", "redefines isinstance"),
    "the same, by import ... as": ("from operator import ne as isinstance", "as isinstance"),
    "the same, by a match": ("match [lambda a, b: True]:\n    case [isinstance]:\n        pass", "binds isinstance"),
    "the same, in a class body declaring it global": (
        "class A:\n    global isinstance\n    isinstance = lambda a, b: True", "redefines isinstance"),
    "a module compiled by torch's compiler stack": ("import torch\nm = torch.nn.Linear(2, 2)\nm.compile()",
                                                    ".compile"),
    "a metaclass by deriving from type": ("class Meta(type):\n    pass\nMade = Meta('Made', (), {})", "a metaclass"),
    # Routes through listed means: memory, reflection by text, names a library only borrows.
    "a pickle that runs code, through getattr by a constant name": (
        "import torch\nsd = getattr(torch, 'load')('w.pt', weights_only=False)", "unpickles"),
    "grad mode switched through getattr by a constant name": (
        "import torch\ngetattr(torch, 'set_grad_enabled')(False)", "rest of the session"),
    "a property of torch's tensors rewritten through getattr": (
        "import torch\ngetattr(torch, 'Tensor').is_cuda = True", "which belongs to torch"),
    "the process's memory written through its file": (
        "import torch\nx = torch.zeros(1)\nwith open('/proc/self/mem', 'r+b') as f:\n    f.seek(id(x))\n"
        "    f.write(b'\\0')", "moves a file to a position it computes"),
    "the same, the file moved by numpy": (
        "import numpy as np\nf = open('/proc/self/mem', 'r+b')\nnp.fromfile(f, np.uint8, 0, offset=id(f))",
        "moves a file with numpy.fromfile"),
    "the same, through numpy's array interface": (
        "import types, numpy as np\nx = b'abc'\nraw = np.asarray(types.SimpleNamespace(__array_interface__={\n"
        "    'shape': (3,), 'typestr': '|u1', 'data': (id(x), False), 'version': 3}))",
        "gives __array_interface__ as a keyword"),
    "the same, its name computed": (
        "import types\nd = {'__array_' + 'interface__': {}}\nns = types.SimpleNamespace(**d)",
        "attributes named by a mapping"),
    # numpy checks only that such an array ends inside its buffer: a negative offset starts it anywhere before
    "the same, through an array over another's memory": (
        "import numpy as np\na = np.zeros(8, dtype=np.uint8)\nraw = np.ndarray((64,), np.uint8, a, -56)",
        "an array over another's memory"),
    "the same, its offset a keyword and computed": (
        "import numpy as np, torch\na = np.zeros(8, dtype=np.uint8)\nt = torch.zeros(1)\n"
        "raw = np.ndarray((4,), np.uint8, buffer=a, offset=t.data_ptr() - torch.from_numpy(a).data_ptr())",
        "an array over another's memory"),
    "the same, by recarray's buf": (
        "import numpy as np\nraw = np.recarray((8,), dtype=np.uint8, buf=np.zeros(1), offset=-56)",
        "an array over another's memory"),
    "the same, by the class type() gives": (
        "import numpy as np\na = np.zeros(8)\nraw = type(a)((8,), np.uint8, a, -56)", "an array over another's memory"),
    "the same, numpy's array class handed to partial": (
        "import functools, numpy as np\na = np.zeros(8)\nraw = functools.partial(np.ndarray, (8,), np.uint8, a, -56)()",
        "takes numpy.ndarray as a value"),
    "the same, its arguments unpacked": (
        "import numpy as np\na = np.zeros(8)\nparts = ((8,), np.uint8, a, -56)\nraw = np.ndarray(*parts)",
        "an array over another's memory"),
    "the same, by a name for the class type() gives": (
        "import numpy as np\na = np.zeros(8)\ncls = type(a)\nraw = cls((8,), np.uint8, a, -56)",
        "an array over another's memory"),
    "the same, the class type() gives handed to partial": (
        "import functools, numpy as np\na = np.zeros(8)\n"
        "raw = functools.partial(type(a), (8,), np.uint8, a, -56)()", "hands the class type() gives to a call"),
    "the same, by a subclass of the notebook's": (
        "import numpy as np\nclass A(np.ndarray):\n    pass\nraw = A((8,), np.uint8, np.zeros(1), -56)",
        "an array over another's memory"),
    "code made from text, as a type hint": (
        "import typing\nclass A:\n    x: \"__import__('sys').modules.clear()\"\ntyping.get_type_hints(A)",
        "uses __import__"),
    "the same, evaluated by torch's data pipes": (
        "import torch\nclass P(torch.utils.data.IterDataPipe):\n    pass", "torch.utils.data.IterDataPipe"),
    "the same, a hint made at run time": ("from typing import ForwardRef\nhint = ForwardRef('x')", "ForwardRef"),
    "a namespace written through a library's import of wraps": (
        "import types, torch\nfrom torch.optim.lr_scheduler import wraps\n"
        "wraps(types.SimpleNamespace(graph=None))(torch.autograd)", "torch.optim.lr_scheduler.wraps"),
    "a class that says it is equal to anything, made by enum's call": (
        "import enum\nE = enum.Enum('E', [('a', 1), ('__eq__', lambda s, o: True)])", "makes a class with enum.Enum"),
    "a module reached through a class pattern": (
        "import torch\nmatch torch:\n    case object(sys=s):\n        s.modules.clear()", "reads .sys"),
    "a property of torch's tensors rewritten through a list": (
        "import torch\n[torch.Tensor][0].grad_fn = None", "of an object it does not name"),
    "the same, through a name the reading does not follow": (
        "import torch\nT, = [torch.Tensor]\nT.grad_fn = None", "hands torch.Tensor on as a value"),
    "the same, through a function's result": (
        "import torch\ndef tensor_class():\n    return torch.Tensor\nT = tensor_class()\nT.grad_fn = None",
        "hands torch.Tensor on as a value"),
    "the same, through a dataclass field's annotation": (
        "import dataclasses, torch\n@dataclasses.dataclass\nclass C:\n    x: torch.Tensor\n"
        "T = dataclasses.fields(C)[0].type\nT.grad_fn = None", "hands torch.Tensor on as a value"),
    "code made from text, as the field names of a dataclass's annotations written as a table": (
        "from dataclasses import dataclass\n@dataclass(init=False, repr=False)\nclass C:\n"
        "    __annotations__ = {\"a, __import__('os').system('id')\": int}\n    a = 1\nC() == C()",
        "its own __annotations__"),
    "the same, the class body's table written, its name bound by a parameter": (
        "from dataclasses import dataclass\ndef f(__annotations__):\n    pass\n@dataclass(init=False, repr=False)\n"
        "class C:\n    b: int = 0\n    __annotations__[\"a, print(1)\"] = int\n    a = 1", "reaches __annotations__"),
    "the session's history read by name, through numpy's matrix builder": (
        "import numpy as np\ndef peek():\n    return np.r_['In'][0, -1]", "reads the caller's variables"),
    "the same, its key a variable": ("from numpy import c_\nkey = 'In'\nh = c_[key]", "reads the caller's variables"),
    "the same, indexed by itemgetter": ("import numpy as np\nfrom operator import itemgetter\n"
                                        "h = itemgetter('In')(np.r_)", "reads the caller's variables"),
    "the same, by bmat": ("import numpy as np\nh = np.bmat('In')", "numpy.bmat"),
    "a property of torch's tensors rewritten through type() in a list": (
        "import torch\nT = [type(torch.zeros(1))][0]\nT.grad_fn = None", "hands the class type() gives on"),
    "the same, type() returned by a function": (
        "import torch\ndef kind(x):\n    return type(x)\nT = kind(torch.zeros(1))\nT.grad_fn = None",
        "hands the class type() gives on"),
    "the same, type mapped": ("import torch\nT, = map(type, [torch.zeros(1)])\nT.grad_fn = None",
                              "takes type as a value"),
    "a shell command through a module handed to a function, read by a method name of the notebook's": (
        "import os\nclass A:\n    def system(self, command):\n        pass\ndef go(m):\n"
        "    return m.system('echo x')\ngo(os)", "hands os on as a value"),
    "a module's attributes read through a format string": (
        "import torch\nshown = '{0.sys.modules}'.format(torch)", "through a format string"),
    # Magics by name alone, held contexts, class-writing decorators: a list gives a notebook's cells.
    "the environment set by a magic's name alone (automagic)": (
        "env TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1", "get_ipython"),
    "a file the notebook wrote, run by a magic's name alone": ("run payload.py", "get_ipython"),
    "the same, spelled as Python whose names are bound only as parameters": (
        ["def f(run, tmp, payload):\n    pass", "run /tmp/payload.py"], "get_ipython"),
    "the same, its name shadowed only by a variable the notebook deletes": (
        ["run = 1", "del run", "run payload.py"], "get_ipython"),
    "the same, its name shadowed by a binding that fails when it runs": (
        ["run = 1 / 0", "run payload.py"], "get_ipython"),
    "the environment set by a magic shadowed by an import that fails": (
        ["import env", "env TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1"], "get_ipython"),
    "a pickle the notebook wrote, unpickled by the kernel's store magic by its name alone": (
        "store -r x", "get_ipython"),
    "the same, a Python line spelling the magic's option, after a binding that fails": (
        ["store = 1 / 0", "r = 1", "store -r"], "get_ipython"),
    "a magic the reading does not list, on a line that is not Python": ("some_extension_magic on x", "get_ipython"),
    "a default device held by a suspended generator": (
        "import torch\ndef held():\n    with torch.device('meta'):\n        yield\nnext(held())",
        "keeps torch.device entered across a yield"),
    "grad mode held through a context manager of the notebook's, in a suspended generator": (
        "import contextlib, torch\n@contextlib.contextmanager\ndef quiet():\n    with torch.no_grad():\n"
        "        yield\ndef held():\n    with quiet():\n        yield\nnext(held())", "keeps quiet entered"),
    "grad mode held open under contextmanager's name, rebound": (
        "import torch\nfrom contextlib import contextmanager\ncontextmanager = lambda f: f\n@contextmanager\n"
        "def off():\n    with torch.no_grad():\n        yield\nnext(off())", "across a yield"),
    "torch's tensor class given an __init__ and an __eq__ by dataclass": (
        "import dataclasses, torch\ndataclasses.dataclass(torch.Tensor)", "changes torch.Tensor with dataclasses"),
    "the same, frozen, by the decorator dataclass(...) returns": (
        "import torch\nfrom dataclasses import dataclass\ndataclass(frozen=True)(torch.Tensor)",
        "changes torch.Tensor with dataclasses.dataclass"),
    "the same, dataclass taken as a value": (
        "import torch\nfrom dataclasses import dataclass\nlist(map(dataclass, [torch.Tensor]))",
        "takes dataclasses.dataclass as a value"),
    "a caller's frame read through a format string given to str.format": (
        "def peek():\n    try:\n        1 / 0\n    except Exception as e:\n"
        "        return str.format('{0.__traceback__.tb_frame.f_back.f_locals}', e)", "through a format string"),
    "the same, through string.Formatter": (
        "import string\ndef peek(e):\n    return string.Formatter().format('{0.__traceback__.tb_frame}', e)",
        "through a format string"),
    "the same, a format string's .format taken as a value": (
        "show = '{0.__traceback__.tb_frame}'.format", "through a format string"),
    "the same, a format string it computes": (
        "import torch\nfmt = '{0.' + 'sys.modules}'\nshown = fmt.format(torch)", "through a format string it computes"),
    "a module's table reached by a field name, through string.Formatter's get_field": (
        "import string, torch\nclass A:\n    def get_field(self):\n        pass\n"
        "mods = string.Formatter().get_field('0.sys.modules', [torch], {})[0]", "reaches .get_field"),
    "a hook on a module handed in, its name given to a class of the notebook's": (
        "class A:\n    def register_forward_hook(self, f):\n        pass\ndef evaluate(model):\n"
        "    model.register_forward_hook(print)", ".register_forward_hook"),
    "a module imported by name, as matplotlib's backend": (
        "import matplotlib.pyplot as plt\nplt.savefig('x.png', backend='module://antigravity')",
        "a module matplotlib imports by name"),
    "the same, through pyplot's switch": ("import matplotlib.pyplot as plt\nplt.switch_backend('module://antigravity')",
                                          "matplotlib.pyplot.switch_backend"),
    "isinstance made to say yes, through typing's alias of collections.abc": (
        "import typing\nclass Registry:\n    def register(self, f):\n        return f\nclass Fake:\n    pass\n"
        "typing.Mapping.register(Fake)", "pass isinstance()"),
    "an input written in place, so a reference computed from it afterwards agrees": (
        "import torch\nfrom torch import nn\nclass Regressor(nn.Module):\n    @torch.no_grad()\n"
        "    def fit_normaliser(self, x):\n        x.sub_(x.mean(0)).div_(x.std(0))\n"
        "        self.std.fill_(1.0)", "writes in place into x"),
    "the same, through a slice": ("def manual_grad(x, w, b):\n    x[:] = 0\n    return w, b", "writes in place into x"),
    "the same, through .data": ("def add_bias_column(x):\n    x.data = x.data.float()\n    return x",
                                "writes in place into x"),
    "the same, by an augmented assignment to an item": ("def f(x):\n    x[0] *= 0\n    return x",
                                                        "writes in place into x"),
    "the same, into an item of its .data by a name": ("def f(x, k):\n    x.data[k] = 0\n    return x",
                                                      "writes in place into x"),
    "the same, by torch's function": ("import torch\ndef f(x):\n    torch.nn.init.zeros_(x)\n    return x",
                                      "writes in place into x"),
    "the same, into out=": ("import torch\ndef f(x, y):\n    return torch.mul(x, 0, out=x)", "writes in place into x"),
    "the process's environment, read as a file": ("env = open('/proc/self/environ').read()", "the process's own files"),
    "the same, its path joined from parts": ("import os\nenv = open(os.path.join('/', 'proc', 'self', 'environ'))",
                                             "the process's own files"),
    "a module whose train() never sets the mode": (
        "from torch import nn\nclass Norm(nn.Module):\n    def train(self, mode=True):\n        return self",
        "its own train, which never calls torch's"),
    "the same, eval": ("from torch import nn\nclass Norm(nn.Module):\n    def eval(self):\n        return self",
                       "its own eval, which never calls torch's"),
    "a probe's own names made readable by the notebook's attribute": (
        "class Batches:\n    def __init__(self, loader):\n        self.loader = loader\n"
        "def train_epoch(model, loader, loss_fn, optimizer, device):\n"
        "    for x, y in getattr(loader, 'loader', loader):\n        pass", "reads .loader"),
    # 06's MLP and 08's Regressor are checked against their own nn.Linear layers, called by the test:
    # a Linear whose forward ignores its bias agrees with itself, and scores.
    "a layer of torch's that computes its own way": (
        "from torch import nn\nclass Dense(nn.Linear):\n    def forward(self, x):\n        return x @ self.weight.T",
        "a subclass of nn.Linear, its own forward"),
    "the same, its forward from a base of the notebook's": (
        "from torch import nn\nclass NoBias:\n    def forward(self, x):\n        return x @ self.weight.T\n"
        "class Dense(NoBias, nn.Linear):\n    pass", "NoBias's own forward"),
    "the same, through a subclass of the notebook's": (
        "import torch\nclass Base(torch.nn.Linear):\n    pass\nclass Dense(Base):\n"
        "    def __call__(self, x):\n        return x", "its own __call__"),
    "the same, assigned in its constructor": (
        "from torch import nn\nclass Dense(nn.Linear):\n    def __init__(self, a, b):\n"
        "        super().__init__(a, b)\n        self.forward = self.plain\n"
        "    def plain(self, x):\n        return x @ self.weight.T", "assigns self.forward as code in Dense"),
    # Torch's forward and the tests both read the layer's weight and bias: a property of the subclass
    # answers both with a detached copy, the values agree, and the layer never learns.
    "a layer of torch's whose parameter a property stands in for": (
        "from torch import nn\nclass Dense(nn.Linear):\n    @property\n    def bias(self):\n"
        "        return dict(self.named_parameters(recurse=False))['bias'].detach()",
        "a subclass of nn.Linear, its own bias"),
    "the same, from a base of the notebook's": (
        "from torch import nn\nclass Frozen:\n    @property\n    def weight(self):\n        return None\n"
        "class Dense(Frozen, nn.Linear):\n    pass", "Frozen's own weight"),
    "the same, assigned onto the class after its body": (
        "from torch import nn\nclass Dense(nn.Linear):\n    pass\nDense.bias = property(lambda self: None)",
        "assigns Dense.bias, a member of Dense, a subclass of nn.Linear"),
    "what a module reports, assigned onto its class after the body": (
        "from torch import nn\nclass Net(nn.Module):\n    pass\nNet.parameters = property(lambda self: None)",
        "assigns Net.parameters, which the tests read"),
}


@pytest.mark.parametrize("route", ROUTES)
def test_each_route_is_found_and_named(route):
    code, words = ROUTES[route]
    findings = code_scan.scan(code if isinstance(code, list) else [code])
    assert findings and any(words in f.what for f in findings), (route, [str(f) for f in findings])


def test_plain_code_of_every_kind_the_course_teaches_is_clean():
    code = '''
import os, sys, copy, math, pickle, types, functools, operator
import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.relu = nn.ReLU()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.register_buffer("mean", torch.zeros(sizes[0]))

    def forward(self, x):
        for layer in self.layers:
            x = self.relu(layer(x) - self.mean.sum())
        return x

    def fit(self, x):
        self.mean, self.std = x.mean(0), x.std(0)

model = Net([2, 3, 3])
for p in model.parameters():
    p.requires_grad = False
    p.grad = None
with torch.no_grad():
    y = model(torch.zeros(1, 2))
mps = getattr(torch.backends, "mps", None)
config = types.SimpleNamespace(lr=0.1, device="cpu")
config.device = "cpu"
plain = dict(lr=config.lr)
path = os.path.join("a", "b.pt")
print("note", file=sys.stderr)
try:
    torch.load(path, weights_only=True)
except (pickle.UnpicklingError, FileNotFoundError):
    pass
n = functools.reduce(operator.mul, (2, 3), 1)

import contextlib

@contextlib.contextmanager
def evaluating(net):
    was = net.training
    net.eval()
    with torch.no_grad():
        yield net
    net.train(was)
name = type(model).__name__
input = torch.zeros(3)
input[0] = 1
torch.backends.cudnn.benchmark = True
'''
    assert code_scan.scan([code]) == []
    assert code_scan.scan(["from __future__ import annotations", "import torch\nmodel = torch.nn.Linear(2, 1)",
                           "%timeit model(torch.zeros(1, 2))",
                           "%%time\ny = model(torch.zeros(1, 2))", "%matplotlib inline"]) == []
    assert code_scan.scan(["%timeit exec('1')"])  # what a plain magic runs is read too


def test_a_helper_of_the_course_s_own_cells_redefined_as_code_is_found():
    """What the course's setup and visible test cells define, the tests call: an empty loader
    in its place would make them pass vacuously. A value of the same name is no finding."""
    release = nbformat.read(ROOT / "release" / "05_no_grad" / "05_no_grad.ipynb", as_version=4)
    nb = copy.deepcopy(release)
    for code in ("def make_loader(n=32, batch_size=8):\n    return []",
                 "def reset():\n    global make_loader\n    make_loader = lambda *a, **k: []\nreset()",
                 "for make_loader in [lambda *a, **k: []]:\n    pass",
                 "if (make_loader := lambda *a, **k: []):\n    pass",
                 "from itertools import repeat as make_loader"):
        nb = copy.deepcopy(release)
        nb.cells.append(nbformat.v4.new_code_cell(code))
        found = code_scan.notebook_findings(nb, release)
        assert [f.what for f in found] == ["redefines make_loader, which the tests call, as code of its own"], code
    nb = copy.deepcopy(release)
    nb.cells.append(nbformat.v4.new_code_cell("DEVICE = torch.device('cpu')\nwith torch.no_grad():\n    pass\n"
                                              "for input, target in make_loader():\n    pass\n"
                                              "class Mine(nn.Module):\n    pass\nmodel = Mine()"))
    assert code_scan.notebook_findings(nb, release) == []
    nb.cells.append(nbformat.v4.new_code_cell("F = 3"))  # the module the tests call F.cross_entropy on
    assert [f.what for f in code_scan.notebook_findings(nb, release)] == [
        "rebinds F, which the course's own cells import"]


def test_the_release_cells_are_the_course_s_own_and_not_read():
    course_cell = "import sys\nprint(sys.modules['torch'])"
    assert code_scan.scan([course_cell], given={course_cell}) == []
    assert code_scan.scan([course_cell + "\n"]) != []


def cases(unit):
    for scenario in unit.SCENARIOS:
        yield scenario.student, scenario.answers, scenario.extra_cells, not scenario.loses
    for mutant in unit.MUTANTS:
        yield f"mutant {mutant.name}", mutant.answers, None, False


# The course's correct variants that reach past the list of what an answer uses: honest, and
# flagged for review all the same (their score stands). The count is docs/threat-model.md's.
HONEST_BUT_FLAGGED = {
    ("02_devices", "alternative_b"): "imports torch.utils._pytree.tree_map",  # a private module of torch
    ("02_devices", "alternative_d"): "reads .is_available",                   # on a module held in a variable
    ("05_no_grad", "alternative_c"): "uses torch._foreach_mul_",              # a private function of torch
    ("07_checkpoints", "alternative_a"): "uses vars",                         # dict(vars(config)): any namespace
}


# What a wrong answer of the course may be flagged for: unpickling (the misconceptions that are
# such means themselves), a mutant's reach past the list (a private attribute, setattr), a
# subclass of a torch layer with its own forward (06's and 08's Linear that ignores its bias), and
# grad mode switched for the rest of the session.
WRONG_ANSWERS_FLAGGED_FOR = ("unpickles", "safe_globals", "setattr", "not on the course's list",
                            "writes in place into",  # an answer that changes its input (descend's w0)
                            "for the rest of the session",  # grad mode switched off globally (05's, 08's evaluate)
                            "where the tests take a nn.")


def read(unit, answers, extra=None) -> list:
    source = read_notebook(ROOT / "source" / unit.ASSIGNMENT / unit.NOTEBOOK)
    release = read_notebook(ROOT / "release" / unit.ASSIGNMENT / unit.NOTEBOOK)
    nb = nbformat.reads(json.dumps(build_submission(source, release, answers, extra)), as_version=4)
    return code_scan.notebook_findings(nb, nbformat.reads(json.dumps(release), as_version=4))


@pytest.mark.parametrize("unit", UNITS, ids=[u.ASSIGNMENT for u in UNITS])
def test_every_correct_answer_of_the_course_reads_clean_but_the_counted_few(unit):
    """Every correct variant (the reference solution among them) passes unflagged, but those
    counted in HONEST_BUT_FLAGGED, which are flagged for what the list names; a wrong answer is
    flagged only for unpickling (the misconceptions that are such means themselves)."""
    for name, answers, extra, correct in cases(unit):
        findings = read(unit, answers, extra)
        if correct and (unit.ASSIGNMENT, name) not in HONEST_BUT_FLAGGED:
            assert not findings, (name, [str(f) for f in findings])
        elif correct:
            assert findings and all(HONEST_BUT_FLAGGED[unit.ASSIGNMENT, name] in f.what for f in findings[:1]), \
                (name, [str(f) for f in findings])
        else:
            for finding in findings:
                assert any(w in finding.what for w in WRONG_ANSWERS_FLAGGED_FOR), (name, str(finding))


def test_the_flagged_share_of_the_course_s_correct_variants():
    """What the list costs honest students: of the scenarios' correct variants (each a whole
    notebook), those flagged, as counted in docs/threat-model.md."""
    correct = [(unit.ASSIGNMENT, s.student) for unit in UNITS for s in unit.SCENARIOS
               if not s.loses and s.answers is not None]
    assert set(HONEST_BUT_FLAGGED) <= set(correct)
    text = (ROOT / "docs" / "threat-model.md").read_text()
    assert f"{len(HONEST_BUT_FLAGGED)} of the course's {len(correct)} correct variants" in text


# Correct answers in styles the scenarios do not write, each read as a notebook of its unit.
OTHER_STYLES = {
    "02_devices": [{"q1_pick_device_answer": '''
def pick_device():
    device = "cpu"
    if torch.backends.mps.is_available():
        device = "mps"
    if torch.cuda.is_available():
        device = "cuda"
    return torch.device(device)
''', "q2_move_to_answer": '''
def move_to(batch, device):
    if torch.is_tensor(batch):
        return batch.to(device)
    if isinstance(batch, dict):
        moved = {}
        for key in batch:
            moved[key] = move_to(batch[key], device)
        return moved
    if isinstance(batch, tuple):
        return tuple(move_to(item, device) for item in batch)
    if isinstance(batch, list):
        return [move_to(item, device) for item in batch]
    return batch
'''}],
    "05_no_grad": [{"q1_evaluate_answer": '''
def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.set_grad_enabled(False):
        for inputs, targets in loader:
            inputs, targets = inputs.to(DEVICE), targets.to(DEVICE)
            batch_loss = loss_fn(model(inputs), targets)
            total = total + batch_loss.item() * inputs.size(0)
            count = count + inputs.size(0)
    if was_training:
        model.train()
    return total / count
''', "q2_train_epoch_answer": '''
def train_epoch(model, loader, loss_fn, optimizer):
    losses, sizes = [], []
    for step, (x, y) in enumerate(loader):
        x = x.to(DEVICE)
        y = y.to(DEVICE)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(float(loss) * len(x))
        sizes.append(len(x))
    return sum(losses) / sum(sizes)
''', "q4_ema_update_answer": '''
@torch.no_grad()
def ema_update(ema_model, model, decay):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.lerp_(p, 1 - decay)
'''}],
    "06_modules": [{"q2_mlp_answer": '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)
''', "q4_parameter_count_answer": '''
def parameter_count(model):
    trainable = frozen = 0
    for p in model.parameters():
        if p.requires_grad:
            trainable += p.numel()
        else:
            frozen += p.numel()
    buffers = sum(b.numel() for b in model.buffers())
    return {"trainable": trainable, "frozen": frozen, "buffers": buffers}
'''}],
    "07_checkpoints": [{"q1_save_checkpoint_answer": '''
def save_checkpoint(path, model, optimizer, epoch, config):
    state = {}
    state["model"] = model.state_dict()
    state["optimizer"] = optimizer.state_dict()
    state["epoch"] = epoch
    state["config"] = dataclasses.asdict(config)
    torch.save(state, path)
''', "q2_load_checkpoint_answer": '''
def load_checkpoint(path, make_model, make_optimizer, device):
    state = torch.load(path, map_location=device)
    model = make_model().to(device)
    model.load_state_dict(state["model"])
    optimizer = make_optimizer(model.parameters())
    optimizer.load_state_dict(state["optimizer"])
    return model, optimizer, state["epoch"], state["config"]
'''}],
}


@pytest.mark.parametrize("assignment", OTHER_STYLES)
def test_correct_answers_in_other_styles_read_clean(assignment):
    unit = next(u for u in UNITS if assignment == u.ASSIGNMENT)
    for answers in OTHER_STYLES[assignment]:
        findings = read(unit, answers)
        assert not findings, [str(f) for f in findings]


def test_the_flag_names_the_first_places_and_counts_the_rest():
    findings = code_scan.scan(["import gc\nimport ctypes\nimport inspect\nimport dis"])
    reason = code_scan.flag_reason(findings)
    assert reason.startswith(code_scan.REASON + ": cell 1, line 1: imports gc;") and "(and 1 more)" in reason


# Facts only the kernel holds, forged there: wrong code whose kernel-side evidence is rewritten
# through a parameter (no module named at the assignment), as a reader of the grader would.
FORGED_FACTS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
import autograder
from autograder.autograd_probe import SavedTensorCount

def evaluate(model, batches):  # no torch.no_grad(): every batch records a graph
    return sum(F.mse_loss(model(x), y).item() for x, y in batches) / len(batches)

def pick_device():  # mps tried before cuda
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")

def blind(probe):  # the saved-tensor probe counts nothing
    probe._pack = staticmethod(lambda tensor: tensor)
    probe._module_ran = lambda self, module, args, output: None

def rig(library):  # "pretend both" pretends CUDA alone
    real = library.pretend_accelerators
    library.pretend_accelerators = lambda cuda=False, mps=False: real(cuda=cuda, mps=mps and not cuda)
'''
SHOW_THEM = '''
model, batches = nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1))]
def observed():
    with SavedTensorCount() as saved:
        evaluate(model, batches)
    with autograder.pretend_accelerators(cuda=True, mps=True):
        picked = pick_device().type
    return saved.count, picked
honest = observed()
blind(SavedTensorCount)
rig(autograder)
print(honest, observed())
'''


def test_forged_kernel_facts_pass_the_kernel_s_own_probes_and_are_flagged(tmp_path):
    """The route, working: in a fresh interpreter the probes a hidden test uses see the wrong
    code for what it is, then, once rewritten, see nothing wrong. Then stopped: the grader's
    reading of the same code flags it, naming both rewrites."""
    import subprocess
    import sys
    script = tmp_path / "forged.py"
    script.write_text(FORGED_FACTS + SHOW_THEM)
    shown = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert shown.returncode == 0, shown.stderr[-2000:]
    honest, forged = shown.stdout.strip().split(") (")
    assert honest.startswith("(") and not honest.startswith("(0,") and "'mps'" in honest, shown.stdout
    assert forged.startswith("0,") and "'cuda'" in forged, shown.stdout
    found = [f.what for f in code_scan.scan([FORGED_FACTS])]
    assert any("._pack" in what for what in found) and any(".pretend_accelerators" in what for what in found), found


def test_a_module_that_cannot_be_imported_is_no_finding():
    """The kernel runs on the grader's own environment, without its work folder on the import
    path: a module missing here is missing there (an ImportError, no means of anything)."""
    assert code_scan.scan(["import torch_rounding_helpers\nfrom my_helpers import f"]) == []


def test_code_too_deep_to_read_is_a_finding_not_a_crash():
    """A reader of the grader may nest its code past what a walk of it can take: the cell is
    then flagged as unread, and the reading goes on with the others."""
    deep = "x = 1\ny = " + " + ".join(["x"] * 50_000)
    found = code_scan.scan([deep, "import gc"])
    assert found[0].what.startswith("is too deep") and any("gc" in f.what for f in found), found



# Everyday code of honest answers, each a shape a rule of the reading comes near.
EVERYDAY = {
    "tensors as a class's fields": "import torch\nfrom dataclasses import dataclass\n@dataclass\nclass Batch:\n"
                                   "    x: torch.Tensor\n    y: torch.Tensor\n"
                                   "b = Batch(torch.zeros(1), torch.zeros(1))\nb.x.grad = None",
    "a class as a default": "from torch import nn\ndef mlp(act=nn.ReLU):\n"
                            "    return nn.Sequential(nn.Linear(2, 2), act())",
    "a dict of classes": "from torch import nn\nACTS = {'relu': nn.ReLU, 'tanh': nn.Tanh}\nlayer = ACTS['relu']()",
    "a class chosen": "import torch\ndef make(m, adam):\n    cls = torch.optim.Adam if adam else torch.optim.SGD\n"
                      "    return cls(m.parameters(), lr=0.1)",
    "a class returned": "from torch import nn\ndef act(name):\n    return nn.ReLU if name == 'relu' else nn.Tanh",
    "a partial of a class": "import functools\nfrom torch import nn\nmake = functools.partial(nn.Linear, bias=False)\n"
                            "m = make(2, 3)\nm.weight.requires_grad = False",
    "isinstance over a tuple": "from torch import nn\ndef init(m):\n    if isinstance(m, (nn.Linear, nn.Conv2d)):\n"
                               "        nn.init.zeros_(m.bias)",
    "a function as a default": "import torch.nn.functional as F\ndef loss(p, t, fn=F.mse_loss):\n    return fn(p, t)",
    "layers in a list": "from torch import nn\nlayers = [nn.Linear(2, 4), nn.ReLU()]\nmodel = nn.Sequential(*layers)",
    "dtypes in a loop": "import torch\nfor dt in [torch.float32, torch.float64]:\n    x = torch.zeros(2, dtype=dt)",
    "a device picked": "import torch\ndef pick():\n"
                       "    return torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
    "an enum": "import enum\nclass Mode(enum.Enum):\n    TRAIN = 1\n    EVAL = 2",
    "a file read from its start": "with open('x.bin', 'rb') as f:\n    f.seek(0)\n    data = f.read()",
    "hints, as text too": "from torch import nn\ndef f(m: 'nn.Module') -> nn.Module:\n    return m",
    "a dataclass": "from dataclasses import dataclass\n@dataclass\nclass Config:\n    lr: float = 0.1",
    "parameters frozen in a loop": "from torch import nn\nm = nn.Linear(2, 2)\nfor name, p in m.named_parameters():\n"
                                   "    p.requires_grad = False\n    p.grad = None",
    "a child's bias removed": "from torch import nn\nm = nn.Sequential(nn.Linear(2, 2))\nm[0].bias = None",
    # near automagic: a variable named like a magic (history, config, ls), shown in a cell of one line
    "a list named like a magic, shown": ["history = [0.9, 0.5]", "history[-1]"],
    "a config named like a magic, shown": ["config = dict(lr=0.1)", "config"],
    "a magic's name assigned": ["ls = [1, 2]", "cat = 'tabby'"],
    "a magic's name shadowed, then used as Python": ["ls = [1, 2]", "ls + [3]", "cat = 'tabby'", "cat * 2"],
    "a plain magic on one line": ["%time total = sum(range(10))", "%matplotlib inline"],
    "a difference shown, its first name like a magic's": ["time = 5.0", "start = 1.0", "time - start"],
    # near a context held across a yield
    "a generator reading a file": "def lines(path):\n    with open(path) as f:\n        for line in f:\n"
                                  "            yield line.strip()",
    "a generator of batches": "def batches(x, n):\n    for i in range(0, len(x), n):\n        yield x[i:i + n]",
    "a context manager of its own, as a block": (
        "import contextlib, torch\n@contextlib.contextmanager\ndef evaluating(model):\n    model.eval()\n"
        "    with torch.no_grad():\n        yield model\n    model.train()\n"
        "with evaluating(torch.nn.Linear(2, 2)) as m:\n    y = m(torch.zeros(1, 2))"),
    "a default device for a block": "import torch\nwith torch.device('cpu'):\n    x = torch.zeros(2)",
    "a generator decorated with no_grad": "import torch\n@torch.no_grad()\ndef predictions(model, xs):\n"
                                          "    for x in xs:\n        yield model(x)",
    # near writers of classes
    "a frozen dataclass": "from dataclasses import dataclass\n@dataclass(frozen=True)\nclass Point:\n"
                          "    x: float = 0.0",
    "a dataclass with a default factory": "from dataclasses import dataclass, field\n@dataclass\nclass History:\n"
                                          "    losses: list = field(default_factory=list)",
    "a dataclass made by a call on its own class": "import dataclasses\nclass Point:\n    x: int = 0\n"
                                                   "Point = dataclasses.dataclass(Point)",
    "an abstract base class": "from abc import ABC, abstractmethod\nclass Step(ABC):\n    @abstractmethod\n"
                              "    def run(self, x):\n        ...",
    # near format strings and backends
    "a number formatted": "loss = 0.25\nline = '{:.3f}'.format(loss)\nshown = str.format('{} of {}', 1, 2)",
    "a format kept and used": "fmt = '{:.2f}'.format\nshown = list(map(fmt, [0.1, 0.2]))",
    "formats kept in names": "fmt = '{:.2f}'\nrow = 'epoch {}: {:.3f}'\nprint(fmt.format(0.5), row.format(1, 0.2))",
    "named fields formatted": "line = 'epoch {epoch}: {loss:.3f}'.format(epoch=1, loss=0.5)",
    "a figure saved": "import matplotlib.pyplot as plt\nplt.plot([1, 2], label='loss')\nplt.legend()\n"
                      "plt.savefig('loss.png', dpi=100)",
    "a figure saved by a backend named": "import matplotlib.pyplot as plt\nplt.savefig('loss.pdf', backend='pdf')",
    "numpy's index builders": "import numpy as np\na = np.r_[1:3, 5]\nb = np.c_[np.zeros(2), np.ones(2)]\n"
                              "c = np.r_[0:4]\nd = np.r_[2]",
    "a class shown and compared, parameters frozen": (
        "import torch\nx = torch.zeros(1)\nprint(type(x), f'{type(x)}', type(x).__name__)\n"
        "same = type(x) is torch.Tensor or isinstance(x, type(x))\ncopy = type(x)(3)\n"
        "for p in torch.nn.Linear(1, 1).parameters():\n    p.requires_grad = False"),
    "an array module passed, its names the notebook's too": (
        "import numpy as np\nclass Stats:\n    def mean(self):\n        return 0.0\n"
        "def total(x, xp=np):\n    return xp.sum(x) + xp.mean(x)"),
    # near arrays over a buffer
    "arrays made, one over a buffer, and offsets of diagonals": (
        "import numpy as np, torch\na = np.ndarray((2, 3))\nok = isinstance(a, np.ndarray)\n"
        "b = np.ndarray((2,), dtype=np.float64, buffer=np.zeros(4), offset=8)\n"
        "d = torch.diagonal(torch.eye(3), offset=-1)\ne = np.diagonal(np.eye(3), offset=-1)"),
    # near private hooks tables
    "a hand-made autograd value with private fields": (
        "class Value:\n    def __init__(self, data):\n        self.data, self.grad = data, 0.0\n"
        "        self._backward, self._prev = (lambda: None), set()\n    def backward(self):\n"
        "        self._backward()"),
    "array classes asked about, type() shown and compared": (
        "import numpy as np\nx = np.zeros(2)\nok = isinstance(x, np.ndarray) or type(x) == np.ndarray\n"
        "def f(a: np.ndarray) -> np.ndarray:\n    return a\nprint(type(x), str(type(x)))\n"
        "same = isinstance(x, type(x))\nkinds = [type(v) for v in [1, 2.0]]\ncopy = type(x)(3)"),
    # near what a module reports of itself
    "a hand-made layer that lists its parameters": (
        "import torch\nclass Linear:\n    def __init__(self, n, m):\n        self.w = torch.zeros(n, m)\n"
        "    def parameters(self):\n        return [self.w]\n    def state_dict(self):\n        return {'w': self.w}"),
    "a module whose train() sets its mode": (
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n    def train(self, mode=True):\n        super().train(mode)\n"
        "        self.training = mode\n        return self\n    def forward(self, x):\n        return self.fc(x)"),
    # near register
    "a registry of its own": "class Registry:\n    def __init__(self):\n        self.items = {}\n"
                             "    def register(self, name, fn):\n        self.items[name] = fn\n"
                             "REG = Registry()\nREG.register('relu', abs)",
    # near writing in place into an input
    "a method that writes its own buffers": (
        "import torch\nfrom torch import nn\nclass R(nn.Module):\n    @torch.no_grad()\n"
        "    def fit(self, x):\n        self.mean.copy_(x.mean(0))\n        self.mean += 0"),
    "an input copied, then written": "def descend(f, w0, lr, steps):\n    w0 = w0.clone()\n    w0 -= lr\n    return w0",
    "a parameter's flag set, and parameters stepped in a loop": (
        "import torch\ndef ema(ema_model, model, decay):\n    with torch.no_grad():\n"
        "        for e, p in zip(ema_model.parameters(), model.parameters()):\n            e.mul_(decay).add_(p)\n"
        "def freeze(w):\n    w.requires_grad_(False)"),
    "a new tensor written in place": "import torch\ndef init(shape, scale):\n    return torch.randn(shape).mul_(scale)",
    "a count stepped by an augmented assignment": "def f(n):\n    n += 1\n    return n",
    "a mover that fills the dicts and lists it is handed": (
        "import torch\ndef move_to(batch, device):\n    if isinstance(batch, torch.Tensor):\n"
        "        return batch.to(device)\n    if isinstance(batch, dict):\n        for key, value in batch.items():\n"
        "            batch[key] = move_to(value, device)\n        return batch\n"
        "    if isinstance(batch, list):\n        for i, value in enumerate(batch):\n"
        "            batch[i] = move_to(value, device)\n        return batch\n    return batch"),
    "an entry of a dict it is handed, set by its name": "def tag(batch):\n    batch['seen'] = True\n    return batch",
    "paths and words near the process's files": "path = 'runs/process.txt'\nnote = 'the procedure'",
    "a layer of torch's subclassed for its set-up, and modules of the notebook's own": (
        "from torch import nn\nclass ZeroLinear(nn.Linear):\n    def __init__(self, a, b):\n"
        "        super().__init__(a, b)\n        nn.init.zeros_(self.bias)\n"
        "    def extra_repr(self):\n        return 'zeros'\n"
        "class Net(nn.Module):\n    def forward(self, x):\n        return x\n"
        "class Stack(nn.Sequential):\n    def forward(self, x):\n        return super().forward(x)"),
    "a class attribute of the notebook's own set after its body": (
        "from torch import nn\nclass Net(nn.Module):\n    pass\nNet.scale = 2.0\n"
        "class Config:\n    pass\nConfig.lr = 0.1"),
    "a layer of torch's subclassed with an initialisation and a name of its own": (
        "from torch import nn\nclass Dense(nn.Linear):\n    def reset_parameters(self):\n"
        "        nn.init.zeros_(self.weight)\n        nn.init.zeros_(self.bias)\n"
        "    @property\n    def fan_in(self):\n        return self.in_features"),
    "typing's aliases as hints": "from typing import Mapping, Sequence\n"
                                 "def total(xs: Sequence[float], w: Mapping[str, float]) -> float:\n"
                                 "    return sum(xs) * w['scale']",
}


@pytest.mark.parametrize("shape", EVERYDAY)
def test_everyday_code_reads_clean(shape):
    cells = EVERYDAY[shape]
    assert code_scan.scan(cells if isinstance(cells, list) else [cells]) == []
