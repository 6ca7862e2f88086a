"""Problems as kernel benchmarks write them (KernelBench, and the benchmarks built on its format): a
Python file with a PyTorch `Model` (an `nn.Module`), `get_inputs()` (the arguments of its forward)
and `get_init_inputs()` (of its constructor); a candidate is a file with a `ModelNew` taking the
same arguments. Nothing is declared by hand: the shapes, the work and the compulsory bytes are read
from the reference itself. A GPU MODE task's `reference.py` is read the same way, a problem per
benchmark case of its `task.yml` (`cases`; `workload.gpumode` says how).

Drawing, as KernelBench's own evaluation does: the seed is set before `get_init_inputs()` and again
before each model is built (so the reference and the candidate start from the same weights), and a
trial's seed before `get_inputs()` (`Problem.inputs`).

The work (`work`): the reference's forward run once on PyTorch's meta device (shapes and types, no
data and no arithmetic, so a problem of any size is read in milliseconds on any machine; a
constructor that reads a value, which a meta tensor has not, is built on the CPU and moved), every op
that PyTorch's FLOP counter knows (`torch.utils.flop_counter`: matrix products, convolutions,
attention) counted by the counter's own formula (a mixture of experts' `torch._grouped_mm`, which it
has none for, by `grouped_mm_flops`) and filed under the precision its inputs run at on the GPU:

    float32   a matrix product 'fp32' (PyTorch leaves TF32 off for them unless
              torch.backends.cuda.matmul.allow_tf32 is set: then 'tf32_tensor'); a convolution
              'tf32_tensor' (cuDNN's TF32 is on by default: torch.backends.cudnn.allow_tf32)
    bfloat16  'bf16_tensor'     float16  'fp16_tensor'     float64  'fp64_tensor'
    float8_*  'fp8_tensor'      float4_e2m1fn_x2  'fp4_tensor', two values an element (`PACKED`:
              a product's FLOPs, counted on its elements, doubled: NVFP4's `torch._scaled_mm`)
    int8      'int8_tensor'     (`torch._int_mm`, which the counter has no formula for: 2 m n k)

A product whose operands the reference widened by a cast (`a.float() @ b.float()` of FP16 or int8
tensors) is counted in the type they were held in, and so is one of FP8, FP4 or int8 tensors
dequantized by a scale (`_note_widened`, `SCALING`); a bias added by the product op is no operand.

A causal attention counts the share of its scores its mask keeps, of both its products: through
`scaled_dot_product_attention`'s `is_causal` (`_attention_read`), or a triangular mask written out
(`workload.masks`). Other ops (elementwise, reductions, normalisations) count no FLOPs: their speed
of light is their bytes. The compulsory bytes: what the forward's ops read of its inputs,
parameters and buffers (each byte of a storage at most once, whichever of its views is read: the
union of the regions its ops read, followed through views and the pieces of a split,
`workload.regions`; an op that gathers by index, `GATHERS`, reads what it returns, not its whole
table; an op that overwrites its first argument, `WRITES`, or an `out=` tensor reads none of it),
and every tensor it returns written once: a lower bound, never above what a candidate must move. A
forward the meta device cannot run (a branch on a value, an op with no meta kernel because its
output's shape depends on the data) is read again with one draw of its inputs' values at hand
(inputs of at most MAX_DRAWN_BYTES, `_work`); one that fails so too is refused in one line.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ..errors import RunError, UsageError
from ..files import import_file
from ..model.sol import Work
from . import gpumode
from .off_gpu import kept_off_cuda

REFERENCE = "Model"
CANDIDATE = "ModelNew"
FUNCTIONS = ("get_inputs", "get_init_inputs")
MATMUL_OPS = ("mm", "addmm", "bmm", "baddbmm", "matmul", "_scaled_mm", "_grouped_mm", "_int_mm")
# PyTorch's 8- and 4-bit float types by name (a PyTorch without one has no such tensor), their precision key
LOW_PRECISION = {"float8_e4m3fn": "fp8_tensor", "float8_e5m2": "fp8_tensor", "float8_e4m3fnuz": "fp8_tensor",
                 "float8_e5m2fnuz": "fp8_tensor", "float4_e2m1fn_x2": "fp4_tensor"}
PACKED = {"float4_e2m1fn_x2": 2}  # values an element of a packed type holds
# What a harness times and counts with: a candidate that replaces one of them, when its file is imported or
# in a call, is caught (`measure.candidate`). Modules not yet imported are not looked at (nor imported).
HARNESS = ("time.perf_counter", "time.perf_counter_ns", "time.time", "time.monotonic", "statistics.median",
           "statistics.mean", "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Event.record",
           "torch.cuda.Event.elapsed_time", "torch.cuda.Event.synchronize", "torch.cuda.Stream.synchronize",
           "cupy.cuda.Event", "cupy.cuda.get_elapsed_time", "cupy.cuda.Device.synchronize")
# roofline's own timing and checking, as a candidate's process has it imported (`measure.problem_child`): every
# function of these modules is the harness too; replaced, the grade would be the candidate's to write.
HARNESS_MODULES = ("roofline.measure.graded", "roofline.measure.pipeline", "roofline.measure.rounds",
                   "roofline.measure.timing", "roofline.measure.activity", "roofline.measure.l2_persist",
                   "roofline.measure.problem_grade", "roofline.measure.candidate", "roofline.measure.waiting",
                   "roofline.model.verify")
# What the reference computes with (`harness`): a candidate that replaces one makes the check compare it with itself.
OPS = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.Tensor", "torch.nn.Module")
OPERATORS = ("__matmul__", "__rmatmul__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
             "__truediv__", "__rtruediv__", "__pow__", "__neg__", "__getitem__", "__call__")
# PyTorch's switches that lower an FP32 product's precision, and their values (`harness`).
SWITCHES = ("torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32",
            "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
            "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction")
# Ops whose pieces are views of their input though PyTorch does not mark them so (`_note_reads`).
SPLITS = ("unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk")
# Ops that read a tensor's shape and type, not its values (`torch.zeros_like(x)`): no bytes of it read.
SHAPE_ONLY = ("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like",
              "new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided", "empty_strided")
# In-place ops that write their first argument without reading it (an output buffer given with the inputs,
# `c[...] = a @ b` or `c.zero_()`): no bytes of it read (`_note_reads`), as none of an `out=` tensor.
WRITES = ("copy_", "fill_", "zero_", "uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_",
          "cauchy_", "log_normal_")
# Ops that read their first argument by rows or elements an index picks: they read what they return.
GATHERS = ("embedding", "_embedding_bag", "embedding_bag", "index_select", "gather", "index", "take",
           "take_along_dim")  # the rest the counter knows: convolutions, attention


@dataclass(frozen=True)
class Tensor:
    """One tensor the forward reads or returns: its place (`input 0`, `output 0`, `parameter
    conv.weight`), shape and PyTorch dtype name ('float32'), and its size in bytes."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int


@dataclass(frozen=True)
class ProblemWork:
    """What the reference does, read on the meta device: `work` (FLOPs per precision key, the
    compulsory bytes, where they come from), the tensors it reads and returns, its scalar
    arguments, and the FLOPs per op counted (op name -> FLOPs)."""

    work: Work
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    parameters: tuple[Tensor, ...]
    scalars: tuple[Any, ...] = ()
    counted: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # what in the reference is likely not what its author meant
    details: tuple[str, ...] = ()  # how this reference's work was read beyond the usual (the end of `work.source`)


