"""The library's entry points: one function per command, each taking plain values and returning
typed data for the command line (or any other caller) to render. They decide nothing the caller
did not say: which tile runs, where results go and whether cached ceilings are re-measured are
arguments, and what was chosen is recorded in what they return.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from . import files, nsight
from .defaults import (DEFAULT_GRADES, DEFAULT_PROFILE, DEFAULT_RESULTS, DEFAULT_SIZE, DEFAULT_TUNE_RESULTS,
                       PLOT_KINDS)
from .errors import RunError, UsageError
from .ladder import families, tiles, upgrade
from .ladder.families import KernelSpec
from .ladder.sources import source
from .ladder.user import UserKernel, check_element, check_name, load
from .model.arch import ArchLimits, parse_arch
from .model.device import DeviceSpec, from_preset, named_limits
from .model.occupancy import Occupancy
from .model.precision import PRECISIONS, check_dtype
from .model.problem import Problem
from .model.roofs import COMPUTE_LEVEL, Verdict, plain_verdict
from .model.timing import DEFAULT_TIMEOUT_S, FULL_CLOCK_SHARE, check_l2
from .model.traffic import ModelFigures
from .model.units import plural
from .model.waves import Waves, waves_of
from .nsight.run import DEFAULT_LAUNCH_COUNT
from .nsight.run import Options as ProfileOptions
from .progress import Progress
from .render import chart, compare_chart, energy_chart, html_report, profile_chart, roofline_chart, sweep_chart
from .render import project as project_view
from .render import whatif as whatif_view
from .render.text import chosen_tile
from .results import convert, store
from .analysis.check import check as check_results
from .analysis.check import parse_max_drop
from .analysis.compare import WorkComparison, compare_work
from .results.profile import ProfileResults
from .analysis.project import project as project_results
from .results.schema import Results, Skipped, json_schema
from .analysis.whatif import DEFAULT_TARGET, WhatIf, check_target
from .analysis.whatif import whatif as whatif_of
from .api_occupancy import OccupancyReport, occupancy  # (apart: the command loads only the model)

if TYPE_CHECKING:
    from .results.grades import GradeResults
    from .measure import runner
    from .nsight import run as ncu
    from .measure.nvrtc_compile import KernelResources

MAX_TIMEOUT_S = 600.0  # a launch that takes ten minutes is a hang for any SGEMM a GPU can hold
_MEASURING = ("ceilings", "compile_pool", "counters", "isolated", "nvml", "nvrtc_compile", "runner", "tuning")


def __getattr__(name: str):
    """The measuring modules (`api.runner`, ...) loaded on first use: reading, showing and
    drawing results never load them (`measure` needs a GPU or NVRTC)."""
    if name in _MEASURING:
        return importlib.import_module(f".measure.{name}", __package__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def user_kernels(paths: list[Path], flags: dict[str, str | None] | None = None) -> list[UserKernel]:
    """The user kernels in `paths`, each from its file's header with `flags` (keys as
    `ladder.user.KEYS`, None for not given) overriding it. Raises UsageError (one line) for a
    file that cannot be read, a launch description that does not parse, or two kernels of one
    name, and for launch flags given without exactly one file."""
    given = [k.replace("-", "_") for k, v in (flags or {}).items() if v is not None]
    if given and not paths:
        raise UsageError(f"{{{given[0]}}} describes your kernel's launch; give the file too: {{source}} FILE.cu",
                         given[0], ["source"])
    if given and len(paths) > 1:
        raise UsageError(f"{{{given[0]}}} applies to one {{source}}; with several files, declare each launch in its "
                         "file ('// roofline KEY: VALUE' lines)", given[0], ["source"])
    kernels = [load(Path(p), flags) for p in paths]
    names = [k.name for k in kernels]
    for k in kernels:
        if names.count(k.name) > 1:
            raise UsageError(f"two of your kernels are called {k.name!r}; name them apart with '// roofline name:' "
                             "in their files")
    return kernels


def problems(size: int | None = None, m: int | None = None, n: int | None = None, k: int | None = None,
             sizes: str | None = None) -> list[Problem]:
    """The problems a command names, validated: `sizes` ('512,1024,8192x1024x4096': sizes N or
    shapes MxNxK, in order of FLOPs, each once), else M x N x K (all three), else `size`^3 (default
    DEFAULT_SIZE). Raises UsageError for a list that does not parse, a size that is not positive,
    and for two of these ways given at once or M, N, K given in part."""
    if sizes is not None:
        if any(v is not None for v in (size, m, n, k)):
            raise UsageError("give {sizes} or {size}/{m}/{n}/{k}, not both", "sizes", ["size", "m", "n", "k"])
        found = set()
        for item in sizes.split(","):
            parts = item.strip().lower().split("x")
            if len(parts) not in (1, 3) or not all(p.isascii() and p.isdigit() and int(p) > 0 for p in parts):
                raise UsageError(f"{{sizes}} takes comma-separated sizes N or shapes MxNxK, e.g. "
                                 f"512,1024,8192x1024x4096; got {sizes!r}", "sizes")
            values = [int(p) for p in parts]
            found.add(Problem(*(values * 3 if len(values) == 1 else values)))
        return [p.validate() for p in sorted(found, key=lambda p: (p.flops, p.m, p.n))]
    given = [v is not None for v in (m, n, k)]
    if any(given):
        if size is not None:
            raise UsageError("give {size} or {m}/{n}/{k}, not both", "size", ["m", "n", "k"])
        if not all(given):
            raise UsageError("give all three of {m}, {n} and {k} (or {size} N for a square problem)", "m",
                             ["n", "k", "size"])
        return [Problem(m, n, k).validate()]
    if size is not None and size < 1:
        raise UsageError(f"{{size}} must be a positive integer, got {size}", "size")
    s = DEFAULT_SIZE if size is None else size
    return [Problem(s, s, s).validate()]


# C++ keywords a derived kernel name could collide with (a file called int.cu, for instance).
_CPP_KEYWORDS = frozenset(
    "alignas alignof asm auto bool break case catch char char16_t char32_t char8_t class const constexpr "
    "const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false "
    "float for friend goto if inline int long mutable namespace new noexcept nullptr operator private protected "
    "public register reinterpret_cast return short signed sizeof static static_assert static_cast struct switch "
    "template this thread_local throw true try typedef typeid typename union unsigned using virtual void "
    "volatile wchar_t while".split())
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_RESERVED = re.compile(r"__|_[A-Z]")  # reserved to the implementation (C++ [lex.name]): __global__, _Float16


@dataclass(frozen=True)
class Starter:
    """A starter kernel written by `new`: its file, its name (the __global__ function's, and the
    kernel's in tables and charts) and whether that name was derived from the file name."""

    path: Path
    name: str
    derived: bool


def kernel_identifier(stem: str) -> str:
    """A C identifier from a file name's stem: every character that cannot be in one becomes '_'
    ('my kernel' -> 'my_kernel', 'k\\xe9' -> 'k_'), with 'k_' before a leading digit, cut to 64."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem)[:62]
    return ("k_" + name if not name or name[0].isdigit() else name)[:64]


def _renamed(text: str, old: str, new: str) -> str:
    """`text` with the identifier `old` replaced by `new`, the continuation lines of the
    `__global__` signature it names moved by the difference so that they stay aligned."""
    shift, out, inside = len(new) - len(old), [], False
    for line in re.sub(rf"\b{old}\b", new, text).splitlines(keepends=True):
        if inside:
            indent = len(line) - len(line.lstrip(" "))
            line = " " * max(0, indent + shift) + line.lstrip(" ")
            inside = not line.rstrip().endswith("{")
        elif f"__global__ void {new}(" in line:
            inside = not line.rstrip().endswith("{")
        out.append(line)
    return "".join(out)


def _tensor_starter(dtype: str) -> str:
    starter = PRECISIONS[dtype].starter
    element, include, mma, align_k, step_k = (starter.element, starter.include, starter.mma, starter.align_k,
                                              starter.step_k)
    text = source("starter_tensor.cu")
    for placeholder, value in (("INCLUDE_LINE", include), ("MMA_INSTRUCTION", mma), ("DTYPE_UPPER", dtype.upper()),
                               ("DTYPE", dtype), ("ELEMENT", element), ("ALIGN_K", str(align_k)),
                               ("STEP_K", str(step_k))):
        text = text.replace(placeholder, value)
    return text


def new(path: Path, force: bool = False, name: str | None = None, dtype: str = "fp32") -> Starter:
    """Write the starter kernel (roofline/kernels/starter.cu: a commented, correct, slow SGEMM with its
    launch in the header; for `dtype` bf16, fp16 or tf32 roofline/kernels/starter_tensor.cu, a tensor-core
    GEMM in the tensor ladder's convention) to `path`, atomically. Its __global__ function, and its name in tables,
    is `name` (a C identifier), else one derived from the file name (`kernel_identifier`); a
    header line names it where it differs from the file name. Raises UsageError for a path that
    is not a .cu file, exists (unless `force`) or cannot be written, and for a name that is no C
    identifier, a C++ keyword or a ladder kernel's."""
    path = Path(path)
    check_dtype(dtype)
    if path.suffix != ".cu":
        raise UsageError(f"{str(path) or 'the file name'}: give the new kernel a .cu file name, e.g. mine.cu")
    files.check_writable(path)  # a folder, a missing folder, a name too long: refused in one line
    if (path.exists() or path.is_symlink()) and not force:
        raise UsageError(f"{path} already exists; choose another name or pass {{force}} to replace it",
                         mentions=["force"])
    derived = name is None
    kernel = kernel_identifier(path.stem) if derived else name
    if derived and kernel in _CPP_KEYWORDS:
        raise UsageError(f"{files.shown_path(path)}: the kernel would be named {kernel!r} after the file, a C++ keyword; "
                         "choose another name with {name} NAME", mentions=["name"])
    if not _C_IDENTIFIER.fullmatch(kernel) or kernel in _CPP_KEYWORDS or _RESERVED.match(kernel):
        raise UsageError(f"{{name}} {kernel!r}: the kernel's name must be a C identifier (at most 64 letters, "
                         "digits and '_', not starting with a digit), no C++ keyword, and not start with '__' "
                         "or '_' and a capital (names the compiler reserves, such as __global__)", "name")
    check_name(kernel, files.shown_path(path) if derived else f"{{name}} {kernel}", remedy="with {name} NAME")
    if dtype == "fp32":
        text = _renamed(source("starter.cu"), "my_sgemm", kernel)
    else:
        text = _renamed(_tensor_starter(dtype), "my_gemm", kernel)
    text = text.replace("THIS_FILE.cu", shlex.quote(files.shown_path(path.name)))
    if kernel != path.stem:  # the table name defaults to the file's: say it where they differ
        last = "// roofline thread-tile: 1x1\n" if dtype == "fp32" else f"// roofline dtype: {dtype}\n"
        text = text.replace(last, f"{last}// roofline name: {kernel}\n", 1)
    files.write_atomic(path, lambda tmp: Path(tmp).write_text(text))
    return Starter(path, kernel, derived)


@dataclass(frozen=True)
class RunReport:
    """A finished `run`: the results (also written to the results file), one-line notes (kernels
    left out, counters unavailable), warnings (occupancy calculator and driver disagreeing), and
    the failures (a kernel that did not compile or verify: the command then exits 1)."""

    results: Results
    notes: list[str]
    warnings: list[str]
    failures: list[str]


def run(problems: list[Problem], out: Path, kernels: list[str] | None = None, sweep: bool = False,
        profile: bool = False, refresh: bool = False, autotuned_tile: str | None = None,
        progress: Progress | None = None, sources: list[UserKernel] | None = None, ladder: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S, ragged: bool = True, gpu: str | None = None,
        l2: str = "cold", ladder_kind: str | None = None, dtype: str | None = None,
        budget_s: float | None = None, energy: bool = False, full_clock_share: float = FULL_CLOCK_SHARE) -> RunReport:
    """Compile, verify against cuBLAS and time the ladder (or the `kernels` named; none when
    `ladder` is False) and the user's kernels in `sources` on this GPU for each of `problems`,
    with the measured ceilings (cached unless `refresh`) and, with `profile`, Nsight Compute's
    counts for the last problem; write the results atomically to `out`.

    Each user kernel runs in a process of its own (`measure.isolated`): a launch over `timeout_s`
    seconds or a CUDA fault ends that process only, and with `ragged` it is first verified at a
    shape that is no multiple of its tiles. `gpu` is the GPU (nvidia-smi index or PCI bus id;
    default CUDA's first). `autotuned_tile` ('128,128,16,4,8') overrides the autotuned kernel's
    tile, which is otherwise this GPU's tuned or built-in winner (`ladder.tiles.resolve`). `l2`:
    'cold' flushes the L2 before every timed launch (outside the timed interval), 'warm' leaves
    it; the results record which. `ladder_kind` ('fp32' or 'tensor') and `dtype` pick the ladder
    and the precision (`precision`); every problem and user kernel runs in that precision.
    The kernels and cuBLAS are timed together in rounds (`measure.rounds`) within `budget_s`
    seconds per problem (default: half a second per kernel), samples below `full_clock_share`
    of the run's top clock marked throttled; with `energy`, each one's joules per launch are
    measured too (loops of its launches in rounds, `measure.energy.measure_rounds`).
    Raises UsageError for bad input and RunError when there is no GPU, before any GPU work."""
    from . import collect
    from .measure import ceilings, nvml, runner
    progress = progress or Progress()
    sources = list(sources or [])
    families.check_names(kernels)
    dtype = precision(ladder_kind, dtype, sources)
    if ladder:
        families.select(kernels, None, dtype)  # a kernel of the other ladder is refused before any GPU work
    problems = [replace(p, dtype=dtype) for p in problems]
    sources = [replace(u, dtype=dtype) for u in sources]
    _check_autotuned(autotuned_tile, dtype)
    if autotuned_tile is not None:
        tiles.resolve(None, autotuned_tile)  # the tile is checked before any GPU work
    check_l2(l2)
    check_timing(timeout_s, budget_s, full_clock_share)
    for p in problems:
        p.validate()
        for user in sources:
            user.grid(p)  # an impossible grid is refused before any GPU work
    files.check_results_out(out, profile=False)  # refuse now rather than lose the run at its last step
    if gpu is not None:
        nvml.select_gpu(gpu)
    device = runner.preflight(max(problems, key=lambda p: p.device_bytes))
    autotuned = tiles.resolve(device.name, autotuned_tile) if dtype == "fp32" else None
    specs = families.select(kernels, autotuned, dtype) if ladder else []
    skipped = [Skipped(name=s.name, reason=s.family.unavailable_reason(device.arch))
               for s in specs if not s.family.runs_on(device.compute_capability)]
    specs = [s for s in specs if s.family.runs_on(device.compute_capability)]
    progress.expect(1)
    progress.step("DRAM and FP32 ceilings" + (": measuring" if refresh else " (cached once measured)"))
    device = ceilings.measure(device, refresh).attach(device)
    outputs = [runner.run(specs, p, device, progress, l2=l2, budget_s=budget_s, energy=energy,
                          full_clock_share=full_clock_share) for p in problems]
    if sources:
        outputs = _run_users(outputs, sources, device, timeout_s, ragged, progress, l2)
    doc = collect.from_sweep(outputs, device, skipped) if sweep else collect.from_run(outputs[0], device, skipped)
    notes = [s.reason for s in skipped] + [n for u in sources for n in u.launch_notes(problems[-1])]
    notes += list(dict.fromkeys(n for o in outputs for n in o.notes))  # what NVML could not say, once
    if profile:
        counted, note = _count(outputs[-1], device.pci_bus_id, progress)
        doc = convert.with_counters(doc, counted)
        notes += [note] if note else []
    store.save(doc, out)
    warnings, failures = [], []
    for output in outputs:
        for r in output.kernels:
            c = r.compiled
            if c and c.occupancy.active_blocks_per_sm != c.driver_blocks_per_sm:
                warnings.append(f"{r.spec.name}: calculated {c.occupancy.active_blocks_per_sm} blocks/SM, "
                                f"the driver says {c.driver_blocks_per_sm}")
            if r.error:
                failures.append(f"{output.problem.text()}: {r.error}")
    return RunReport(doc, notes, warnings, failures)


LADDER_KINDS = tuple(families.LADDERS)  # 'fp32', 'tensor'


def check_timing(timeout_s: float, budget_s: float | None, full_clock_share: float) -> None:
    """A launch's timeout (0 to MAX_TIMEOUT_S s), the timing budget (0 to MAX_BUDGET_S s) and the
    full-clock share (MIN_FULL_CLOCK_SHARE to 1), as `run` and `grade` take them. Raises
    UsageError naming the one out of range."""
    if not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise UsageError(f"{{timeout}} must be more than 0 and at most {MAX_TIMEOUT_S:g} seconds, got {timeout_s:g}",
                         "timeout")
    if budget_s is not None and not 0 < budget_s <= MAX_BUDGET_S:
        raise UsageError(f"{{budget}} must be more than 0 and at most {MAX_BUDGET_S:g} seconds, got {budget_s:g}",
                         "budget")
    if not MIN_FULL_CLOCK_SHARE <= full_clock_share <= 1:
        raise UsageError(f"{{full_clock}} must be a share of the top clock from {MIN_FULL_CLOCK_SHARE:g} to 1, "
                         f"got {full_clock_share:g}", "full_clock")


def _check_autotuned(autotuned_tile: str | None, dtype: str) -> None:
    """A tile for the autotuned kernel is for the FP32 ladder's: UsageError in another precision."""
    if autotuned_tile is not None and dtype != "fp32":
        raise UsageError("{autotuned_tile} applies to the FP32 ladder's autotuned kernel", "autotuned_tile")


MAX_BUDGET_S = 3600.0  # an hour of timing per problem is more than any ladder needs
MIN_FULL_CLOCK_SHARE = 0.5  # below half the top clock "full clock" would mean nothing


def precision(ladder_kind: str | None, dtype: str | None, sources: list[UserKernel]) -> str:
    """The precision a run is in: `dtype` when given (bf16, fp16 or tf32 run the tensor ladder,
    fp32 the SGEMM ladder); else BF16 for `ladder_kind` 'tensor'; else the precision the user
    kernels declare ('// roofline dtype: bf16'), which must then agree (with --ladder tensor
    too: a declared TF32 kernel makes a TF32 run); else FP32. Raises UsageError for an unknown
    ladder or precision, a ladder and precision that do not go together (the FP32 ladder in
    BF16, the tensor ladder in FP32), or a user kernel declaring a tensor precision other than
    the run's (its operands are of that type)."""
    if ladder_kind is not None and ladder_kind not in LADDER_KINDS:
        raise UsageError(f"{{ladder_kind}} takes {' or '.join(LADDER_KINDS)}, got {ladder_kind!r}", "ladder_kind")
    if dtype is not None:
        check_dtype(dtype)
    if dtype is None:
        declared = sorted({u.dtype for u in sources if not u.workload})  # a workload declares its own types
        if len(declared) > 1:
            raise UsageError(f"your kernels declare different precisions ({', '.join(declared)}); a run has one: "
                             "give {dtype}, or run them apart", mentions=["dtype"])
        tensor = [d for d in declared if d != "fp32"]  # fp32: declared so, or nothing declared
        dtype = tensor[0] if tensor else "bf16" if ladder_kind == "tensor" else declared[0] if declared else "fp32"
    for u in sources:  # a kernel's declared tensor precision is the type of its operands: no flag changes it
        if u.dtype != "fp32" and u.dtype != dtype and not u.workload:
            raise UsageError(f"{u.path.name} declares dtype {u.dtype} ('// roofline dtype: {u.dtype}'), but this run "
                             f"is in {dtype}: its kernel reads {u.dtype.upper()} operands; drop {{dtype}} or change "
                             "the declaration", "dtype")
        if not u.workload:  # nor does a flag change the type its signature declares
            check_element(u.path, u.source_text(), u.entry, dtype)
    if ladder_kind == "tensor" and dtype == "fp32":
        raise UsageError("the tensor ladder runs in bf16, fp16 or tf32, not fp32; drop {dtype} or choose one of those",
                         "dtype")
    if ladder_kind == "fp32" and dtype != "fp32":
        raise UsageError(f"the FP32 ladder runs in fp32; for {dtype} use {{ladder_kind}} tensor", "dtype", ["ladder_kind"])
    return dtype


def _run_users(outputs: list[runner.RunOutput], sources: list[UserKernel], device: DeviceSpec,
               timeout_s: float, ragged: bool, progress: Progress, l2: str) -> list[runner.RunOutput]:
    """`outputs` with each user kernel's run added, each in its own process (ragged check once)."""
    from .measure import isolated
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()  # the children allocate their own buffers
    progress.expect(len(sources) * len(outputs))
    done = []
    for i, output in enumerate(outputs):
        runs = []
        for user in sources:
            progress.step(f"{user.name}: {output.problem.text()} in its own process")
            runs.append(isolated.run_isolated(user, output.problem, device.pci_bus_id, timeout_s, ragged and i == 0,
                                              l2=l2))
        done.append(replace(output, kernels=output.kernels + runs))
    return done


def _count(output: runner.RunOutput, pci_bus_id: str | None, progress: Progress):
    from .measure import counters
    from .nsight.run import NcuError
    correct = [r for r in output.kernels if r.correct]
    progress.expect(len(correct))
    counted = {}
    for r in correct:
        progress.step(f"{r.spec.name}: Nsight Compute")
        try:
            counted[r.spec.name] = counters.profile(r.spec, output.problem, pci_bus_id)
        except (NcuError, UsageError) as exc:
            return counted, f"no hardware counters: {exc}; the rest of the run is kept"
    return counted, None


@dataclass(frozen=True)
class TuneReport:
    """A finished tile search: every candidate's results (written to the results file) and the
    cache file the winner was stored in."""

    results: Results
    cache: Path


def tune(size: int, out: Path, progress: Progress | None = None) -> TuneReport:
    """Search the autotuned kernel's tile on this GPU at size^3, write every candidate's results
    to `out` and keep the winner for this GPU in the user's cache. Raises UsageError for bad input,
    RunError when there is no GPU or no candidate verifies."""
    from . import collect
    from .measure import runner, tuning
    problem = Problem(size, size, size).validate()
    files.check_results_out(out, profile=False)
    device = runner.preflight(problem)
    outcome = tuning.search(problem, device, progress)
    doc = collect.from_tune(outcome)
    store.save(doc, out)
    cache = tiles.remember(device.name, doc.tune.winner, doc.tune.winner_gflops, size)
    return TuneReport(doc, cache)


# The kinds of file (`results.store.kind_of`) each command that reads results files takes; a
# file of another kind is refused in one line that names these (`reads`).
READS = {
    "show": ("run", "profile", "grade"),
    "plot": ("run", "profile", "grade"),
    "compare": ("run", "profile", "grade"),
    "check": ("run", "profile", "grade"),
    "whatif": ("run", "profile"),
    "project": ("run", "profile"),
}
PAIRED = ("compare", "check")  # commands that read two files of one kind


def reads(command: str) -> str:
    """What `command` reads, as its refusals say it: 'whatif reads a run's results (roofline run
    or tune) or a profile of a program (roofline profile)'."""
    if command in PAIRED:
        return f"{command} reads two files of one kind: two runs' results, two profiles or two grade files"
    names = [store.KIND_NAMES[k] for k in READS[command]]
    shown = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"{command} reads {shown}"


def read(path: Path, command: str | None = None) -> Results | ProfileResults | GradeResults:
    """The results, profile or grade file at `path`, read and checked (`results.store.load`); a
    file of an older schema is migrated with what only the kernel families can work out filled in
    (`ladder.upgrade.fill`), and its `read_notes` say so. For `command` (a `READS` key), a file of
    a kind it does not read is refused in one line naming what it reads. Raises UsageError as
    `store.load` does."""
    said = reads(command) if command is not None else None
    doc = store.load(path, profile=True, upgrade=upgrade.fill, reads=said)
    kind = store.kind_of(doc)
    if command is not None and kind not in READS[command]:
        readers = [c for c, kinds in READS.items() if kind in kinds]
        raise UsageError(f"{path}: {store.KIND_NAMES[kind]}, which {', '.join(readers[:-1])} and {readers[-1]} "
                         f"read; {said}")
    return doc


def _one_kind(command: str, paths: tuple[Path, Path], docs: tuple) -> None:
    """Refuses, for `command` (compare or check), two files of different kinds where one is a grade
    file (a run against a profile is refused by `compare_work`, with why)."""
    kinds = [store.kind_of(d) for d in docs]
    if kinds[0] != kinds[1] and "grade" in kinds:
        other = 0 if kinds[1] == "grade" else 1
        raise UsageError(f"{paths[other]} is not a grade file but {store.KIND_NAMES[kinds[other]]}, and "
                         f"{paths[1 - other]} is one; {reads(command)}")


def show(paths: list[Path]) -> tuple[Results | ProfileResults, list[str]]:
    """The results in `paths` (merged when several: `store.merge`) and notes on the merge; a
    profile (`roofline profile`) is read alone. Raises UsageError for a file that is missing,
    unreadable or invalid, a profile given with other files, or files of several precisions
    (`show_all` reads those)."""
    docs, notes = show_all(paths, "show")
    if len(docs) > 1:
        raise UsageError(f"{', '.join(str(p) for p in paths)}: runs in {len(docs)} precisions "
                         f"({', '.join(d.problem.dtype for d in docs)}), each read against its own roof; "
                         "give the files of one precision")
    return docs[0], notes


def show_all(paths: list[Path], command: str = "show") -> tuple[list[Results | ProfileResults], list[str]]:
    """The results in `paths` as one document per precision (`store.by_precision`: the files of
    one precision merged, an FP32 run and a BF16 one kept apart), with notes on the merge; a
    profile is read alone. Raises UsageError as `show` does for a bad file (its line naming what
    `command` reads) or a profile given with others, or for runs on different devices."""
    notes: list[str] = []
    docs = [read(p, command) for p in paths]
    notes += [note for d in docs for note in d.read_notes]
    profiles = [(p, d) for p, d in zip(paths, docs) if store.kind_of(d) != "run"]
    if profiles and len(docs) > 1:
        path, doc = profiles[0]
        raise UsageError(f"{path} is {store.KIND_NAMES[store.kind_of(doc)]}; give it alone to {{results}}", "results")
    if profiles:
        return docs, notes
    return store.by_precision(docs, [str(p) for p in paths], notes), notes


def plot(paths: list[Path], out: Path, kind: str = "roofline", measured: bool = False,
         highlight: list[str] | None = None) -> list[str]:
    """Draw the roofline (or, for `kind` 'sweep', the size sweep; 'energy', the energy roofline:
    `render.energy_chart`) of the results in `paths` into
    `out`, atomically; a profile's chart for a profile (`render.profile_chart`). The kernels named
    in `highlight` are drawn bold, the rest faded. Returns one-line notes. Raises UsageError for
    bad input, a highlighted name the results do not hold, or an output path that cannot be
    written. An `out` ending in .html is the interactive report (`render.html_report`: roofline,
    sweep and table in one file); it raises RunError when Plotly is not installed."""
    if kind not in PLOT_KINDS:
        raise UsageError(f"{{kind}} takes {', '.join(PLOT_KINDS)}, got {kind!r}", "kind")
    if kind != "roofline" and measured:
        raise UsageError(f"{{measured}} applies to {{kind}} roofline; a{'n energy chart' if kind == 'energy' else ' sweep'} "
                         "has no counters", "measured", ["kind"])
    as_html = html_report.is_report(out)
    if as_html:
        html_report.check_output(out, paths)
    else:
        chart.check_output(out, paths, html=True)
    docs, notes = show_all(paths, "plot")
    doc = docs[0]
    from .results.grades import GradeResults
    if isinstance(doc, GradeResults):
        if highlight or kind != "roofline" or as_html or measured:
            raise UsageError(f"{paths[0]} is a grade file: drawn as one roofline chart (.png, .svg or .pdf), without "
                             "{highlight}, {kind} or {measured}", mentions=["highlight", "kind", "measured"])
        from .render import grade_chart
        grade_chart.draw(doc, out)
        return notes + [f"not drawn (not graded): {e.name}" for e in doc.entries if not e.graded]
    if highlight and not isinstance(doc, ProfileResults):
        known = [k.name for d in docs for k in d.kernels]
        for name in highlight:
            if name not in known:
                raise UsageError(f"{{highlight}} {name!r}: no such kernel in these results; they hold {', '.join(known)}",
                                 "highlight")
            if not any(k.timed for d in docs for k in d.kernels if k.name == name):
                notes.append(f"--highlight {name}: it was not verified and timed, so it is not drawn")
    if len(docs) > 1:  # runs in several precisions: one roofline, each kernel against its own roof
        if kind != "roofline" or as_html:
            raise UsageError(f"{', '.join(str(p) for p in paths)}: runs in several precisions "
                             f"({', '.join(d.problem.dtype for d in docs)}) are drawn together only on a roofline "
                             "chart (.png, .svg or .pdf); give one precision's files for the "
                             + ("HTML report" if as_html else "sweep"))
        notes += [f"{d.problem.problem.text()} holds a size sweep: the roofline shows its largest size" for d in docs
                  if d.sweep]
        try:
            roofline_chart.draw_many(docs, out, measured, highlight)
        except UsageError as exc:
            raise exc.prefixed(f"{', '.join(str(p) for p in paths)}: ") from None
        return notes
    if isinstance(doc, ProfileResults):
        if highlight:
            raise UsageError("{highlight} applies to run results; a profile's chart shows its top kernels", "highlight")
        if kind != "roofline":
            raise UsageError(f"{paths[0]} is a profile of a program, which has no "
                             + ("size sweep; drop {kind} sweep" if kind == "sweep" else
                                "energy per kernel (ncu replays each kernel); drop {kind} energy"), "kind")
        if measured:
            notes.append("a profile's points are all measured by Nsight Compute; --measured adds nothing")
        if not any(k.intensity(level) for k in doc.kernels for level in ("dram", "l2", "l1")):
            notes.append(f"no kernel can be placed on the roofline: the report holds no operations, or no bytes, "
                         f"for any of them; roofline show --results {files.shown_path(paths[0])} lists what is missing "
                         "and the ncu option that collects it")
        if as_html:
            html_report.write(doc, out, paths, notes=notes)
        else:
            profile_chart.draw(doc, out)
        return notes
    if as_html and kind == "energy":
        raise UsageError("the energy roofline is drawn as .png, .svg or .pdf, not in the HTML report")
    if as_html:
        if kind == "sweep" and not doc.sweep:
            raise UsageError(f"{paths[0]} holds no size sweep; make one with roofline run --all --sizes 512,1024,4096")
        html_report.write(doc, out, paths, measured, highlight, notes)
        return notes
    if doc.sweep and kind != "sweep":
        notes.append(f"{paths[0]} holds a size sweep: the roofline shows its largest size, "
                     f"{doc.problem.problem.text()} (--kind sweep draws every size)")
    try:
        if kind == "sweep":
            sweep_chart.draw(doc, out, highlight)
        elif kind == "energy":
            energy_chart.draw(doc, out)
        else:
            roofline_chart.draw(doc, out, measured, highlight)
    except UsageError as exc:  # the output path was checked above: this is about the data
        raise exc.prefixed(f"{', '.join(str(p) for p in paths)}: ") from None
    return notes


def device(gpu: str | None = None, measure: bool = False) -> DeviceSpec:
    """A preset's figures (`gpu`), or this GPU's through NVML; with `measure`, this GPU's ceilings
    measured now (and cached), its energy ceilings with them (`measure.energy_ceilings`). Raises
    UsageError for an unknown preset or `measure` with a preset;
    RunError when there is no GPU and no preset, or for `measure` without a GPU."""
    from .measure import ceilings, nvml
    if measure and gpu is not None:
        raise UsageError("{measure} needs this machine's GPU; it cannot measure a {gpu} preset", "measure", ["gpu"])
    if measure:
        nvml.require_gpu()  # like run: no GPU here is a runtime failure (exit 1)
    spec = nvml.describe(gpu)
    if not measure:
        return spec
    from .measure import energy_ceilings

    return energy_ceilings.measure_and_remember(ceilings.measure(spec, refresh=True).attach(spec))


@dataclass(frozen=True)
class KernelRow:
    """One kernel of the listing: its model at the size, and for a target its resources and
    occupancy (or why it has none)."""

    spec: KernelSpec | UserKernel
    figures: ModelFigures | None
    floors: Verdict | None = None
    resources: KernelResources | None = None
    dynamic_smem_bytes: int = 0
    occupancy: Occupancy | None = None
    unavailable: str | None = None
    error: str | None = None
    waves: Waves | None = None


@dataclass(frozen=True)
class KernelListing:
    """The ladder (or the user's kernels) at one size, for a target `arch` (None: model only) and
    a `device` (for floors); `notes` on user kernels whose launch and model disagree."""

    size: int
    arch: str | None
    device: DeviceSpec | None
    rows: list[KernelRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dtype: str = "fp32"  # the precision listed (`model.precision.DTYPES`)

    @property
    def compute_level(self) -> str:
        """The compute roof the floors are read against: 'FP32', 'BF16 tensor', ..."""
        return COMPUTE_LEVEL[PRECISIONS[self.dtype].key]

    def to_json(self) -> dict:
        """The listing as JSON: per kernel its template and tile source, model, floors (with a
        device), and for a target registers, local_bytes, shared memory and the occupancy JSON."""
        out = []
        for r in self.rows:
            row = {"name": r.spec.name, "summary": r.spec.summary, "template": r.spec.name_expression,
                   "tile_source": r.spec.tile_source, "threads_per_block": r.spec.threads_per_block}
            if isinstance(r.spec, UserKernel):
                row["source"] = r.spec.describe()
            if r.resources is not None:
                row.update(registers=r.resources.registers, local_bytes=r.resources.local_bytes,
                           static_smem_bytes=r.resources.static_smem_bytes,
                           dynamic_smem_bytes=r.dynamic_smem_bytes, occupancy=r.occupancy.to_dict())
            for key in ("unavailable", "error"):
                if getattr(r, key):
                    row[key] = getattr(r, key)
            if r.waves is not None:
                row["waves"] = asdict(r.waves)
            row["model"] = asdict(r.figures) if r.figures is not None else None
            if r.floors is not None:
                v = r.floors
                dram = v.floor("DRAM")
                row["floors"] = {"memory_floor_ms": dram.floor_ms if dram else None,
                                 "memory_floor_aside": dram.aside if dram else None,
                                 "compute_floor_ms": v.floor(self.compute_level).floor_ms,
                                 "binding": "memory" if v.binding.level == "DRAM" else "compute"}
            out.append(row)
        return {"size": self.size, "arch": self.arch, "device": self.device.name if self.device else None,
                "kernels": out, "notes": list(self.notes)}

    @property
    def errors(self) -> list[str]:
        """The kernels that did not compile or cannot launch on the target, one message each."""
        return [r.error for r in self.rows if r.error]


def kernels(size: int = DEFAULT_SIZE, gpu: str | None = None, arch: str | None = None,
            model_only: bool = False, autotuned_tile: str | None = None,
            sources: list[UserKernel] | None = None, ladder_kind: str | None = None,
            dtype: str | None = None) -> KernelListing:
    """The ladder's traffic model at size^3 (or, with `sources`, the user's kernels instead) and,
    for a target (`--arch`, `--gpu`'s, else this machine's GPU when NVML sees one), each kernel
    compiled offline through NVRTC: registers, local and shared memory, occupancy. With a `gpu`
    preset, floors against its peaks, and the autotuned kernel and the shape-dispatching ones at
    the tiles `run` would pick on that GPU. `model_only` skips compiling. Raises UsageError for bad input, RunError when NVRTC is
    missing or cannot target the arch; a kernel that does not compile, or cannot launch on the
    target, is a row with an `error`. `ladder_kind` and `dtype` pick the ladder and precision as
    for `run` (`precision`): the tensor ladder's wgmma rungs compile for sm_90a."""
    from .measure import compile_pool, nvml, nvrtc_compile
    sources = list(sources or [])
    dtype = precision(ladder_kind, dtype, sources)
    sources = [u if u.workload else replace(u, dtype=dtype) for u in sources]
    _check_autotuned(autotuned_tile, dtype)
    problem = Problem(size, size, size, dtype).validate()
    limits = named_limits(gpu, arch)  # validated even with --model-only
    if limits is None and not model_only and nvml.nvml_compute_capability():
        limits = nvml.this_gpu_limits()
    if model_only:
        limits = None
    preset = from_preset(gpu) if gpu else None
    if sources:
        for user in sources:
            user.grid(problem)
        specs = list(sources)
    else:
        autotuned = tiles.resolve(preset.name if preset else None, autotuned_tile) if dtype == "fp32" else None
        specs = families.select(None, autotuned, dtype)
        if preset is not None:  # tile_by_shape, split_k, wgmma_by_shape at the tile they pick for that GPU
            specs = [s.for_problem(problem, preset) for s in specs]
    if limits is not None:
        nvrtc_compile.check_target(limits.arch)
    fits_in_l2 = preset is not None and preset.fits_in_l2(problem.working_set_bytes)
    rows = []
    target = limits or (parse_arch(preset.arch) if preset else None)  # --model-only: the preset's arch still rules
    for spec in specs:
        figures = spec.figures(problem)
        floors = (plain_verdict(figures, preset.roofs, fits_in_l2=fits_in_l2, precision=problem.precision_key)
                  if preset and figures else None)
        if target is not None and isinstance(spec, KernelSpec) and not spec.family.runs_on(target.compute_capability):
            # no floors for a kernel that cannot run there: nothing would bind it
            rows.append(KernelRow(spec, figures, None, unavailable=spec.family.unavailable_reason(target.arch)))
        else:
            rows.append(KernelRow(spec, figures, floors))
    if limits is not None:
        to_compile = [r for r in rows if r.unavailable is None]
        compiled = compile_pool.compile_in_fresh_process([r.spec for r in to_compile], limits.arch)
        done = {id(r): _compiled_row(r, res, limits, problem, preset) for r, res in zip(to_compile, compiled)}
        rows = [done.get(id(r), r) for r in rows]
    notes = [n for s in specs if isinstance(s, UserKernel) for n in s.launch_notes(problem)]
    chosen = [s for s in specs if isinstance(s, KernelSpec) and s.tile_source == "shape"]
    runnable = {r.spec.name for r in rows if r.unavailable is None}
    notes += [f"{s.name} picks {chosen_tile(s.params, short=True)} on {preset.name}" for s in chosen if s.name in runnable]
    if not chosen and not sources:
        dispatching = "tile_by_shape and split_k" if dtype == "fp32" else "wgmma_persistent and wgmma_by_shape"
        notes.append(f"{dispatching} at their own tile (--gpu picks theirs)")
    if preset is not None and limits is None:
        notes.append("floors without waves: --model-only has no occupancy")
    if fits_in_l2:
        notes.append(f"A, B and C ({problem.working_set_bytes / 2**20:,.1f} MB) fit in the {preset.name}'s "
                     f"{preset.l2_bytes / 2**20:,.0f} MB L2: no DRAM floor binds (the modelled re-reads are L2 hits)")
    elif preset is not None and any(r.floors is not None and r.floors.binding.level == "DRAM" for r in rows):
        notes.append("memory ms: the model's GMEM requests at DRAM bandwidth, an upper bound: on a GPU with a large L2 "
                     "most of them are L2 hits, and a kernel may run faster than this floor")
    return KernelListing(size, limits.arch if limits else None, preset, rows, notes, dtype)


def _compiled_row(row: KernelRow, res: KernelResources | RunError, limits: ArchLimits, problem: Problem,
                  preset: DeviceSpec | None) -> KernelRow:
    from .measure import nvrtc_compile
    spec = row.spec
    if isinstance(res, RunError):
        return replace(row, error=str(res))
    try:
        dynamic = nvrtc_compile.dynamic_smem_bytes(spec, limits.arch)
    except RunError as exc:
        return replace(row, error=str(exc))
    occ, why = nvrtc_compile.launch_check(res, limits, spec.threads_per_block, dynamic)
    error = f"{spec.name} cannot launch on {limits.arch}: {why}" if why else None
    waves = waves_of(spec.tile_grid(problem), preset.sm_count, occ.active_blocks_per_sm) if preset and not why else None
    floors = row.floors
    if waves is not None and row.figures is not None:  # the floors at the share of the GPU the grid keeps busy
        floors = plain_verdict(row.figures, preset.roofs, waves=waves,
                               fits_in_l2=preset.fits_in_l2(problem.working_set_bytes), precision=problem.precision_key)
    return replace(row, resources=res, dynamic_smem_bytes=dynamic, occupancy=occ, error=error, waves=waves,
                   floors=floors)


def compare(before: Path, after: Path, force: bool = False, chart_out: Path | None = None) -> WorkComparison:
    """`before` against `after`: two profiles, or two run files (ladder, user kernels, sweeps at
    their largest size), kernel by kernel (`analysis.compare.compare_work`); with `chart_out` each
    matched kernel's move drawn there as an arrow. Raises UsageError for an unreadable file, a
    profile against a run file, runs of different problems (unless `force`), no kernel in common,
    or a bad chart path."""
    if chart_out is not None:
        chart.check_output(chart_out, [before, after])
    docs = read(before, "compare"), read(after, "compare")
    _one_kind("compare", (before, after), docs)
    from .results.grades import GradeResults
    if any(isinstance(d, GradeResults) for d in docs):
        from .analysis import grade_changes
        if chart_out is not None:
            raise UsageError("{out} draws the moves of profiles and runs; two grade files are compared as a table",
                             "out")
        return grade_changes.compare(*docs)
    result = compare_work(*docs, force)
    result.notes[:0] = [note for d in docs for note in d.read_notes]
    if chart_out is not None:
        compare_chart.draw_moves(result, chart_out, Path(before).name, Path(after).name)
    return result


def schema(profile: bool = False, grade: bool = False) -> dict:
    """The JSON Schema of results files, or with `profile` of profile files."""
    if grade:
        from .results.grades import GradeResults
        return GradeResults.model_json_schema(by_alias=True)
    return ProfileResults.model_json_schema(by_alias=True) if profile else json_schema()


@dataclass(frozen=True)
class ProfileReport:
    """A finished profile (or import): the document (also written to the results file), one-line
    notes (the cap reached, rows left out, ncu's warnings) and failures (the command's non-zero
    exit: the command then exits 1, its profiled kernels kept)."""

    results: ProfileResults
    notes: list[str]
    failures: list[str]


def profile(command: list[str], out: Path = DEFAULT_PROFILE, options: ProfileOptions | None = None,
            report_out: Path | None = None, timeout_s: float | None = None,
            command_stdout_to_stderr: bool = False, energy: bool = False) -> ProfileReport:
    """Run `command` under Nsight Compute (`nsight.run`, clocks untouched, child processes
    followed), read its report as an import would (`nsight.read`), and write every profiled
    kernel, grouped by configuration and read against the roof of its precision, to `out`
    atomically; with `report_out`, keep ncu's `.ncu-rep` there too. This GPU's measured ceilings
    (cached, or measured once the command is done) join the theoretical roofs when the kernels
    ran on it. `command_stdout_to_stderr` sends the command's standard output to standard error
    (for `--json`, which owns standard output). With `energy`, the command runs once more without
    ncu and the GPU's energy over that run is recorded (`measure.energy.command_energy`): per
    kernel, energy cannot be had under ncu's replay.

    Raises UsageError for bad options, an empty command, a program that does not exist, or a
    kernel filter that matches nothing (naming the kernels seen); RunError when ncu is missing, may
    not read the counters, or no kernel was profiled. A command that fails after launching
    kernels is not an error here: its exit code is in the results and in `failures`."""
    from .nsight import run as ncu
    if not command:  # before the options: what is missing first
        raise UsageError("give the command to profile after --, e.g. roofline profile -- python train.py")
    options = (options or ProfileOptions()).check()
    if report_out is not None and Path(report_out).resolve() == Path(out).resolve():
        raise UsageError(f"{{report}} and {{out}} both name {out}; give them two files", "report", ["out"])
    files.check_results_out(out, profile=True)
    if report_out is not None:
        if not str(report_out).endswith(".ncu-rep"):
            raise UsageError(f"{{report}} {report_out}: give the Nsight Compute report a .ncu-rep name", "report")
        files.check_writable(report_out)
    ncu.find_ncu()
    program = command[0]
    if shutil.which(program) is None:
        if os.sep in program and Path(program).is_file():
            raise UsageError(f"cannot run {program!r}: it is not executable (chmod +x it, or name its interpreter)")
        raise UsageError(f"cannot run {program!r}: no such program" + (
            "" if os.sep in program else " on PATH (give its path, e.g. ./" + program + ")"))
    report = None
    with tempfile.TemporaryDirectory(prefix="roofline-ncu-") as tmp:
        done = ncu.run(command, options, Path(tmp) / "report", timeout_s, command_stdout_to_stderr)
        if done.report is not None:
            if report_out is not None:
                files.write_atomic(report_out, lambda t: shutil.copyfile(done.report, t))
            try:
                report = nsight.read(done.report, source="the profile")
            except nsight.NoLaunches:
                pass
    if report is None:
        raise _nothing_profiled(done, options)
    launches = report.launches
    device, notes = _profiled_device(report.device)
    if options.launch_count and len(launches) >= options.launch_count:
        notes.append(f"profiled the first {len(launches):,} launches, the cap: later launches were not profiled "
                     "(raise --launch-count, or narrow with --kernel-regex / --launch-skip)")
    notes += list(report.notes)
    notes += [w for w in done.warnings() if "application returned an error code" not in w]
    try:
        doc = convert.from_profile(launches, device, command=list(command), read_with=report.read_with,
                                   kernel_regex=options.kernel_regex, launch_skip=options.launch_skip,
                                   launch_count=options.launch_count, from_start=options.from_start,
                                   exit_code=done.returncode, notes=notes)
    except ValidationError as exc:
        kept = f"; ncu's own report is kept in {report_out}" if report_out is not None else ""
        raise RunError(f"ncu reported figures no GPU reaches ({store.one_line(exc)}){kept}") from None
    if energy:
        doc, note = _with_command_energy(doc, command, timeout_s, command_stdout_to_stderr)
        notes_after = [note]
    else:
        notes_after = []
    store.save(doc, out)
    notes = list(doc.notes) + _kernel_notes(doc) + notes_after
    failures = [] if done.returncode == 0 else [
        f"the command exited with code {done.returncode}; the {plural(len(launches), 'launch', 'launches')} profiled before "
        f"that are kept in {out}"]
    return ProfileReport(doc, notes, failures)


def _with_command_energy(doc: ProfileResults, command: list[str], timeout_s: float | None,
                         stdout_to_stderr: bool) -> tuple[ProfileResults, str]:
    """`doc` with the GPU's energy over one more, unprofiled run of `command` (None where NVML
    reports no energy counter), and the note that says what it is."""
    from .measure.energy import command_energy
    from .results.profile import CommandEnergy

    got = command_energy(command, doc.device.pci_bus_id, timeout_s, stdout_to_stderr)
    if got is None:
        return doc, "no energy: NVML reports no energy counter on this GPU"
    joules, seconds, code = got
    record = CommandEnergy(joules=joules, seconds=seconds, exit_code=code)
    return doc.model_copy(update={"command_energy": record}), (
        f"energy: the command run once more without ncu took {joules:,.1f} J of the GPU in {seconds:.1f} s "
        f"({record.watts:,.0f} W on average, start-up and idle included); per kernel, energy cannot be measured "
        "under ncu, which replays each kernel serialised to count it")


def _kernel_notes(doc: ProfileResults, most: int = 8) -> list[str]:
    """Each kernel's remarks on its counts ('kernel: note'), the first `most` of them and a count
    of the rest."""
    found = [f"{k.name}: {n}" for k in doc.kernels for n in k.notes]
    return found[:most] + ([f"and {len(found) - most} more remarks on kernels' counts, in the results file"]
                           if len(found) > most else [])


def _profiled_device(device: DeviceSpec) -> tuple[DeviceSpec, list[str]]:
    """The GPU the profiled kernels ran on (`device`, from the report), with this machine's
    measured ceilings (cached, or measured now that the program is done) when it is the same
    GPU; and a note when they are not at hand."""
    from .measure import ceilings, nvml
    if not nvml.gpu_available():
        return device, ["no GPU visible to roofline itself: theoretical roofs only (no measured ceilings)"]
    here = nvml.from_nvml()
    if here.name != device.name:
        return device, [f"the kernels ran on {device.name}, not on {here.name} (CUDA's first GPU): "
                        "theoretical roofs only"]
    return ceilings.measure(here).attach(here), []


class NothingLaunched(RunError):
    """A profile between cudaProfilerStart and cudaProfilerStop in which no kernel was launched."""


def _nothing_profiled(done: ncu.ProfileRun, options: ncu.Options) -> Exception:
    seen = done.available_kernels()
    if options.kernel_regex and seen:
        shown = ", ".join(seen[:8]) + (f" and {len(seen) - 8} more" if len(seen) > 8 else "")
        return UsageError(f"{{kernel_regex}} {options.kernel_regex!r} matched none of the {len(seen)} kernels the "
                          f"command launched: {shown}", "kernel_regex")
    if done.returncode != 0:
        return RunError(f"the command exited with code {done.returncode} before any kernel was profiled")
    if not options.from_start:
        return NothingLaunched("no kernel was launched between cudaProfilerStart and cudaProfilerStop "
                        "(torch.cuda.profiler.start/stop); drop --no-profile-from-start to profile from the start")
    if options.launch_skip:
        return RunError(f"no kernel was profiled: the command launched no more than --launch-skip "
                        f"{options.launch_skip} kernels")
    return RunError("the command launched no CUDA kernel: nothing to profile")


def import_profile(path: Path, out: Path = DEFAULT_PROFILE, gpu: str | None = None) -> ProfileReport:
    """Read an Nsight Compute report made elsewhere (`nsight.read`: a `.ncu-rep`, any CSV export
    of any page, metric set, ncu version or locale, or ncu's text output; the GPU is the
    report's, or the preset or device file `gpu` names), convert it to a profile document
    (`results.convert`) and write that to `out` atomically. Raises UsageError for a missing or
    unreadable file, one with no placeable launch, an unknown preset, an `out` that is the report
    itself or holds another kind of results, and figures no GPU reaches; NcuError when a
    `.ncu-rep` needs a reader that is not installed."""
    path = Path(path)
    if Path(out).resolve() == path.resolve():
        raise UsageError(f"{{out}} {out} is the report being imported; give the profile another file name", "out")
    files.check_results_out(out, profile=True)
    report = nsight.read(path, gpu)
    try:
        doc = convert.from_profile(report.launches, report.device, report=path.name, read_with=report.read_with,
                                   notes=list(report.notes))
    except ValidationError as exc:
        other = {"gpu over report": f" (it was recorded on another GPU than {{gpu}} {gpu})",
                 "gpu": f" (is {{gpu}} {gpu} the GPU it was recorded on? the report does not name its GPU)"}
        raise UsageError(f"{path}: {store.one_line(exc)}{other.get(report.device_from, '')}",
                         mentions=["gpu"]) from None
    store.save(doc, out)
    return ProfileReport(doc, list(doc.notes) + _kernel_notes(doc), [])


def whatif(path: Path, target: float = DEFAULT_TARGET, chart_out: Path | None = None) -> WhatIf:
    """Every kernel of the results or profile file `path` at `target` (0 < target <= 1) of the
    roof that binds it, ranked by the ms it saves, with the step's time and speed-up for a
    profile (`analysis.whatif`); with `chart_out`, its chart drawn there (`render.whatif`).
    Raises UsageError for a bad target (checked first), an unreadable file, a file without a
    verified and timed kernel or a bad chart path."""
    target = check_target(target)
    if chart_out is not None:
        chart.check_output(chart_out, [path])
    doc = read(path, "whatif")
    result = whatif_of(doc, target)
    result.notes[:0] = doc.read_notes
    if not result.kernels:  # a run whose kernels all failed, or none recorded: nothing to read
        raise UsageError(f"{path}: no verified and timed kernel to read; run the kernels again "
                         "(roofline run) or give another results file")
    if chart_out is not None:
        whatif_view.draw(result, chart_out, Path(path).name)
    return result


def project(path: Path, gpus: list[str], chart_out: Path | None = None):
    """The kernels of the results file at `path` projected onto each preset GPU in `gpus`
    (`analysis.project.project`), and with `chart_out` its bar chart drawn there. Raises UsageError
    for an unreadable file, an unknown GPU name (listing the presets) or a bad chart path."""
    fmt = chart.check_output(chart_out, [path]) if chart_out is not None else None
    doc = read(path, "project")
    result = project_results(doc, gpus)
    result.notes[:0] = doc.read_notes
    if chart_out is not None:
        project_view.draw(result, chart_out, fmt)
    return result


def check(new: Path, baseline: Path, max_drop: str | float = "5%"):
    """`new` against `baseline` as a regression gate (`analysis.check.check`): `max_drop` as '5%'
    or 0.05. Returns a `analysis.check.Check`. Raises UsageError for a bad `max_drop` (not in
    (0, 10]), an unreadable file, a profile against a run file, runs of different problems or no
    kernel in common."""
    drop = parse_max_drop(str(max_drop))  # a bad option is named before any file is read
    docs = read(new, "check"), read(baseline, "check")
    _one_kind("check", (new, baseline), docs)
    from .results.grades import GradeResults
    if any(isinstance(d, GradeResults) for d in docs):
        from .analysis import grade_changes
        return grade_changes.compare(docs[1], docs[0], drop)
    result = check_results(*docs, drop)
    result.comparison.notes[:0] = [note for d in docs for note in d.read_notes]
    return result


@dataclass(frozen=True)
class GradeReport:
    """A finished grade: the document (also written to the grade file), notes, and failures (one
    line each: an entry that did not compile, verify or run; the command exits 1) and usage
    failures (a reference that failed: the spec's error; the command exits 2)."""

    results: "GradeResults"
    notes: list[str]
    failures: list[str]
    usage_failures: list[str] = field(default_factory=list)


def workloads(targets: list[str], spec: Path | None = None, sizes: list[str] | None = None,
              sweep: str | None = None) -> list:
    """The workloads `targets` name: FILE.cu (its `// roofline` lines, with a .toml of its stem
    beside it), MODULE:FUNCTION or FILE.py:FUNCTION (declared by the spec file `spec`), or a
    spec file FILE.toml naming its `callable`; at the sizes `sizes` ('NAME=VALUE') set, and with
    `sweep` ('NAME=V1,V2,...') each workload that declares NAME once per value. Raises UsageError
    (one line) for a target that names nothing, a spec that does not parse, or a size no
    workload declares."""
    from .workload import spec as specs
    if not targets and spec is not None:
        targets = [str(spec)]
    if not targets:
        raise UsageError("give what to grade: FILE.cu, MODULE:FUNCTION or FILE.py:FUNCTION (with {spec} FILE.toml)",
                         mentions=["spec"])
    out = []
    for t in targets:
        text = str(t)
        if text.endswith(".cu") or Path(text).suffix in (".cuh", ".cu"):
            if spec is not None and not any(":" in str(x) and not str(x).endswith((".cu", ".toml")) for x in targets):
                raise UsageError(f"{{spec}} declares callables; {text} is declared by its own '// roofline' lines "
                                 "(or a .toml of its stem beside it)", "spec")
            out.append(specs.load_kernel(Path(text)))
        elif text.endswith(".toml"):
            target = specs.callable_in(Path(text))
            if target is None:
                raise UsageError(f"{text}: names no callable (callable = \"MODULE:FUNCTION\"); give a .cu file with it")
            out.append(specs.load_callable(target, Path(text)))
        elif ":" in text:
            out.append(specs.load_callable(text, spec))
        else:
            raise UsageError(f"{text!r}: give a .cu file, MODULE:FUNCTION, FILE.py:FUNCTION or a spec file .toml")
    overrides: dict[str, int] = {}
    for item in sizes or []:
        if "=" not in item:
            raise UsageError(f"{{size}} {item!r}: write NAME=VALUE, e.g. C=8192", "size")
        key, value = (s.strip() for s in item.split("=", 1))
        if key in overrides:
            raise UsageError(f"{{size}} {key} is given twice", "size")
        try:
            overrides[key] = specs.parse_size_value(value, f"size {key}")
        except UsageError as exc:
            raise UsageError(f"{{size}} {exc.message}", "size") from None
    for key in overrides:
        if not any(key in w.sizes for w in out):
            known = sorted({k for w in out for k in w.sizes})
            raise UsageError(f"{{size}} {key}: no workload declares that size (theirs: {', '.join(known) or 'none'})",
                             "size")
    out = [w.resized({k: v for k, v in overrides.items() if k in w.sizes}) for w in out]
    if sweep is not None:
        key, _, values = sweep.partition("=")
        key = key.strip()
        try:
            steps = [specs.parse_size_value(v, f"size {key}") for v in values.split(",") if v.strip()]
        except UsageError as exc:
            raise UsageError(f"{{sweep}} {exc.message}", "sweep") from None
        if not key or not steps:
            raise UsageError(f"{{sweep}} {sweep!r}: write NAME=V1,V2,..., e.g. C=1024,2048,4096", "sweep")
        if not any(key in w.sizes for w in out):
            raise UsageError(f"{{sweep}} {key}: no workload declares that size", "sweep")
        if key in overrides:
            raise UsageError(f"{{sweep}} {key} and {{size}} {key} both set it; give one", "sweep", ["size"])
        out = [w.resized({key: v}) if key in w.sizes else w for w in out for v in (steps if key in w.sizes else [0])]
    for w in out:
        w.work()
        if w.path is not None:
            w.launch()
    names = [(w.name, w.workload_text()) for w in out]
    for n in names:
        if names.count(n) > 1:
            raise UsageError(f"{n[0]} is given twice for {n[1]}; name one otherwise ('// roofline name:')")
    return out


def grade(targets: list[str], out: Path = DEFAULT_GRADES, spec: Path | None = None, sizes: list[str] | None = None,
          baseline: str | list[str] | None = None, profile: bool = False, gpu: str | None = None,
          budget_s: float | None = None, full_clock_share: float = FULL_CLOCK_SHARE,
          timeout_s: float = DEFAULT_TIMEOUT_S, progress: Progress | None = None,
          sweep: str | None = None) -> GradeReport:
    """Verify, time and grade each of `targets` (`workloads`) against its speed of light on this
    GPU (`model.sol`, the measured ceilings, cached once measured), each in a process of its own
    (`measure.graded_child`); with `profile`, count one call of each under Nsight Compute; score
    the entries of each workload against `baseline` (one or several, each the name of an entry
    graded here, a grade file whose entry of the same workload gives the time, or a callable
    MODULE:FUNCTION graded here with the first target's spec). `sweep` ('NAME=V1,V2') grades each at several values of one size. Writes
    the grade file `out` atomically.

    Raises UsageError for bad input before any GPU work, RunError when there is no GPU. An entry
    that fails is kept with its error (`GradeReport.failures`); a reference that fails is a usage
    failure (`usage_failures`), the other entries kept."""
    from . import grading
    from .measure import ceilings, nvml
    from .measure.graded_child import grade_in_child, request_for
    from .results.grades import GradeResults
    progress = progress or Progress()
    check_timing(timeout_s, budget_s, full_clock_share)
    items = workloads(targets, spec, sizes, sweep)
    baselines = [baseline] if isinstance(baseline, str) else list(baseline or [])
    by_name: list[str] = []  # entries graded here whose time scores their workload's others
    from_files: dict[str, tuple[str, float]] = {}  # workload -> (file, time) from grade files
    for base in baselines:
        if Path(base).is_file():
            wanted = "a baseline file is a grade file (roofline grade writes them)"
            try:
                doc = store.load(Path(base), profile=True, upgrade=upgrade.fill, reads=wanted)
            except UsageError as exc:
                raise UsageError(f"{{baseline}} {exc.message}", "baseline") from None
            if not isinstance(doc, GradeResults):
                raise UsageError(f"{{baseline}} {base}: {store.KIND_NAMES[store.kind_of(doc)]}, not a grade file "
                                 "(roofline grade writes them)", "baseline")
            for e in doc.entries:
                if e.graded:
                    from_files.setdefault(e.workload, (Path(base).name, e.time_ms))
        elif any(w.name == base for w in items):
            by_name.append(base)
        elif ":" in base:
            from .workload.spec import load_callable
            first = items[0]
            spec_of = spec or (first.spec_file if first.target is not None else None)
            if spec_of is None:
                raise UsageError(f"{{baseline}} {base}: a callable baseline needs a spec declaring its args "
                                 "({spec} FILE.toml)", "baseline", ["spec"])
            b = load_callable(base, spec_of)
            items.append(b.resized({k: v for k, v in first.sizes.items() if k in b.sizes}))
            by_name.append(b.name)
        else:
            raise UsageError(f"{{baseline}} {base!r}: no entry of that name is graded here, and no such file",
                             "baseline")
    files.check_results_out(out, profile=False, kind="grade")
    if gpu is not None:
        nvml.select_gpu(gpu)
    nvml.require_gpu()
    device = nvml.describe()
    progress.expect(1 + len(items) * (2 if profile else 1))
    progress.step("DRAM, FP32 and tensor ceilings (cached once measured); the launch floor")
    device = ceilings.measure(device).attach(device)
    from .measure.graded import launch_floor_ms
    launch_ms = launch_floor_ms(device.l2_bytes)
    entries, failures, usage_failures, notes = [], [], [], []
    for w in items:
        progress.step(f"{w.name}: {w.workload_text()}")
        request = request_for(w, device.pci_bus_id, device.l2_bytes, budget_s, full_clock_share, timeout_s=timeout_s)
        try:
            run = grade_in_child(w, request, timeout_s)
        except UsageError as exc:
            usage_failures.append(f"{w.name}: {exc}")
            from .measure.graded import GradedRun
            run = GradedRun(workload=w, error=str(exc))
        counted = None
        if profile and run.verified:
            progress.step(f"{w.name}: one call under Nsight Compute")
            counted, note = _count_grade(w, device)
            notes += [note] if note else []
        e = grading.entry(run, device, launch_ms, counted)
        if e.error and f"{w.name}: {e.error}" not in usage_failures:
            failures.append(f"{w.name}: {e.error}")
        entries.append(e)
    entries = grading.with_baseline(entries, by_name, from_files)
    if from_files:
        missed = sorted({e.workload for e in entries if e.score is None and e.graded} - set(from_files))
        notes += [f"no baseline for {w}: the baseline file grades no entry of it" for w in missed]
    for w in items:
        work, buffered = w.work(), sum(a.nbytes(w.sizes) for a in w.args if a.buffer)
        if w.work_formula and w.bytes_read is None and not 0.5 <= work.nbytes / buffered <= 2:
            notes.append(f"{w.name}: {w.work_formula} counts {work.nbytes / 1e6:,.1f} MB of compulsory bytes, its "
                         f"buffers hold {buffered / 1e6:,.1f} MB; is the formula's dtype the buffers'?")
    if baselines and not any(e.score is not None for e in entries):
        notes.append(f"no entry has a score: the baseline {', '.join(baselines)} was not graded, or has no entry of the same "
                     "workload, or is not slower than light")
    import datetime as _dt
    from . import __version__
    doc = GradeResults(created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                       tool=f"roofline {__version__}", device=device, launch_ms=launch_ms,
                       entries=entries, notes=notes)
    store.save(doc, out)
    return GradeReport(doc, notes, failures, usage_failures)


def _count_grade(w, device: DeviceSpec) -> tuple:
    """What Nsight Compute counted over one call of `w` (a child under ncu, profiling from
    cudaProfilerStart), or (None, why not)."""
    from . import grading
    from .measure.graded_child import command, request_for
    request = request_for(w, device.pci_bus_id, device.l2_bytes, None, None, mode="profile")
    try:
        with tempfile.TemporaryDirectory(prefix="roofline-grade-") as tmp:
            done = profile(command(request, Path(tmp)), Path(tmp) / "profile.json", ProfileOptions(from_start=False),
                           command_stdout_to_stderr=True)
    except NothingLaunched:  # evidence in itself: the call launched no kernel
        from .results.grades import CountedRecord
        return CountedRecord(kernels=0), None
    except (RunError, UsageError) as exc:
        return None, f"{w.name}: not counted: {exc}"
    return grading.counted_of(done.results, w.work(), device.roofs), None


def comms(paths: list[Path], gpu: str | None = None, chart_out: Path | None = None,
          nccl_tests: Path | None = None, collective: str | None = None):
    """The communication of a step from PyTorch profiler traces, one per rank (files, or folders
    of `*.json` / `*.json.gz`): each rank's exposed communication and each collective's bus
    bandwidth against the GPU's NVLink (`analysis.comms.report`); with `chart_out`, the
    communication roof drawn there (`render.comms_chart`); with `nccl_tests` (its output on the
    same machine; `collective` where its command line is not in it), each collective of that kind
    against nccl-tests' busbw at its size. `gpu` names the GPU where the traces do not (a preset
    or a name). Raises UsageError for a path that holds no trace, or an unknown collective."""
    from .analysis.comms import report
    from .traces import kineto
    if not paths:
        raise UsageError("give the traces, one per rank (files or a folder of them)")
    files_, skipped = [], []
    traces = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted([*p.glob("*.json"), *p.glob("*.json.gz")])
            for f in found:  # a folder's other JSON files are not traces: each is named, not fatal
                try:
                    traces.append(kineto.read(f))
                    files_.append(f)
                except UsageError as exc:
                    skipped.append(exc.message)
            if not found:
                raise UsageError(f"{p}: a folder with no .json or .json.gz trace in it")
        else:
            traces.append(kineto.read(p))
            files_.append(p)
    if not traces:
        raise UsageError(f"no trace could be read: {skipped[0]}")
    seen: dict[Path, Path] = {}
    for f in files_:  # one rank's trace twice would read as two ranks of identical figures
        if f.resolve() in seen:
            raise UsageError(f"{f}: given twice (also as {seen[f.resolve()]}); give each rank's trace once")
        seen[f.resolve()] = f
    if chart_out is not None:
        chart.check_output(chart_out, files_)
    name = None
    if gpu is not None:
        from .model.links import link_of
        try:
            name = from_preset(gpu).name
        except UsageError:
            if link_of(gpu) is None:
                raise UsageError(f"{{gpu}} {gpu!r}: no preset of that name and no GPU whose NVLink is known "
                                 "(h100-sxm, h200, a100-sxm4-80gb, ...)", "gpu") from None
            name = gpu
    reference = None
    if collective is not None and nccl_tests is None:
        raise UsageError("{collective} names the collective of {nccl_tests} output; give that too", "collective",
                         ["nccl_tests"])
    if nccl_tests is not None:
        from .model.collectives import COLLECTIVES, collective_of
        from .traces import nccl_tests as nt
        coll = collective_of(collective) if collective is not None else None
        if collective is not None and coll is None:
            raise UsageError(f"{{collective}} {collective!r}: one of {', '.join(COLLECTIVES)}", "collective")
        reference = nt.read(nccl_tests, coll)
    result = report(traces, name, reference)
    result.notes[:0] = [f"not a trace, left out: {s}" for s in skipped]
    if chart_out is not None:
        from .render import comms_chart
        comms_chart.draw(result, chart_out)
    return result
