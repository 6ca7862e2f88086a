"""DRAM bytes of a tiled GEMM: the compulsory bytes plus the panels the L2 cannot keep between the
waves of its grid.

The GMEM count of `traffic` is what the blocks ask of the memory system; the L2 serves most of it.
What reaches DRAM depends on which blocks run at once. A block owning the BM x BN tile of C at
tile row r and tile column c reads the A panel of row r (BM x K elements) and the B panel of
column c (K x BN). The GPU runs `block_slots` blocks at once (SMs x active blocks per SM) and
starts them in launch order (blockIdx.x fastest, then y, then z). The model walks the launch in
steps of the blocks that walk K together (`blocks_in_step`):

- the blocks of one step walk K at about the same pace, so a panel several of them share is
  fetched from DRAM once for them all. Which blocks those are was read off Nsight Compute's counts
  (below): where each SM holds at most `IN_STEP_WARPS` warps, every block of a wave (one per slot);
  where an SM holds more and later waves follow, only one block per SM keeps step (why the blocks
  sharing an SM fall out of step is not traced): a wave is several steps of SM-count blocks, one
  after another; but a grid of one wave, whose blocks all start together, is one step (counted at
  1024x1024x16384: its 64x64 rungs fetched A and B once);
- a panel an earlier step read is still in the L2 when the distinct panels read since (from that
  step on, in full) fit in the L2's usable capacity; otherwise it is fetched again. Blocks stream
  their panels along K together, so a step whose panels overflow the L2 leaves only their far
  ends behind, which the next step reaches last: a whole miss (the cyclic case of LRU replacement);
- C is written once (M x N x 4 bytes; the ladder launches with beta = 0, so C is not read) into the
  L2, which writes lines back to DRAM as the panels streaming after them need room; the C tiles of
  the last step (up to half the usable capacity) are still in the L2 when the kernel ends, written
  back after it, outside its time; where all of A's and B's panels fit in the usable capacity
  together, C keeps all the room they leave. Read off the counts: at 2048^3 FP32 on an H100, 36 MB
  reached DRAM for the 128-wide tiles (one step: A and B, and 2.5 of C's 16.8 MB), 48 to 52 MB for
  the small tiles (31 steps: all of C); at 4096^3, 54 of C's 67 MB on an H100 and an H200; on the
  H200 at 512^3 and 1024^3 A and B alone, and at 4096x4096x512 (A and B 16.8 MB) about 46 of C's
  67 MB;
- a kernel that splits K into S slices reads panels of K / S and its partial sums stay in the L2
  when the S x M x N floats fit, else they are written and read back once more.

The usable capacity is half the L2 on GPUs whose L2 is split in two partitions (compute
capability 8.0 and newer: A100, H100, H200, ...), where a line read by SMs on both sides is kept
in both; the whole L2 before. The half and the step were both read off Nsight Compute's counts on
the H200 (60 MiB of L2): the FP32 ladder at 4096^3 (`plots/counters-h200-fp32-4096.json`) and the
tensor ladders at 8192^3 (`plots/counters-h200-bf16-8192.json`, `-tf32-8192.json`):

    kernel (tile, blocks at once, warps per SM)      modelled    counted
    naive FP32 (32x32, 264, 64: steps of 132)        8.53 GB     8.52 GB
    register_tiling_1d FP32 (64x64, 396, 48)         2.25 GB     2.03 GB
    autotuned FP32 (128x128, 264, 32)               679.2 MB    624.1 MB
    register_tiling_2d FP32 (128x128, 264, 16)      393.7 MB    400.6 MB
    async_copy FP32 (128x256, 132, 8)               393.7 MB    396.3 MB
    mma_sync BF16 8192^3 (128x128, 264, 16)          2.57 GB     2.57 GB

Against every rung counted on the H200 (the FP32 ladder at nine sizes, the tensor ladders at 4096^3
and 8192^3) and the H100 (FP32 at 2048^3 and 4096^3, tensor at 8192^3) the model is within
`DRAM_TOLERANCE` (25 %) but for 12 of the H200's 126 FP32 rungs: at 8192^3 the 128x256 rungs of
one block per SM fetched 2.3 to 2.7 times the model's bytes (why is open: the 128x128 rungs at the
same size and waves are within 3 %), at 3000^3 the small tiles' re-read operand (36 MB, over the
usable half) was mostly kept where the model fetches it every step (1.4 to 4.4 times the counts),
and gmem_coalescing at 1024x1024x16384 (1.37). The table and the misses are in docs/model.md;
tests/test_dram.py pins each. With one step per wave whatever the warps, the rungs of more than 16
warps per SM were two to three times low (naive 4.33 GB); with the whole L2 usable, the BF16 rungs
at 4096^3 were the compulsory 134 MB where 225 to 241 MB were counted.
"""

