"""Measured ceilings: what the GPU actually sustains, beside NVML's theoretical peaks.

- DRAM bandwidth: a device-to-device copy of `COPY_BYTES` (far larger than L2), counting bytes read
  plus bytes written, timed with CUDA events (median of repeats).
- FP32 rate: a kernel of independent FMA chains (`CHAINS` per thread, no memory traffic in the
  timed loop), enough blocks to fill every SM several times; 2 FLOP per FMA.
- L2 bandwidth: the best of three read patterns, the first two with loads that bypass L1
  (`__ldcg`, four independent 128-bit loads in flight per thread), over buffers of
  `L2_FOOTPRINTS_MIB` (each at most a quarter of the L2), about `L2_LAUNCH_BYTES` per timed
  launch so its launch costs under 1 %: a grid-stride stream over the whole buffer, every block
  reading a contiguous chunk of `L2_CHUNK_BYTES` of its own (wrapping round the buffer), and from
  compute capability 9.0 on, Hopper's bulk copies (the TMA) into shared memory, as TMA-fed GEMMs
  read their tiles. Each after a warm-up that leaves the buffer in the L2.
- Shared-memory (L1) bandwidth: each block reads 128-bit values from a 16 KB shared array,
  consecutive threads at consecutive addresses (no bank conflicts), `SMEM_ITERS` per thread.
- Tensor-core rates, one per precision the GPU's tensor cores take (FP16 from compute capability
  7.0, BF16 and TF32 from 8.0): cuBLAS's product in that precision, FP32 accumulate, through
  cublasGemmEx as every tensor run's reference calls it (`reference.gemm`), at each size of
  `TENSOR_SIZES` that fits in free memory, 2*n^3 FLOP; the best of the sizes. A BF16 or FP16
  product is timed writing C in FP32 (as the ladders' reference) and in its own 16-bit type (as
  PyTorch's products write it, and with a lighter epilogue cuBLAS may choose another kernel), the
  best of the two (`C_TYPES`): a ceiling below what a program's own product reaches reads that
  product above its roof. (An H100's FP16 ceiling with an FP32 C was 746 TFLOP/s, where PyTorch's
  FP16 product reached 803 at 4096 x 5120 x 4096; with both it read 758.7 on another H100, still
  below the 787 the same product reached there: docs/model.md.) Each launch follows
  an L2 flush, as a run times cuBLAS beside its kernels: back to back, cuBLAS holds the card at its
  power limit and its clock below the one a run's launches see (BF16 at 8192^3 on an H100: 749.8
  TFLOP/s back to back, 770.4 in a run's rounds). A precision whose product fails is left
  unmeasured (its roof is then the theoretical one).
- Launch latency: an empty kernel (one block of one thread) timed like every kernel, CUDA events
  around each launch, median: the least time any launch takes, a floor below all the others.
Results are cached per GPU (name and PCI bus id) with the date in the user's cache folder
(`$XDG_CACHE_HOME/roofline/ceilings.json`), so `run` measures once per device; `run --refresh`
and `device --measure` measure again. The date travels into every results file.
"""

from __future__ import annotations

import datetime as _dt
import functools
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from .. import files
from ..errors import RunError
from ..model.device import DeviceSpec
from ..model.units import gbps, gflops
from .timing import l2_flush, time_gpu

COPY_BYTES = 4 * 2**30   # 4 GiB per buffer
CHAINS = 16              # independent FMA chains per thread
FMA_ITERS = 4096         # loop trips (unrolled by 16); CHAINS FMAs each
FMA_THREADS = 256
L2_PASSES = 16  # passes of `energy_ceilings`' L2 stream (`l2_read`)
L2_FOOTPRINTS_MIB = (2, 4, 8)
L2_LAUNCH_BYTES = 2**30
L2_CHUNK_BYTES = 256 * 2**10
SMEM_ITERS = 4096
TENSOR_SIZES = (4096, 8192, 16384)
TENSOR_FROM_CC = {"fp16": 70, "bf16": 80, "tf32": 80}  # compute capability x 10 with tensor cores for it
C_TYPES = {"fp16": ("float32", "float16"), "bf16": ("float32", "uint16"), "tf32": ("float32",)}  # uint16: BF16 words

