"""Kernel families: one entry per kernel of the ladder, read in order from naive to cuBLAS class.

A `Family` says everything Python needs about a kernel in roofline/kernels/: its `__global__` template and
file, its template parameter names in declaration order and the ladder's values for them, how a
tile of parameters turns into a launch (threads per block, the C tile one block owns) and into
the traffic model, the oldest architecture that can run it, and whether it takes dynamic shared
memory. A `KernelSpec` is a family at one tile. The ladder, `--kernel` choices, tile variants,
`roofline run --tune`'s candidates and the profiled launch are all built from these entries and one
generic launcher (`measure.runner`).

What Python does not know: which tiles are valid (the kernels' `static_assert`s decide, at compile
time) and how much dynamic shared memory a pipelined kernel needs (the kernel file says it as
`<kernel>_smem_bytes<...>`, read through the compiler by `measure.nvrtc_compile.dynamic_smem_bytes`).
cuBLAS, the reference, is not a family: it has no source and no traffic model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ..errors import UsageError
from ..model.device import DeviceSpec
from ..model.precision import PRECISIONS
from ..model.problem import Problem
from ..model.dram import COLS_FIRST, GROUPED, ROWS_FIRST
from ..model.traffic import ModelFigures, TrafficModel
from ..model.units import cdiv
from . import dispatch
from .sources import source

REFERENCE = "cublas"
Params = dict[str, int]


@dataclass(frozen=True)
class Family:
    """One kernel of roofline/kernels/ (see the module docstring).

    `threads(p)` is the block size and `c_tile(p)` the (rows, cols) of C one block owns, for
    parameters `p`; `reuse(p)` is the traffic model's (block tile, thread tile). `rows_first`: the
    grid's x walks the rows of C (the first three kernels). `square_block`: the block is
    (BS, BS) rather than one-dimensional. `dynamic_smem`: the kernel file defines
    `<template>_smem_bytes<params>`. `variants`: whether other tiles are offered (`variant`).
    `choose(problem, device)`: the tile this family runs at for a problem on a GPU (a dispatch,
    `ladder.dispatch`; None: always its own). `workspace(params, problem)`: the zeroed float and
    unsigned buffers (element counts) the kernel takes after C (None: it takes none).
    `cooperative(params)`: whether its blocks wait for each other, so that it must be launched
    cooperatively (all blocks resident at once, or the driver refuses the launch)."""

    name: str
    summary: str
    params: tuple[str, ...]
    ladder: Params
    threads: Callable[[Params], int]
    c_tile: Callable[[Params], tuple[int, int]]
    reuse: Callable[[Params], tuple[tuple[int, int], tuple[int, int] | None]]
    template: str = ""
    file: str = ""
    min_cc: tuple[int, int] = (7, 0)
    rows_first: bool = False
    square_block: bool = False
    dynamic_smem: bool = False
    variants: bool = True
    warp: Callable[[Params], tuple[int, int]] | None = None  # thread tiles a warp covers (rows, cols)
    choose: Callable[[Problem, DeviceSpec], Params] | None = None  # the tile for a problem and GPU
    workspace: Callable[[Params, Problem], tuple[int, int]] | None = None  # (floats, counters) beside C
    cooperative: Callable[[Params], bool] | None = None  # blocks that wait for each other: a cooperative launch
    rule: Callable[[Params], str | None] | None = None  # a static_assert between parameters, checked ahead: why not
    # The tensor-core ladder (roofline/kernels/tensor.cuh): the precisions it runs in (its first template
    # argument is the element type), the tile its SMEM reads are shared across (a warp's for
    # mma.sync, a warpgroup's for wgmma), the TMA boxes (rows, K elements) of A and B it takes
    # after C, whether it needs the arch-specific target (sm_90a: wgmma, setmaxnreg) and whether
    # its grid is one-dimensional (blocks take their tiles in groups of rows: hopper.cuh).
    dtypes: tuple[str, ...] = ("fp32",)
    operand_tile: Callable[[Params], tuple[int, int]] | None = None
    tma_boxes: Callable[[Params], tuple[tuple[int, int], tuple[int, int]]] | None = None
    arch_specific: bool = False
    linear_grid: bool = False
    persistent: bool = False  # one resident block per SM (SMS of them at most), each walking C tiles
    # Parameters added after results files recorded this kernel, the last in declaration order,
    # each with the value that is the kernel as it was before it (wgmma_tma's GROUP = 1: its tiles in
    # launch order, columns first): a record without them reads as what ran.
    added: tuple[tuple[str, int], ...] = ()

    @property
    def template_name(self) -> str:
        """The `__global__` function template's name."""
        return self.template or self.name

    @property
    def source_file(self) -> str:
        """The `.cu` file in roofline/kernels/ that holds it."""
        return f"{self.file or self.name}.cu"

    @property
    def tensor(self) -> bool:
        """A tensor-core rung (runs in BF16, FP16 or TF32, never FP32)."""
        return "fp32" not in self.dtypes

    def ladder_for(self, dtype: str) -> Params:
        """The ladder's tile in precision `dtype`: a tensor rung's K tile (BK, in elements) is given
        for 2-byte elements and halves for 4-byte TF32, so that a tile row keeps its bytes."""
        if not self.tensor or "BK" not in self.ladder:
            return dict(self.ladder)
        return {**self.ladder, "BK": self.ladder["BK"] * 2 // PRECISIONS[dtype].element_bytes}

    def spec(self, params: Params | None = None, tile_source: str = "ladder", dtype: str | None = None) -> "KernelSpec":
        """This family at tile `params` (default: the ladder's) in precision `dtype` (default: the
        family's first). Raises UsageError when `params` does not name exactly this family's
        parameters, each a positive integer, when a thread tile does not divide its block tile (TM
        into BM, TN into BN: the threads per block follow from it), or for a precision the family
        does not run in, and where the family's `rule` between parameters fails (split_k's REDUCERS: 1
        or SPLITS). Every other rule is the kernel's static_asserts', checked when it compiles."""
        dtype = dtype or self.dtypes[0]
        if dtype not in self.dtypes:
            raise UsageError(f"{self.name} runs in {', '.join(d.upper() for d in self.dtypes)}, not {dtype.upper()}")
        params = dict(self.ladder_for(dtype) if params is None else params)
        if self.added and set(params) == set(self.params) - {name for name, _ in self.added}:
            params.update(self.added)  # a record from before they were added
        if set(params) != set(self.params) or min(params.values()) < 1:
            raise UsageError(f"{self.name} takes {len(self.params)} positive parameters ({', '.join(self.params)})")
        for block, thread in (("BM", "TM"), ("BN", "TN")):
            if thread in params and params[block] % params[thread]:
                raise UsageError(f"{self.name}: {thread} = {params[thread]} does not divide {block} = {params[block]}")
        broken = self.rule(params) if self.rule is not None else None
        if broken:
            raise UsageError(f"{self.name}: {broken}")
        return KernelSpec(self, {k: params[k] for k in self.params}, tile_source, dtype)

    def runs_on(self, compute_capability: str) -> bool:
        """Whether the kernel can be compiled for compute capability '8.0' etc. (cp.async needs 8.0;
        an arch-specific kernel, wgmma's, runs on exactly its compute capability: 9.0)."""
        major, minor = (int(x) for x in compute_capability.split("."))
        if self.arch_specific:
            return (major, minor) == self.min_cc
        return (major, minor) >= self.min_cc

    def unavailable_reason(self, arch: str) -> str:
        """One line saying why the kernel is left out on target `arch`."""
        target = f"sm_{self.min_cc[0]}{self.min_cc[1]}"
        if self.arch_specific:
            return f"{self.name} uses Hopper's wgmma and TMA ({target}a only); not run on {arch}"
        return f"{self.name} needs {target} or newer; not run on {arch}"

    def target(self, arch: str) -> str:
        """The compile target on GPU target `arch`: 'sm_90a' for an arch-specific kernel."""
        return f"{arch}a" if self.arch_specific and not arch.endswith("a") else arch


@dataclass(frozen=True)
class KernelSpec:
    """A family at one tile. `tile_source` says where the tile came from: 'ladder' (the family's
    own), 'built-in' or 'tuned' (autotuned's winner for a GPU), 'flag' (given on the command
    line), 'default' (no winner known), or 'variant'."""

    family: Family
    params: Params = field(default_factory=dict)
    tile_source: str = "ladder"
    dtype: str = "fp32"

    @property
    def name(self) -> str:
        """The ladder name ('register_tiling_2d')."""
        return self.family.name

    @property
    def name_expression(self) -> str:
        """The template instantiation NVRTC compiles, e.g. 'register_tiling_2d<128,128,8,8,8>'; a
        tensor rung's names its element type first ('wgmma_ws<bf16,256,64,4,8>')."""
        return f"{self.family.template_name}<{self._arguments}>"

    @property
    def _arguments(self) -> str:
        values = [str(v) for v in self.params.values()]
        return ",".join([self.dtype] + values if self.family.tensor else values)

    @property
    def summary(self) -> str:
        """One line on what the kernel does."""
        return self.family.summary

    @property
    def kernel_name(self) -> str:
        """The `__global__` function's name without template arguments (Nsight Compute's filter)."""
        return self.family.template_name

    @property
    def source_name(self) -> str:
        """The file compiler messages name."""
        return self.family.source_file

    def source_text(self) -> str:
        """The kernel file with its local includes inlined."""
        return source(self.family.source_file)

    def for_problem(self, problem: Problem, device: DeviceSpec) -> "KernelSpec":
        """This kernel as it runs on `problem` on `device`: a dispatching family at its own tile
        runs at the tile its `choose` picks (tile source 'shape'); a tile given explicitly
        (a variant) and every other kernel run as they are."""
        if self.family.tensor and problem.dtype != self.dtype:
            return self.family.spec(None, self.tile_source, problem.dtype).for_problem(problem, device)
        if self.family.choose is None or self.tile_source != "ladder":
            return self
        return self.family.spec(self.family.choose(problem, device), "shape", self.dtype)

    @property
    def cooperative(self) -> bool:
        """Whether the kernel's blocks wait for each other (split_k whose tile's blocks add its
        slices together), so that it is launched cooperatively: every block resident at once."""
        return self.family.cooperative is not None and self.family.cooperative(self.params)

    def workspace(self, problem: Problem) -> tuple[int, int] | None:
        """(floats, unsigned counters) of zeroed memory the kernel takes after C on `problem`, or
        None for a kernel that takes the eight standard arguments only."""
        return None if self.family.workspace is None else self.family.workspace(self.params, problem)

    @property
    def compile_options(self) -> tuple[str, ...]:
        """NVRTC options besides the target."""
        return ("-std=c++17",)

    @property
    def fixed_dynamic_smem_bytes(self) -> int:
        """Dynamic shared memory given as a number (0: ladder kernels that take it say so through
        `smem_expression`)."""
        return 0

    @property
    def threads_per_block(self) -> int:
        """Threads in one block."""
        return self.family.threads(self.params)

    @property
    def block(self) -> tuple[int, int, int]:
        """The block's shape (x, y, z)."""
        if self.family.square_block:
            bs = self.params["BS"]
            return (bs, bs, 1)
        return (self.threads_per_block, 1, 1)

    @property
    def block_tile(self) -> tuple[int, int]:
        """(rows, cols) of C one block owns."""
        return self.family.c_tile(self.params)

    @property
    def model(self) -> TrafficModel:
        """The traffic model at this tile."""
        block_tile, thread_tile = self.family.reuse(self.params)
        f = self.family
        order = GROUPED if f.linear_grid or f.persistent else ROWS_FIRST if f.rows_first else COLS_FIRST
        placed = {"order": order, "group": self.params.get("GROUP", 8),
                  "c_tile": self.block_tile if self.block_tile != block_tile else None}
        if f.operand_tile is not None:
            return TrafficModel(block_tile=block_tile, thread_tile=None, operand_tile=f.operand_tile(self.params), **placed)
        warp = (f.warp or _row_major_warp)(self.params) if thread_tile is not None or f.warp else None
        return TrafficModel(block_tile=block_tile, thread_tile=thread_tile, warp_layout=warp,
                            splits=self.params.get("SPLITS", 1), **placed)

    def figures(self, problem: Problem) -> ModelFigures:
        """The model's figures for `problem` (a user kernel's may be None: `UserKernel.figures`)."""
        return self.model.figures(problem)

    def grid(self, problem: Problem) -> tuple[int, int, int]:
        """Grid dimensions covering `problem`'s M x N output with `block_tile` tiles (and, for a
        kernel that splits K, SPLITS slices in z)."""
        if self.family.persistent:
            return (min(self.params["SMS"], self.tiles(problem)), 1, 1)
        if self.family.linear_grid:
            return (self.tiles(problem), 1, 1)
        bm, bn = self.block_tile
        if self.family.rows_first:
            return (cdiv(problem.m, bm), cdiv(problem.n, bn), 1)
        return (cdiv(problem.n, bn), cdiv(problem.m, bm), self.params.get("SPLITS", 1))

    @property
    def smem_expression(self) -> str | None:
        """The constant expression giving the dynamic shared memory in bytes (None when the kernel
        takes none), e.g. 'async_copy_smem_bytes<128,256,16,32,128,8,16,3>'."""
        if not self.family.dynamic_smem:
            return None
        return f"{self.family.template_name}_smem_bytes<{self._arguments}>"

    def tile_grid(self, problem: Problem) -> tuple[int, int, int]:
        """The grid of work units the waves are counted in: the launch grid, or for a persistent
        kernel one unit per C tile (its blocks take them in turns, as blocks of a grid would)."""
        return (self.tiles(problem), 1, 1) if self.family.persistent else self.grid(problem)

    def tiles(self, problem: Problem) -> int:
        """Block tiles covering `problem`'s M x N output."""
        bm, bn = self.block_tile
        return cdiv(problem.m, bm) * cdiv(problem.n, bn)

    def target(self, arch: str) -> str:
        """The compile target on GPU target `arch` (`Family.target`)."""
        return self.family.target(arch)

    def tma_boxes(self) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """The TMA boxes (rows, K elements) of A and B the kernel loads, None for a kernel without TMA."""
        return None if self.family.tma_boxes is None else self.family.tma_boxes(self.params)


# Launch shapes and models, by how a kernel divides the work.
def _element(p: Params) -> tuple[int, int]:
    return (p["BS"], p["BS"])


def _tile(p: Params) -> tuple[int, int]:
    return (p["BM"], p["BN"])


def _outer(p: Params) -> int:  # one thread per TM x TN results (TM or TN absent: 1)
    return p["BM"] * p["BN"] // (p.get("TM", 1) * p.get("TN", 1))


def _register_tiled(p: Params):
    return _tile(p), (p.get("TM", 1), p.get("TN", 1))


def _row_major_warp(p: Params) -> tuple[int, int]:
    """Threads numbered along a row of thread tiles first (BN/TN per row): a warp covers
    32/cols rows of cols = min(32, BN/TN) tiles (smem_tiling, the 1-D and 2-D register tiles)."""
    cols = min(32, p.get("BN", p.get("BS", 32)) // p.get("TN", 1))
    return 32 // cols, cols


def _warp_tile(p: Params) -> tuple[int, int]:
    """A warp owns a WM x WN warp tile of TM x TN thread tiles."""
    return p["WM"] // p["TM"], p["WN"] // p["TN"]


TILED = ("BM", "BN", "BK", "TM", "TN")
WARP_TILED = ("BM", "BN", "BK", "WM", "WN", "TM", "TN")
T128 = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}
PIPELINE = {"BM": 128, "BN": 256, "BK": 16, "WM": 32, "WN": 128, "TM": 8, "TN": 16, "STAGES": 3}


def _pipelined(name: str, summary: str) -> Family:
    return Family(name, summary, WARP_TILED + ("STAGES",), PIPELINE, _outer, _tile, _register_tiled,
                  min_cc=(8, 0), dynamic_smem=True, warp=_warp_tile)


def _chosen(split: bool) -> Callable[[Problem, DeviceSpec], Params]:
    def choose(problem: Problem, device: DeviceSpec) -> Params:
        limits = device.arch_limits
        choice = dispatch.choose(problem, device.sm_count, device.peak_fp32_gflops, split, limits.smem_per_sm_bytes,
                                 limits.reserved_smem_per_block_bytes)
        return choice.params if split else choice.candidate.params
    return choose


def _split_workspace(p: Params, problem: Problem) -> tuple[int, int]:
    """Partial sums: a BM x BN slab per tile and slice; an arrival counter per tile, and a departure
    counter too where the tile's blocks add its slices together (REDUCERS > 1; split_k.cu)."""
    tiles = cdiv(problem.m, p["BM"]) * cdiv(problem.n, p["BN"])
    counters = tiles * (2 if _split_together(p) else 1)
    return (tiles * p["SPLITS"] * p["BM"] * p["BN"], counters) if p["SPLITS"] > 1 else (1, 1)


def _split_rule(p: Params) -> str | None:
    """split_k.cu's static_assert between its parameters: the last block adds the slices
    (REDUCERS = 1), or all of the tile's (REDUCERS = SPLITS)."""
    if p["REDUCERS"] not in (1, p["SPLITS"]):
        return f"REDUCERS = {p['REDUCERS']} is neither 1 nor SPLITS = {p['SPLITS']} (the last block adds the slices, " \
               "or all of the tile's do)"
    return None


def _split_together(p: Params) -> bool:
    """split_k whose tile's blocks wait for each other to add the slices together."""
    return p["SPLITS"] > 1 and p["REDUCERS"] > 1


LADDER: tuple[Family, ...] = (
    Family("naive", "one thread per element of C; a warp reads 32 rows of A (uncoalesced)",
           ("BS",), {"BS": 32}, lambda p: p["BS"] ** 2, _element, lambda p: ((1, 1), None),
           rows_first=True, square_block=True, variants=False, warp=lambda p: (32, 1)),  # threadIdx.x walks rows
    Family("gmem_coalescing", "a warp owns 32 consecutive columns of C: coalesced B and C",
           ("BS",), {"BS": 32}, lambda p: p["BS"] ** 2, _element, lambda p: ((1, 1), None),
           rows_first=True, variants=False, warp=lambda p: (1, 32)),  # a warp: 32 columns of one row
    Family("smem_tiling", "32x32 tiles of A and B staged in shared memory",
           ("BS",), {"BS": 32}, lambda p: p["BS"] ** 2, _element, lambda p: (_element(p), (1, 1)),
           rows_first=True, variants=False),
    Family("register_tiling_1d", "64x64 block tile, each thread a column of TM=8 results",
           ("BM", "BN", "BK", "TM"), {"BM": 64, "BN": 64, "BK": 8, "TM": 8}, _outer, _tile, _register_tiled,
           variants=False),
    Family("register_strip", "64x64 block tile, each thread a 1x8 row strip, its A values in registers",
           ("BM", "BN", "BK", "TN"), {"BM": 64, "BN": 64, "BK": 8, "TN": 8}, _outer, _tile, _register_tiled,
           variants=False, warp=lambda p: (32, 1)),  # thread t owns row t % BM: a warp, 32 rows of one strip
    Family("register_tiling_2d", "128x128 block tile, each thread an 8x8 outer-product tile",
           TILED, T128, _outer, _tile, _register_tiled, variants=False),
    Family("vectorized", "128-bit global and shared loads, A tile transposed", TILED, T128, _outer, _tile,
           _register_tiled),
    Family("bank_conflict_free", "thread tile split into 4x4 pieces, padded A tile: fragment loads free of "
           "bank conflicts", TILED, T128, _outer, _tile, _register_tiled),
    Family("autotuned", "bank_conflict_free at the tile `roofline run --tune` picks for this GPU", TILED, T128,
           _outer, _tile, _register_tiled),
    Family("warptiling", "16x64 warp tiles between the 128x128 block tile and 4x8 thread tiles", WARP_TILED,
           {"BM": 128, "BN": 128, "BK": 16, "WM": 16, "WN": 64, "TM": 4, "TN": 8}, _outer, _tile,
           _register_tiled, warp=_warp_tile),
    _pipelined("async_copy", "3-stage cp.async pipeline, 128x256 block, 32x128 warp, 8x16 thread tiles"),
    _pipelined("full_tiles", "blocks wholly inside C run the pipeline without bounds checks"),
    Family("tile_by_shape", "full_tiles at the block and thread tile that fills this GPU's SMs best for the "
           "problem's shape", WARP_TILED + ("STAGES",), PIPELINE, _outer, _tile, _register_tiled,
           template="full_tiles", file="full_tiles", min_cc=(8, 0), dynamic_smem=True, variants=False,
           warp=_warp_tile,
           choose=_chosen(split=False)),
    Family("split_k", "tile_by_shape that also cuts K into slices when the tiles are too few; the slices' partial "
           "sums added in a fixed order", WARP_TILED + ("STAGES", "SPLITS", "REDUCERS"),
           {**PIPELINE, "SPLITS": 1, "REDUCERS": 1}, _outer, _tile, _register_tiled, min_cc=(8, 0),
           dynamic_smem=True, variants=False, warp=_warp_tile, choose=_chosen(split=True),
           workspace=_split_workspace, cooperative=_split_together, rule=_split_rule, added=(("REDUCERS", 1),)),
)

# The tensor-core ladder (BF16, FP16 or TF32 in, FP32 accumulate; B stored N x K: model.problem).
# BK is in elements of a 2-byte type (halved in TF32: `Family.ladder_for`).
TENSOR_DTYPES = ("bf16", "fp16", "tf32")
MMA_TILED = ("BM", "BN", "BK", "WM", "WN")


def _warps(p: Params) -> int:
    return (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32


def _mma(name: str, summary: str, params: Params, pipelined: bool = False) -> Family:
    return Family(name, summary, MMA_TILED + (("STAGES",) if pipelined else ()), params, _warps, _tile,
                  lambda p: (_tile(p), None), min_cc=(8, 0), dynamic_smem=pipelined, variants=False,
                  dtypes=TENSOR_DTYPES, operand_tile=lambda p: (p["WM"], p["WN"]))


def _wgmma_boxes(p: Params) -> tuple[tuple[int, int], tuple[int, int]]:
    return (p.get("BM", 128), p["BK"]), (p["BN"], p["BK"])


def _choose_wgmma(problem: Problem, device: DeviceSpec) -> Params:
    return dispatch.choose_wgmma(problem, device.sm_count).params_for(problem.dtype)


def _on_every_sm(problem: Problem, device: DeviceSpec) -> Params:
    """wgmma_persistent's ladder tile with one block for each of the GPU's SMs."""
    return {**BY_NAME["wgmma_persistent"].ladder_for(problem.dtype), "SMS": device.sm_count}


WS_PARAMS = ("BN", "BK", "STAGES", "GROUP")
PERSISTENT_PARAMS = WS_PARAMS + ("SMS",)


def _specialised(name: str, summary: str, params: tuple[str, ...], ladder: Params, **kw) -> Family:
    """A warp-specialised wgmma rung (wgmma_ws.cu, wgmma_persistent.cu): 384 threads, a 128 x BN
    block of two 64 x BN consumer tiles, TMA boxes of A and B, sm_90a."""
    return Family(name, summary, params, ladder, lambda p: 384, lambda p: (128, p["BN"]),
                  lambda p: ((128, p["BN"]), None), min_cc=(9, 0), dynamic_smem=True, variants=False,
                  dtypes=TENSOR_DTYPES, operand_tile=lambda p: (64, p["BN"]), tma_boxes=_wgmma_boxes,
                  arch_specific=True, **kw)


WS_LADDER = {"BN": 256, "BK": 64, "STAGES": 4, "GROUP": 8}
TENSOR_LADDER: tuple[Family, ...] = (
    _mma("mma_sync", "warp tiles of mma.sync (m16n8, FP32 accumulate), fragments read with 32-bit shared loads "
         "(4-way bank conflicts)", {"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 32}),
    _mma("mma_ldmatrix", "mma_sync with XOR-swizzled tiles read by ldmatrix: no bank conflicts",
         {"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 32}),
    _mma("mma_pipeline", "4-stage cp.async pipeline, 128x256 block, 64x64 warp tiles",
         {"BM": 128, "BN": 256, "BK": 32, "WM": 64, "WN": 64, "STAGES": 4}, pipelined=True),
    Family("wgmma_tma", "Hopper warpgroup MMA from shared memory, tiles loaded by TMA through a 4-stage mbarrier "
           "pipeline, 128x256 block as two warpgroups of 64x256, tiles taken in groups of 8 rows",
           ("BM", "BN", "BK", "STAGES", "GROUP"), {"BM": 128, "BN": 256, "BK": 64, "STAGES": 4, "GROUP": 8},
           lambda p: 2 * p["BM"], _tile, lambda p: (_tile(p), None), min_cc=(9, 0), dynamic_smem=True, variants=False,
           dtypes=TENSOR_DTYPES, operand_tile=lambda p: (64, p["BN"]), tma_boxes=_wgmma_boxes, arch_specific=True,
           linear_grid=True, added=(("GROUP", 1),)),
    _specialised("wgmma_ws", "warp specialisation: a TMA producer warpgroup, two wgmma consumer warpgroups, "
                 "128x256 block, tiles taken in groups of 8 rows", WS_PARAMS, WS_LADDER, linear_grid=True),
    _specialised("wgmma_persistent", "wgmma_ws as a persistent kernel: one block per SM walks the C tiles, its "
                 "stage ring running on across tiles", PERSISTENT_PARAMS, {**WS_LADDER, "SMS": 132},
                 persistent=True, choose=_on_every_sm),
    _specialised("wgmma_by_shape", "wgmma_persistent at the block tile (128x256 or 128x128) whose waves fill this "
                 "GPU's SMs best for the problem's shape", PERSISTENT_PARAMS, {**WS_LADDER, "SMS": 132},
                 template="wgmma_persistent", file="wgmma_persistent", persistent=True, choose=_choose_wgmma),
)
LADDERS = {"fp32": LADDER, "tensor": TENSOR_LADDER}

BY_NAME: dict[str, Family] = {f.name: f for f in LADDER + TENSOR_LADDER}
TUNABLE = "autotuned"  # the family `roofline run --tune` searches


def names() -> list[str]:
    """Every name `--kernel` accepts: the FP32 ladder in order, the tensor ladder, then the reference."""
    return [f.name for f in LADDER + TENSOR_LADDER] + [REFERENCE]


def family(name: str) -> Family:
    """The family called `name`. Raises UsageError listing the valid names."""
    if name not in BY_NAME:
        raise UsageError(f"unknown kernel {name!r}; valid: {', '.join(names())}")
    return BY_NAME[name]


def check_names(requested: list[str] | None) -> None:
    """Raise UsageError for the first name in `requested` that is neither a ladder kernel nor 'cublas'."""
    for name in requested or []:
        if name != REFERENCE:
            family(name)


def select(requested: list[str] | None, autotuned: KernelSpec | None = None, dtype: str = "fp32") -> list[KernelSpec]:
    """The ladder entries for `--kernel` names (all of the precision's ladder for None or empty:
    the FP32 ladder for 'fp32', the tensor ladder for the others), in ladder order, each at its
    ladder tile in `dtype` except `autotuned`, which runs as `autotuned` when given (the caller
    resolves its tile: `tiles.resolve`). 'cublas' is accepted and ignored (the reference always
    runs). Raises UsageError for an unknown name or a kernel that does not run in `dtype`."""
    check_names(requested)
    ladder = LADDERS["fp32" if dtype == "fp32" else "tensor"]
    for name in requested or []:
        if name != REFERENCE and BY_NAME[name] not in ladder:
            other = "the tensor ladder ({dtype} bf16, fp16 or tf32)" if BY_NAME[name].tensor else "the FP32 ladder"
            raise UsageError(f"{name} belongs to {other}; it does not run in {dtype.upper()}", "kernel", ["dtype"])
    chosen = [f for f in ladder if not requested or f.name in requested]
    return [autotuned if f.name == TUNABLE and autotuned is not None else f.spec(dtype=dtype) for f in chosen]


_EXPRESSION = re.compile(r"\s*(\w+)\s*<\s*(?:(bf16|fp16|tf32)\s*,)?([-+\d\s,]*)>\s*")


def from_expression(expression: str, only_variants: bool = False) -> KernelSpec:
    """The kernel a name expression such as 'warptiling<128,128,16,32,64,8,8>' names: the family
    by its template name, the parameters in declaration order. With `only_variants`, only the
    families that offer other tiles are accepted. Raises UsageError for an expression that names
    no family or gives the wrong number of parameters; whether the tile is valid is the kernel's
    own static_asserts' to say, at compile time."""
    match = _EXPRESSION.fullmatch(expression)
    by_template: dict[str, Family] = {}
    for f in LADDER + TENSOR_LADDER:  # a template two families share (full_tiles) names the first
        if f.variants or not only_variants:
            by_template.setdefault(f.template_name, f)
    if not match or match.group(1) not in by_template:
        raise UsageError(f"cannot read {expression!r}; expected e.g. warptiling<128,128,16,32,64,8,8> "
                         f"with one of: {', '.join(by_template)}")
    fam = by_template[match.group(1)]
    try:
        values = [int(v) for v in match.group(3).split(",")]
    except ValueError:
        values = []
    if fam.added and len(values) == len(fam.params) - len(fam.added):
        values += [value for _, value in fam.added]  # a record from before they were added
    if len(values) != len(fam.params):
        raise UsageError(f"{fam.name} takes {len(fam.params)} positive parameters ({', '.join(fam.params)})")
    if fam.tensor != bool(match.group(2)):
        raise UsageError(f"{fam.name} takes " + ("its element type (bf16, fp16 or tf32) first" if fam.tensor
                                                 else "no element type"))
    return fam.spec(dict(zip(fam.params, values)), tile_source="variant", dtype=match.group(2))


def variant(expression: str) -> KernelSpec:
    """A ladder kernel at other tile sizes (`from_expression` for the families from `vectorized` on)."""
    return from_expression(expression, only_variants=True)


# The ladder's steps by technique: charts that must tell a dozen kernels apart colour each group
# with its own hue and the steps inside it by shade, marker and line style.
TECHNIQUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("no reuse", ("naive", "gmem_coalescing")),
    ("shared-memory tiles", ("smem_tiling",)),
    ("register tiles", ("register_tiling_1d", "register_strip", "register_tiling_2d")),
    ("128-bit loads, no bank conflicts", ("vectorized", "bank_conflict_free", "autotuned")),
    ("warp tiles, cp.async pipelines", ("warptiling", "async_copy", "full_tiles")),
    ("tile and split K by shape", ("tile_by_shape", "split_k")),
    ("mma.sync tensor cores", ("mma_sync", "mma_ldmatrix", "mma_pipeline")),
    ("wgmma, TMA, warp specialisation", ("wgmma_tma", "wgmma_ws", "wgmma_persistent", "wgmma_by_shape")),
)


def technique(name: str) -> tuple[int, int, int] | None:
    """Where ladder kernel `name` sits in `TECHNIQUES`: (group index, position in the group, size
    of the group); None for a name that is not a ladder step (a variant, the user's kernel)."""
    for g, (_, members) in enumerate(TECHNIQUES):
        if name in members:
            return g, members.index(name), len(members)
    return None
