"""Compile, verify and time kernels on the GPU, with cuBLAS as the reference: the one generic
launcher of every kernel.

Method (the same for every kernel):
  1. inputs A (M x K) and B (K x N) drawn from a standard normal (never zeros), float32; in a
     tensor-core precision B is N x K and both are rounded to the format (`reference`);
  2. the reference C_ref = A @ B through cuBLAS (`cupy.matmul`, full FP32: CUPY_TF32 must be off;
     cublasGemmEx in the problem's precision for the tensor-core ones: `reference.gemm`);
  3. each kernel compiled (`compile.compile_kernel`: NVRTC, or nvcc for a user's file where a CUDA
     toolkit is found, `toolchain.choose`), a dispatching one (tile_by_shape,
     split_k) at the tile it picks for the problem and GPU (`KernelSpec.for_problem`);
  4. C filled with NaN, one launch with alpha = 1, beta = 0, then `model.verify.verify` at the
     precision's tolerance (`model.verify.tolerance_for`);
  5. only a verified kernel is timed, with cuBLAS, in rounds (`rounds.time_in_rounds`: CUDA
     events, warm-up, the same bursts of launches for every kernel and the reference in turn,
     >= 20 samples each, more until each median is known to 1 % or the budget is spent; NVML's
     clock, clock event reasons and power recorded with every sample), by default with the L2
     flushed before each launch, outside the timed interval (`l2='cold'`; 'warm' leaves it as
     the previous launch left it); with `energy`, each one's joules per launch
     (`energy.measure_rounds`, loops in rounds);
  6. registers, static shared memory and local bytes read from the compiled kernel, and the
     calculated occupancy beside the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace

import numpy as np

from ..errors import RunError, UsageError
from ..ladder.families import KernelSpec
from ..ladder.user import UserKernel
from ..model.device import DeviceSpec
from ..model.energy import Energy
from ..model.occupancy import Occupancy, calculate
from ..model.problem import Problem
from ..model.timing import check_l2
from ..model.traffic import ModelFigures
from ..model.verify import Verification, tolerance_for, verify
from .compile import compile_kernel
from . import energy as energy_meter
from .nvml import Sampler, from_nvml, require_gpu
from .nvrtc_compile import launch_check
from .toolchain import resources as compiled_resources
from . import reference as cublas_reference
from ..progress import Progress
from .pipeline import time_items
from .rounds import Item, Rounds
from .timing import Timing, l2_flush, time_gpu
from .waiting import LaunchTimeout, waiter

STEPS_PER_KERNEL = 2  # compile, verify (then all are timed together, in rounds)
FREE_MEMORY_SHARE = 0.9
# What stopped a kernel's run, the most telling first: a CUDA fault (an illegal address, a trap),
# a launch stopped for its time, a child process that died, an error before any launch (compile,
# the source), a wrong answer.
FAILURES = ("fault", "timeout", "died", "error", "verification")


@dataclass(frozen=True)
class Compiled:
    """What compiling told: 32-bit registers per thread, static shared memory per block and local
    memory per thread in bytes, the dynamic shared memory per block it launches with, the
    calculated occupancy and the driver's blocks per SM; which compiler built it ('nvcc 13.0.88',
    'NVRTC 12.9')."""

    registers: int
    static_smem_bytes: int
    local_bytes: int
    dynamic_smem_bytes: int
    occupancy: Occupancy
    driver_blocks_per_sm: int
    compiler: str | None = None


@dataclass(frozen=True)
class KernelRun:
    """What one kernel did, in the order it happened: `compiled` is None when it did not compile,
    `verification` None when it was not checked, `timing` None when it was not timed; `error`
    says why the run stopped short (None when it went through). `sm_clock_mhz` is NVML's SM
    clock of its first and last timed sample. `figures` is None for a user kernel without a
    model; `ragged` is a user kernel's check at a shape that is no multiple of its tiles.
    `failure` is the kind of `error` (`FAILURES`), None when it went through. `energy` is what a
    loop of its launches took (`run`'s `energy`), None when not measured."""

    spec: KernelSpec | UserKernel
    figures: ModelFigures | None
    compiled: Compiled | None = None
    verification: Verification | None = None
    timing: Timing | None = None
    sm_clock_mhz: tuple[int | None, int | None] = (None, None)
    error: str | None = None
    ragged: "RaggedCheck | None" = None
    failure: str | None = None
    energy: Energy | None = None

    @property
    def ok(self) -> bool:
        """Compiled, verified and timed."""
        return self.error is None and self.timing is not None

    @property
    def correct(self) -> bool:
        """Compiled and verified (timed or not), at the ragged shape too where it was checked."""
        ragged_ok = self.ragged is None or self.ragged.verification.passed
        return self.verification is not None and self.verification.passed and ragged_ok


@dataclass(frozen=True)
class RaggedCheck:
    """A kernel's verification at a problem whose sizes are no multiple of any tile."""

    problem: Problem
    verification: Verification


@dataclass(frozen=True)
class RunOutput:
    """A whole run: the device, the problem, the cuBLAS reference timing and each kernel; how the
    rounds went (`rounds.Rounds`, None when nothing was timed in rounds) and the reference's
    energy (None unless measured). `notes` says what NVML could not say on this GPU."""

    device: DeviceSpec
    problem: Problem
    reference: Timing
    reference_clock_mhz: tuple[int | None, int | None]
    kernels: list[KernelRun]
    l2: str = "cold"  # the L2 at each timed launch: 'cold' (flushed) or 'warm'
    rounds: Rounds | None = None
    reference_energy: Energy | None = None
    notes: tuple[str, ...] = ()


def check_fits(problem: Problem, free_bytes: int) -> None:
    """Raise UsageError, before anything is allocated, when the problem's buffers
    (`Problem.device_bytes`) would not fit in 90 % of the GPU's free memory."""
    need = problem.device_bytes
    if need > FREE_MEMORY_SHARE * free_bytes:
        raise UsageError(f"{problem.text()} needs {need / 1e9:.1f} GB of GPU memory but only "
                         f"{free_bytes / 1e9:.1f} GB is free; choose a smaller size")


def check_tf32_off() -> None:
    """Raise UsageError when CUPY_TF32 would let cuBLAS use TF32 for the reference."""
    value = os.environ.get("CUPY_TF32", "0")
    if value not in ("", "0"):
        raise UsageError(f"CUPY_TF32={value} would let cuBLAS use TF32; unset it so the reference is full FP32")


def random_inputs(problem: Problem):
    """A (M x K) and B (K x N; N x K in a tensor-core precision) on the GPU, from a standard
    normal with the fixed `reference.SEED`, in the problem's precision (`reference.random_inputs`)."""
    return cublas_reference.random_inputs(problem.m, problem.n, problem.k, problem.dtype)


def kernel_args(problem: Problem, a, b, c, spec: KernelSpec | UserKernel | None = None) -> tuple:
    """The argument tuple every ladder kernel takes: M, N, K, alpha = 1, A, B, beta = 0, C; then,
    for a `spec` that takes a workspace (split_k), zeroed float and unsigned buffers of the sizes
    `KernelSpec.workspace` gives, allocated here; for one that loads through TMA (the wgmma
    rungs), the tensor maps of A and B (`tma.device_maps`). Raises RunError when the driver
    refuses a tensor map."""
    args = (np.int32(problem.m), np.int32(problem.n), np.int32(problem.k), np.float32(1.0), a, b,
            np.float32(0.0), c)
    boxes = spec.tma_boxes() if spec is not None else None
    if boxes is not None:
        from .tma import device_maps

        return args + (device_maps(a, b, problem.dtype, *boxes),)
    workspace = spec.workspace(problem) if isinstance(spec, KernelSpec) else None
    if workspace is None:
        return args
    import cupy

    floats, counters = workspace
    return args + (cupy.zeros(floats, dtype=cupy.float32), cupy.zeros(counters, dtype=cupy.uint32))


def preflight(problem: Problem) -> DeviceSpec:
    """Everything that can refuse a run before any GPU memory is allocated: the problem's sizes,
    CUPY_TF32, the GPU and driver, and whether the buffers fit in free GPU memory.
    Returns the device. Raises UsageError or RunError with a one-line reason."""
    problem.validate()
    if problem.dtype == "fp32":
        check_tf32_off()
    require_gpu()
    import cupy

    device = from_nvml()
    free_bytes, _ = cupy.cuda.runtime.memGetInfo()
    check_fits(problem, free_bytes)
    return device


def _compile(spec: KernelSpec | UserKernel, device: DeviceSpec):
    import cupy

    if isinstance(spec, UserKernel):  # the compiler's own lines, naming the user's file; launchable?
        res = compiled_resources(spec, device.arch)
        why = launch_check(res, device.arch_limits, spec.threads_per_block, spec.dynamic_smem_bytes)[1]
        if why:
            raise RunError(f"{spec.name} cannot launch on {device.arch}: {why}")
    ck = compile_kernel(spec, device.arch_limits)
    threads = spec.threads_per_block
    occ = calculate(device.arch_limits, max(ck.registers, 1), threads, ck.static_smem_bytes, ck.dynamic_smem_bytes)
    driver = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(ck.kernel.kernel.ptr, threads,
                                                                        ck.dynamic_smem_bytes)
    return ck, Compiled(ck.registers, ck.static_smem_bytes, ck.local_bytes, ck.dynamic_smem_bytes, occ, driver,
                        ck.compiler)


def run(specs: list[KernelSpec | UserKernel], problem: Problem, device: DeviceSpec | None = None,
        progress: Progress | None = None, timed: bool = True, timeout_s: float | None = None,
        l2: str = "cold", budget_s: float | None = None, energy: bool = False,
        full_clock_share: float | None = None) -> RunOutput:
    """Run the reference and each kernel of `specs` on the current GPU for `problem`.

    `device` is what `preflight` returned (it is called here when None). `progress` hears one
    step for the reference, up to two per kernel (compile, verify) and one for the timing. Every
    verified kernel is timed with the reference in rounds (`rounds.time_in_rounds`, within
    `budget_s` seconds: default half a second per kernel; samples below `full_clock_share` of
    the run's top clock marked throttled); with `energy`, each one's energy is then measured
    (`energy.measure_rounds`). With `timed=False` kernels are only compiled and verified (the reference
    gets a single timed launch). With `timeout_s`, a kernel's launch that takes longer raises
    `waiting.LaunchTimeout`, its `partial` the kernel's run so far: the work is still on the GPU,
    so nothing more can run in this process (`measure.isolated` ends it). `l2` is 'cold' (the L2 flushed before every timed
    launch, outside its events: `timing.l2_flush`) or 'warm'. Raises what `preflight` raises, and
    UsageError for another `l2`. A kernel that fails to compile, verify or launch does not raise:
    its `KernelRun` says why.
    """
    check_l2(l2)
    progress = progress or Progress()
    if device is None:
        device = preflight(problem)
    import cupy

    progress.expect(2 + STEPS_PER_KERNEL * len(specs) + (1 if energy and timed else 0))
    progress.step(f"{problem.text()}: inputs and cuBLAS reference")
    a, b = random_inputs(problem)
    c_ref = cupy.empty((problem.m, problem.n), dtype=cupy.float32)
    c = cupy.empty_like(c_ref)
    flush = l2_flush(device.l2_bytes) if l2 == "cold" and timed else None  # nothing to flush for untimed runs
    dtype = problem.dtype
    cublas_reference.gemm(a, b, c_ref, dtype)

    checked = []
    for spec in specs:
        spec = spec.for_problem(problem, device) if isinstance(spec, KernelSpec) else spec
        checked.append(_check_one(spec, problem, device, (a, b, c, c_ref), progress, waiter(timeout_s)))
    progress.step(f"{problem.text()}: timing {sum(1 for x in checked if x[1])} kernel(s) and cuBLAS in rounds"
                  if timed else f"{problem.text()}: one launch of cuBLAS")
    if not timed:
        reference = time_gpu(lambda: cublas_reference.gemm(a, b, c_ref, dtype), min_repeat=1)
        return RunOutput(device=device, problem=problem, reference=reference, reference_clock_mhz=(None, None),
                         kernels=[r for r, _ in checked], l2=l2)
    sampler = Sampler()
    try:
        ref_item = Item(lambda: cublas_reference.gemm(a, b, c_ref, dtype), waiter(None))
        items = [ref_item] + [launch for _, launch in checked if launch is not None]
        try:
            rounds = time_items(items, flush, budget_s, sampler, full_clock_share)
        except LaunchTimeout as exc:  # a kernel's timed launch: the GPU is still busy with it
            stuck = next(run_ for run_, launch in checked if launch is not None and launch.error is exc)
            exc.partial = replace(stuck, error=f"{stuck.spec.name}: timeout: {exc}", failure="timeout")
            raise
        if rounds.timings[0] is None:
            raise RunError(f"cuBLAS failed while it was timed: {ref_item.error}")
        runs, j = [], 1
        for run_, launch in checked:
            if launch is None:
                runs.append(run_)
                continue
            runs.append(_timed(run_, items[j], rounds.timings[j]))
            j += 1
        ref_energy = None
        if energy:
            progress.step(f"{problem.text()}: energy of each kernel and cuBLAS "
                          f"({energy_meter.LOOPS} loops of {energy_meter.MIN_SECONDS:g} s each, in rounds)")
            runs, ref_energy = _with_energy(runs, [launch for _, launch in checked], ref_item,
                                            rounds.timings[0].median_ms, sampler, flush)
        notes = tuple(_nvml_notes(sampler.unsupported, energy))
    finally:
        sampler.close()
    reference = rounds.timings[0]
    return RunOutput(device=device, problem=problem, reference=reference,
                     reference_clock_mhz=_ends(reference), kernels=runs, l2=l2, rounds=rounds,
                     reference_energy=ref_energy, notes=notes)


def _ends(timing: Timing | None) -> tuple[int | None, int | None]:
    """The SM clock of a timing's first and last sample (what `sm_clock_mhz_before_after` records)."""
    clocks = timing.sm_clock_mhz if timing is not None and timing.sm_clock_mhz else None
    return (clocks[0], clocks[-1]) if clocks else (None, None)


def _nvml_notes(unsupported: list[str], energy: bool) -> list[str]:
    wanted = [u for u in unsupported if energy or u != "energy"]
    if not wanted:
        return []
    return [f"NVML gives no {', '.join(wanted)} on this GPU: samples are timed as before, without "
            + ("those conditions" if "NVML" not in wanted else "their clock or throttling")]


def _launch_failure(name: str, exc: BaseException) -> tuple[str, str]:
    """A launch's exception as a kernel's (error, failure kind): a timeout, a CUDA fault, or else."""
    import cupy

    if isinstance(exc, LaunchTimeout):
        return f"{name}: timeout: {exc}", "timeout"
    if isinstance(exc, (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError)):
        return f"{name}: CUDA error: {exc}", "fault"
    return f"{name}: {type(exc).__name__}: {exc}", "error"


def _timed(run_: KernelRun, item: Item, timing: Timing | None) -> KernelRun:
    """A verified kernel's run with its timing from the rounds, or the failure that stopped it there."""
    if item.error is not None:
        error, failure = _launch_failure(run_.spec.name, item.error)
        return replace(run_, error=error, failure=failure)
    return replace(run_, timing=timing, sm_clock_mhz=_ends(timing))


def _with_energy(runs: list[KernelRun], items: list[Item | None], ref_item: Item, ref_ms: float, sampler: Sampler,
                 flush) -> tuple[list[KernelRun], Energy | None]:
    """The timed kernels' runs with their energy, and cuBLAS's (`energy.measure_rounds`: loops in
    rounds across them); a kernel whose loop faults keeps its timing without energy."""
    where = [i for i, (r, item) in enumerate(zip(runs, items)) if r.timing is not None and item is not None]
    measured = [ref_item] + [items[i] for i in where]
    times_ms = [ref_ms] + [runs[i].timing.median_ms for i in where]
    got = energy_meter.measure_rounds(measured, times_ms, sampler, flush)
    if got is None:
        return runs, None
    energies, _ = got
    runs = list(runs)
    for i, e in zip(where, energies[1:]):
        if e is not None:
            runs[i] = replace(runs[i], energy=e)
    return runs, energies[0]


def _not_resident(spec: KernelSpec | UserKernel, grid: tuple[int, int, int], blocks_per_sm: int,
                  sm_count: int) -> str | None:
    """Why a kernel whose blocks wait for each other (`KernelSpec.cooperative`) cannot run on this GPU:
    its grid holds more blocks than the GPU keeps resident at once (the driver's blocks per SM times
    the SMs); None where it fits or does not wait."""
    if not (isinstance(spec, KernelSpec) and spec.cooperative):
        return None
    blocks, resident = grid[0] * grid[1] * grid[2], blocks_per_sm * sm_count
    if blocks <= resident:
        return None
    return (f"{spec.name_expression}: its {blocks:,} blocks add their slices together, so all must be resident at "
            f"once, and this GPU holds {resident:,} ({blocks_per_sm} per SM on {sm_count} SMs); give REDUCERS = 1 "
            "(the last block of each tile adds them)")


def the_last_block_adds(spec: KernelSpec) -> KernelSpec:
    """A split_k the dispatch chose with its tile's blocks adding the slices together, as the last block
    of each tile adding them (REDUCERS = 1): what runs where the GPU holds fewer of its blocks at once
    than the dispatch counted (its blocks per SM are fitted figures capped by the table's shared
    memory: the driver's count, which this GPU's own limits give, may still be lower)."""
    return spec.family.spec({**spec.params, "REDUCERS": 1}, spec.tile_source, spec.dtype)


def _check_one(spec: KernelSpec | UserKernel, problem: Problem, device: DeviceSpec, buffers, progress: Progress,
               wait) -> tuple[KernelRun, Item | None]:
    """Compile and verify one kernel: its run so far, and its launch to time (None when it stopped short)."""
    import cupy

    a, b, c, c_ref = buffers
    figures = spec.figures(problem)
    progress.step(f"{spec.name}: compiling")
    try:
        kernel, compiled = _compile(spec, device)
        grid = spec.grid(problem)
        why = _not_resident(spec, grid, compiled.driver_blocks_per_sm, device.sm_count)
        if why and spec.tile_source == "shape":  # the dispatch counted more blocks per SM than this GPU holds
            spec, why = the_last_block_adds(spec), None
            kernel, compiled = _compile(spec, device)
    except RunError as exc:
        return KernelRun(spec, figures, error=str(exc), failure="error"), None
    if why:
        return KernelRun(spec, figures, compiled, error=why, failure="error"), None
    args = kernel_args(problem, a, b, c, spec)
    progress.step(f"{spec.name}: verifying against cuBLAS")
    try:
        c.fill(0.0 if getattr(spec, "reads_c", False) else math.nan)  # reads-c: unwritten reads 0, still wrong
        kernel.launch(grid, args)
        wait(1)
        cupy.cuda.runtime.deviceSynchronize()  # the stream is done: a fault it left is raised here, not read as NaN
        check = verify(c, c_ref, cupy, tolerance_for(problem.k, problem.dtype))
        if not check.passed:
            why = check.reason
            if check.nan_or_unwritten_elements == c.size and not getattr(spec, "reads_c", False):
                why += (" (or C was read: the check runs with beta = 0 on a C that holds NaN, and 0 x NaN is NaN; "
                        "read C only where beta != 0, or declare '// roofline reads-c: yes': checked on a zeroed C)")
            return KernelRun(spec, figures, compiled, check,
                             error=f"{spec.name}: failed verification: {why}", failure="verification"), None
        return KernelRun(spec, figures, compiled, check), Item(lambda: kernel.launch(grid, args), wait)
    except LaunchTimeout as exc:  # the kernel still runs: nothing more on the GPU in this process
        error, failure = _launch_failure(spec.name, exc)
        exc.partial = KernelRun(spec, figures, compiled, error=error, failure=failure)
        raise
    except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as exc:
        error, failure = _launch_failure(spec.name, exc)
        return KernelRun(spec, figures, compiled, error=error, failure=failure), None
