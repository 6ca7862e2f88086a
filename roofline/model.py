"""The analytic traffic model of a tiled SGEMM and the roofline floors it implies.

For C = alpha*A*B + beta*C with A M x K, B K x N, float32, row-major:

- FLOPs = 2*M*N*K (one multiply and one add per term; the epilogue is not counted).
- GMEM accesses per result. A kernel whose blocks each own a BM x BN tile of C and walk K reads,
  per block, BM*K elements of A and K*BN of B, so over the grid
      A: M*K*ceil(N/BN)   B: K*N*ceil(M/BM)
  which is K*(1/BM + 1/BN) per result when the tiles divide the matrix (BK cancels; for a given
  tile area a square tile is best). A kernel with no reuse modelled (naive) is the 1x1 case: 2*K.
- SMEM accesses per result. One level down, a thread owning a TM x TN tile of C reads TM values of
  A and TN of B per step of K: K*(1/TM + 1/TN). A thread owning one result (TM = TN = 1) reads 2*K;
  a column of TM results K*(1 + 1/TM); a 1 x TN row strip K*(1 + 1/TN).
- GMEM bytes = 4 * accesses per result * M*N; arithmetic intensity = FLOPs / GMEM bytes.

These are the counts of seed lesson 000 ("2D register tiling"), which at M = N = K = 4096 gives
0.25, 8, 16 and 32 FLOP/B for the naive, 32x32 shared-memory, 64x64 TM=8 and 128x128 8x8 kernels.

What the model counts is requests that leave the SM for the memory system. On a GPU with a large
L2 those are served mostly by L2, not DRAM: on the H200 the 128x128 kernel at 4096 moved 5.09 GB
through L2 and 0.47 GB from DRAM (Nsight Compute). The roofline drawn from these bytes is an
L2-request roofline against the DRAM roof, an upper bound on the DRAM traffic.

Floors (in ms) against a device's peaks: memory floor = GMEM bytes / peak bandwidth, compute floor
= FLOPs / peak FP32 rate; the larger one binds.
"""

from __future__ import annotations

from dataclasses import dataclass

BYTES_PER_FLOAT = 4


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class TrafficModel:
    """The reuse structure of one kernel: the block tile BM x BN that GMEM loads are shared across
    (1 x 1 for no reuse) and, when the kernel stages tiles in shared memory, the thread tile
    TM x TN that SMEM reads are shared across (None when there is no SMEM level)."""

    block_tile: tuple[int, int]
    thread_tile: tuple[int, int] | None

    def figures(self, m: int, n: int, k: int) -> "ModelFigures":
        """The model's numbers for an M x N x K problem (all three >= 1)."""
        bm, bn = self.block_tile
        gmem_accesses = m * k * _ceil_div(n, bn) + k * n * _ceil_div(m, bm)
        results = m * n
        smem = None
        if self.thread_tile is not None:
            tm, tn = self.thread_tile
            smem = k * (1 / tm + 1 / tn)
        flops = 2 * m * n * k
        gmem_bytes = gmem_accesses * BYTES_PER_FLOAT
        return ModelFigures(
            flops=flops,
            gmem_accesses_per_result=gmem_accesses / results,
            smem_accesses_per_result=smem,
            gmem_bytes=gmem_bytes,
            arithmetic_intensity=flops / gmem_bytes,
        )


@dataclass(frozen=True)
class ModelFigures:
    """Model output for one kernel and problem. FLOPs and bytes are totals for one launch;
    arithmetic intensity is FLOP per GMEM byte."""

    flops: int
    gmem_accesses_per_result: float
    smem_accesses_per_result: float | None
    gmem_bytes: int
    arithmetic_intensity: float

    def to_dict(self) -> dict:
        """The results file's `model` object."""
        return {
            "flops": self.flops,
            "gmem_accesses_per_result": self.gmem_accesses_per_result,
            "smem_accesses_per_result": self.smem_accesses_per_result,
            "gmem_bytes": self.gmem_bytes,
            "arithmetic_intensity": self.arithmetic_intensity,
        }


@dataclass(frozen=True)
class Floors:
    """Roofline floors in ms for one kernel on one device, and the measured time against them."""

    memory_floor_ms: float
    compute_floor_ms: float

    @property
    def binding(self) -> str:
        """'memory' or 'compute': whichever floor is higher."""
        return "memory" if self.memory_floor_ms >= self.compute_floor_ms else "compute"

    @property
    def floor_ms(self) -> float:
        """The binding floor in ms: no implementation of this traffic can run faster."""
        return max(self.memory_floor_ms, self.compute_floor_ms)

    def times_floor(self, time_ms: float) -> float:
        """How many times the binding floor a measured time is (1.0 = on the roof)."""
        return time_ms / self.floor_ms

    def to_dict(self, time_ms: float | None = None) -> dict:
        """JSON form, with `times_floor` when a measured time is given."""
        d = {"memory_floor_ms": self.memory_floor_ms, "compute_floor_ms": self.compute_floor_ms,
             "binding": self.binding}
        if time_ms is not None:
            d["times_floor"] = self.times_floor(time_ms)
        return d


def floors(fig: ModelFigures, peak_fp32_gflops: float, peak_dram_gbps: float) -> Floors:
    """Memory floor = GMEM bytes / (GB/s * 1e9), compute floor = FLOPs / (GFLOP/s * 1e9), in ms.

    Seed 000's RTX 5080 figures: 137.4 GFLOP at 56.3 TFLOP/s is 2.44 ms; 4.29 GB at 960 GB/s is
    4.47 ms."""
    return Floors(
        memory_floor_ms=fig.gmem_bytes / (peak_dram_gbps * 1e9) * 1e3,
        compute_floor_ms=fig.flops / (peak_fp32_gflops * 1e9) * 1e3,
    )


def ridge_point(peak_fp32_gflops: float, peak_dram_gbps: float) -> float:
    """Arithmetic intensity (FLOP/B) at which the memory roof meets the compute roof."""
    return peak_fp32_gflops / peak_dram_gbps


def attainable_gflops(ai: float, peak_fp32_gflops: float, peak_dram_gbps: float) -> float:
    """The roofline: min(peak FP32, AI x bandwidth), in GFLOP/s for AI in FLOP/B."""
    return min(peak_fp32_gflops, ai * peak_dram_gbps)
