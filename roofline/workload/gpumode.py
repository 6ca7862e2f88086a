"""Problems as GPU MODE's reference kernels write them: a task folder holding `reference.py`, with
`generate_input(**case)` (one case's data, drawn from the case's own `seed` on the GPU) and
`ref_kernel(data)` (the answer), and `task.yml` beside it, whose `benchmarks` list the cases (the
arguments of `generate_input`) and whose `files` name the modules the task is run with
(`utils.py`, copied from the folder above, `task.py`); a submission is a file with
`custom_kernel(data)`.

Each benchmark case is a problem of its own, named by the task's folder and the case's arguments
(`matmul_py[m=4096,n=5120,k=4096]`), as GPU MODE ranks a submission over every case. It is read and
graded as a KernelBench problem is (`workload.problem`): `data`, whatever its structure (a tuple of
tensors, one tensor, a config dict beside them), is passed as its leaves (`torch.utils._pytree`),
one argument each, so that every tensor in it is an input whose reads are counted and that each
timed call gets new; the reference and the submission are given it rebuilt. A trial's seed is
added to the case's: seed 0 draws the case as `task.yml` gives it. An output buffer drawn with the
inputs (a `torch.empty` the draw leaves unwritten, which the reference writes in place and returns)
is an input the reference writes, not reads; a submission may write it and return it
(`Layout.buffers`), and each draw fills it with NaN (an integer buffer with its type's least value),
so that one returned unwritten is never an answer the allocator kept there from an earlier call.
A task named by its folder is its `reference.py` (`workload.problem.task_reference`).

Read on a machine without a GPU (the meta device, or the CPU), a draw written for the GPU
(`torch.Generator(device="cuda")`) takes a host generator: the shapes are the same.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import UsageError
from . import off_gpu

FUNCTIONS = ("ref_kernel", "generate_input")  # what a task's reference.py binds
SUBMISSION = "custom_kernel"  # what a submission binds
OWN_CHECK = "check_implementation"  # what a reference may bind: the task's own check of an answer
LONGEST_MESSAGE = 300  # characters of what the task's own check says, kept in a failed draw's line
TASK = "task.yml"  # beside reference.py: the cases and the files
TYPES = "task.py"  # beside reference.py: the types its files import (input_t, output_t)
SEED = "seed"  # the argument of generate_input that seeds its draw
LONGEST_LABEL = 60  # a case named by its arguments up to this many characters; by its number past it
# what task.yml's `files` names that is no module the task imports by name
NOT_MODULES = ("reference.py", "submission.py", "eval.py")


def is_reference(names: set[str]) -> bool:
    """Whether a file binding `names` at its top level is a task's reference (`FUNCTIONS`)."""
    return all(f in names for f in FUNCTIONS)


def is_submission(names: set[str]) -> bool:
    """Whether a file binding `names` at its top level is a submission (`custom_kernel`)."""
    return SUBMISSION in names


@dataclass(frozen=True)
class Case:
    """One benchmark of a task: its `number` (1-based, in `task.yml`'s order) and the arguments of
    `generate_input` (`values`)."""

    number: int
    values: dict[str, Any]

    def label(self) -> str:
        """The case's arguments but its seed, `m=4096,n=5120,k=4096`; `#3` where that is longer
        than LONGEST_LABEL characters (a grouped GEMM's lists of sizes) or empty."""
        text = ",".join(f"{k}={v}".replace(" ", "") for k, v in self.values.items() if k != SEED)
        return text if text and len(text) <= LONGEST_LABEL else f"#{self.number}"

    def drawn(self, seed: int) -> dict[str, Any]:
        """The arguments of draw `seed`: the case's own seed plus `seed` (0: the case as given)."""
        values = dict(self.values)
        if isinstance(values.get(SEED), int):
            values[SEED] += seed
        return values


def task_file(reference: Path) -> Path:
    """The `task.yml` beside a task's reference file."""
    return Path(reference).parent / TASK