_STREAM_SOURCE = r"""
extern "C" __global__ void l2_read(const float4* __restrict__ buf, int n4, int passes, float* out) {
    float a = 0.0f, b = 0.0f;
    int stride = gridDim.x * blockDim.x;
    for (int p = 0; p < passes; ++p) {
#pragma unroll 4
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
            float4 v = __ldcg(buf + i);
            a += v.x + v.y;
            b += v.z + v.w;
        }
    }
    if (a + b == 123.456f) out[0] = a + b;  // keeps the loads alive
}

// Four independent 128-bit loads in flight per thread; the sums keep the loads alive.
extern "C" __global__ void l2_stream(const float4* __restrict__ buf, int n4, int passes, float* out) {
    float4 acc[4] = {};
    const int stride = gridDim.x * blockDim.x;
    for (int p = 0; p < passes; ++p) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        for (; i + 3 * stride < n4; i += 4 * stride) {
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                float4 v = __ldcg(buf + i + u * stride);
                acc[u].x += v.x; acc[u].y += v.y; acc[u].z += v.z; acc[u].w += v.w;
            }
        }
        for (; i < n4; i += stride) { float4 v = __ldcg(buf + i); acc[0].x += v.x + v.y + v.z + v.w; }
    }
    float s = 0.0f;
    for (int u = 0; u < 4; ++u) s += acc[u].x + acc[u].y + acc[u].z + acc[u].w;
    if (s == 123.456f) out[0] = s;
}

// Block b reads `chunk` float4s from b * chunk on (modulo the buffer), `passes` times.
extern "C" __global__ void l2_chunks(const float4* __restrict__ buf, int n4, int passes, int chunk, float* out) {
    float4 acc[4] = {};
    const long long base = (long long)blockIdx.x * chunk;
    for (int p = 0; p < passes; ++p) {
        for (int j = threadIdx.x; j + 3 * (int)blockDim.x < chunk; j += 4 * blockDim.x) {
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                float4 v = __ldcg(buf + (base + j + u * blockDim.x) % n4);
                acc[u].x += v.x; acc[u].y += v.y; acc[u].z += v.z; acc[u].w += v.w;
            }
        }
    }
    float s = 0.0f;
    for (int u = 0; u < 4; ++u) s += acc[u].x + acc[u].y + acc[u].z + acc[u].w;
    if (s == 123.456f) out[0] = s;
}

extern "C" __global__ void empty_kernel() {}

extern "C" __global__ void smem_read(int iters, float* out) {
    __shared__ float4 tile[1024];
    int t = threadIdx.x;
    for (int i = t; i < 1024; i += blockDim.x) tile[i] = make_float4(i, i + 1, i + 2, i + 3);
    __syncthreads();
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 8
    for (int i = 0; i < iters; ++i) {
        float4 v = tile[(t + i) & 1023];  // a warp reads 512 consecutive bytes: 4 wavefronts, no conflicts
        acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    }
    if (acc.x + acc.y + acc.z + acc.w == 123.456f) out[blockIdx.x] = acc.x;
}
"""

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
    """Measured DRAM GB/s (read + write), FP32 GFLOP/s, L2 and shared-memory GB/s and each tensor
    precision's GFLOP/s, with when and how they were taken."""

    dram_gbps: float
    fp32_gflops: float
    measured_at: str
    copy_bytes: int
    l2_gbps: float | None = None
    smem_gbps: float | None = None
    tensor_gflops: dict[str, float] | None = None  # 'fp16_tensor', 'bf16_tensor', 'tf32_tensor' (peaks' keys)
    launch_latency_ms: float | None = None
    energy: dict | None = None  # `energy_ceilings.measure`'s EnergyCeilings as JSON (None: not measured)
    method: str = ("D2D copy, bytes read + written, median of timed copies; "
                   f"{CHAINS} independent FMA chains per thread, 2 FLOP per FMA; "
                   f"best of L2-resident __ldcg streams, chunks and bulk copies over "
                   f"{'/'.join(map(str, L2_FOOTPRINTS_MIB))} MiB; "
                   f"conflict-free 128-bit shared-memory reads; cuBLAS's FP16, BF16 and TF32 products at "
                   f"{'/'.join(map(str, TENSOR_SIZES))}^3, C in FP32 and (FP16, BF16) in their own type, "
                   "each launch after an L2 flush, the best; "
                   "an empty kernel's launch, timed with CUDA events")

    def to_dict(self) -> dict:
        """JSON form."""
        return asdict(self)

    def attach(self, device: DeviceSpec) -> DeviceSpec:
        """`device` carrying these ceilings (its `measured_*` fields)."""
        d = device.with_ceilings(self.dram_gbps, self.fp32_gflops, self.measured_at, self.method)
        tensor = {k: v for k, v in (self.tensor_gflops or {}).items() if v} or None
        energy = _energy_from(self.energy)
        return replace(d, measured_l2_gbps=self.l2_gbps, measured_smem_gbps=self.smem_gbps,
                       measured_peaks_gflops=tensor, launch_latency_ms=self.launch_latency_ms,
                       measured_energy=energy)