from __future__ import annotations

from .problem import BYTES_PER_FLOAT, Problem
from .units import cdiv

COLS_FIRST, ROWS_FIRST, GROUPED = "cols", "rows", "grouped"
IN_STEP_WARPS = 16  # an SM holding more warps: its blocks fall out of step along K (fitted: module docstring)
PARTITIONED_L2_FROM = (8, 0)  # compute capability from which the L2 is two partitions (A100 whitepaper)
DRAM_TOLERANCE = 0.25  # the model's DRAM bytes against Nsight Compute's: within 25 % is agreement (docs/model.md)
MAX_TILES = 2**20  # a grid of more tiles (a 1 x 1 tile at 2048^2) is not walked: its DRAM bytes are not modelled


def agrees_with_count(modelled: float, counted: float) -> bool:
    """Whether the model's DRAM bytes agree with Nsight Compute's count: each within a factor
    1 + `DRAM_TOLERANCE` of the other (1.25: 0.8 to 1.25 times), both positive."""
    return modelled > 0 and counted > 0 and max(modelled / counted, counted / modelled) <= 1 + DRAM_TOLERANCE


def usable_l2_bytes(l2_bytes: int, compute_capability: str | None) -> int:
    """The L2 capacity the wave model reads panels against: half of `l2_bytes` on a GPU of compute
    capability 8.0 or newer (two partitions, a line shared by both kept twice), all of it before
    or when the capability is unknown. H200: 60 MiB, 30 MiB usable."""
    try:
        major, minor = (int(x) for x in (compute_capability or "").split("."))
    except ValueError:
        return l2_bytes
    return l2_bytes // 2 if (major, minor) >= PARTITIONED_L2_FROM else l2_bytes


def blocks_in_step(block_slots: int, sm_count: int, warps_per_sm: int, blocks: int | None = None) -> int:
    """The blocks that walk K together, as the wave model steps through a launch: all
    `block_slots` (a wave) where each SM holds at most `IN_STEP_WARPS` of its `warps_per_sm`
    warps or where the launch's `blocks` (None: not known) fit in one wave, else one block per SM
    (`sm_count`, or the slots where fewer). Fitted to Nsight Compute's counts on the H200 (module
    docstring): at 16 warps per SM (two blocks of 8) the blocks sharing an SM kept step, at 32
    and more they did not where later waves followed (why is not traced); a grid of one wave,
    started together, kept step (the 64x64 tiles at 1024x1024x16384, 48 warps per SM)."""
    if warps_per_sm <= IN_STEP_WARPS or (blocks is not None and blocks <= block_slots):
        return block_slots
    return max(1, min(block_slots, sm_count))