@dataclass(frozen=True)
class Problem:
    """A problem file loaded (`load`): its path, its reference class and its two functions; a
    candidate file's class where one was loaded with it (`with_candidate`)."""

    path: Path
    reference: type
    get_inputs: Callable[[], list]
    get_init_inputs: Callable[[], list]
    candidate: type | None = None
    candidate_path: Path | None = None
    harness: dict[str, object] = field(default_factory=dict)  # `harness()` as it was before the candidate's import
    patched_at_import: tuple[str, ...] = ()  # what the candidate's import changed of it (put back at once)
    label: str | None = None  # its name where the file's stem is not (a GPU MODE task's case: `gpumode.name_of`)
    seeded: Callable[[int], list] | None = None  # a draw given its seed, where the draw takes one (`gpumode.Draw`)
    case: int | None = None  # which of its file's cases it is (`cases`), where the file has several
    # the file's own check of a candidate's answer, beside roofline's (a GPU MODE task's check_implementation:
    # `gpumode.own_check`): given the draw as it was before the call and the answer, None where it passes
    own_check: Callable[[list, Any], str | None] | None = None

    @property
    def name(self) -> str:
        """The file's stem ('1_Square_matrix_multiplication_'), or the case's name
        ('matmul_py[m=64,n=64,k=64]')."""
        return self.label or self.path.stem

    @property
    def buffers(self) -> tuple[int, ...]:
        """The places among the forward's arguments of the output buffers a draw gives with the
        inputs (a GPU MODE task's `torch.empty` for the answer: `gpumode.Layout`), after a draw."""
        return self.seeded.layout.buffers if self.seeded is not None else ()

    def init_inputs(self, seed: int = 0) -> list:
        """The constructor's arguments, drawn after the seed is set."""
        import torch

        torch.manual_seed(seed)
        return list(self.get_init_inputs())

    def model(self, seed: int = 0, candidate: bool = False, device: str = "cpu"):
        """The reference (or the candidate) built as KernelBench builds it: seed set, constructor
        arguments drawn, seed set again, the class built, moved to `device`, in eval mode.
        Raises UsageError when there is no candidate, RunError-free: a constructor that raises
        propagates (the caller says which file)."""
        import torch

        cls = self.candidate if candidate else self.reference
        if cls is None:
            raise UsageError(f"{self.path}: no candidate loaded beside it (a file with class {CANDIDATE})")
        args = self.init_inputs(seed)
        torch.manual_seed(seed)
        return cls(*args).to(device).eval()

    def inputs(self, seed: int = 0, device: str = "cpu") -> list:
        """One draw of the forward's arguments: seed set, `get_inputs()` with `device` PyTorch's
        default (a CUDA device: its tensors made there, not drawn on the host and copied: a
        6 GB input in milliseconds; a draw that fails there, on the host), every tensor moved to
        `device` (scalars as they are)."""
        import torch

        def draw() -> list:
            torch.manual_seed(seed)
            return self.seeded(seed) if self.seeded is not None else self.get_inputs()

        try:
            with torch.device(device):
                drawn = draw()
        except Exception:  # a draw that needs the host (numpy, .item()): drawn there, as the benchmarks draw
            drawn = draw()
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in drawn]


def top_level_names(path: Path) -> set[str] | None:
    """The names Python file `path` binds at its top level (classes, functions, assignments,
    imports), read without running it; None for a file that is not there or does not parse."""
    try:
        return _bound(_parsed(Path(path)))
    except (OSError, SyntaxError, ValueError):
        return None


def _parsed(path: Path):
    """Python file `path`'s syntax tree (`ast`). Raises OSError, SyntaxError or ValueError."""
    import ast

    return ast.parse(path.read_text(encoding="utf-8", errors="replace"), str(path))


def _bound(tree) -> set[str]:
    """The names a module's syntax tree binds at its top level (`top_level_names`)."""
    import ast

    bound: set[str] = set()
    todo = list(tree.body)
    while todo:  # the module's statements, and those of its if, try, with and for blocks (not of functions)
        node = todo.pop()
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}  # a, (b, c) = ...
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            todo += [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                     *(s for h in getattr(node, "handlers", []) for s in h.body)]
    return bound


def is_problem(path: Path) -> bool:
    """Whether `path` is a Python file that binds a reference class and its two functions at its
    top level, read without running it (a file that does not parse: by its text, so that loading
    it says why)."""
    if path.suffix != ".py" or not path.is_file():
        return False
    names = top_level_names(path)
    if names is None:
        text = path.read_text(errors="replace")
        return (f"class {REFERENCE}" in text and all(f"def {f}" in text for f in FUNCTIONS)) or \
            all(f"def {f}" in text for f in gpumode.FUNCTIONS)
    return (REFERENCE in names and all(f in names for f in FUNCTIONS)) or _binds_task(path, names)


def is_task(path: Path) -> bool:
    """Whether `path` is a GPU MODE task's reference (`gpumode`: `ref_kernel` and `generate_input`,
    or either beside a `task.yml`, for loading to say which it lacks) rather than a KernelBench
    problem, read without running it."""
    path = Path(path)
    return _binds_task(path, top_level_names(path))


def _binds_task(path: Path, names: set[str] | None) -> bool:
    """`is_task` of file `path`, whose top level binds `names` (None: it does not parse)."""
    if names is None or (REFERENCE in names and all(f in names for f in FUNCTIONS)):
        return False
    return gpumode.is_reference(names) or (any(f in names for f in gpumode.FUNCTIONS) and
                                           gpumode.task_file(path).is_file())


def task_reference(path: Path | str) -> Path:
    """`path`, or, where it is a GPU MODE task's folder (a `reference.py` and a `task.yml` in it), the
    folder's `reference.py`: a task may be named by its folder."""
    path = Path(path)
    if path.is_dir() and (path / "reference.py").is_file() and gpumode.task_file(path / "reference.py").is_file():
        return path / "reference.py"
    return path


def cases(path: Path | str, sizes: list[str] | None = None) -> list[int | None]:
    """The problems problem file `path` holds: [None] for one (KernelBench's), each benchmark
    case's number for a GPU MODE task (`gpumode.cases`), those `sizes` picks where given
    (`gpumode.chosen`: NAME=VALUE, arguments of its generate_input). Raises UsageError for a task
    whose `task.yml` is missing or lists no case, sizes that pick none, and sizes given for a
    problem that is no task (its sizes are its get_inputs')."""
    path = Path(path)
    if not is_task(path):
        if sizes:
            raise UsageError(f"{{size}} picks a GPU MODE task's cases; {path} is a problem of one size, its "
                             "get_inputs'", "size")
        return [None]
    listed = gpumode.cases(path)
    return [c.number for c in (gpumode.chosen(path, listed, sizes) if sizes else listed)]


def is_candidate(path: Path) -> bool:
    """Whether `path` is a Python file that binds a candidate class (`ModelNew`), or a GPU MODE
    submission's `custom_kernel`, at its top level, read without running it (a file that does not
    parse: by its text)."""
    if path.suffix != ".py" or not path.is_file():
        return False
    names = top_level_names(path)
    bound = names if names is not None else path.read_text(errors="replace")
    return CANDIDATE in bound or gpumode.SUBMISSION in bound


class MissingModule(RunError):
    """A problem or candidate file imports a module this Python cannot find (not torch itself: that
    is a RunError of its own, for every file alike). Exit code 1."""


class ExitCalled(RuntimeError):
    """A problem's or candidate's code called `os._exit` while roofline read it in its own process."""


