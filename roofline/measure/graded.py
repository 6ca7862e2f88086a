"""A workload's kernel or callable on the GPU: built, checked twice, timed, and the evidence of the
integrity flags gathered (`model.integrity`). Needs CuPy and a GPU.

The checks: (1) every buffer at the workload's sizes, inputs drawn with the spec's seed, outputs
filled with NaN (`measure.buffers`); the reference computed from copies of the inputs; one launch;
the outputs compared with the reference (`model.verify`: relative Frobenius error, NaN never
passes), the inputs with their copies bit for bit; (2) the inputs drawn again into the same
buffers with the next seed, the outputs poisoned again, one launch, checked again, and its outputs
compared with the first launch's: the same bits for a different reference is a cached answer.
A kernel or callable that passes both is timed as `run` times kernels (`measure.rounds`: CUDA
events around each launch, L2 flushed ahead of each outside them, NVML's clock per launch);
a callable's call is then timed five more times from the host, call to an idle device, against
its events (`integrity.async_return`).

The reference is a Python expression evaluated with the inputs by name, the sizes by name, `np`
(NumPy), `cp` (CuPy), `math`, and `torch` where PyTorch is installed; the inputs are CuPy arrays
(NumPy's functions dispatch to CuPy on them), or PyTorch tensors when the expression names
`torch`; 16-bit inputs reach it as FP32 values. `FILE.py:FUNCTION` is called with the inputs as
keyword arguments (PyTorch tensors when the file imports torch). A callable is called with its
buffers and scalars in the spec's order (PyTorch tensors when its module imports torch, else CuPy
arrays) and returns its `return` outputs.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import math
import re
import statistics
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import RunError, UsageError
from ..files import import_file
from ..ladder.user import workload_kernel
from ..model import integrity
from ..model.integrity import Flag
from ..model.occupancy import Occupancy, calculate
from ..model.timing import Timing
from ..model.verify import TOLERANCE, verify
from ..workload.spec import Arg, Workload
from . import activity, buffers
from .activity import CallKernels
from .pipeline import time_items
from . import l2_persist
from .rounds import WARMUP, Item
from .timing import l2_flush
from .waiting import LaunchTimeout, waiter

TOLERANCE_16BIT = 1e-2
ASYNC_CALLS = 5
_FUNCTION_TARGET = re.compile(r"(.+\.py|[A-Za-z_][\w.]*):([A-Za-z_]\w*)")


@dataclass
class OutputCheck:
    """One output's comparison with the reference: `rel_error` (None when it holds non-finite
    values), whether it `passed` the `tolerance`, and why not (`reason`)."""

    name: str
    rel_error: float | None
    tolerance: float
    passed: bool
    reason: str | None = None


@dataclass
class Findings:
    """What the GPU said about one kernel or callable: the checks of its launches (in order), the
    flags raised, the timing (None when it failed a check or raised: `error`), the resources of a
    compiled kernel and its occupancy, and for a callable the events' time and the host's wall
    clock of its calls (`async_ms`: (events, wall), medians) and its kernels from CUPTI's activity
    records (`kernels`, `measure.activity`; None where CUPTI was not there: `kernels_why`), and
    which compiler built a kernel. What a child process reports."""

    checks: list[OutputCheck] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    timing: Timing | None = None
    error: str | None = None
    registers: int | None = None
    static_smem_bytes: int | None = None
    local_bytes: int | None = None
    dynamic_smem_bytes: int | None = None
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    occupancy: Occupancy | None = None
    async_ms: tuple[float, float] | None = None
    kernels: CallKernels | None = None
    kernels_why: str | None = None  # why `kernels` is None for a callable timed: CUPTI not there, no kernel
    compiler: str | None = None  # a kernel's compiler and its version ('nvcc 13.0.88', 'NVRTC 12.9')

    @property
    def verified(self) -> bool:
        """Whether every output of every checked launch passed."""
        return bool(self.checks) and all(c.passed for c in self.checks) and self.error is None


@dataclass(kw_only=True)
class GradedRun(Findings):
    """The findings of one workload's kernel or callable (`workload`)."""

    workload: Workload

    @property
    def name(self) -> str:
        """The workload's name."""
        return self.workload.name

    @property
    def kind(self) -> str:
        """'kernel' (a .cu file's) or 'callable'."""
        return "kernel" if self.workload.target is None else "callable"


