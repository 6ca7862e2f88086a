"""Measured ceilings: what the GPU actually sustains, beside NVML's theoretical peaks.

- DRAM bandwidth: a device-to-device copy of `COPY_BYTES` (far larger than L2), counting bytes read
  plus bytes written, timed with CUDA events (median of repeats).
- FP32 rate: a kernel of independent FMA chains (`CHAINS` per thread, no memory traffic in the
  timed loop), enough blocks to fill every SM several times; 2 FLOP per FMA.
Results are cached per GPU (name and PCI bus id) with the date in the user's cache folder
(`$XDG_CACHE_HOME/roofline/ceilings.json`), so `run` measures once per device; `run --refresh`
and `device --measure` measure again. The date travels into every results file.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .. import files
from ..errors import RunError
from ..model.device import DeviceSpec
from ..model.units import gbps, gflops
from .timing import time_gpu

COPY_BYTES = 4 * 2**30   # 4 GiB per buffer
CHAINS = 16              # independent FMA chains per thread
FMA_ITERS = 4096         # loop trips (unrolled by 16); CHAINS FMAs each
FMA_THREADS = 256

_FMA_SOURCE = r"""
extern "C" __global__ void fma_chains(float* out, float a, float b, int iters) {
    float x[%(chains)d];
#pragma unroll
    for (int c = 0; c < %(chains)d; ++c) x[c] = threadIdx.x * 1e-3f + c;
#pragma unroll 16
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < %(chains)d; ++c) x[c] = fmaf(x[c], a, b);
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < %(chains)d; ++c) s += x[c];
    if (s == 123.456f) out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps the chains alive
}
"""


@dataclass(frozen=True)
class Ceilings:
    """Measured DRAM GB/s (read + write) and FP32 GFLOP/s, with when and how they were taken."""

    dram_gbps: float
    fp32_gflops: float
    measured_at: str
    copy_bytes: int
    method: str = ("D2D copy, bytes read + written, median of timed copies; "
                   f"{CHAINS} independent FMA chains per thread, 2 FLOP per FMA")

    def to_dict(self) -> dict:
        """JSON form."""
        return asdict(self)

    def attach(self, device: DeviceSpec) -> DeviceSpec:
        """`device` carrying these ceilings (its `measured_*` fields)."""
        return device.with_ceilings(self.dram_gbps, self.fp32_gflops, self.measured_at, self.method)


def measure_dram_gbps(nbytes: int = COPY_BYTES) -> tuple[float, int]:
    """Sustained device-to-device copy bandwidth in GB/s, counting read + written bytes, over two
    buffers of `nbytes` (less when the GPU has not four times that free; 256 MiB at the least,
    still several times any L2). Returns (GB/s, bytes per buffer). Raises RunError when even that
    cannot be allocated."""
    import cupy

    free_bytes, _ = cupy.cuda.runtime.memGetInfo()
    nbytes = min(nbytes, free_bytes // 4)
    if nbytes < 256 * 2**20:
        raise RunError(f"too little free GPU memory ({free_bytes / 1e9:.1f} GB) to measure the copy bandwidth")
    n = nbytes // 4
    src = cupy.ones(n, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    t = time_gpu(lambda: cupy.copyto(dst, src), warmup=2, min_repeat=10)
    del src, dst
    cupy.get_default_memory_pool().free_all_blocks()
    return gbps(2 * nbytes, t.median_ms), nbytes


def measure_fp32_gflops(sm_count: int) -> float:
    """Sustained FP32 FMA throughput in GFLOP/s from independent FMA chains."""
    import cupy

    kernel = cupy.RawKernel(_FMA_SOURCE % {"chains": CHAINS}, "fma_chains")
    blocks = sm_count * 8 * 4  # several full waves at 8 blocks of 256 threads per SM
    out = cupy.empty(blocks * FMA_THREADS, dtype=cupy.float32)
    args = (out, np.float32(0.999), np.float32(1e-3), np.int32(FMA_ITERS))
    t = time_gpu(lambda: kernel((blocks,), (FMA_THREADS,), args), warmup=2, min_repeat=10)
    return gflops(2 * CHAINS * FMA_ITERS * blocks * FMA_THREADS, t.median_ms)


def cache_path() -> Path:
    """Where measured ceilings are kept, per GPU."""
    return files.cache_file("ceilings.json")


def _key(device: DeviceSpec) -> str:
    return f"{device.name} @ {device.pci_bus_id or '?'}"


def cached(device: DeviceSpec) -> Ceilings | None:
    """The cached ceilings of `device`, or None."""
    entry = files.read_cache(cache_path()).get(_key(device))
    try:
        return Ceilings(**entry) if isinstance(entry, dict) else None
    except TypeError:  # an entry written by another version
        return None


def measure(device: DeviceSpec, refresh: bool = False) -> Ceilings:
    """The ceilings of `device` (a `DeviceSpec` from NVML): from the cache unless `refresh`, else
    measured now and cached (atomically). Raises RunError when too little GPU memory is free."""
    if not refresh:
        hit = cached(device)
        if hit is not None:
            return hit
    dram, nbytes = measure_dram_gbps()
    result = Ceilings(dram_gbps=dram, fp32_gflops=measure_fp32_gflops(device.sm_count),
                      measured_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                      copy_bytes=nbytes)
    files.update_cache(cache_path(), _key(device), result.to_dict())
    return result