@contextlib.contextmanager
def contained():
    """While a user's file runs in roofline's own process (imported, or its reference read on the meta
    device): what it prints goes to standard error, so that `--json`'s standard output stays one
    document (and what a program it starts writes to file descriptor 1 too: the compiler's lines of
    a `load_inline` built on import), and `os._exit`, which would end roofline on the spot with
    nothing said and every other file's result lost, raises ExitCalled instead."""
    import os

    def refused(code=0):
        raise ExitCalled(f"it called os._exit({code})")

    for stream in (sys.stdout, sys.__stdout__):
        if stream is not None:
            stream.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no descriptor 1 or 2 to move: Python's own stream alone is redirected
        saved = None
    exit_, os._exit = os._exit, refused
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        os._exit = exit_
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _import(path: Path, role: str, first: Callable[[], None] | None = None):
    """File `path` imported (`files.import_file`), `first` called ahead of it (a GPU MODE task's
    modules put in place: `gpumode.install_modules`), what either prints sent to standard error.
    Raises RunError without PyTorch, MissingModule for a package this Python lacks, UsageError for
    the file's own error."""
    if importlib.util.find_spec("torch") is None:  # the files import it: say so here, not as their ImportError
        # what this machine lacks, not what the user gave: a runtime failure (exit 1), as no ncu is
        raise RunError(f"{path}: a {role} in PyTorch needs torch; install it (pip install torch)")
    try:
        with contained():
            if first is not None:
                first()
            return import_file(path, "roofline_problem_")
    except UsageError:  # `first`'s own, already in the user's words
        raise
    except ModuleNotFoundError as exc:  # a package this machine lacks (einops, transformers): a runtime failure
        if not exc.name:  # raised by the file itself, naming no module
            raise UsageError(f"{path}: importing it raised ModuleNotFoundError: {_first(exc)}") from None
        raise MissingModule(f"{path}: it imports {exc.name}, which this Python cannot find: a package to install "
                       f"(pip install {exc.name.split('.')[0]}), or a module to put beside it") from None
    except (Exception, SystemExit) as exc:  # the file's own error (or its exit), named in one line
        raise UsageError(f"{path}: importing it raised {type(exc).__name__}: {_first(exc)}") from None


def load(path: Path | str, case: int | None = None) -> Problem:
    """The problem in file `path`; of a GPU MODE task's reference, its benchmark case number `case`
    (`cases`; the first where None), read as the module docstring of `gpumode` says. Raises
    UsageError (one line) for a file that is missing, does not import, or lacks `Model`,
    `get_inputs` or `get_init_inputs` (a task: `ref_kernel` or `generate_input`, or a `task.yml`
    with that case)."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    if is_task(path):
        return _load_task(path, case)
    candidate = (f"{path} is a candidate (a {CANDIDATE}, or a GPU MODE submission's {gpumode.SUBMISSION}), not a "
                 f"problem: give the problem file it answers (a class {REFERENCE} with {' and '.join(FUNCTIONS)}, or "
                 f"a GPU MODE task's reference.py with {' and '.join(gpumode.FUNCTIONS)})")
    names = top_level_names(path)
    star = names is not None and "*" in names  # `from base import *` may bind Model and its functions unseen
    if is_candidate(path) and not is_problem(path) and not star:  # read, not run: its import may build or fail
        raise UsageError(candidate)
    module = _import(path, "problem")
    missing = [n for n in (REFERENCE, *FUNCTIONS) if not callable(getattr(module, n, None))]
    if missing and isinstance(getattr(module, CANDIDATE, None), type):
        raise UsageError(candidate)
    if missing and gpumode.task_file(path).is_file():  # beside a task.yml: GPU MODE's format was meant
        raise UsageError(f"{path}: a GPU MODE task's reference defines {' and '.join(gpumode.FUNCTIONS)} (a "
                         f"KernelBench problem: class {REFERENCE} and {' and '.join(FUNCTIONS)}); it has neither")
    if missing:
        raise UsageError(f"{path}: a problem defines class {REFERENCE} and functions {' and '.join(FUNCTIONS)}; "
                         f"it lacks {', '.join(missing)}")
    return Problem(path, module.Model, module.get_inputs, module.get_init_inputs, harness=harness(module.Model))


def _load_task(path: Path, number: int | None) -> Problem:
    """Case `number` (the first where None) of the GPU MODE task whose reference is file `path`: its
    reference as a `Model` whose forward takes the case's leaves (`gpumode.model_class`), drawn by
    `gpumode.Draw`, with the task's `check_implementation` as its own check where it has one."""
    listed = gpumode.cases(path)
    case = listed[0] if number is None else next((c for c in listed if c.number == number), None)
    if case is None:
        raise UsageError(f"{path}: its task has {len(listed)} cases; there is no case {number}")
    module = _import(path, "problem", lambda: gpumode.install_modules(path))
    missing = [n for n in gpumode.FUNCTIONS if not callable(getattr(module, n, None))]
    if missing:
        raise UsageError(f"{path}: a GPU MODE task's reference defines {' and '.join(gpumode.FUNCTIONS)}; it lacks "
                         f"{', '.join(missing)}")
    draw = gpumode.Draw(module.generate_input, case)
    reference = gpumode.model_class(module.ref_kernel, module.__name__, draw.layout, REFERENCE)
    check = getattr(module, gpumode.OWN_CHECK, None)
    return Problem(path, reference, lambda: draw(0), list, harness=harness(reference),
                   label=gpumode.name_of(path, case, listed), seeded=draw, case=case.number,
                   own_check=gpumode.own_check(check, draw.layout) if callable(check) else None)


def harness(reference: type | None = None) -> dict[str, object]:
    """What a candidate must leave as it found it, by dotted name, and what each names now:
    - each name of `HARNESS` whose module is imported (what a harness times and counts with), and
      every function of roofline's own timing and checking modules that are imported
      (`HARNESS_MODULES`);
    - each of PyTorch's ops the reference computes with (`OPS`: the functions of `torch`,
      `torch.nn.functional`, `torch.linalg`, `torch.fft`, `torch.special`, the methods and
      operators of `torch.Tensor`, and the methods of `torch.nn`'s modules), and, given the
      reference's class, its own methods and its file's functions: replaced, the reference would
      compute what the candidate computes;
    - each of PyTorch's precision switches (`SWITCHES`) and its value: turned on, the FP32 products
      of both would run in TF32 or with reduced-precision sums.
    (`put_back` compares and restores them.)"""
    import types

    out = {}
    for name in HARNESS:
        obj = resolve(name)
        if obj is not None:
            out[name] = obj
    for module_name in HARNESS_MODULES:
        module = sys.modules.get(module_name)
        for k, v in (vars(module).items() if module is not None else ()):
            if callable(v) and not isinstance(v, (types.ModuleType, type)) and not k.startswith("__"):
                out[f"{module_name}.{k}"] = v
    torch = sys.modules.get("torch")
    if torch is None:
        return out
    spaces = [(n, resolve(n)) for n in OPS]
    spaces += [(f"torch.nn.{k}", c) for k, c in vars(torch.nn).items()
               if isinstance(c, type) and issubclass(c, torch.nn.Module)]
    if reference is not None:
        home = sys.modules.get(reference.__module__)
        if home is not None:
            spaces += [(reference.__module__, home)]
        spaces += [(f"{reference.__module__}.{reference.__name__}", reference)]
    for prefix, space in spaces:
        if space is None:
            continue
        for k, v in list(vars(space).items()):
            if callable(v) and not isinstance(v, types.ModuleType) and "." not in k \
                    and (not k.startswith("__") or k in OPERATORS or isinstance(space, type)):
                out[f"{prefix}.{k}"] = v
        if isinstance(space, type):  # what it inherits, which a name set on the class itself would hide
            names = dir(space) if space is torch.Tensor else ("forward", "__call__", "_call_impl")
            for k in names:
                if f"{prefix}.{k}" not in out and (not k.startswith("__") or k in OPERATORS):
                    v = getattr(space, k, None)
                    if callable(v) and not isinstance(v, types.ModuleType):
                        out[f"{prefix}.{k}"] = v
    for name in SWITCHES:
        value = resolve(name)
        if value is not None:
            out[name] = value
    return out


