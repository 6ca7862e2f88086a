"""The analytic traffic model of a tiled SGEMM, and the traffic Nsight Compute counts.

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
- bytes = 4 * accesses per result * M*N; arithmetic intensity = FLOPs / GMEM bytes.
- Split K. A kernel that cuts K into S slices (split_k) reads A and B as above, and each of the
  S blocks of a tile also writes its BM x BN partial sums, which the last one reads back, its
  own included: 2S * BM * BN more accesses per tile (a ragged edge's tile counted whole).
- L1 sectors, for a kernel that reads A and B straight from global memory (naive,
  gmem_coalescing): per step of K a warp covering rows_w x cols_w results reads rows_w elements of
  A, one per row (each in its own 32-byte sector), and cols_w
  consecutive elements of B (ceil(cols_w / 8) sectors): 32 * (sectors of A + sectors of B) bytes
  per 32 multiply-adds. naive's warp is 32 rows of one column: 33 B per multiply-add;
  gmem_coalescing's one row of 32 columns: 5 B. Nsight Compute's l1tex__t_bytes counts exactly
  these on the H200 (33.01 and 5.00 B per multiply-add at 4096^3, plots/results-h200.json).
- SMEM bytes the banks serve. The access count above is per thread; the banks serve a warp's
  request once per distinct 4-byte word (a word all 32 threads read is one word, a 128-bit load
  of 32 distinct addresses 128 words). A warp whose 32 threads cover `rows_w` x `cols_w` thread
  tiles of TM x TN reads, per step of K, rows_w*TM words of A and cols_w*TN words of B for
  32*TM*TN results; the tiles are also stored once per step: BM*BK + BK*BN words per BM*BN*BK.
  So the served bytes per multiply-add are 4 * (rows_w/(32*TN) + cols_w/(32*TM) + 1/BM + 1/BN),
  whatever the load width. These match Nsight Compute's smsp__sass_data_bytes_mem_shared on the
  H200 for every ladder kernel at 4096^3 to within 0.1 % (smem_tiling 300.6 GB, 32x32 threads of
  one result, a warp 1 x 32: 4.375 B per multiply-add; register_tiling_2d 23.6 GB, 8x8 tiles, a warp
  2 x 16: 0.34375 B), where the per-thread count is 1.8 to 6 times higher: it is the floor the SMEM
  roof bounds, and what `roofs` reads at that level.

- Tensor-core kernels (problems in BF16, FP16 or TF32: `Problem.dtype`). The GMEM count is the same
  with B stored N x K, and bytes are accesses times the element size (2 for BF16 and FP16, 4 for
  TF32); C is not counted, as above. One level down, the unit of reuse is not a thread but the
  tile one matrix instruction group reads from shared memory: a warp's WM x WN tile for mma.sync
  (its fragments, through ldmatrix or 32-bit loads), a warpgroup's 64 x N tile for wgmma (read by
  the tensor cores through descriptors). Per step of K such an `operand_tile` of R x S results
  reads R elements of A and S of B, each once, and the block's tiles are stored once:
  SMEM accesses per result K*(1/R + 1/S), served bytes element size * M*N*K*(1/R + 1/S + 1/BM + 1/BN).
  At 4096^3 in BF16 a 128 x 256 block of two 64 x 256 wgmma tiles reads 2 * 4096^3 *
  (1/128 + 1/256) = 1.61 GB of A and B from GMEM (AI 85.3 FLOP/B) and serves 2 * 4096^3 *
  (1/64 + 1/256 + 1/128 + 1/256) = 4.29 GB from SMEM.

These are the counts of seed lesson 000 ("2D register tiling"), which at M = N = K = 4096 gives
0.25, 8, 16 and 32 FLOP/B for the naive, 32x32 shared-memory, 64x64 TM=8 and 128x128 8x8 kernels.

What the GMEM count means: requests that leave the SM for the memory system, which the L2
serves: on the H200 the 128x128 kernel at 4096 moved 4.11 GB through L2 and 0.40 GB from DRAM
against the model's 4.29 GB (Nsight Compute, plots/results-h200.json). So the GMEM bytes are read
against the L2 roof, and the DRAM bytes are modelled one level further down, from the panels each
wave of the grid reads against the L2's capacity (`dram`: 408.9 MB there), once the blocks that
run at once are known (`TrafficModel.with_dram`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .dram import COLS_FIRST, dram_bytes
from .problem import BYTES_PER_FLOAT, Problem
from .units import Amount, Count, cdiv

SECTOR_BYTES = 32  # the unit in which L1 and L2 move data (CUDA programming guide, "Device Memory Accesses")
WARP = 32  # threads, and so results of one thread each, in a warp


@dataclass(frozen=True)
class ModelFigures:
    """Model output for one kernel and problem. FLOPs and bytes are totals for one launch;
    `arithmetic_intensity` is FLOP per GMEM byte; the SMEM figures are None for a kernel that does
    not stage tiles in shared memory. `smem_bytes` counts every thread's 4-byte accesses (the seed
    lessons' count); `smem_served_bytes` what the banks serve (distinct words per warp request,
    tile stores included), None when the warp's layout is not known. `l1_bytes`: the 32-byte
    sectors of a warp's loads of A and B, for a kernel that reads them from global memory
    directly (None for the others). `dram_bytes`: the bytes the L2 cannot keep and DRAM serves
    (`dram`), worked out once the blocks resident at once and the L2's size are known; None
    where they were not (a file written before the model knew them, read without the families)."""

    flops: Amount
    gmem_accesses_per_result: Amount
    smem_accesses_per_result: Amount | None
    gmem_bytes: Amount
    arithmetic_intensity: Amount
    smem_bytes: Amount | None = None
    smem_served_bytes: Amount | None = None  # what the banks serve: distinct words per warp request
    l1_bytes: Amount | None = None  # sectors of a warp's global loads, for kernels without an SMEM level
    dram_bytes: Amount | None = None  # what DRAM serves: compulsory bytes and the L2's misses (`dram`)
    no_shared_memory: bool = False  # its compiled code holds none (`without_smem`): it reads A and B directly

    @property
    def direct(self) -> bool:
        """Whether the kernel reads A and B straight from global memory: an L1 level modelled (naive,
        gmem_coalescing, a kernel of yours with thread-x), or compiled code that holds no shared
        memory. Its GMEM requests are its L1's, which serves most of them, not the L2's. (A model
        without an SMEM level alone says nothing: a kernel of yours declared with a block tile and
        no thread tile, a tensor-core one say, stages its tiles all the same.)"""
        return self.l1_bytes is not None or self.no_shared_memory

    def without_smem(self) -> "ModelFigures":
        """These figures with no shared-memory level: for a kernel whose compiled code holds no shared
        memory at all (0 bytes static and dynamic), whatever tiles were declared for it."""
        return replace(self, smem_accesses_per_result=None, smem_bytes=None, smem_served_bytes=None,
                       no_shared_memory=True)


@dataclass(frozen=True)
class TrafficModel:
    """The reuse structure of one kernel: the block tile BM x BN that GMEM loads are shared across
    (1 x 1 for no reuse) and, when the kernel stages tiles in shared memory, the thread tile
    TM x TN that SMEM reads are shared across (None when there is no SMEM level)."""

    block_tile: tuple[int, int]
    thread_tile: tuple[int, int] | None
    # thread tiles one warp covers: (rows, cols), rows*cols = 32; for a kernel without an SMEM level, the
    # distinct rows and columns of C its 32 results span (their product above 32 where they straddle)
    warp_layout: tuple[int, int] | None = None
    splits: int = 1  # slices of K, each block one slice; partial sums through GMEM when > 1
    operand_tile: tuple[int, int] | None = None  # a tensor-core kernel's unit of SMEM reuse (R x S results)
    order: str = COLS_FIRST  # the order blocks take their tiles in (`dram.launch_order`)
    group: int = 8  # rows of tiles per group, for the grouped order
    # the tile of C one block owns, where it is not `block_tile` (a kernel whose GMEM reuse the model
    # does not count, naive's 1 x 1): the unit the grid's waves and their panels are counted in
    c_tile: tuple[int, int] | None = None

    def figures(self, problem: Problem) -> ModelFigures:
        """The model's numbers for `problem` (M, N, K >= 1), at its element size."""
        m, n, k = problem.m, problem.n, problem.k
        bm, bn = self.block_tile
        element = problem.element_bytes
        gmem_accesses = m * k * cdiv(n, bn) + k * n * cdiv(m, bm)
        gmem_bytes = gmem_accesses * element
        if self.splits > 1:  # every slice writes its partial tile, the last block reads them all back
            partials = 2 * self.splits * cdiv(m, bm) * bm * cdiv(n, bn) * bn
            gmem_accesses += partials
            gmem_bytes += partials * BYTES_PER_FLOAT
        smem = served = l1 = None
        if self.operand_tile is not None:
            rows, cols = self.operand_tile
            smem = k * (1 / rows + 1 / cols)
            served = element * problem.results * k * (1 / rows + 1 / cols + 1 / bm + 1 / bn)
        if self.thread_tile is None and self.warp_layout is not None:
            # the distinct rows and columns of C a warp's 32 results span (more than 32 together where
            # its threads straddle two rows of a block whose x does not divide 32)
            rows_w, cols_w = self.warp_layout
            sectors = rows_w + cdiv(cols_w, SECTOR_BYTES // BYTES_PER_FLOAT)  # a sector per row of A
            l1 = SECTOR_BYTES * sectors * problem.results * k / WARP
        elif self.thread_tile is not None:
            tm, tn = self.thread_tile
            smem = k * (1 / tm + 1 / tn)
            if self.warp_layout is not None:
                rows_w, cols_w = self.warp_layout
                served = BYTES_PER_FLOAT * problem.results * k * (rows_w / (32 * tn) + cols_w / (32 * tm)
                                                                  + 1 / bm + 1 / bn)
        return ModelFigures(
            flops=problem.flops,
            gmem_accesses_per_result=gmem_accesses / problem.results,
            smem_accesses_per_result=smem,
            gmem_bytes=gmem_bytes,
            arithmetic_intensity=problem.flops / gmem_bytes,
            smem_bytes=None if smem is None else element * smem * problem.results,
            smem_served_bytes=served,
            l1_bytes=l1,
        )


    def dram(self, problem: Problem, in_step: int, l2_usable_bytes: int) -> float | None:
        """The bytes DRAM serves for `problem`: the wave model of `dram.dram_bytes` over the blocks'
        C tiles (`c_tile`, else `block_tile`) in this model's launch order, `in_step` blocks
        walking K together (`dram.blocks_in_step`) and `l2_usable_bytes` of L2
        (`dram.usable_l2_bytes`); None for a grid too large to walk (`dram.MAX_TILES`)."""
        return dram_bytes(problem, self.c_tile or self.block_tile, in_step, l2_usable_bytes, self.order,
                          self.group, self.splits)

    def with_dram(self, figures: ModelFigures, problem: Problem, in_step: int, l2_usable_bytes: int) -> ModelFigures:
        """`figures` (this model's, for `problem`) with `dram_bytes` filled in (`dram`)."""
        return replace(figures, dram_bytes=self.dram(problem, in_step, l2_usable_bytes))


@dataclass(frozen=True)
class CountedTraffic:
    """What Nsight Compute counted for one launch: bytes at DRAM, through L2, through L1/TEX and
    moved by shared-memory instructions, shared-memory bank conflicts, FP32 operations and, for a
    GEMM in a tensor-core precision, the tensor-core operations on inputs of that precision (two
    per multiply-add; the metrics behind each are listed in `measure.counters`). A field is None
    when its counter was not read."""

    dram_bytes: Count | None = None
    l2_bytes: Count | None = None
    l1_bytes: Count | None = None
    smem_bytes: Count | None = None
    bank_conflicts: Count | None = None
    fp32_flops: Count | None = None
    tensor_flops: Count | None = None