def _energy_from(doc: dict | None):
    """The cached energy ceilings as the model's record; None where absent or malformed."""
    from ..model.energy import EnergyCeilings, EnergyFit

    if not isinstance(doc, dict):
        return None
    try:
        return EnergyCeilings(doc["idle_w"], tuple(EnergyFit(**f) for f in doc["fits"]), doc["measured_at"])
    except (KeyError, TypeError):
        return None


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


# Hopper's bulk copy (sm_90 on): one thread of each block keeps BULK_STAGES copies of BULK_BYTES from
# the L2 into shared memory in flight, as a TMA-fed GEMM's producer does; nothing reads them.
BULK_STAGES, BULK_BYTES = 2, 16384
_BULK_SOURCE = r"""
extern "C" __global__ void l2_bulk(const unsigned char* __restrict__ buf, long long nbytes, int copies) {
    __shared__ __align__(128) unsigned char stage[%(stages)d][%(bytes)d];
    __shared__ __align__(8) unsigned long long bar[%(stages)d];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < %(stages)d; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%%0], 1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar[s])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const long long first = (long long)blockIdx.x * copies;
    for (int i = 0; i < copies + %(stages)d; ++i) {
        const int s = i %% %(stages)d;
        const unsigned b = (unsigned)__cvta_generic_to_shared(&bar[s]);
        if (i >= %(stages)d) {  // the copy issued STAGES ago into this stage has landed
            const unsigned phase = ((i - %(stages)d) / %(stages)d) & 1;
            asm volatile("{\n.reg .pred done;\nWAIT_%%=:\n"
                         "mbarrier.try_wait.parity.shared::cta.b64 done, [%%0], %%1;\n"
                         "@!done bra WAIT_%%=;\n}\n" :: "r"(b), "r"(phase) : "memory");
        }
        if (i < copies) {
            const unsigned char* src = buf + ((first + i) * %(bytes)d) %% nbytes;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;" :: "r"(b), "r"(%(bytes)d) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%0], [%%1], %%2, [%%3];"
                         :: "r"((unsigned)__cvta_generic_to_shared(stage[s])), "l"(src), "r"(%(bytes)d), "r"(b) : "memory");
        }
    }
}
""" % {"stages": BULK_STAGES, "bytes": BULK_BYTES}


@functools.cache
def _bulk_module():
    """The bulk-copy L2 kernel (sm_90 on), compiled once per process."""
    import cupy

    return cupy.RawModule(code=_BULK_SOURCE)