def resolve(name: str):
    """What dotted `name` names now, through the imported modules (None where any part is missing);
    an attribute of a class read from its own dictionary, as `harness` reads it (a static method
    as itself, not the function it hands out)."""
    first, *rest = name.split(".")
    obj = sys.modules.get(first)
    for part in rest:
        if obj is None:
            return None
        obj = vars(obj).get(part, getattr(obj, part, None)) if isinstance(obj, type) else getattr(obj, part, None)
    return obj


def put_back(before: dict[str, object]) -> list[str]:
    """The names of `before` (`workload.problem.harness`) that now name something else (a switch:
    hold another value), each put back as it was. Each owner (`torch.Tensor`, `torch.nn.functional`)
    is resolved once, and its names read from it (`_by_owner`): a check calls this after every draw,
    over some 3,200 names, and resolving each name whole took 3.5 ms a call."""
    changed = []
    for owner_name, names in _by_owner(before):
        owner = resolve(owner_name)
        if owner is None:
            continue
        own = vars(owner) if isinstance(owner, type) else None
        for name, attr in names:
            obj = before[name]
            now = own[attr] if own is not None and attr in own else getattr(owner, attr, None)
            if now is None or now is obj:
                continue
            if _replaced(obj, now) if callable(obj) else now != obj:
                changed.append(name)
    for name in changed:
        owner, attr = name.rsplit(".", 1)
        target = resolve(owner)
        if target is not None:
            setattr(target, attr, before[name])
    return changed


_OWNERS: dict[int, tuple[dict, list]] = {}  # id(before) -> (before, its names grouped by owner)


def _by_owner(before: dict[str, object]) -> list[tuple[str, list[tuple[str, str]]]]:
    """`before`'s names grouped by the dotted name of what holds them, as (owner, [(name, attribute)]);
    kept for the dict itself, which a grading hands to every `put_back` of a candidate."""
    kept = _OWNERS.get(id(before))
    if kept is not None and kept[0] is before:
        return kept[1]
    groups: dict[str, list[tuple[str, str]]] = {}
    for name in before:
        owner, _, attr = name.rpartition(".")
        groups.setdefault(owner, []).append((name, attr))
    plan = list(groups.items())
    _OWNERS.clear()  # one harness at a time: a grading's
    _OWNERS[id(before)] = (before, plan)
    return plan


def _replaced(before, now) -> bool:
    """Whether callable `now` is not `before`; PyTorch's own wrapper of it (a function of the torch
    package, `_torch_function`, that holds it as its `__wrapped__` or in its closure: `torch._dynamo` wraps
    `torch.manual_seed` when first imported, and `torch.nn.Module.__init__` and `__setstate__` when
    a `torch.compile`d function first runs) is the same."""
    if now is before:
        return False
    cells = getattr(now, "__closure__", None) or ()
    if getattr(now, "__wrapped__", None) is not before and not any(_cell(c) is before for c in cells):
        return True
    return not _torch_function(now)


_TORCH_CODE: dict[str, set] = {}  # a module of the torch package -> the code of its functions, methods and theirs


def _torch_function(f) -> bool:
    """Whether function `f` is the torch package's own: it runs with the globals of a module of the
    torch package (one loaded from its folder), and its code is that of one of the module's
    functions or methods, or of a function nested in one. A file name is no proof (a candidate may
    compile code under any name, and a file compiled elsewhere names another); the code and globals
    of a module PyTorch imported are."""
    import os

    import torch

    code, scope = getattr(f, "__code__", None), getattr(f, "__globals__", None)
    if code is None or not isinstance(scope, dict):
        return False
    name = scope.get("__name__")
    module = sys.modules.get(name) if isinstance(name, str) else None
    where = os.path.abspath(getattr(module, "__file__", None) or "")
    if module is None or vars(module) is not scope or \
            not where.startswith(os.path.dirname(os.path.abspath(torch.__file__)) + os.sep):
        return False
    if name not in _TORCH_CODE:
        codes: set = set()
        todo = [v.__code__ for v in vars(module).values() if hasattr(v, "__code__")]
        todo += [m.__code__ for c in vars(module).values() if isinstance(c, type) and c.__module__ == name
                 for m in vars(c).values() if hasattr(m, "__code__")]
        while todo:
            c = todo.pop()
            if c not in codes:
                codes.add(c)
                todo += [k for k in c.co_consts if hasattr(k, "co_consts")]
        _TORCH_CODE[name] = codes
    return code in _TORCH_CODE[name]


def _cell(cell) -> object:
    """What closure cell `cell` holds (None where it is empty)."""
    try:
        return cell.cell_contents
    except ValueError:
        return None


def declares_candidate(path: Path | str) -> None:
    """Check, without importing it, that file `path` is a candidate: Python that binds `ModelNew` at
    its top level (a class, an assignment or an import). The grading imports it in a process of its
    own (`measure.problem_child`), so nothing it does when imported reaches roofline's. Raises
    UsageError for a missing file, one that does not parse, or one that binds no `ModelNew`."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        bound = _bound(_parsed(path))
    except SyntaxError as exc:
        raise UsageError(f"{path}: not Python: {exc.msg} (line {exc.lineno})") from None
    if CANDIDATE not in bound and not gpumode.is_submission(bound):
        raise UsageError(f"{path}: a candidate defines class {CANDIDATE} (taking the problem's constructor "
                         f"arguments), or, for a GPU MODE task, {gpumode.SUBMISSION}; it has neither")


def with_candidate(problem: Problem, path: Path | str) -> Problem:
    """`problem` with the candidate class of file `path`, `harness()` as it was before the file was
    imported, and what the import changed of it (`patched_at_import`), put back at once: each
    candidate of a grading is imported in turn, and one file's changes must neither be charged to
    another nor outlive its own check. Raises UsageError for a file without `ModelNew`, or one that does not
    import."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    before = problem.harness or harness(problem.reference)
    module = _import(path, "candidate")
    changed = tuple(put_back(before))  # what its import changed, put back before the next file is imported
    if problem.seeded is not None:  # a GPU MODE task's case: the submission's custom_kernel, given its data
        function = getattr(module, gpumode.SUBMISSION, None)
        if not callable(function):
            raise UsageError(f"{path}: a submission to a GPU MODE task defines {gpumode.SUBMISSION}(data); it has none")
        cls = gpumode.model_class(function, module.__name__, problem.seeded.layout, CANDIDATE)
        return replace(problem, candidate=cls, candidate_path=path, harness=before, patched_at_import=changed)
    cls = getattr(module, CANDIDATE, None)
    if not isinstance(cls, type):
        raise UsageError(f"{path}: a candidate defines class {CANDIDATE} (taking {problem.name}'s constructor "
                         "arguments); it has none")
    return replace(problem, candidate=cls, candidate_path=path, harness=before, patched_at_import=changed)