def _task(reference: Path) -> dict:
    """`task.yml` beside `reference`, read (PyYAML). Raises UsageError when it is missing, is no
    YAML, or is not a mapping."""
    import yaml

    path = task_file(reference)
    if not path.is_file():
        raise UsageError(f"{reference}: a GPU MODE task's reference; its cases are read from {TASK} beside it, "
                         "which is not there")
    try:
        task = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise UsageError(f"{path}: not YAML{where}: {getattr(exc, 'problem', None) or str(exc).splitlines()[0]}") \
            from None
    if not isinstance(task, dict):
        raise UsageError(f"{path}: a task file is a mapping (files, tests, benchmarks); this is not")
    return task


def cases(reference: Path) -> list[Case]:
    """The benchmark cases of the task whose reference is file `reference` (`task.yml`'s
    `benchmarks`; its `tests` where it lists no benchmarks). Raises UsageError where the task file
    is missing or malformed, or lists no case."""
    task = _task(reference)
    listed = task.get("benchmarks") or task.get("tests")
    path = task_file(reference)
    if not isinstance(listed, list) or not listed:
        raise UsageError(f"{path}: it lists no benchmarks and no tests, the cases generate_input draws")
    bad = [i + 1 for i, c in enumerate(listed) if not isinstance(c, dict) or not all(isinstance(k, str) for k in c)]
    if bad:
        raise UsageError(f"{path}: case {bad[0]} is no mapping of generate_input's arguments")
    return [Case(i + 1, dict(c)) for i, c in enumerate(listed)]


def chosen(reference: Path, listed: list[Case], sizes: list[str]) -> list[Case]:
    """The cases of `listed` (the task's, whose reference is file `reference`) that `sizes` picks,
    each `NAME=VALUE` an argument of generate_input: a case is kept when, for every name given, its
    value is one of those given for that name (`size=1000 size=2000 seed=7`: either size, with seed
    7); an argument a case leaves out has the default generate_input gives it (`defaults`). A value
    is read as YAML reads it in `task.yml` (`4096`, `true`, `[4, 8]`) and matches the case's value
    (a number as a number, `1e-5` and `0.00001` alike; a boolean only a boolean), or its text.
    Raises UsageError for a size with no `=`, a name no case takes, or sizes no case has, naming
    what the cases take."""
    wanted: dict[str, list[str]] = {}
    for size in sizes:
        name, eq, value = size.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value:
            raise UsageError(f"{{size}} {size}: a GPU MODE task's cases are picked by generate_input's arguments; "
                             f"give NAME=VALUE, e.g. {_example(listed[0])}", "size")
        wanted.setdefault(name, []).append(value)
    given_by_default = defaults(reference)
    values = {c.number: {**given_by_default, **c.values} for c in listed}
    names = list(dict.fromkeys(k for c in listed for k in values[c.number]))
    for name in wanted:
        if name not in names:
            raise UsageError(f"{{size}} {name}=...: the cases of {task_file(reference)} take "
                             f"{', '.join(names)}; not {name}", "size")
    kept = [c for c in listed if all(n in values[c.number] and any(_matches(values[c.number][n], g) for g in given)
                                     for n, given in wanted.items())]
    if not kept:
        have = "; ".join(f"{n}: {', '.join(dict.fromkeys(str(v[n]) for v in values.values() if n in v))}"
                         for n in wanted)
        raise UsageError(f"{{size}} {' '.join(sizes)}: no case of {task_file(reference)} has "
                         f"{'these' if len(sizes) > 1 else 'this'} ({have})", "size")
    return kept


def arguments(reference: Path) -> list[str]:
    """The names of generate_input's arguments that the cases of the task whose reference is file
    `reference` give, or that it gives by default (`defaults`), in order. Raises UsageError as
    `cases` does."""
    return list(dict.fromkeys([k for c in cases(reference) for k in c.values] + list(defaults(reference))))


