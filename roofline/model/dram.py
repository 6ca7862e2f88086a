"""DRAM bytes of a tiled GEMM: the compulsory bytes plus the panels the L2 cannot keep between the
waves of its grid.

The GMEM count of `traffic` is what the blocks ask of the memory system; the L2 serves most of it.
What reaches DRAM depends on which blocks run at once. A block owning the BM x BN tile of C at
tile row r and tile column c reads the A panel of row r (BM x K elements) and the B panel of
column c (K x BN). The GPU runs `block_slots` blocks at once (SMs x active blocks per SM) and
starts them in launch order (blockIdx.x fastest, then y, then z), so the launch goes in waves of
`block_slots` consecutive tiles. The model, per wave:

- every block of a wave walks K at about the same pace, so a panel several blocks of one wave
  share is fetched from DRAM once for them all;
- a panel a wave needs that an earlier wave read is still in the L2 when the distinct panels read
  since (from that wave on, in full) fit in the L2's usable capacity; otherwise it is fetched
  again. Blocks stream their panels along K together, so a wave whose panels overflow the L2
  leaves only their far ends behind, which the next wave reaches last: a whole miss (the cyclic
  case of LRU replacement);
- C is written once (M x N x 4 bytes; the ladder launches with beta = 0, so C is not read);
- a kernel that splits K into S slices reads panels of K / S and its partial sums stay in the L2
  when the S x M x N floats fit, else they are written and read back once more.

The usable capacity is half the L2 on GPUs whose L2 is split in two partitions (compute
capability 8.0 and newer: A100, H100, H200, ...), where a line read by SMs on both sides is kept
in both; the whole L2 before. This half is an assumption checked against Nsight Compute's counts
on the H200 (60 MiB of L2) at 4096^3 (`plots/results-h200.json`, `plots/counters-h200-bf16.json`):

    kernel (tile, blocks at once)          modelled    counted      with the full L2
    register_tiling_2d FP32 (128x128, 264)  408.9 MB    400.6 MB     408.9 MB
    async_copy FP32 (128x256, 132)          408.9 MB    396.2 MB     408.9 MB
    mma_pipeline BF16 (128x256, 132)        238.0 MB    225.3 MB     134.2 MB
    wgmma_ws BF16 (128x256, grouped, 132)   253.8 MB    241.1 MB     134.2 MB

and it is where the model is weakest: small tiles (32x32, 64x64) and kernels whose blocks drift
apart along K miss more than it counts (naive: 4.33 GB modelled, 8.52 GB counted; autotuned,
128x128: 409 MB against 625 MB). `docs/model.md` gives the worked example at 8192^3 and each
rung's figures beside the counted ones.
"""

from __future__ import annotations

from .problem import BYTES_PER_FLOAT, Problem
from .units import cdiv

COLS_FIRST, ROWS_FIRST, GROUPED = "cols", "rows", "grouped"
PARTITIONED_L2_FROM = (8, 0)  # compute capability from which the L2 is two partitions (A100 whitepaper)
MAX_TILES = 2**20  # a grid of more tiles (a 1 x 1 tile at 2048^2) is not walked: its DRAM bytes are not modelled


def usable_l2_bytes(l2_bytes: int, compute_capability: str | None) -> int:
    """The L2 capacity the wave model reads panels against: half of `l2_bytes` on a GPU of compute
    capability 8.0 or newer (two partitions, a line shared by both kept twice), all of it before
    or when the capability is unknown. H200: 60 MiB, 30 MiB usable."""
    try:
        major, minor = (int(x) for x in (compute_capability or "").split("."))
    except ValueError:
        return l2_bytes
    return l2_bytes // 2 if (major, minor) >= PARTITIONED_L2_FROM else l2_bytes


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


def dram_bytes(problem: Problem, block_tile: tuple[int, int], block_slots: int, l2_usable_bytes: int,
               order: str = COLS_FIRST, group: int = 8, splits: int = 1) -> float | None:
    """Bytes one launch moves between DRAM and the L2, as the module says: the A and B panels each
    wave fetches (A of BM x K / `splits` elements, B of K / `splits` x BN, at `problem`'s element
    size), C written once in FP32, and the partial sums of a split K where they overflow the L2.
    `block_slots` >= 1 blocks run at once; `l2_usable_bytes` (`usable_l2_bytes`) is the capacity the
    panels compete for. None for a grid of more than `MAX_TILES` tiles (the walk would take
    minutes; no tiled kernel has one). Raises ValueError for an unknown `order`.

    Worked example, register_tiling_2d at 4096^3 FP32 on the H200 (128 x 128 tiles, 2 blocks per
    SM: 264 at once; 30 MiB usable): a wave is 8.25 rows of 32 tiles, reading 9 A panels of 2 MiB
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
    slots = max(1, block_slots)
    last: dict[tuple, int] = {}  # panel -> the last wave that read it
    size: dict[tuple, int] = {}
    fetched = 0
    for wave, start in enumerate(range(0, len(tiles), slots)):
        panels = set()
        for z, r, c in tiles[start:start + slots]:
            panels.add(("A", z, r))
            panels.add(("B", z, c))
        # bytes of the distinct panels read from each earlier wave on: since[j] = sum over waves >= j
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
    c_bytes = BYTES_PER_FLOAT * problem.m * problem.n
    partials = 0
    if splits > 1 and splits * c_bytes > l2_usable_bytes:
        partials = 2 * splits * BYTES_PER_FLOAT * tiles_m * bm * tiles_n * bn
    return float(fetched + c_bytes + partials)