def grouped_mm_flops(a: tuple, b: tuple, out: tuple) -> float:
    """FLOPs of `torch._grouped_mm(a, b, offs)` (a mixture of experts' products: each group of `a`'s
    rows times its expert's matrix), which PyTorch's FLOP counter has no formula for: 2 per
    multiply-add. `a`, `b`, `out` are shapes: a 2-D `a` of M rows (every group's, gathered) times a
    3-D `b` [G, K, N] is M x N outputs of K each; 3-D times 3-D, G x M x N of K each; 2-D times 2-D
    (`offs` splitting the contraction), M x N of all K together."""
    if len(a) == 2 and len(b) == 2:
        return 2.0 * a[0] * a[1] * b[1]
    n = 1
    for d in out:
        n *= int(d)
    return 2.0 * n * int(a[-1])


def precision_of(op: str, dtype) -> str:
    """The precision key (`peaks.PRECISIONS`) PyTorch runs op `op` (an aten op's name) in on a CUDA
    GPU with inputs of torch dtype `dtype` (module docstring)."""
    import torch

    if dtype == torch.float32:
        if op in MATMUL_OPS:
            return "tf32_tensor" if torch.backends.cuda.matmul.allow_tf32 else "fp32"
        return "tf32_tensor" if torch.backends.cudnn.allow_tf32 else "fp32"
    low = {getattr(torch, name): key for name, key in LOW_PRECISION.items() if hasattr(torch, name)}
    return {torch.bfloat16: "bf16_tensor", torch.float16: "fp16_tensor", torch.float64: "fp64_tensor",
            torch.int8: "int8_tensor", torch.uint8: "int8_tensor", **low}.get(dtype, "fp32")


