"""Choosing a block tile, and a split of K, from the problem's shape and the GPU's SM count: the
way vendor libraries pick among their kernels, with the estimate that decides said out loud.

The candidates are the pipelined kernel (roofline/kernels/pipeline.cuh) at four tiles (`CANDIDATES`):
three keep its 8 x 16 thread tile, 128 x 256 (8 warps, one block per SM: about 218 registers
per thread), 128 x 128 (4 warps, two) and 64 x 128 (2 warps, four), so each SM holds 8 warps;
the fourth, 64 x 64 with 4 x 4 thread tiles (8 warps, 63 to 79 registers: three blocks per SM
counted, four where it stays under 64 registers), gives up per-warp efficiency for 16 times as
many warps per result, for problems too small to fill the GPU otherwise.

The estimate (`estimate`) of one candidate at `splits` slices of K, in seconds:
- blocks = output tiles x splits, spread evenly over the SMs (the block scheduler gives every SM
  a block before any SM a second); the busiest SM holds ceil(blocks / SMs) of them and runs up
  to `blocks_per_sm` at a time, in rounds;
- a block does BM x BN x (k per block + FILL_K) multiply-adds, FILL_K standing for the pipeline's
  fill and the epilogue;
- an SM's rate is the FP32 peak's share per SM times the candidate's `efficiency` (its rate with
  every SM full) times the share of that rate its active warps reach, min(1, warps /
  `warps_to_fill`): on the H200 one block of 8 x 16 tiles alone reaches 0.29 of the full rate
  with 2 warps, 0.59 with 4 and all of it with 8 (1024^3, 512^3; bench/NOTES.md);
- a split adds its partial sums: every block writes its BM x BN of them (and fences), then either
  the last block of each tile reads all the slices' back or, where every block fits on the GPU
  at once (blocks <= SMs x blocks per SM), every block of the tile reads a SPLITS-th of each
  slice's (REDUCERS = SPLITS: the sum spread over the tile's SMs, launched cooperatively), at the
  per-SM rates fitted to split_k's times (SLAB_WRITE_GBPS_PER_SM, SLAB_READ_GBPS_PER_SM).
`choose` takes the candidate and split with the least estimate (the first on a tie); without
`split`, splits = 1. The efficiencies and rates are the H200's; on another GPU the choice keeps
its logic (SM count, FP32 peak) with the H200's shares, and `roofline run` records what it chose.

At 1024^3 on the H200's 132 SMs: 128 x 256 makes 32 tiles, 32 SMs busy (full_tiles, 182 us in
plots/sweep-h200.json); four slices of K make 128 blocks, one round of 8-warp blocks a quarter as
deep: 73 us estimated with the last block adding the slices, 73.0 measured there against cuBLAS's
63.1; with the sum spread over the tile's blocks, 67 us estimated, and 57.9 measured on an H100
against cuBLAS's 64.0 (plots/sweep-h100.json).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..model.problem import BYTES_PER_FLOAT, Problem
from ..model.units import cdiv

BK, STAGES = 16, 3  # every candidate's k-tile and pipeline depth
FILL_K = 32  # multiply-adds per result a block pays once, in steps of K: pipeline fill and epilogue
MAX_SPLITS = 16
MIN_SLICE_K = 64  # no slice of K shorter than four k-tiles
# Split K's costs, fitted to split_k's times on an H200 (bench/NOTES.md): a block writing its
# partial sums and fencing them, and the last block of a tile reading every slice's back, in
# bytes per second of one SM.
SLAB_WRITE_GBPS_PER_SM = 9.0
SLAB_READ_GBPS_PER_SM = 64.0


@dataclass(frozen=True)
class Candidate:
    """A tile of the pipelined kernel the dispatch may pick: block tile BM x BN, warp tile
    WM x WN, thread tile TM x TN; the blocks one SM holds (from its registers on the 64K-register
    SMs of sm_80 on; `held_by` caps them by a GPU's shared memory); its FP32 rate with every SM
    full, as a share of the FP32 peak, and the active warps per SM it needs for that rate (fewer
    run proportionally slower): both measured on an H200 (`bench/NOTES.md`)."""

    bm: int
    bn: int
    wm: int
    wn: int
    tm: int
    tn: int
    blocks_per_sm: int
    efficiency: float
    warps_to_fill: float

    @property
    def params(self) -> dict[str, int]:
        """The pipelined kernel's template parameters, BM to STAGES."""
        return {"BM": self.bm, "BN": self.bn, "BK": BK, "WM": self.wm, "WN": self.wn, "TM": self.tm,
                "TN": self.tn, "STAGES": STAGES}

    @property
    def warps(self) -> int:
        """Warps per block: one per warp tile."""
        return (self.bm // self.wm) * (self.bn // self.wn)

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory of one block: STAGES stages of the transposed A tile (pitch BM + 4)
        and the B tile, 4-byte elements (pipeline.cuh's pipeline_smem_bytes)."""
        return STAGES * BK * (self.bm + 4 + self.bn) * BYTES_PER_FLOAT

    def held_by(self, smem_per_sm_bytes: int | None, reserved_bytes: int = 0) -> "Candidate":
        """This candidate with the blocks one SM holds capped by its shared memory as well as its
        registers (None: registers alone; the 228 KB of sm_90 and the 164 KB of sm_80 hold them all):
        an SM of 100 KB (sm_86, sm_89, sm_120) holds two 64 x 128 blocks, not four."""
        if smem_per_sm_bytes is None:
            return self
        fits = smem_per_sm_bytes // (self.smem_bytes + reserved_bytes)
        return replace(self, blocks_per_sm=max(1, min(self.blocks_per_sm, fits)))

    @property
    def tile_bytes(self) -> int:
        """Bytes of one block's BM x BN results (a slab of partial sums)."""
        return self.bm * self.bn * BYTES_PER_FLOAT


CANDIDATES: tuple[Candidate, ...] = (
    Candidate(128, 256, 32, 128, 8, 16, blocks_per_sm=1, efficiency=0.74, warps_to_fill=6.8),
    Candidate(128, 128, 32, 128, 8, 16, blocks_per_sm=2, efficiency=0.68, warps_to_fill=6.8),
    Candidate(64, 128, 32, 128, 8, 16, blocks_per_sm=4, efficiency=0.71, warps_to_fill=6.8),
    Candidate(64, 64, 16, 32, 4, 4, blocks_per_sm=3, efficiency=0.45, warps_to_fill=12.0),
)


@dataclass(frozen=True)
class Choice:
    """A candidate at a split of K, with what the estimate said: `blocks` launched, `rounds` the
    busiest SM needs, and `seconds` (compute plus the split's partial sums)."""

    candidate: Candidate
    splits: int
    blocks: int
    rounds: int
    seconds: float

    @property
    def together(self) -> bool:
        """Whether the tile's blocks add the slices together: split, and every block resident at once
        (one round)."""
        return self.splits > 1 and self.rounds == 1

    @property
    def params(self) -> dict[str, int]:
        """Template parameters, with SPLITS and REDUCERS (SPLITS where the tile's blocks add the
        slices together, else 1: split_k.cu)."""
        return {**self.candidate.params, "SPLITS": self.splits, "REDUCERS": self.splits if self.together else 1}


def estimate(c: Candidate, splits: int, problem: Problem, sm_count: int, peak_fp32_gflops: float) -> Choice:
    """The estimated time of candidate `c` at `splits` slices of K on `problem` (module
    docstring), on `sm_count` SMs of `peak_fp32_gflops` GFLOP/s in all."""
    tiles = cdiv(problem.m, c.bm) * cdiv(problem.n, c.bn)
    blocks = tiles * splits
    k_per_block = cdiv(cdiv(problem.k, BK), splits) * BK
    block_macs = c.bm * c.bn * (k_per_block + FILL_K)
    sm_macs_per_s = peak_fp32_gflops * 1e9 / 2 / sm_count * c.efficiency
    full_rounds, rest = divmod(cdiv(blocks, sm_count), c.blocks_per_sm)
    seconds = 0.0
    for together, times in ((c.blocks_per_sm, full_rounds), (rest, 1)):
        if together and times:
            share = min(1.0, together * c.warps / c.warps_to_fill)
            seconds += times * together * block_macs / (sm_macs_per_s * share)
    rounds = full_rounds + (1 if rest else 0)
    if splits > 1:  # each block writes its partial sums; in the last round, its SM's blocks each read
        last = rest or c.blocks_per_sm  # back every slice of their tile, or in one round a SPLITS-th of each
        read = c.tile_bytes if rounds == 1 else splits * c.tile_bytes
        seconds += (rounds * c.blocks_per_sm * c.tile_bytes / (SLAB_WRITE_GBPS_PER_SM * 1e9)
                    + last * read / (SLAB_READ_GBPS_PER_SM * 1e9))
    return Choice(c, splits, blocks, rounds, seconds)


def choose(problem: Problem, sm_count: int, peak_fp32_gflops: float, split: bool,
           smem_per_sm_bytes: int | None = None, reserved_smem_bytes: int = 0) -> Choice:
    """The candidate (and, with `split`, the slices of K: 1 to MAX_SPLITS, none shorter than
    MIN_SLICE_K) with the least estimated time for `problem` on a GPU of `sm_count` SMs, each
    holding `smem_per_sm_bytes` of shared memory (less `reserved_smem_bytes` a block; None: as many
    blocks as the registers allow, `Candidate.held_by`); ties go to the earlier candidate and the
    fewer slices."""
    most = max(1, min(MAX_SPLITS, problem.k // MIN_SLICE_K)) if split else 1
    held = [c.held_by(smem_per_sm_bytes, reserved_smem_bytes) for c in CANDIDATES]
    choices = [estimate(c, s, problem, sm_count, peak_fp32_gflops) for c in held for s in range(1, most + 1)]
    return min(choices, key=lambda ch: ch.seconds)


# The tensor ladder's dispatch (wgmma_by_shape): wgmma_persistent at a 128 x 256 or a 128 x 128 block
# tile, 4 stages. One block per SM at either (384 threads, 128 KB and more of shared memory); a
# 128 x 128 block has half the work, done at `WGMMA_EFFICIENCY` of the larger tile's rate (each
# wgmma is half as wide, for the same A tile): on the H200 at 4096^3 in BF16, 0.1949 ms at
# 128 x 256 against 0.2242 ms at 128 x 128, 0.87 (six stages instead of four: 0.2379 ms;
# bench/NOTES.md).
# The estimate: waves (ceil(tiles / SMs)) x the tile's work / its efficiency; the least wins, the
# larger tile on a tie.
WGMMA_TILES = (256, 128)  # BN
WGMMA_STAGES = {256: 4, 128: 4}
WGMMA_EFFICIENCY = {256: 1.0, 128: 0.87}
WGMMA_GROUP = 8


@dataclass(frozen=True)
class WgmmaChoice:
    """wgmma_by_shape's pick: the block tile's width BN, the tiles it makes, its waves on the
    `sm_count` SMs and the estimate (in units of a 128 x 256 tile's time)."""

    bn: int
    tiles: int
    waves: int
    estimate: float
    sm_count: int

    def params_for(self, dtype: str) -> dict[str, int]:
        """wgmma_persistent's parameters in precision `dtype`: BK is 128 bytes of K, one block per SM."""
        from ..model.precision import PRECISIONS

        return {"BN": self.bn, "BK": 128 // PRECISIONS[dtype].element_bytes, "STAGES": WGMMA_STAGES[self.bn], "GROUP": WGMMA_GROUP,
                "SMS": self.sm_count}


def choose_wgmma(problem: Problem, sm_count: int) -> WgmmaChoice:
    """The block tile wgmma_by_shape runs at for `problem` on `sm_count` SMs (see above). At 1024^3
    on 132 SMs: 128 x 256 makes 32 tiles, one wave of whole tiles (estimate 1.0); 128 x 128 makes
    64, one wave of half tiles (0.5 / 0.87 = 0.57): the smaller tile wins. At 2048^3: 128 tiles,
    one wave (1.0), against 256 half tiles in two waves (1.15): the larger wins."""
    choices = []
    for bn in WGMMA_TILES:
        tiles = cdiv(problem.m, 128) * cdiv(problem.n, bn)
        waves = cdiv(tiles, sm_count)
        choices.append(WgmmaChoice(bn, tiles, waves, waves * (bn / 256) / WGMMA_EFFICIENCY[bn], sm_count))
    return min(choices, key=lambda c: c.estimate)