def tolerance_of(workload: Workload, arg: Arg) -> float:
    """The tolerance an output is held to: the spec's, else TOLERANCE for FP32 and FP64, 1e-2 for
    16-bit types, 0 for integers."""
    if workload.tolerance is not None:
        return workload.tolerance
    if not arg.element.floating:
        return 0.0
    return TOLERANCE_16BIT if arg.element.nbytes == 2 else TOLERANCE


def load_function(target: str, base: Path | None = None) -> Callable:
    """The function MODULE:FUNCTION or FILE.py:FUNCTION names (a file relative to `base`, then to
    the working folder). Raises UsageError when it cannot be found, RunError when importing
    it raises."""
    m = _FUNCTION_TARGET.fullmatch(target.strip())
    if m is None:
        raise UsageError(f"{target!r}: name a function as MODULE:FUNCTION or FILE.py:FUNCTION")
    where, name = m.groups()
    try:
        if where.endswith(".py"):
            path = Path(where).expanduser()
            if not path.is_absolute() and base is not None and (base / path).is_file():
                path = base / path
            if not path.is_file():
                raise UsageError(f"{target}: no such file {where}")
            module = import_file(path, "roofline_user_")
        else:
            module = importlib.import_module(where)
    except UsageError:
        raise
    except ModuleNotFoundError as exc:
        raise UsageError(f"{target}: no module {exc.name!r} (is it on PYTHONPATH, or installed?)") from None
    except Exception as exc:
        raise RunError(f"{target}: importing it raised {type(exc).__name__}: {_first_line(exc)}") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise UsageError(f"{target}: {where} has no function {name!r}")
    return fn


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _uses_torch(fn_or_text) -> bool:
    if isinstance(fn_or_text, str):
        return bool(re.search(r"\btorch\b", fn_or_text))
    module = sys.modules.get(getattr(fn_or_text, "__module__", "") or "")
    return module is not None and any(isinstance(v, types.ModuleType) and v.__name__.split(".")[0] == "torch"
                                      for v in vars(module).values())


def reference(workload: Workload, inputs: dict) -> list:
    """The reference's outputs for `inputs` (name -> CuPy buffer), as CuPy arrays of values, one
    per output in order. Raises UsageError when the reference does not evaluate, returns the wrong
    number or shape of outputs, or returns NaN or infinity."""
    import cupy
    import numpy as np

    args = {a.name: a for a in workload.args}
    text = workload.reference
    target = _FUNCTION_TARGET.fullmatch(text)
    if target and (text.split(":")[0].endswith(".py")):
        fn = load_function(text, workload.base)
        torch_mode = _uses_torch(fn)
    else:
        fn, torch_mode = None, _uses_torch(text)
    values = {}
    for name, arr in inputs.items():
        v = buffers.values(arr, args[name]).copy()
        if v.dtype == cupy.float16:
            v = v.astype(cupy.float32)
        values[name] = buffers.to_torch(v) if torch_mode else v
    try:
        if fn is not None:
            got = fn(**values)
        else:
            namespace = {"np": np, "numpy": np, "cp": cupy, "cupy": cupy, "math": math, **workload.sizes, **values}
            if torch_mode:
                import torch
                namespace["torch"] = torch
            got = eval(compile(text, "<reference>", "eval"), {"__builtins__": __builtins__}, namespace)
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"{workload.where}: the reference {text!r} raised {type(exc).__name__}: "
                         f"{_first_line(exc)}") from None
    outs = workload.outputs
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    if len(got) != len(outs):
        raise UsageError(f"{workload.where}: the reference gives {len(got)} output(s); the spec declares "
                         f"{len(outs)} ({', '.join(a.name for a in outs)})")
    result = []
    for a, g in zip(outs, got):
        try:
            arr = buffers.from_any(g, a)
        except TypeError as exc:
            raise UsageError(f"{workload.where}: the reference's {a.name} is {exc}") from None
        want = a.dims(workload.sizes)
        if tuple(arr.shape) != want:
            raise UsageError(f"{workload.where}: the reference gives {a.name} the shape {tuple(arr.shape)}; "
                             f"the spec declares {want}")
        if arr.dtype.kind in "fc" and not bool(cupy.all(cupy.isfinite(arr))):
            bad = int(arr.size - cupy.count_nonzero(cupy.isfinite(arr)))
            raise UsageError(f"{workload.where}: the reference gives {a.name} {bad:,} NaN or infinite elements "
                             "on the drawn inputs; fix the reference or the inputs' draw")
        result.append(arr.astype(cupy.float64))
    return result


