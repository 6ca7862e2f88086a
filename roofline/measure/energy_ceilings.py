"""Energy ceilings: the board power at several loads of each resource, fitted to energy per FLOP and
per byte (`device --measure`, cached beside the other ceilings).

For each resource the same benchmark as its ceiling (`measure.ceilings`) runs at `LOADS` loads
(fewer blocks than SMs, so fewer SMs busy, up to full waves; for the tensor cores, cuBLAS at
`TENSOR_SHAPES`), each in a loop of at least a second, its average power read between the
updates of NVML's total energy counter seen inside the loop (`measure.energy.run_loop`). The
average power P and the rate r (FLOP/s or bytes/s) of each load give a least-squares line
P = static + e x r (numpy.polyfit, its covariance for the standard errors): e is the energy one
FLOP or byte takes, in pJ, and `static` what the board draws while that resource is busy at no
rate. The idle power is read the same way over IDLE_SECONDS with
nothing running. DRAM bytes are read plus written, the copy's; the L2 stream's bytes are reads
that hit L2 (their share of the SMs' power included: a byte's energy is what moving it costs the
board).
"""

from __future__ import annotations

import datetime as _dt
import time

import numpy as np

from dataclasses import asdict

from ..model.device import DeviceSpec
from ..model.energy import EnergyCeilings, EnergyFit
from . import ceilings, energy
from .nvml import Sampler

IDLE_SECONDS = 1.0
MIN_SECONDS = 1.0
LOADS = (0.25, 0.5, 1.0, 8.0)  # blocks per SM (under 1: that share of the SMs, one block each)
# cuBLAS FP16 GEMMs (M = N, K) from few output tiles to many: the tensor cores' rate from a few SMs'
# worth to all of them, so the fit's line is pinned at both ends
TENSOR_SHAPES = ((256, 65536), (512, 32768), (1024, 16384), (2048, 8192), (4096, 4096), (8192, 8192))

_COPY_SOURCE = r"""
extern "C" __global__ void copy4(const float4* __restrict__ src, float4* __restrict__ dst, long long n4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) dst[i] = src[i];
}
"""


def _loop(launch, work: float, sampler: Sampler) -> tuple[float, float] | None:
    """(average W, rate per second) of `launch` (doing `work` FLOPs or bytes) repeated for at least
    MIN_SECONDS, the power read between the energy counter's own updates (`energy.run_loop`);
    None where NVML reports no energy."""
    import cupy

    stream = cupy.cuda.get_current_stream()
    launch()
    stream.synchronize()
    t = time.monotonic()
    launch()
    stream.synchronize()
    once_ms = max(1000 * (time.monotonic() - t), 1e-3)
    n = energy.launches_for(once_ms, MIN_SECONDS)
    loop = energy.run_loop(launch, n, lambda _: stream.synchronize(), sampler, chunk=energy.chunk_for(once_ms))
    return None if loop is None else (loop.watts, n * work / loop.seconds)


def fit(kind: str, unit: str, points: list[tuple[float, float]]) -> EnergyFit | None:
    """The line P = static + e x rate through `points` ((W, rate per second) pairs) by least
    squares, e in pJ per `unit`; None for fewer than 3 points (no error without a spare one)."""
    if len(points) < 3:
        return None
    watts = np.array([p for p, _ in points])
    rates = np.array([r for _, r in points])
    (slope, intercept), cov = np.polyfit(rates, watts, 1, cov=True)
    errors = np.sqrt(np.diag(cov))
    return EnergyFit(kind, unit, float(slope * 1e12), float(errors[0] * 1e12), float(intercept), float(errors[1]),
                     len(points))


def idle_watts(sampler: Sampler) -> float | None:
    """The board's average power over IDLE_SECONDS with nothing running; None without an energy counter."""
    until = time.monotonic() + IDLE_SECONDS
    loop = energy.run_loop(lambda: None, 1, lambda _: None, sampler,
                           mark=lambda: (lambda: time.monotonic() >= until))  # nothing enqueued: a pause
    return None if loop is None else loop.watts


