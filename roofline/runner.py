"""Compile, verify and time the SGEMM ladder on the GPU, with cuBLAS as the reference.

Method (the same for every kernel):
  1. inputs A (M x K) and B (K x N) drawn from a standard normal (never zeros), float32;
  2. the reference C_ref = A @ B through cuBLAS (`cupy.matmul`, full FP32: CUPY_TF32 must be off);
  3. each kernel compiled through NVRTC (CuPy `RawModule` with a template name expression);
  4. C filled with NaN, one launch with alpha = 1, beta = 0, then the check: no NaN left (every
     element written, nothing non-finite) and relative Frobenius error ||C - C_ref|| / ||C_ref||
     at most `TOLERANCE`;
  5. only a verified kernel is timed (`timing.time_gpu`: CUDA events, warm-up, >= 20 launches);
  6. registers, static shared memory and local (spill) bytes read from the compiled kernel, and
     the calculated occupancy cross-checked against the driver's
     cuOccupancyMaxActiveBlocksPerMultiprocessor.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable

from . import occupancy as occ
from .device import DeviceSpec, current_sm_clock_mhz, from_nvml, require_gpu
from .errors import RunError, UsageError
from .model import Floors, ModelFigures, floors
from .registry import KernelSpec, source
from .timing import Timing, time_gpu

TOLERANCE = 1e-4          # relative Frobenius error a kernel may have against cuBLAS
INT32_ELEMENTS = 2**31 - 1  # kernels index with 32-bit ints: each matrix must stay below this
SEED = 2026


@dataclass(frozen=True)
class Problem:
    """An SGEMM problem: C (M x N) = A (M x K) @ B (K x N), float32, row-major."""

    m: int
    n: int
    k: int

    @property
    def flops(self) -> int:
        """2*M*N*K floating-point operations."""
        return 2 * self.m * self.n * self.k

    @property
    def device_bytes(self) -> int:
        """GPU memory the run allocates: A, B, C, C_ref and a difference buffer, 4 bytes each."""
        m, n, k = self.m, self.n, self.k
        return 4 * (m * k + k * n + 3 * m * n)

    def validate(self) -> None:
        """Raise UsageError unless M, N, K >= 1 and every matrix has fewer than 2**31 elements."""
        for name, v in (("M", self.m), ("N", self.n), ("K", self.k)):
            if v < 1:
                raise UsageError(f"{name} must be a positive integer, got {v}")
        for name, rows, cols in (("A", self.m, self.k), ("B", self.k, self.n), ("C", self.m, self.n)):
            if rows * cols > INT32_ELEMENTS:
                raise UsageError(f"{name} would have {rows * cols:,} elements; the kernels index with "
                                 f"32-bit integers, so each matrix must have at most {INT32_ELEMENTS:,}")

    def text(self) -> str:
        """'4096x4096x4096' (M x N x K)."""
        return f"{self.m}x{self.n}x{self.k}"


@dataclass(frozen=True)
class KernelResult:
    """What one ladder kernel did. Times in ms; `timing` is None when it was not timed
    (compile failure or failed verification), with the reason in `error`."""

    spec: KernelSpec
    model: ModelFigures
    floors: Floors
    verified: bool
    rel_error: float | None
    unwritten: int | None
    registers: int | None
    static_smem_bytes: int | None
    local_bytes: int | None
    occupancy: occ.Occupancy | None
    driver_blocks_per_sm: int | None
    timing: Timing | None
    sm_clock_mhz: tuple[int | None, int | None]
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Compiled, verified and timed."""
        return self.error is None and self.verified and self.timing is not None

    @property
    def correct(self) -> bool:
        """Compiled and verified (timed or not)."""
        return self.error is None and self.verified


@dataclass(frozen=True)
class RunOutput:
    """A whole run: the device, the problem, the cuBLAS reference timing and each kernel."""

    device: DeviceSpec
    problem: Problem
    reference: Timing
    reference_clock_mhz: tuple[int | None, int | None]
    kernels: list[KernelResult]


def check_fits(problem: Problem, free_bytes: int) -> None:
    """Raise UsageError, before anything is allocated, when the problem's buffers
    (`Problem.device_bytes`) would not fit in 90 % of the GPU's free memory."""
    need = problem.device_bytes
    if need > 0.9 * free_bytes:
        raise UsageError(f"{problem.text()} needs {need / 1e9:.1f} GB of GPU memory but only "
                         f"{free_bytes / 1e9:.1f} GB is free; choose a smaller size")


def _check_tf32_off() -> None:
    value = os.environ.get("CUPY_TF32", "0")
    if value not in ("", "0"):
        raise UsageError(f"CUPY_TF32={value} would let cuBLAS use TF32; unset it so the reference is full FP32")


def compile_kernel(spec: KernelSpec):
    """Compile `spec` through NVRTC for the current GPU and return the CuPy RawKernel, opted in
    to its dynamic shared memory when that exceeds 48 KB. Raises RunError with the first line of
    the compiler log on failure."""
    import cupy

    try:
        module = cupy.RawModule(code=source(spec), options=("-std=c++17",),
                                name_expressions=[spec.name_expression])
        kernel = module.get_function(spec.name_expression)
        kernel.num_regs  # forces the module load, so load errors surface here
        if spec.dynamic_smem_bytes > 48 * 1024:
            kernel.max_dynamic_shared_size_bytes = spec.dynamic_smem_bytes
    except Exception as exc:  # CompileException, CUDADriverError: both carry the log
        lines = str(exc).splitlines() or [type(exc).__name__]
        first = next((ln for ln in lines if "error" in ln.lower()), lines[0])
        raise RunError(f"{spec.name}: compile failed: {first.strip()}") from None
    return kernel