def _compare(workload: Workload, outputs: list, refs: list, label: str) -> list[OutputCheck]:
    import cupy
    checks = []
    for a, out, ref in zip(workload.outputs, outputs, refs):
        tol = tolerance_of(workload, a)
        v = verify(out.astype(cupy.float64), ref, xp=cupy, tolerance=tol)
        checks.append(OutputCheck(f"{a.name}{label}", v.rel_error, tol, v.passed, v.reason))
    return checks


class Subject:
    """What is launched: a compiled kernel or a loaded callable, bound to one set of buffers.
    `launch()` enqueues one launch (or makes one call); `outputs()` gives the outputs of the last
    one as CuPy arrays of values, in the workload's order."""

    def __init__(self, workload: Workload, arrays: dict, launch: Callable[[], object], kind: str):
        self.workload, self.arrays, self._launch, self.kind = workload, arrays, launch, kind
        self.returned: list = []

    def launch(self) -> None:
        got = self._launch()
        if self.kind == "callable":
            self.returned = self._returns(got)

    def _returns(self, got) -> list:
        wanted = [a for a in self.workload.args if a.role == "return"]
        if not wanted:
            return []
        got = list(got) if isinstance(got, (tuple, list)) else [] if got is None else [got]
        if len(got) != len(wanted):
            raise RunError(f"{self.workload.name} returned {len(got)} value(s); the spec declares "
                           f"{len(wanted)} ({', '.join(a.name for a in wanted)})")
        return got

    def outputs(self) -> list:
        out, returned = [], iter(self.returned)
        for a in self.workload.outputs:
            if a.role == "return":
                try:
                    arr = buffers.from_any(next(returned), a)
                except TypeError as exc:
                    raise RunError(f"{self.workload.name}: its {a.name} is {exc}") from None
                if tuple(arr.shape) != a.dims(self.workload.sizes):
                    raise RunError(f"{self.workload.name} returned {a.name} of shape {tuple(arr.shape)}; the spec "
                                   f"declares {a.dims(self.workload.sizes)}")
                out.append(arr.copy())
            else:
                out.append(buffers.values(self.arrays[a.name], a).copy())
        return out


