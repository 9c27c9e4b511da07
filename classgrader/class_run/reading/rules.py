"""The lists the reading reads code against, beside allowed.toml (allow_list.py): modules an
answer may import, the parts of them that reach the process, and the builtins, attributes and
calls that reach, rewrite or pretend. The reader (walk.py to reader.py) says how each is used."""
import ast
import sys

# Modules an answer may import; of some, only the parts named (None: all of it).
MODULES = dict.fromkeys((
    "torch", "numpy", "math", "cmath", "random", "statistics", "collections", "itertools", "functools", "dataclasses",
    "typing", "copy", "string", "re", "time", "datetime", "json", "csv", "pathlib", "tempfile", "io", "matplotlib",
    "fractions", "decimal", "enum", "abc", "contextlib", "heapq", "bisect", "textwrap", "pprint", "warnings",
    "argparse", "operator", "__future__", "autograder", "utils", "tqdm", "PIL", "numbers", "shutil", "hashlib"))
MODULES |= {
    "os": {"path", "makedirs", "mkdir", "listdir", "scandir", "walk", "remove", "unlink", "rename", "replace",
           "rmdir", "getcwd", "stat", "sep", "linesep", "cpu_count", "environ", "fspath", "PathLike", "getpid"},
    "sys": {"stdout", "stderr", "version", "version_info", "platform", "float_info", "maxsize", "getsizeof",
            "byteorder", "int_info", "float_repr_style"},
    "types": {"SimpleNamespace", "MappingProxyType"},
    "pickle": {"UnpicklingError", "PicklingError", "PickleError", "HIGHEST_PROTOCOL", "DEFAULT_PROTOCOL"},
}
# Parts of allowed modules that reach the process all the same: C internals, dispatch, global
# hooks (they change what every later graph or module does, the probes' included), the check
# library's records and its grading-kernel setup.
REACHES_PROCESS = ("torch._C", "torch._dynamo", "torch._ops", "torch._subclasses", "torch._functorch",
                   "torch._library", "torch._higher_order_ops", "torch._guards", "torch.utils._python_dispatch",
                   "torch.utils.cpp_extension", "torch.library", "torch.overrides", "torch.ops",
                   "torch.utils.hooks", "torch.autograd.graph", "torch.nn.modules.module", "torch.multiprocessing",
                   "torch.serialization.add_safe_globals", "torch.serialization.safe_globals", "numpy.ctypeslib",
                   "operator.setitem", "operator.delitem", "operator.methodcaller",
                   "autograder.trace", "autograder.grading_kernel", "autograder.validate")
# Settings an answer may assign, the documented way to choose them.
SETTINGS = {"torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic", "torch.backends.cudnn.enabled",
            "torch.backends.cudnn.allow_tf32", "torch.backends.cuda.matmul.allow_tf32"}
# Magics that only time, show or plot: what they run is the student's code, read like the rest.
PLAIN_MAGICS = {"time": True, "timeit": True, "matplotlib": False, "pprint": False, "precision": False}
# Builtins that run, reach or change code and namespaces by name (getattr, setattr and vars:
# see Reader.visit_Call for the uses that stay plain).
REFLECTION = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "setattr", "delattr",
              "breakpoint", "getattr", "__builtins__", "__loader__", "__spec__", "__build_class__", "get_ipython"}
# The interpreter's frames and code objects, and stacks of context managers, reached without a dunder.
INTERNALS = {"f_globals", "f_locals", "f_back", "f_builtins", "f_code", "f_trace", "tb_frame", "tb_next",
             "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "co_code", "co_consts",
             "co_names", "enter_context", "push_async_callback",
             "get_field",  # string.Formatter's: the object a field name ("0.sys.modules") reaches
             # C access from an object an answer may hold (numpy's array.ctypes is the ctypes module's way in)
             "ctypes", "_ctypes", "pythonapi", "CDLL", "PyDLL", "cdll", "pydll", "dlopen"}
CONTEXT_MANAGERS = {"contextlib.contextmanager", "contextlib.asynccontextmanager"}
# Context managers a generator may hold entered across a yield: they open a file or a folder,
# or catch, and change nothing of the process's state for the code that runs meanwhile.
HELD_HARMLESSLY = {"open", "tempfile.TemporaryDirectory", "tempfile.NamedTemporaryFile", "contextlib.suppress",
                   "contextlib.nullcontext", "io.BytesIO", "io.StringIO", "warnings.catch_warnings"}
# Grad modes and defaults switched for the rest of the session when called as a statement.
SESSION_SWITCHES = {"set_grad_enabled", "no_grad", "enable_grad", "inference_mode", "set_default_device",
                    "set_default_dtype", "set_default_tensor_type"}