def measure(sm_count: int) -> EnergyCeilings | None:
    """The energy ceilings of the current GPU with `sm_count` SMs (module docstring); None where
    NVML reports no energy counter. Needs CuPy and a GPU."""
    import cupy

    sampler = Sampler()
    try:
        idle = idle_watts(sampler)
        if idle is None:
            return None
        fits = []

        def blocks(load: float) -> int:
            return max(1, int(round(load * sm_count)))

        fma = cupy.RawKernel(ceilings._FMA_SOURCE % {"chains": ceilings.CHAINS}, "fma_chains")
        out = cupy.empty(blocks(max(LOADS)) * ceilings.FMA_THREADS, dtype=cupy.float32)
        args = (out, np.float32(0.999), np.float32(1e-3), np.int32(ceilings.FMA_ITERS))
        per_block = 2 * ceilings.CHAINS * ceilings.FMA_ITERS * ceilings.FMA_THREADS
        points = [_loop(lambda b=blocks(x): fma((b,), (ceilings.FMA_THREADS,), args), per_block * blocks(x), sampler)
                  for x in LOADS]
        fits.append(fit("fp32", "FLOP", [p for p in points if p]))

        n4 = 2**30 // 16  # 1 GiB per buffer, far past any L2
        src = cupy.ones(n4 * 4, dtype=cupy.float32)
        dst = cupy.empty_like(src)
        copy = cupy.RawKernel(_COPY_SOURCE, "copy4")
        points = [_loop(lambda b=blocks(x): copy((b,), (256,), (src, dst, np.int64(n4))), 2 * 16 * n4, sampler)
                  for x in LOADS]
        fits.append(fit("dram", "byte", [p for p in points if p]))
        del src, dst

        l2_bytes = cupy.cuda.Device().attributes["L2CacheSize"]
        nbytes = max(2**20, min(16 * 2**20, l2_bytes // 4)) // 16 * 16
        buf = cupy.ones(nbytes // 4, dtype=cupy.float32)
        sink = cupy.empty(1, dtype=cupy.float32)
        stream_kernel = ceilings._stream_module().get_function("l2_read")
        l2_args = (buf, np.int32(nbytes // 16), np.int32(ceilings.L2_PASSES), sink)
        points = [_loop(lambda b=blocks(x): stream_kernel((b,), (256,), l2_args), nbytes * ceilings.L2_PASSES, sampler)
                  for x in LOADS]
        fits.append(fit("l2", "byte", [p for p in points if p]))
        del buf

        points = []
        for n, k in TENSOR_SHAPES:
            if cupy.cuda.runtime.memGetInfo()[0] < 4 * (2 * n * k + n * n) * 2:
                continue
            rng = cupy.random.default_rng(0)
            a = rng.standard_normal((n, k), dtype=cupy.float32).astype(cupy.float16)
            b = rng.standard_normal((k, n), dtype=cupy.float32).astype(cupy.float16)
            c = cupy.empty((n, n), dtype=cupy.float16)
            got = _loop(lambda: cupy.matmul(a, b, out=c), 2.0 * n * n * k, sampler)
            if got:
                points.append(got)
            del a, b, c
        fits.append(fit("fp16_tensor", "FLOP", points))
        cupy.get_default_memory_pool().free_all_blocks()
        return EnergyCeilings(idle, tuple(f for f in fits if f is not None),
                              _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    finally:
        sampler.close()


def measure_and_remember(device: DeviceSpec) -> DeviceSpec:
    """`device` (with its ceilings measured: `ceilings.measure`) with its energy ceilings measured
    now and cached beside them; unchanged where NVML reports no energy counter."""
    found = measure(device.sm_count)
    if found is None:
        return device
    ceilings.remember_energy(device, asdict(found))
    from dataclasses import replace

    return replace(device, measured_energy=found)