def size_name(size: str) -> str:
    """The name of a `NAME=VALUE` size (`chosen`)."""
    return size.partition("=")[0].strip()


def _matches(value: Any, given: str) -> bool:
    """Whether a case's argument `value` is what `given` (a --size value's text) says (`chosen`)."""
    import yaml

    try:
        read = yaml.safe_load(given)
    except yaml.YAMLError:
        read = given
    if isinstance(value, bool) or isinstance(read, bool):  # `1` is no `true`
        return isinstance(value, bool) and isinstance(read, bool) and value == read
    if isinstance(value, (int, float)):
        try:
            return float(given.replace("_", "")) == float(value)
        except ValueError:
            return isinstance(read, (int, float)) and read == value  # 0x40000
    return read == value or str(value).replace(" ", "") == given.replace(" ", "")


def defaults(reference: Path) -> dict[str, Any]:
    """The default values `generate_input` gives its arguments in file `reference`, read without
    running it: those written as literals (`case: str = "dense"`); {} where it cannot be read."""
    import ast

    try:
        tree = ast.parse(Path(reference).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == FUNCTIONS[1]), None)
    if function is None:
        return {}
    a = function.args
    positional = a.posonlyargs + a.args
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults)) + \
        [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    found = {}
    for arg, default in pairs:
        try:
            found[arg.arg] = ast.literal_eval(default)
        except (ValueError, TypeError, SyntaxError, RecursionError):  # not a literal: a name, a call
            continue
    return found


def _example(case: Case) -> str:
    """A size that picks `case`: its first argument but the seed, else its seed."""
    name, value = next(((k, v) for k, v in case.values.items() if k != SEED), next(iter(case.values.items()),
                                                                                   ("size", 1024)))
    return f"{name}={value}".replace(" ", "")


def name_of(reference: Path, case: Case, listed: list[Case]) -> str:
    """A case's problem name: its task's folder and its label, `matmul_py[m=64,n=64,k=64]`; a label
    that another of the task's cases (`listed`) shares (the same sizes, another seed) with the
    case's number after it, `conv2d_py[size=256]#4`."""
    label = case.label()
    shared = sum(c.label() == label for c in listed) > 1 and not label.startswith("#")
    return f"{Path(reference).resolve().parent.name}[{label}]{f'#{case.number}' if shared else ''}"


def said_once(said: dict[str, list[str]], task: str, cases: int) -> list[str]:
    """Each of a task's warnings (`said`: a warning -> the names of the problems it is of) in one
    line: of the one problem it is of by its name, of the task where all `cases` have it
    ('matmul_py (8 cases): ...'), else of the cases it is of by their names."""
    return [f"{of[0]}: {w}" if len(of) == 1 else f"{task} ({cases} cases): {w}" if len(of) == cases
            else f"{', '.join(of)}: {w}" for w, of in said.items()]


def install_modules(reference: Path) -> None:
    """Put the modules a task's files import by name (`from utils import ...`, `from task import
    input_t`) in `sys.modules`, each loaded afresh from where `task.yml`'s `files` says its copy
    comes from (`utils.py` from `../utils.py`; `task.py` beside the reference where it names none), so
    that the reference and its submission import the task's own and never another task's of the
    same name. Raises UsageError where `task.yml` names a file that is not there, and what a module
    raises when run."""
    folder = Path(reference).resolve().parent
    listed = _task(reference).get("files") or []
    sources: dict[str, Path] = {}
    for entry in listed if isinstance(listed, list) else []:
        name, source = (entry.get("name"), entry.get("source")) if isinstance(entry, dict) else (None, None)
        if not isinstance(name, str) or not name.endswith(".py") or name in NOT_MODULES:
            continue
        if isinstance(source, str) and not source.startswith("@"):
            sources[name[:-3]] = (folder / source).resolve()
            if not sources[name[:-3]].is_file():
                raise UsageError(f"{task_file(reference)}: its files give {name} from {source}, which is not there")
    if (folder / TYPES).is_file():  # the task's types, whatever the list says; no other file beside it is run
        sources.setdefault(TYPES[:-3], folder / TYPES)  # (a submission kept there is run by its grading alone)
    for name in sources:
        sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    try:
        for name, path in sources.items():
            if name not in sys.modules:  # one may have imported another already
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    sys.modules.pop(name, None)
                    raise
    finally:
        sys.path.remove(str(folder))


@dataclass
class Layout:
    """How one case's `data` is laid out (its pytree structure), learnt from its first draw: the
    forward's arguments are its leaves, and the reference and the submission get it rebuilt; and
    which leaves are output buffers (`buffers`: tensors the draw made uninitialised, `torch.empty`,
    for the answer to be written into)."""

    spec: Any = None
    buffers: tuple[int, ...] = ()

    def leaves(self, data, made: set[int] = frozenset()) -> list:
        """`data`'s leaves, its structure kept; `made`: the storages of the tensors the draw
        made uninitialised and left unwritten."""
        import torch
        from torch.utils._pytree import tree_flatten

        from .regions import storage_key

        leaves, self.spec = tree_flatten(data)
        self.buffers = tuple(i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor) and storage_key(x) in made)
        return list(leaves)

    def data(self, leaves) -> Any:
        """`data` rebuilt from its leaves (as `leaves` gave them, or new tensors in their places)."""
        from torch.utils._pytree import tree_unflatten

        if self.spec is None:
            raise RuntimeError("the case's data was never drawn, so its structure is unknown")
        return tree_unflatten(list(leaves), self.spec)