# Dunders an answer may read: a name (and super().__init__ / Base.__init__(self, ...)).
PLAIN_DUNDERS = {"__name__", "__qualname__", "__doc__", "__version__"}
# ...and those its own classes may define: a module's, a dataset's, a context manager's methods.
OWN_METHODS = PLAIN_DUNDERS | {"__init__", "__len__", "__getitem__", "__iter__", "__next__", "__repr__", "__str__",
                               "__call__", "__enter__", "__exit__", "__contains__", "__post_init__", "__slots__"}
# (not __annotations__: written as a table, its keys are any text, which dataclass writes into the
# code it makes and runs: {"a, print(1)": int} runs print in __eq__)
# Classes a student's own class may not derive from: what torch and the checks take as a tensor.
TENSOR_CLASSES = {"Tensor", "Parameter", "Buffer", "UninitializedParameter", "TensorBase", "_TensorBase"}
# What torch's modules and optimisers tell of themselves, which the tests read to see what one holds
# (its parameters, its buffers, its layers, its mode): a subclass that redefines one can report
# anything (statistics kept as parameters, listed as buffers).
SELF_REPORTS = {"parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
                "modules", "named_modules", "state_dict", "training", "param_groups"}
# The switches of a module's mode: a subclass may redefine one only to add to torch's, which it
# calls (super().train(mode)); one that does not can leave the mode, and its layers', as they were.
MODE_SWITCHES = {"train", "eval"}
REPORTING_CLASSES = ("torch.nn.Module", "torch.optim.Optimizer")
# What a layer of torch's computes (nn.Linear's forward): the tests take a layer they find in a model
# (isinstance(m, nn.Linear)) for torch's own and compute what they expect with it, so a subclass that
# redefines one makes the expected value its own (a Linear that ignores its bias agrees with itself).
LAYER_COMPUTES = {"forward", "__call__"}
# What a subclass of such a layer may define of the names the layer holds: what sets it up. Any
# other (a property `bias` that hands forward and the tests a detached copy, so the layer never
# learns) answers for what the layer holds, read by its forward and by the tests alike.
LAYER_SETUP = {"__init__", "extra_repr", "reset_parameters"}
METACLASSES = {"type", "ABCMeta", "EnumMeta", "EnumType"}  # deriving from one makes a metaclass
# Names of modules: an attribute of the notebook's own by that name (self.sys) never makes one
# readable elsewhere (torch.sys, reached through a parameter the reading cannot resolve).
MODULE_NAMES = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "classgrader", "autograder", "utils"}
# Decorators that write methods or attributes onto what they are given (dataclass sets __init__ and
# __eq__, total_ordering the comparisons, the others a flag): on the notebook's own class or function
# they build it; on torch.Tensor or a probe they rewrite it.
CLASS_WRITERS = {"dataclasses.dataclass", "functools.total_ordering", "typing.final", "typing.runtime_checkable",
                 "typing.no_type_check", "typing.dataclass_transform", "abc.abstractmethod"}
# Builtins and helpers that hand back whatever they were given: what they return may be code.
PASS_THROUGH = {"next", "min", "max", "getattr", "iter", "reversed", "sorted", "choice", "reduce", "copy",
                "deepcopy", "get", "pop", "setdefault", "nullcontext"}
WRAPPERS = {"staticmethod", "classmethod", "property", "partial", "partialmethod", "MethodType", "wraps"}
MUTATORS = {"clear", "update", "pop", "popitem", "setdefault", "append", "extend", "insert", "remove", "add",
            "discard", "sort", "reverse", "__setitem__", "__delitem__"}
TABLES = (dict, list, set)
# Methods that take a format string, whose fields read attributes and items by name.
FORMATTING = {"format", "format_map", "vformat"}
# Calls that give an object attributes named by their keywords: a mapping spread into one (**d)
# names them by what it computes, as setattr does.
ATTRIBUTE_MAKERS = {"types.SimpleNamespace"}
# numpy's matrix builders: given a string, they read the caller's variables it names.
MATRIX_BUILDERS = {"numpy.r_", "numpy.c_"}
# Texts that name the process's own files: /proc/self/environ holds what os.environ is refused
# for, /proc/self/mem the process's memory, /dev/fd its open files (a path put together from
# parts names one too: "/", "proc", "self", "environ").
PROCESS_FILES = ("/proc", "/dev/fd", "/dev/std")
PROCESS_FILE_PARTS = {"proc", "environ"}
# Builtins that make text of what they are given, or ask about it, and hand none of it back.
SHOWN = {"print", "str", "repr", "format", "len", "id", "hash", "display", "callable"}
IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a class made by C code whose attributes cannot be set
UNKNOWN = ast.Constant(value=None)  # the value of an unpacked or augmented assignment
REGISTERS = {"register_buffer", "register_parameter", "add_module", "register_module"}