def build(workload: Workload, arrays: dict, limits, run: GradedRun | None = None,
          fn: Callable | None = None) -> Subject:
    """The Subject of `workload` bound to `arrays`: its kernel compiled for this GPU (its
    registers, shared memory and occupancy recorded in `run`), or its callable (`fn`, loaded from
    the workload's target when None). Raises RunError when the kernel does not compile or cannot
    launch, UsageError for a callable that cannot be found."""
    sizes = workload.sizes
    if workload.target is None:
        from .compile import compile_kernel
        compiled = compile_kernel(workload_kernel(workload), limits)
        grid, block, smem = workload.launch()
        args = tuple(arrays[a.name] if a.buffer else buffers.scalar(a, sizes) for a in workload.args)
        if run is not None:
            threads = block[0] * block[1] * block[2]
            run.registers, run.static_smem_bytes = compiled.registers, compiled.static_smem_bytes
            run.local_bytes, run.dynamic_smem_bytes, run.grid, run.block = compiled.local_bytes, smem, grid, block
            run.compiler = compiled.compiler
            run.occupancy = calculate(limits, max(compiled.registers, 1), threads, compiled.static_smem_bytes, smem)
            if run.occupancy.reason:
                raise RunError(f"{workload.name} cannot launch: {run.occupancy.reason}")
        kernel = compiled.kernel
        return Subject(workload, arrays, lambda: kernel(grid, block, args, shared_mem=smem), "kernel")
    fn = fn or load_function(workload.target, workload.base)
    torch_mode = _uses_torch(fn)
    call_args = []
    for a in workload.args:
        if a.role == "return":
            continue
        if a.buffer:
            call_args.append(buffers.to_torch(arrays[a.name], a) if torch_mode else arrays[a.name])
        else:
            v = a.value.value(sizes)
            call_args.append(v if a.element.floating else int(v))
    return Subject(workload, arrays, lambda: fn(*call_args), "callable")


LABELS = ("", " (new inputs)", " (after timing)")


def _flag(run: Findings, flag: Flag | None) -> None:
    """Add `flag` to the run's flags unless it is None or one of its code is there already."""
    if flag is not None and all(f.code != flag.code for f in run.flags):
        run.flags.append(flag)


def check(subject: Subject, run: GradedRun, attempts: tuple[int, ...] = (0, 1), previous=None,
          wait: Callable[[int], None] | None = None):
    """Checked launches of the module, attempt 0 on the inputs `buffers.allocate` drew with the
    spec's seed and each later one on inputs drawn again (seed + attempt) into the same buffers, their findings and flags into
    `run`; returns (outputs, references) of the last, for a later attempt to compare with
    (`previous`). Stops at the first attempt that fails. `wait(launches)` waits for a launch
    (`waiting.waiter`; default: the whole device, with no limit). Raises UsageError for a reference
    that fails, LaunchTimeout for a launch still running past its time; a launch that raises
    otherwise is `run.error`."""
    import cupy
    w, arrays = subject.workload, subject.arrays
    wait = wait or waiter(None, device_wide=True)
    for attempt in attempts:
        if attempt:  # attempt 0's inputs are the ones `buffers.allocate` drew with the seed
            buffers.redraw(w, arrays, w.seed + attempt)
        copies = {a.name: arrays[a.name].copy() for a in w.inputs}
        refs = reference(w, copies)
        try:
            subject.launch()
            wait(1)
            outs = subject.outputs()
        except (RunError, UsageError, LaunchTimeout):
            raise
        except Exception as exc:
            run.error = f"{'a later ' if attempt else ''}launch raised {type(exc).__name__}: {_first_line(exc)}"
            return previous
        for a, out in zip(w.outputs, outs):
            nans = int(cupy.count_nonzero(cupy.isnan(out))) if out.dtype.kind == "f" else 0
            _flag(run, integrity.nan_or_unwritten(a.name + LABELS[attempt], nans, int(out.size)))
        for a in w.inputs:
            if a.role == "in":
                changed = int(cupy.count_nonzero(arrays[a.name] != copies[a.name]))
                _flag(run, integrity.inputs_modified(a.name, changed, int(arrays[a.name].size)))
        run.checks += _compare(w, outs, refs, LABELS[attempt])
        if previous is not None:
            firsts, first_refs = previous
            same = [a.name for a, o1, o2 in zip(w.outputs, firsts, outs)
                    if o1.shape == o2.shape and bool(cupy.array_equal(o1, o2, equal_nan=True))]
            moved = max((float(cupy.linalg.norm((r2 - r1).ravel()) / max(float(cupy.linalg.norm(r1.ravel())), 1e-300))
                         for r1, r2 in zip(first_refs, refs)), default=0.0)
            _flag(run, integrity.cached_answer(same, moved) if len(same) == len(outs) else None)
        previous = (outs, refs)
        if not all(c.passed for c in run.checks):
            return previous
    return previous