def model_class(function: Callable, module_name: str, layout: Layout, name: str) -> type:
    """An `nn.Module` class (named `name`, of module `module_name`: the harness then covers that
    file's functions) whose forward takes a case's leaves and returns `function(data)`: the
    reference's `ref_kernel`, or a submission's `custom_kernel`."""
    import torch

    class Task(torch.nn.Module):
        def forward(self, *leaves):
            return function(layout.data(leaves))

    Task.__name__ = Task.__qualname__ = name
    Task.__module__ = module_name
    return Task


def declared(outputs: list, buffers: list) -> list:
    """For each of the reference's `outputs`, the output buffer of `buffers` (those a draw gives
    with the inputs: `Layout.buffers`) that declares its type, or None: the buffer it is (its
    storage), else the first buffer left over with as many elements of the same kind (floating
    point, complex, integer or boolean): prefixsum's reference returns a new float64 tensor where
    the task gives a float32 buffer for the answer, which is what a submission returns and what the
    task's own check accepts; a top-k's float values and integer indices each find their own."""
    from .regions import storage_key

    left = list(buffers)
    found: list = [None] * len(outputs)
    for i, o in enumerate(outputs):  # the buffer returned itself, written in place
        key = storage_key(o) if hasattr(o, "untyped_storage") else None
        b = next((b for b in left if b is o or (key is not None and storage_key(b) == key)), None)
        if b is not None:
            found[i] = b
            left = [x for x in left if x is not b]
    for i, o in enumerate(outputs):  # a new tensor where a buffer of its size was given
        if found[i] is None and hasattr(o, "numel"):
            b = next((b for b in left if b.numel() == o.numel() and _kind(b) == _kind(o)), None)
            if b is not None:
                found[i] = b
                left = [x for x in left if x is not b]
    return found


def _kind(t) -> str:
    """A tensor's kind of element: 'complex', 'float', 'bool' or 'int'."""
    import torch

    return ("complex" if t.is_complex() else "float" if t.is_floating_point() else
            "bool" if t.dtype == torch.bool else "int")