@functools.cache
def _stream_module():
    """The L2, shared-memory and empty kernels, compiled once per process."""
    import cupy

    return cupy.RawModule(code=_STREAM_SOURCE)


def l2_patterns(sm_count: int) -> list[tuple[str, float]]:
    """Each L2 read pattern of the module docstring with the GB/s it sustained (median of 20 timed
    launches, bytes read per launch over the time), as ('stream 2 MiB', 6490.0) pairs; on compute
    capability 9.0 and newer also Hopper's bulk copies into shared memory (`_BULK_SOURCE`). Buffers
    larger than a quarter of this GPU's L2 are left out (the smallest is always tried)."""
    import cupy

    l2_bytes = cupy.cuda.Device().attributes["L2CacheSize"]
    has_bulk = int(cupy.cuda.Device().compute_capability) >= 90
    out = cupy.empty(1, dtype=cupy.float32)
    stream, chunks = _stream_module().get_function("l2_stream"), _stream_module().get_function("l2_chunks")
    blocks, threads = sm_count * 8, 256
    found = []
    for i, mib in enumerate(L2_FOOTPRINTS_MIB):
        nbytes = mib * 2**20
        if i and nbytes > l2_bytes // 4:
            break
        buf = cupy.ones(nbytes // 4, dtype=cupy.float32)
        n4 = np.int32(nbytes // 16)
        passes = max(1, L2_LAUNCH_BYTES // nbytes)
        t = time_gpu(lambda: stream((blocks,), (threads,), (buf, n4, np.int32(passes), out)), warmup=3, min_repeat=20)
        found.append((f"stream {mib} MiB", gbps(nbytes * passes, t.median_ms)))
        chunk = min(L2_CHUNK_BYTES, nbytes) // 16
        rounds = max(1, L2_LAUNCH_BYTES // (16 * chunk * blocks))
        t = time_gpu(lambda: chunks((blocks,), (threads,), (buf, n4, np.int32(rounds), np.int32(chunk), out)),
                     warmup=3, min_repeat=20)
        found.append((f"chunks {mib} MiB", gbps(16 * chunk * blocks * rounds, t.median_ms)))
        if has_bulk:
            bulk = _bulk_module().get_function("l2_bulk")
            bulk_blocks = sm_count * 3  # 32 KB of shared memory each
            copies = max(1, L2_LAUNCH_BYTES // (BULK_BYTES * bulk_blocks))
            t = time_gpu(lambda: bulk((bulk_blocks,), (32,), (buf, np.int64(nbytes), np.int32(copies))),
                         warmup=3, min_repeat=20)
            found.append((f"bulk copies {mib} MiB", gbps(BULK_BYTES * bulk_blocks * copies, t.median_ms)))
        del buf
    return found


def measure_l2_gbps(sm_count: int) -> float:
    """Sustained L2 read bandwidth in GB/s: the best of `l2_patterns` (module docstring)."""
    return max(rate for _, rate in l2_patterns(sm_count))


def measure_smem_gbps(sm_count: int) -> float:
    """Sustained shared-memory read bandwidth of the whole GPU in GB/s (conflict-free 128-bit loads)."""
    import cupy

    kernel = _stream_module().get_function("smem_read")
    blocks, threads = sm_count * 8, 256
    out = cupy.empty(blocks, dtype=cupy.float32)
    t = time_gpu(lambda: kernel((blocks,), (threads,), (np.int32(SMEM_ITERS), out)), warmup=3, min_repeat=20)
    return gbps(16 * SMEM_ITERS * blocks * threads, t.median_ms)


def measure_launch_latency_ms() -> float:
    """The median time, in ms, of an empty kernel's launch (1 block of 1 thread) between CUDA
    events, as every kernel is timed: no launch is faster."""
    import cupy

    kernel = _stream_module().get_function("empty_kernel")
    return time_gpu(lambda: kernel((1,), (1,), ()), warmup=10, min_repeat=100).median_ms


def measure_tensor_gflops(l2_bytes: int | None = None) -> dict[str, float]:
    """cuBLAS's rate in each tensor-core precision this GPU has (`TENSOR_FROM_CC`), the best over
    `TENSOR_SIZES` and C's types (`C_TYPES`; module docstring), each launch after a flush of an L2
    of `l2_bytes`, in GFLOP/s by the peaks' keys ('bf16_tensor'); a precision left out where no size
    fits in free memory or its product fails."""
    import cupy

    from .reference import gemm, random_inputs

    cc = int(cupy.cuda.Device().compute_capability)
    found, flush = {}, l2_flush(l2_bytes)
    for dtype, since in TENSOR_FROM_CC.items():
        if cc < since:
            continue
        rates, element = [], 4 if dtype == "tf32" else 2
        for n in TENSOR_SIZES:
            if cupy.cuda.runtime.memGetInfo()[0] < 2 * n * n * (2 * element + 4):  # A, B and C, twice over
                break
            try:
                a, b = random_inputs(n, n, n, dtype)
                for c_type in C_TYPES[dtype]:
                    c = cupy.empty((n, n), dtype=getattr(cupy, c_type))
                    t = time_gpu(lambda: gemm(a, b, c, dtype), warmup=3, min_repeat=10, before=flush)
                    rates.append(gflops(2.0 * n**3, t.median_ms))
            except Exception:  # noqa: BLE001 - a product this cuBLAS refuses: the precision unmeasured
                break
            finally:
                a = b = c = None
                cupy.get_default_memory_pool().free_all_blocks()
        if rates:
            found[f"{dtype}_tensor"] = max(rates)
    return found


def remember_energy(device: DeviceSpec, energy: dict | None) -> Ceilings | None:
    """The cached ceilings of `device` with `energy` (an EnergyCeilings as JSON) in place of
    theirs, cached again; None where no ceilings are cached for it."""
    hit = cached(device)
    if hit is None:
        return None
    result = replace(hit, energy=energy)
    files.update_cache(cache_path(), _key(device), result.to_dict())
    return result


def cache_path() -> Path:
    """Where measured ceilings are kept, per GPU."""
    return files.cache_file("ceilings.json")


def _key(device: DeviceSpec) -> str:
    return f"{device.name} @ {device.pci_bus_id or '?'}"


def cached(device: DeviceSpec) -> Ceilings | None:
    """The cached ceilings of `device`, or None."""
    entry = files.read_cache(cache_path()).get(_key(device))
    try:
        found = Ceilings(**entry) if isinstance(entry, dict) else None
    except TypeError:  # an entry written by another version
        return None
    complete = found is not None and found.l2_gbps is not None and found.launch_latency_ms is not None
    # written by an older version, or by one that measured another way: measure the new ceilings
    return found if complete and found.method == Ceilings.method else None


def measure(device: DeviceSpec, refresh: bool = False) -> Ceilings:
    """The ceilings of `device` (a `DeviceSpec` from NVML): from the cache unless `refresh`, else
    measured now and cached (atomically), keeping the energy ceilings cached before
    (`energy_ceilings`). Raises RunError when too little GPU memory is free."""
    if not refresh:
        hit = cached(device)
        if hit is not None:
            return hit
    dram, nbytes = measure_dram_gbps()
    result = Ceilings(dram_gbps=dram, fp32_gflops=measure_fp32_gflops(device.sm_count),
                      measured_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                      copy_bytes=nbytes, l2_gbps=measure_l2_gbps(device.sm_count),
                      smem_gbps=measure_smem_gbps(device.sm_count),
                      tensor_gflops=measure_tensor_gflops(device.l2_bytes),
                      launch_latency_ms=measure_launch_latency_ms())
    # measured again: the energy ceilings measured before stay (`energy_ceilings.remember` replaces them)
    before = files.read_cache(cache_path()).get(_key(device))
    result = replace(result, energy=before.get("energy") if isinstance(before, dict) else None)
    files.update_cache(cache_path(), _key(device), result.to_dict())
    return result