def time_it(subject: Subject, run: GradedRun, l2_bytes: int | None, sampler=None,
            budget_s: float | None = None, full_clock_share: float | None = None,
            wait: Callable[[int], None] | None = None) -> None:
    """Time `subject` in rounds (`measure.rounds`, L2 flushed ahead of each launch, each burst
    waited for by `wait`, as `check`'s) into `run.timing`, and for a callable its calls from the
    host (`run.async_ms`); lines its launches marked persisting in the L2 (a set-aside, a stream's
    access policy window) are reset ahead of each launch and flag it (`integrity.l2_persisting`).
    Raises LaunchTimeout as `check` does."""
    flush = l2_flush(l2_bytes)
    with l2_persist.Watch() as set_aside:
        def before() -> None:  # no line kept persisting in the L2, which the flush could not evict
            set_aside.clear()
            flush()
        run.timing, error = _in_rounds(subject.launch, before, budget_s, sampler, full_clock_share, wait)
        if error is not None:
            run.error = f"a timed launch raised {type(error).__name__}: {_first_line(error)}"
        elif subject.kind == "callable":
            run.async_ms, run.kernels, run.kernels_why = idle_calls(subject.launch, before)
    kept = integrity.l2_persisting(set_aside.most)
    if kept is not None:  # L2 state changed while it was timed: its time is not its code's
        run.flags.append(kept)
        run.error = run.error or f"not graded: {kept.evidence}"


CHECKED_WARMUP = 1  # untimed launches ahead of the rounds of what was checked just before (its calls warmed it)


def _in_rounds(launch: Callable[[], object], flush: Callable[[], None], budget_s: float | None, sampler=None,
               full_clock_share: float | None = None,
               wait: Callable[[int], None] | None = None,
               warmup: int = CHECKED_WARMUP) -> tuple[Timing | None, BaseException | None]:
    """(timing, None) of `launch` timed alone in rounds behind a hold, `flush` ahead of each
    launch (`measure.rounds`), each burst waited for by `wait` (default: the whole device), after
    `warmup` untimed launches (which estimate its time: one where a check has just called it, as
    every graded kernel, callable and model is), or (None, the error) when a launch raised.
    Raises LaunchTimeout (`waiting`)."""
    item = Item(launch, wait or waiter(None, device_wide=True))
    rounds = time_items([item], flush, budget_s, sampler, full_clock_share, warmup)
    return rounds.timings[0], item.error if rounds.timings[0] is None else None


def idle_calls(call: Callable[[], None], before: Callable[[], None] | None = None,
               calls: int = ASYNC_CALLS) -> tuple[tuple[float, float], CallKernels | None, str | None]:
    """`calls` calls of `call`, each after `before` and from an idle device, looked at three ways:
    the events recorded around it on the current stream, the wall clock from before it to the whole
    device idle again (cudaDeviceSynchronize: every stream), and CUPTI's activity records of the
    kernels that started between the two idle points, on any stream, launched from any thread
    (`activity.Recording`). Returns ((events, wall clock) medians in ms, the kernels or None, why
    there are none or None): CUPTI not there, held by another client (a profiler: the events and
    the wall clock are still taken), or no kernel launched. One set of calls serves the three: each
    recording costs its own calls, and CUPTI's records add host time at each kernel launch, which
    both the events and the wall clock see, and no gap between them."""
    import cupy
    device = cupy.cuda.Device()
    why = activity.available()
    events, walls = [], []
    with contextlib.ExitStack() as stack:
        recording = None
        if why is None:
            try:
                recording = stack.enter_context(activity.Recording())
            except Exception as exc:  # noqa: BLE001 - CUPTI held by another client (a profiler): said, the grade goes on
                why = f"CUPTI could not record: {type(exc).__name__}: " \
                      f"{str(exc).splitlines()[0][:160] if str(exc) else ''}"
        for _ in range(calls):
            if before is not None:
                before()
            device.synchronize()
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            with recording.window() if recording is not None else contextlib.nullcontext():  # idle to idle
                t0 = time.perf_counter()
                start.record()
                call()
                stop.record()
                device.synchronize()
                walls.append(1000 * (time.perf_counter() - t0))
            events.append(cupy.cuda.get_elapsed_time(start, stop))
    found = recording.kernels() if recording is not None else None
    if recording is not None and recording.error is not None:
        exc = recording.error
        why = f"CUPTI could not record: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    elif recording is not None and found is None:
        why = activity.NO_KERNEL
    return (statistics.median(events), statistics.median(walls)), found, why