@contextlib.contextmanager
def pytorch_defaults():
    """A context in which PyTorch's TF32 switches are at their defaults (matmul off, cuDNN on), put
    back as they were after: each problem file is read as if alone, so that one that turns TF32 on
    when imported changes its own precision, not the next file's. Without PyTorch, nothing to set
    (`load` then says it is needed)."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = False, True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def work(problem: Problem, seed: int = 0) -> ProblemWork:
    """The reference's work and compulsory bytes, read on the meta device (module docstring); what
    Python or PyTorch warned of while it was read among its `warnings` (a note for the user, not a
    line on standard error). Raises UsageError when the reference's construction or forward fails
    there, or when it returns something other than tensors."""
    import warnings as py_warnings

    with py_warnings.catch_warnings(record=True) as caught, contained():
        py_warnings.simplefilter("always")
        read = _work(problem, seed)
    warned = dict.fromkeys(str(c.message).strip().splitlines()[0] for c in caught if str(c.message).strip())
    return replace(read, warnings=read.warnings + tuple(f"the reference warned on the meta device: {m}" for m in warned))


WIDENING = ("_to_copy", "to")  # casts: a float tensor widened by one keeps the type it was held in (`_work`)
# A tensor of QUANTIZED_BITS or fewer (FP8, FP4, int8) widened and then scaled by one of these keeps its type too: a
# dequantization (`a.to(torch.float32) * a_scale`, GPU MODE's blockwise FP8 GEMM), which a kernel applies to its
# products' sums, its products still of FP8 values. A wider type scaled so (`a.float() * 1.5` of FP16) is new work.
SCALING = ("mul", "div")
QUANTIZED_BITS = 8
# A scale is a number, or a tensor made from one of at most 1/BLOCK_VALUES the elements of what it scales (a
# per-tensor, per-row or per-block scale, broadcast or spread by `SPREADING` ops: GPU MODE's `repeat` of its
# 1-per-128 block scales); a full-size tensor, or another FP8 one, is data, and its product new work.
BLOCK_VALUES = 16  # NVFP4's block, the smallest of the formats' (MXFP4 32, DeepSeek's FP8 128 x 128)
SPREADING = ("repeat", "repeat_interleave", "expand", "expand_as", "broadcast_to", "tile", "clone", "contiguous",
             "reshape", "_reshape_copy", "_unsafe_view", "flatten", "_to_copy", "to")
PRODUCT_OPERANDS = {"addmm": slice(1, 3), "baddbmm": slice(1, 3), "addbmm": slice(1, 3), "addmv": slice(1, 3),
                    "addr": slice(1, 3)}  # the ops whose first argument is an added term (a bias), not an operand
MAX_DRAWN_BYTES = 256 << 20  # inputs drawn on the CPU for a forward that branches on their values, at most


def _work(problem: Problem, seed: int, drawn: bool = False) -> ProblemWork:
    """`work`, its warnings not yet caught. A forward that fails on the meta device is read once more
    with `drawn`: its inputs' values of draw `seed`, drawn on the CPU (inputs of at most
    MAX_DRAWN_BYTES), answer what it asks of them (`.item()`, a tensor's truth: Hugging Face's
    `padding_mask.all()`), and a warning says so; never a mask's share (`shadows.get`)."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    from .masks import MaskTracker
    from .regions import Regions, least_bytes, memory_order, storage_of

    counted: dict[str, float] = {}
    flops: dict[str, float] = {}
    known: dict[int, int] = {}  # id of a source, or of a view of one -> the source's place
    reads: dict[int, Regions] = {}  # a source's place -> what its ops read of it (`regions`)
    sizes: list[int] = []  # each source's bytes, by place
    alive: list = []  # views kept, so that no id is reused while counting
    attention: dict = {}  # while an attention runs: the precision key and causal share of its products
    masks = MaskTracker()  # causal masks written out (`workload.masks`)
    stored: dict[int, Any] = {}  # a tensor widened by a cast (or a view or copy of one) -> the type it was held in
    widened_products: set[tuple[str, str]] = set()  # (the type held in, the type computed in) of products so counted
    dequantized: set[str] = set()  # the 8-bit or narrower types widened and then scaled (`SCALING`)
    origin: dict[int, int] = {}  # a tensor spread from a smaller one (`SPREADING`, views) -> that one's elements

    class Construction(TorchDispatchMode):  # the masks a constructor makes (`tril` of ones, kept as a buffer)
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            masks.note(func, args, kwargs or {}, out)
            return out

    class Numbers(TorchFunctionMode):  # `torch.tensor(-1e4)`, `torch.tensor([[1, 1, 0]])` made on the meta device
        def __torch_function__(self, func, types, args=(), kwargs=None):  # run no op: their values kept
            out = func(*args, **(kwargs or {}))
            if func in (torch.tensor, torch.as_tensor) and args and isinstance(out, torch.Tensor) \
                    and out.device.type == "meta" and not isinstance(args[0], torch.Tensor):
                try:
                    masks.shadows.set(out, torch.tensor(args[0], dtype=out.dtype))
                except (TypeError, ValueError, RuntimeError):  # data the CPU does not take as given: not kept
                    pass
            return out

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in (torch.ops.aten._local_scalar_dense.default, torch.ops.aten.is_nonzero.default) and args \
                    and isinstance(args[0], torch.Tensor) and args[0].device.type == "meta":
                held = masks.shadows.get(args[0], drawn=True)  # a branch on a value: one draw's answer
                if held is not None:
                    branched.append(func._overloadpacket.__name__)
                    return func(held)
            try:
                out = func(*args, **kwargs)
            except NotImplementedError:  # no meta kernel: a shape the data decides (bincount), from one draw's values
                out = masks.shadows.answer(func, args, kwargs) if drawn else None
                if out is None:
                    raise
                shaped.append(func._overloadpacket.__name__)
            packet = func._overloadpacket
            _note_reads(func, packet.__name__, args, kwargs, out)
            _note_widened(func, packet.__name__, args, out)
            inside = attention.get("key") is not None  # an attention running: its products are its own to count
            if not inside:  # (`_attention_read`)
                masks.note(func, args, kwargs, out)
            else:
                masks.shadows.note(func, args, kwargs, out)
            if packet in flop_registry or packet.__name__ in ("_grouped_mm", "_int_mm"):
                shapes = torch.utils._pytree.tree_map(lambda x: x.shape if isinstance(x, torch.Tensor) else x,
                                                      (args, kwargs, out))
                n = float(flop_registry[packet](*shapes[0], **shapes[1], out_val=shapes[2])) \
                    if packet in flop_registry else grouped_mm_flops(args[0].shape, args[1].shape, out.shape) \
                    if packet.__name__ == "_grouped_mm" else 2.0 * out.numel() * int(args[0].shape[-1])  # _int_mm
                operands = args[PRODUCT_OPERANDS.get(packet.__name__, slice(None))]  # a bias is no operand
                first = next((a for a in operands if isinstance(a, torch.Tensor)), None)
                if first is not None:  # a packed type's elements each hold several values, every one multiplied
                    n *= PACKED.get(str(first.dtype).removeprefix("torch."), 1)
                held = _held_in(operands)
                if held is not None and first is not None and held[0] != first.dtype:
                    widened_products.add((" and ".join(str(d).removeprefix("torch.") for d in held),
                                          str(first.dtype).removeprefix("torch.")))
                key = precision_of(packet.__name__, held[0] if held else
                                   (first.dtype if first is not None else torch.float32))
                if inside:  # inside an attention: its inputs' precision, its causal share
                    key, n = attention["key"], n * attention["share"]
                elif packet.__name__ in MATMUL_OPS:  # the scores a causal mask may fill (`masks.finish`)
                    masks.product(packet.__name__, args, out, key, n)
                flops[key] = flops.get(key, 0.0) + n
                counted[packet.__name__] = counted.get(packet.__name__, 0.0) + n
            return out

    def _bits(dtype) -> int:
        return torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits

    def _narrow(dtype) -> bool:  # a type a product may be held in: a real float, or an 8-bit integer (`QUANTIZED_BITS`)
        return (dtype.is_floating_point and not dtype.is_complex) or dtype in (torch.int8, torch.uint8)

    def _note_widened(func, name: str, args, out) -> None:
        # `a.to(torch.float64)` of a float32 `a`, or `a.float()` of an int8 one: the products of what was widened so are
        # counted in the type it was held in, which is all a kernel must compute them in (`_held_in`); a view or copy
        # of it keeps that type, and so does an FP8, FP4 or int8 tensor's scaling (a dequantization, `_scales`)
        source = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if source is None or not isinstance(out, torch.Tensor):
            return
        spread = origin.get(id(source), source.numel())
        if (func.is_view or name in SPREADING) and spread != out.numel():  # a scale spread keeps its source's size
            origin[id(out)] = spread  # (a tensor of its source's size needs no entry: its own size is the default)
            alive.append(out)
        inplace = func._schema.is_mutable and out is source  # `A += 1`, `A.exp_()`: no longer what was widened
        scaled = _scales(name, args)
        if inplace and id(source) in stored and scaled is None:
            del stored[id(source)]
        if not out.dtype.is_floating_point:
            return
        held = stored.get(id(source), source.dtype)
        if name in WIDENING and _narrow(held) and _bits(held) < _bits(out.dtype):
            stored[id(out)] = held
        elif (func.is_view or name in ("clone", "contiguous")) and id(source) in stored and out.dtype == source.dtype:
            stored[id(out)] = stored[id(source)]
        elif scaled is not None:
            stored[id(out)] = scaled  # FP8, FP4 or int8 values times their scales: dequantized, still those values
            dequantized.add(str(scaled).removeprefix("torch."))
        else:
            return
        alive.append(out)

    def _scales(name: str, args):
        """The type an FP8, FP4 or int8 tensor widened by a cast was held in, where op `name` on `args` scales it
        (`SCALING`: times, or divided by, a number or a tensor of at most 1/BLOCK_VALUES its elements before it was
        spread, `origin`); else None (a product with data, or with another such tensor; a reciprocal)."""
        name = name.removesuffix("_")  # `A.mul_(s)` scales as `A * s` does
        if name not in SCALING or len(args) < 2:
            return None
        quantized = [i for i, a in enumerate(args[:2]) if isinstance(a, torch.Tensor) and id(a) in stored
                     and _bits(stored[id(a)]) <= QUANTIZED_BITS]
        if len(quantized) != 1 or (name == "div" and quantized[0] != 0):
            return None
        value, scale = args[quantized[0]], args[1 - quantized[0]]
        if isinstance(scale, torch.Tensor) and (id(scale) in stored or
                                                origin.get(id(scale), scale.numel()) * BLOCK_VALUES > value.numel()):
            return None
        return stored[id(value)]

    def _held_in(args):
        """The types the float operands of a product were held in before a cast widened them, the widest first,
        where every one was so widened (`_note_widened`); else None."""
        floats = [a for a in args if isinstance(a, torch.Tensor) and a.dtype.is_floating_point]
        if not floats or any(id(a) not in stored for a in floats):
            return None
        return tuple(sorted(dict.fromkeys(stored[id(a)] for a in floats), key=lambda d: (-_bits(d), str(d))))

    def _note_reads(func, name: str, args, kwargs, out) -> None:
        leaves = [x for x in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
        got = [o for o in torch.utils._pytree.tree_leaves(out) if isinstance(o, torch.Tensor)]
        if name in SHAPE_ONLY:  # a new tensor of an input's shape: nothing of it read
            return
        if func.is_view or name in SPLITS:  # a view reads nothing; what reads it later reads its region of its source
            if leaves and id(leaves[0]) in known:
                for o in got:  # one view, or the pieces of a split, chunk or unbind
                    known[id(o)] = known[id(leaves[0])]
                    alive.append(o)
            return
        out_bytes = sum(o.numel() * o.element_size() for o in got)
        written = {id(x) for x in torch.utils._pytree.tree_leaves(kwargs.get("out"))}  # an `out=` tensor: written
        if name in WRITES and args and isinstance(args[0], torch.Tensor):  # `c[...] = a @ b`: c written, not read
            written.add(id(args[0]))
        for i, t in enumerate(leaves):
            if id(t) not in known or id(t) in written:
                continue
            place = known[id(t)]
            regions = reads.setdefault(place, Regions(sizes[place]))
            if name in GATHERS and i == 0:  # a table read by rows: the rows gathered, not the table
                regions.floor(min(least_bytes(t.storage_offset(), tuple(t.shape), tuple(t.stride()),
                                              t.element_size()), out_bytes))
            else:
                regions.read(t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.element_size())

    try:
        with Construction(), Numbers(), _biases_made_outside_modes():
            model, args = _on_meta(problem, seed, masks.shadows.set)
    except Exception as exc:
        raise UsageError(f"{problem.path}: building the reference or its inputs raised "
                         f"{type(exc).__name__}: {_first(exc)}") from None
    # each input as every timed call gets it (`measure.problem_grade.rolled`: a new tensor, in the layout get_inputs
    # gave it where that is a permutation of a contiguous one, else contiguous): its sectors are those of that layout
    args = [(torch.empty_like(a) if memory_order(a) is not None else torch.empty(a.shape, dtype=a.dtype, device=a.device))
            if isinstance(a, torch.Tensor) else a for a in args]
    masks.inputs(args)
    branched: list[str] = []  # what the forward asked of its inputs' values (`drawn`)
    shaped: list[str] = []  # the ops whose output's shape those values decided (`shadows.answer`)
    if drawn:
        with kept_off_cuda("cpu"), _no_device_sync():  # a draw written for a GPU (`.cuda()`): on the CPU too
            values = problem.inputs(seed, "cpu")
        for a, v in zip(args, values):
            if isinstance(a, torch.Tensor) and isinstance(v, torch.Tensor):
                masks.shadows.set(a, v.contiguous(), drawn=True)
    held = _held_tensors(model)
    sources = [a for a in args if isinstance(a, torch.Tensor)] + [*model.parameters(), *model.buffers()] + \
        [t for _, t in held]
    places: dict[int, int] = {}  # a storage -> its place: a source that is a view of another reads the same bytes
    for t in sources:
        storage = storage_of(t)
        if storage is not None and storage[0] in places:
            known[id(t)] = places[storage[0]]
            continue
        known[id(t)] = len(sizes)
        if storage is not None:
            places[storage[0]] = len(sizes)
        sizes.append(storage[1] if storage is not None else int(t.numel()) * t.element_size())
    try:
        with torch.no_grad(), kept_off_cuda("meta"), _no_device_sync(), _attention_read(attention, masks), Numbers(), Counter():
            got = model(*args)
    except Exception as exc:
        inputs_bytes = sum(a.numel() * a.element_size() for a in args if isinstance(a, torch.Tensor))
        if not drawn and inputs_bytes <= MAX_DRAWN_BYTES:  # it may branch on its inputs' values: read again, with them
            try:
                return _work(problem, seed, drawn=True)
            except Exception:  # noqa: BLE001 - it fails that way too: the first failure is the one to say
                pass
        why = "" if drawn or inputs_bytes <= MAX_DRAWN_BYTES else \
            (f" (its inputs, {inputs_bytes / 2**20:,.0f} MiB, are above the {MAX_DRAWN_BYTES >> 20} MiB drawn on the "
             "CPU to read it with their values)")
        raise UsageError(f"{problem.path}: its forward cannot run on PyTorch's meta device (shapes without data), "
                         f"so its work cannot be read{why}: {type(exc).__name__}: {_first(exc)}") from None
    outs = list(got) if isinstance(got, (tuple, list)) else [got]
    if not outs or not all(isinstance(o, torch.Tensor) for o in outs):
        raise UsageError(f"{problem.path}: its forward returns {type(got).__name__}; a problem returns a tensor or a "
                         "tuple of tensors")

    def tensor(name: str, t) -> Tensor:
        return Tensor(name, tuple(int(d) for d in t.shape), str(t.dtype).removeprefix("torch."),
                      int(t.numel()) * t.element_size())

    inputs = tuple(tensor(f"input {i}", a) for i, a in enumerate(args) if isinstance(a, torch.Tensor))
    scalars = tuple(a for a in args if not isinstance(a, torch.Tensor))
    state = [*model.named_parameters(), *model.named_buffers()]
    parameters = tuple(tensor(f"parameter {n}", p) for n, p in state) + \
        tuple(tensor(f"attribute {n}", t) for n, t in held)
    outputs = tuple(tensor(f"output {i}", o) for i, o in enumerate(outs))
    given = [args[i] for i in problem.buffers if i < len(args) and isinstance(args[i], torch.Tensor)]
    narrowed = []  # an output the task gives a buffer of a narrower type for: what a submission must write
    for i, (o, b) in enumerate(zip(outs, gpumode.declared(outs, given))):
        if b is not None and b.element_size() < o.element_size():
            outputs = outputs[:i] + (Tensor(f"output {i}", outputs[i].shape, str(b.dtype).removeprefix("torch."),
                                            int(o.numel()) * b.element_size()),) + outputs[i + 1:]
            narrowed.append(f"output {i} written as {outputs[i].dtype}, the type of the buffer the task gives for it "
                            f"(the reference returns {str(o.dtype).removeprefix('torch.')})")
    what = (f"{', '.join(sorted(counted))} counted by PyTorch's FLOP counter" if counted
            else "no op PyTorch's FLOP counter knows (its speed of light is its bytes, or a launch where that is "
                 "longer)")
    source = (f"the reference on PyTorch's meta device: {what}; bytes: what it reads of its inputs, parameters and "
              "buffers (a gather's rows, not its whole table), once, and its outputs written once")
    details = ([attention["seen"]] if attention.get("seen") else []) + narrowed
    for narrow, wide in sorted(widened_products):
        types = "types" if " and " in narrow else "type"
        scaled = " (and scales: a dequantization)" if set(narrow.split(" and ")) & dequantized else ""
        details.append(f"products of {narrow} tensors the reference widens to {wide} counted in {narrow}, the {types} "
                       f"they are held in{scaled}")
    for (key, op), n in masks.finish(outs).items():  # what a causal mask's fills spare the products counted
        flops[key] = max(0.0, flops.get(key, 0.0) - n)
        counted[op] = max(0.0, counted.get(op, 0.0) - n)
    details += list(dict.fromkeys(masks.seen))
    source += "".join(f"; {d}" for d in details)
    w = Work(flops, float(sum(r.bytes() for r in reads.values())), float(sum(t.nbytes for t in outputs)), source)
    warnings = ((attention["warning"],) if attention.get("warning") else ()) + tuple(dict.fromkeys(masks.warnings))
    if branched:
        warnings += (f"its forward branches on its inputs' values (a tensor's truth or .item(), {len(branched)} "
                     f"{'time' if len(branched) == 1 else 'times'}): read with those of draw {seed}, drawn on the CPU; "
                     "another draw may take another branch",)
    if shaped:
        ops = list(dict.fromkeys(shaped))
        named = ops[0] if len(ops) == 1 else f"{', '.join(ops[:-1])} and {ops[-1]}"
        warnings += (f"{named} {'has' if len(ops) == 1 else 'have'} no meta kernel (no run on shapes alone): run on "
                     f"the CPU on the values of draw {seed}; where an output's shape follows those values (bincount, "
                     "nonzero, a boolean index), another draw's may differ",)
    try:
        w = w.check()
    except ValueError as exc:  # no FLOPs and no bytes (empty tensors): no work to bound
        raise UsageError(f"{problem.path}: its reference does no work to bound ({exc}): its tensors are empty") from None
    return ProblemWork(w, inputs, outputs, parameters, scalars, counted, warnings, tuple(details))


def _held_tensors(model) -> list[tuple[str, object]]:
    """The tensors `model`'s modules hold as plain attributes (`self.w = torch.randn(...)`: neither a
    parameter nor a buffer), or in a list, tuple or dict held so, by dotted name: the forward reads
    them as it reads its parameters."""
    import torch

    def plain(v) -> bool:
        return isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter)

    out = []
    for prefix, m in model.named_modules():
        for k, v in vars(m).items():
            name = f"{prefix}.{k}" if prefix else k
            if plain(v):
                out.append((name, v))
            elif isinstance(v, (list, tuple)):  # a list of weights kept as a plain attribute
                out += [(f"{name}[{i}]", t) for i, t in enumerate(v) if plain(t)]
            elif isinstance(v, dict) and not k.startswith("_"):  # not the module's own _parameters and _buffers
                out += [(f"{name}[{key!r}]", t) for key, t in v.items() if plain(t)]
    return out