def own_check(check: Callable, layout: Layout) -> Callable[[list, Any], str | None]:
    """The task's own check of a submission's answer (its reference's `check_implementation(data,
    output)`, which GPU MODE's eval runs on a copy of `data` made before the submission's call, and
    which for most tasks is `utils.make_match_reference(ref_kernel, rtol=..., atol=...)`: the
    reference's answer again, compared element by element at the task's tolerances), called as
    that eval calls it: on the draw's leaves as they were before the call (`layout` rebuilds the
    data) and the answer as `custom_kernel` returned it. None where it passes; else, in one line of
    at most LONGEST_MESSAGE characters, what it said, or what it raised. It answers `(passed,
    message)` (PMPP v2 and later), or an error that is empty or None where it passed (PMPP v1's
    message; a list of reasons, as `verbose_allclose` gives them), or a bare True or False."""

    def checked(leaves: list, output: Any) -> str | None:
        try:
            said = check(layout.data(leaves), output)
        except Exception as exc:
            text = str(exc).splitlines()[0] if str(exc) else ""
            return _short(f"it raised {type(exc).__name__}: {text}")
        if isinstance(said, tuple) and said:  # (passed, message): GPU MODE's eval unpacks it so
            passed, message = bool(said[0]), str(said[1]) if len(said) > 1 else ""
        elif isinstance(said, bool):  # a bare verdict
            passed, message = said, ""
        else:  # an error, as PMPP v1's eval reads it (`if error:`): a message, a list of reasons; empty or None passes
            passed = not said
            message = "; ".join(map(str, said)) if isinstance(said, (list, set)) else str(said)
        return None if passed else _short(message or "it answered that the output is wrong")

    return checked


def _short(text: str) -> str:
    """`text` on one line, cut at LONGEST_MESSAGE characters."""
    line = " ".join(text.split())
    return line if len(line) <= LONGEST_MESSAGE else line[:LONGEST_MESSAGE - 3] + "..."


@dataclass
class Draw:
    """A case's draw with its seed (`__call__`): `generate_input` on the case's arguments, its seed
    moved by the trial's, its data's leaves returned (`Layout`)."""

    generate: Callable
    case: Case
    layout: Layout = field(default_factory=Layout)

    def __call__(self, seed: int) -> list:
        import torch

        where = torch.get_default_device().type
        made: set[int] = set()
        with contextlib.nullcontext() if where == "cuda" else off_gpu.kept_off_cuda(where), \
                off_gpu.host_generators(where != "cuda"), _uninitialised(made):
            data = self.generate(**self.case.drawn(seed))
        leaves = self.layout.leaves(data, made)
        for i in self.layout.buffers:  # what a submission leaves unwritten is NaN (or an integer's least), not the
            x = leaves[i]              # answer the allocator kept there from an earlier call
            x.fill_(float("nan") if x.is_floating_point() or x.is_complex() else
                    (False if x.dtype == torch.bool else torch.iinfo(x.dtype).min))
        return leaves


UNINITIALISED = ("empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided")


def _uninitialised(made: set[int]):
    """A PyTorch function mode that adds to `made` the storage (`regions.storage_key`) of every
    tensor made uninitialised (`UNINITIALISED`) while it is on, and takes it away again when an op
    writes into it (an in-place op, `__setitem__`, an `out=`): what is left are the draw's output
    buffers, not `torch.empty(m, k).uniform_()`."""
    import torch
    from torch.overrides import TorchFunctionMode

    from .regions import storage_key

    class Uninitialised(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = getattr(func, "__name__", "")
            if isinstance(out, torch.Tensor) and name in UNINITIALISED:
                key = storage_key(out)
                if key is not None:
                    made.add(key)
                return out
            written = [kwargs["out"]] if isinstance(kwargs.get("out"), torch.Tensor) else []
            if args and isinstance(args[0], torch.Tensor) and (name == "__setitem__" or
                                                              (name.endswith("_") and not name.startswith("_"))):
                written.append(args[0])
            for t in written:
                made.discard(storage_key(t))
            return out

    return Uninitialised()