_EMPTY = 'extern "C" __global__ void roofline_empty() {}\n'
LAUNCH_FLOOR_BUDGET_S = 0.3


def launch_floor_ms(l2_bytes: int | None, sampler=None) -> float:
    """The launch floor, ms: the median time of an empty kernel (one block of one thread) timed
    exactly as every entry is (`time_it`: in rounds, behind a hold, L2 flushed ahead of each
    launch, CUDA events around it), so that no honest launch is timed below it. (The ceilings'
    launch latency is timed without a hold, and so counts some of the host's enqueueing; the
    H200 gave 6 to 9 us that way.)"""
    import cupy
    kernel = cupy.RawKernel(_EMPTY, "roofline_empty")
    timing, error = _in_rounds(lambda: kernel((1,), (1,), ()), l2_flush(l2_bytes), LAUNCH_FLOOR_BUDGET_S, sampler,
                               warmup=WARMUP)
    if timing is None:
        raise RunError(f"an empty kernel failed while it was timed: {error}")
    return timing.median_ms


def grade_one(workload: Workload, limits, l2_bytes: int | None, sampler=None, budget_s: float | None = None,
              full_clock_share: float | None = None, fn: Callable | None = None,
              timeout_s: float | None = None) -> GradedRun:
    """Build, check twice, time (when both checks pass) and check once more one workload's kernel
    or callable on the current GPU (a kernel or callable that stops computing once it has been
    checked is caught by the last check). A compile failure, a launch that raises or a failed
    check is the run's `error`; a reference that fails raises UsageError. With `timeout_s`, a
    launch (or a callable's call's GPU work on the current stream) still running after that many
    seconds raises `waiting.LaunchTimeout`, its `partial` this run with the timeout as its error:
    the GPU is still busy, so the process can do nothing more there (`graded_child` ends it)."""
    run = GradedRun(workload=workload)
    arrays = buffers.allocate(workload, workload.seed)
    wait = waiter(timeout_s, device_wide=True)
    try:
        subject = build(workload, arrays, limits, run, fn)
        previous = check(subject, run, wait=wait)
        if run.error is None and run.verified:
            buffers.redraw(workload, arrays, workload.seed)
            time_it(subject, run, l2_bytes, sampler, budget_s, full_clock_share, wait)
            if run.error is None:
                check(subject, run, (2,), previous, wait)
    except RunError as exc:
        run.error = str(exc)
        return run
    except LaunchTimeout as exc:
        run.error = f"timeout: {exc}"
        exc.partial = run
        raise
    if run.error is None and not run.verified:
        bad = next(c for c in run.checks if not c.passed)
        err = f"relative error {bad.rel_error:.3g} > {bad.tolerance:g}" if bad.rel_error is not None else bad.reason
        run.error = f"wrong answer: {bad.name}: {err}"  # after timing: the time is kept, as evidence, ungraded
    return run