def relative_error(c, c_ref, scratch) -> tuple[float, int]:
    """(||C - C_ref||_F / ||C_ref||_F, number of NaN elements of C), using `scratch` (same shape)
    for the difference. NaN anywhere makes the error NaN, which never passes a `<=` test."""
    import cupy

    unwritten = int(cupy.count_nonzero(cupy.isnan(c)))
    cupy.subtract(c, c_ref, out=scratch)
    ref_norm = float(cupy.linalg.norm(c_ref))
    err = float(cupy.linalg.norm(scratch)) / ref_norm if ref_norm > 0 else float(cupy.linalg.norm(scratch))
    return err, unwritten


def random_inputs(problem: Problem):
    """A (M x K) and B (K x N), float32 on the GPU, from a standard normal with the fixed SEED."""
    import cupy

    rng = cupy.random.default_rng(SEED)
    return (rng.standard_normal((problem.m, problem.k), dtype=cupy.float32),
            rng.standard_normal((problem.k, problem.n), dtype=cupy.float32))


def kernel_args(problem: Problem, a, b, c) -> tuple:
    """The argument tuple every ladder kernel takes: M, N, K, alpha = 1, A, B, beta = 0, C."""
    import numpy as np

    return (np.int32(problem.m), np.int32(problem.n), np.int32(problem.k), np.float32(1.0), a, b,
            np.float32(0.0), c)


def preflight(problem: Problem) -> DeviceSpec:
    """Everything that can refuse a run before any GPU memory is allocated: the problem's sizes,
    CUPY_TF32, the GPU and driver, and whether the buffers fit in free GPU memory.
    Returns the device. Raises UsageError or RunError with a one-line reason."""
    problem.validate()
    _check_tf32_off()
    require_gpu()
    import cupy

    device = from_nvml()
    free_bytes, _ = cupy.cuda.runtime.memGetInfo()
    check_fits(problem, free_bytes)
    return device


def run(specs: list[KernelSpec], problem: Problem, device: DeviceSpec | None = None,
        progress: Callable[[str], None] = lambda _: None, timed: bool = True) -> RunOutput:
    """Run the reference and each kernel of `specs` on GPU 0 for `problem`.

    `device` is what `preflight` returned (it is called here when None). `progress(text)` is called
    before each step (for a progress bar). With `timed=False` kernels are only compiled and
    verified (their `timing` stays None; the reference gets a short timing of its own). Raises what
    `preflight` raises. A kernel that fails to compile or verify does not raise: its
    `KernelResult` carries the error.
    """
    if device is None:
        device = preflight(problem)
    import cupy

    m, n, k = problem.m, problem.n, problem.k

    progress("inputs and cuBLAS reference")
    a, b = random_inputs(problem)
    c_ref = cupy.empty((m, n), dtype=cupy.float32)
    c = cupy.empty_like(c_ref)
    scratch = cupy.empty_like(c_ref)
    clock_before = current_sm_clock_mhz()
    reference = time_gpu(lambda: cupy.matmul(a, b, out=c_ref), min_repeat=20 if timed else 1)
    reference_clock = (clock_before, current_sm_clock_mhz())
    cupy.matmul(a, b, out=c_ref)

    results = []
    for spec in specs:
        fig = spec.model.figures(m, n, k)
        fl = floors(fig, device.peak_fp32_gflops, device.peak_dram_gbps)
        base = dict(spec=spec, model=fig, floors=fl)
        progress(f"{spec.name}: compiling")
        try:
            kernel = compile_kernel(spec)
        except RunError as exc:
            results.append(KernelResult(**base, verified=False, rel_error=None, unwritten=None,
                                        registers=None, static_smem_bytes=None, local_bytes=None,
                                        occupancy=None, driver_blocks_per_sm=None, timing=None,
                                        sm_clock_mhz=(None, None), error=str(exc)))
            continue
        threads = spec.threads_per_block
        dyn = spec.dynamic_smem_bytes
        calc = occ.calculate(device.limits, max(kernel.num_regs, 1), threads, kernel.shared_size_bytes, dyn)
        driver_blocks = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, dyn)
        grid = spec.grid(m, n)
        args = kernel_args(problem, a, b, c)

        def launch(kernel=kernel, grid=grid, spec=spec, args=args):
            kernel(grid, spec.block, args, shared_mem=spec.dynamic_smem_bytes)

        progress(f"{spec.name}: verifying against cuBLAS")
        error = None
        timing = None
        clocks = (None, None)
        try:
            c.fill(math.nan)
            launch()
            cupy.cuda.get_current_stream().synchronize()
            rel_err, unwritten = relative_error(c, c_ref, scratch)
            verified = unwritten == 0 and rel_err <= TOLERANCE
            if not verified:
                error = (f"{spec.name}: failed verification: relative error {rel_err:.3g} "
                         f"(limit {TOLERANCE:g}), {unwritten:,} elements NaN or unwritten")
            elif timed:
                progress(f"{spec.name}: timing")
                before = current_sm_clock_mhz()
                timing = time_gpu(launch)
                clocks = (before, current_sm_clock_mhz())
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as exc:
            verified, rel_err, unwritten = False, None, None
            error = f"{spec.name}: CUDA error: {exc}"
        results.append(KernelResult(**base, verified=verified, rel_error=rel_err, unwritten=unwritten,
                                    registers=kernel.num_regs, static_smem_bytes=kernel.shared_size_bytes,
                                    local_bytes=kernel.local_size_bytes, occupancy=calc,
                                    driver_blocks_per_sm=driver_blocks, timing=timing,
                                    sm_clock_mhz=clocks, error=error))
    return RunOutput(device=device, problem=problem, reference=reference,
                     reference_clock_mhz=reference_clock, kernels=results)