@contextlib.contextmanager
def _no_device_sync():
    """`torch.cuda.synchronize` a no-op while the forward runs on the meta device (nothing runs on a
    GPU there, and a machine without one would refuse it)."""
    import torch

    saved = torch.cuda.synchronize
    torch.cuda.synchronize = lambda *args, **kwargs: None
    try:
        yield
    finally:
        torch.cuda.synchronize = saved


@contextlib.contextmanager
def _attention_read(state: dict, masks=None):
    """A context under which each `scaled_dot_product_attention` fills `state` while it runs: 'key',
    the precision of its query (on the meta device PyTorch computes its products in FP32, where a
    GPU's kernels run them on the tensor cores of the inputs' type), and 'share', the share of the
    score matrix a causal attention computes (the pairs with the key at or before the query,
    PyTorch's top-left alignment; `causal_lower_right`'s bottom-right one; or, given a triangular
    `attn_mask` that `masks`, a `workload.masks.MaskTracker`, has read, the pairs it lets attend; 1
    otherwise). A causal attention with fewer queries than keys runs on the keys and values its
    queries attend, the first Lq of them (the same result): the others are no compulsory bytes.
    'seen' says what was read. The calls are caught both by a PyTorch function mode (a call from the
    problem's own code) and by `torch.nn.functional.scaled_dot_product_attention` replaced for the
    while (a call from a function the mode hands over whole, as `nn.MultiheadAttention`'s
    `F.multi_head_attention_forward`: the mode is off inside it)."""
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    original = F.scaled_dot_product_attention

    def read(args, kwargs):
        args, kwargs = list(args), dict(kwargs)
        q, k = args[0], args[1] if len(args) > 1 else kwargs.get("key")
        causal = bool(kwargs.get("is_causal", args[5] if len(args) > 5 else False))
        lq, lk = int(q.shape[-2]), int(k.shape[-2])
        mask = args[3] if len(args) > 3 else kwargs.get("attn_mask")
        unread, full, offset = "", lq * lk, 0
        if type(mask).__name__ == "CausalBias" and hasattr(mask, "variant"):  # torch.nn.attention.bias
            causal, lower_right = True, "LOWER" in str(getattr(mask.variant, "name", mask.variant)).upper()
            offset = lk - lq if lower_right else 0  # query i attends keys 0 to i + offset
            if len(args) > 3:
                args[3] = None
            else:
                kwargs["attn_mask"] = None
            kwargs.pop("is_causal", None)
            args = args[:5]
            mask = None
        elif causal and 0 < lq < lk:  # keys past the last query's are attended by none: not read
            for i, name in ((1, "key"), (2, "value")):
                if len(args) > i:
                    args[i] = args[i][..., :lq, :]
                elif name in kwargs:
                    kwargs[name] = kwargs[name][..., :lq, :]
            unread = (f", the first {lq:,} of its {lk:,} keys and values read (PyTorch aligns the causal mask "
                      "top-left: query i attends keys 0 to i; for queries at the end of the keys, as in "
                      "decoding, torch.nn.attention.bias.causal_lower_right is the mask)")
            state["warning"] = (f"its causal attention has {lq:,} queries and {lk:,} keys: PyTorch's is_causal "
                                f"lets query i attend keys 0 to i, so keys {lq:,} to {lk - 1:,} are attended by "
                                "none (for queries at the end of the keys, as in decoding, the mask is "
                                "torch.nn.attention.bias.causal_lower_right)")
            lk = lq
        pairs = sum(max(min(i + 1 + offset, lk), 0) for i in range(lq)) if causal else lq * lk
        share = pairs / (lq * lk) if causal and lq and lk else 1.0  # of the products the call computes
        masked = masks.attention_share(mask, lq, lk) if masks is not None and not causal else None
        if masked is not None:  # a triangular attn_mask written out: the pairs it lets attend
            pairs, share = masked * lq * lk, masked
        state.update(key=precision_of("bmm", q.dtype), share=share, of_full=pairs / full if full else 1.0)
        try:
            return original(*args, **kwargs)
        finally:
            state.pop("key"), state.pop("share")
            of_full = state.pop("of_full")
            state["seen"] = ("scaled_dot_product_attention at its inputs' precision"
                             + (f", causal: {of_full:.3f} of its queries-by-keys products" if causal else "")
                             + (f", its attn_mask an attention mask written out: {of_full:.3f} of its queries-by-keys "
                                "products" if masked is not None else "")
                             + unread)

    class AttentionRead(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is not original or state.get("key"):
                return func(*args, **kwargs)
            return read(args, kwargs)

    def replaced(*args, **kwargs):
        return original(*args, **kwargs) if state.get("key") else read(args, kwargs)

    F.scaled_dot_product_attention = replaced
    transformer = sys.modules.get("torch.nn.modules.transformer")
    detect = getattr(transformer, "_detect_is_causal_mask", None)
    if detect is not None:  # nn.Transformer's layers compare a mask's values with a causal one's: none on meta
        transformer._detect_is_causal_mask = _causal_hint_alone
    try:
        with _biases_made_outside_modes(), AttentionRead():
            yield
    finally:
        F.scaled_dot_product_attention = original
        if detect is not None:
            transformer._detect_is_causal_mask = detect


def _causal_hint_alone(mask=None, is_causal=None, size=None) -> bool:
    """`nn.TransformerEncoder`'s and `nn.TransformerDecoder`'s test of whether a mask is causal, on
    the meta device: the caller's hint alone (PyTorch compares the mask's values with a causal
    mask's, and a meta tensor has none). Without a hint the mask goes to the attention as given,
    the same result, where `_attention_read` reads it."""
    return is_causal is True


@contextlib.contextmanager
def _biases_made_outside_modes():
    """While it lasts, `CausalBias` (`causal_lower_right`, `causal_upper_left`) made under a dispatch
    mode, in a constructor or a forward, is made outside the modes: PyTorch refuses the subclass
    otherwise (its raw tensor already has a Python object)."""
    bias = _causal_bias_class()
    if bias is not None:
        bias.__new__ = _made_outside_modes
    try:
        yield
    finally:
        if bias is not None and "__new__" in vars(bias):
            del bias.__new__


def _causal_bias_class():
    """`torch.nn.attention.bias.CausalBias` (PyTorch 2.2 and newer), or None."""
    try:
        from torch.nn.attention.bias import CausalBias
    except ImportError:
        return None
    return CausalBias if "__new__" not in vars(CausalBias) else None


def _made_outside_modes(cls, *args, **kwargs):
    """A tensor subclass's empty instance made with no dispatch mode on (`CausalBias(...)` inside a
    forward read under `Counter` fails otherwise: its raw tensor already has a Python object)."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        return torch.Tensor.__new__(cls)


def _on_meta(problem: Problem, seed: int, held=None):
    """The reference and one draw of its inputs on the meta device: built there directly (no memory, any
    size), or, for a constructor or a draw that reads a value (`Tensor.item()`, which a meta tensor has
    not), built on the CPU and moved there, each buffer's values (a mask, a fill value kept as
    `torch.tensor(-1e4)`) given to `held(tensor on the meta device, its values on the CPU)` where given.
    A file written for a GPU (`torch.randn(...).cuda()`, `.to("cuda")`, `device="cuda"`, as
    KernelBench's own examples are) is read the same: what it sends to a CUDA device stays where it was
    built (`off_gpu.kept_off_cuda`)."""
    import torch

    try:
        with torch.device("meta"), kept_off_cuda("meta"), _no_device_sync():
            return problem.model(seed, device="meta"), problem.inputs(seed, "meta")
    except Exception:
        with kept_off_cuda("cpu"), _no_device_sync():
            model = problem.model(seed)
            values = dict(model.named_buffers())
            model = model.to("meta")
            if held is not None:
                for name, b in model.named_buffers():
                    if name in values:
                        held(b, values[name])
            return model, problem.inputs(seed, "meta")


def _first(exc: BaseException, limit: int = 240) -> str:
    """The first line of `exc`'s message, cut at a word before `limit` characters (marked '...')."""
    line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return line if len(line) <= limit else line[:limit].rsplit(" ", 1)[0] + " ..."