def launch_order(tiles_m: int, tiles_n: int, order: str = COLS_FIRST, group: int = 8) -> list[tuple[int, int]]:
    """The (tile row, tile column) of each block in launch order. `order`: 'cols' (blockIdx.x walks
    the columns of C, y the rows), 'rows' (x walks the rows), 'grouped' (a one-dimensional grid
    taking its tiles `group` rows at a time, column by column within the group: roofline/kernels/
    hopper.cuh's grouped_tile). Raises ValueError for another order."""
    if order == COLS_FIRST:
        return [(r, c) for r in range(tiles_m) for c in range(tiles_n)]
    if order == ROWS_FIRST:
        return [(r, c) for c in range(tiles_n) for r in range(tiles_m)]
    if order == GROUPED:
        out = []
        for first in range(0, tiles_m, group):
            rows = min(group, tiles_m - first)
            out += [(first + i % rows, i // rows) for i in range(rows * tiles_n)]
        return out
    raise ValueError(f"unknown launch order {order!r} (valid: {COLS_FIRST}, {ROWS_FIRST}, {GROUPED})")


def dram_bytes(problem: Problem, block_tile: tuple[int, int], in_step: int, l2_usable_bytes: int,
               order: str = COLS_FIRST, group: int = 8, splits: int = 1) -> float | None:
    """Bytes one launch moves between DRAM and the L2, as the module says: the A and B panels each
    step fetches (A of BM x K / `splits` elements, B of K / `splits` x BN, at `problem`'s element
    size), C written once in FP32 less what the L2 still holds of it at the end (the last step's
    tiles up to half its usable capacity, or the room all the panels leave where they fit
    together), and the partial sums of a split K where they overflow the L2.
    `in_step` >= 1 blocks walk K together (`blocks_in_step`); `l2_usable_bytes`
    (`usable_l2_bytes`) is the capacity the panels compete for. None for a grid of more than
    `MAX_TILES` tiles (the walk would take minutes; no tiled kernel has one). Raises ValueError for an unknown `order`.

    Worked example, register_tiling_2d at 4096^3 FP32 on the H200 (128 x 128 tiles, 2 blocks of 8
    warps per SM: 264 at once, all in step; 30 MiB usable): a wave is 8.25 rows of 32 tiles, reading 9 A panels of 2 MiB
    and all 32 B panels of 2 MiB, 82 MiB, more than the L2 holds, so each of the 4 waves fetches
    B again: 4 x 64 MiB of B, 64 MiB of A (each row's panel once) and 6 MiB more for the three
    rows two waves share, 64 MiB of C: 408.9 MB (Nsight Compute counted 400.6 MB)."""
    bm, bn = block_tile
    tiles_m, tiles_n = cdiv(problem.m, bm), cdiv(problem.n, bn)
    if tiles_m * tiles_n * splits > MAX_TILES:
        return None
    element = problem.element_bytes
    k_slice = cdiv(problem.k, splits)
    rows = [min(bm, problem.m - r * bm) for r in range(tiles_m)]
    cols = [min(bn, problem.n - c * bn) for c in range(tiles_n)]
    tiles = [(z, r, c) for z in range(splits) for r, c in launch_order(tiles_m, tiles_n, order, group)]
    slots = max(1, in_step)
    last: dict[tuple, int] = {}  # panel -> the last step that read it
    size: dict[tuple, int] = {}
    fetched = 0
    last_step = (len(tiles) - 1) // slots * slots  # where the last step's tiles begin
    for wave, start in enumerate(range(0, len(tiles), slots)):  # one step of in_step blocks
        panels = set()
        for z, r, c in tiles[start:start + slots]:
            panels.add(("A", z, r))
            panels.add(("B", z, c))
        # bytes of the distinct panels read from each earlier step on: since[j] = sum over steps >= j
        since = [0] * (wave + 1)
        for key, w in last.items():
            since[w] += size[key]
        for j in range(wave - 1, -1, -1):
            since[j] += since[j + 1]
        for key in panels:
            if key not in size:
                size[key] = element * k_slice * (rows[key[2]] if key[0] == "A" else cols[key[2]])
            seen = last.get(key)
            if seen is None or since[seen] > l2_usable_bytes:
                fetched += size[key]
        for key in panels:
            last[key] = wave
    c_full = BYTES_PER_FLOAT * problem.m * problem.n
    partials = 0
    if splits > 1 and splits * c_full > l2_usable_bytes:  # the S slices' partial sums overflow the L2
        partials = 2 * splits * BYTES_PER_FLOAT * tiles_m * bm * tiles_n * bn
    # C still in the L2 at the end: none where a split's partial sums overflow it; where all the panels
    # (and partial sums that stay) fit in the L2 together, all the room they leave; else, without a
    # split, the last step's tiles (up to half of it)
    room = l2_usable_bytes - sum(size.values()) - (splits * c_full if splits > 1 else 0)
    last_tiles = BYTES_PER_FLOAT * sum(rows[r] * cols[c] for r, c in {(r, c) for _, r, c in tiles[last_step:]})
    kept = 0 if partials else max(room, min(l2_usable_bytes // 2, last_tiles) if splits == 1 else 0)
    return float(fetched + c_full - min(c_full, max(0, kept)) + partials)
