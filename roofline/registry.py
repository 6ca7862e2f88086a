"""The SGEMM ladder: one entry per kernel, read in order from naive to cuBLAS-class.

Each `KernelSpec` names its source in `kernels/`, its template parameters (tile sizes), how it is
launched (block and grid as functions of the problem) and its traffic model (`model.TrafficModel`).
One generic launcher (`runner`) serves every entry; adding a kernel is adding an entry here and a
`.cu` file there. cuBLAS, the reference, is not an entry: it has no source and no traffic model.
`autotuned` takes its tile from `tuning` (the shape searched on the GPU at hand, a default
elsewhere).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import RunError, UsageError
from .model import TrafficModel

REFERENCE = "cublas"


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of the ladder.

    `params` are the template arguments in declaration order (e.g. BM, BN, BK, TM, TN);
    `block_tile` is the (rows, cols) of C one block owns; `block` the thread-block shape;
    `grid_rows_first` says the grid's x dimension walks the rows of C (the naive kernel) instead of
    its columns; `dynamic_smem_bytes` is the dynamic shared memory each block is launched with.
    `template` is the `__global__` function's name and `file` the `.cu` file in `kernels/` (both
    default to `name`). `summary` says in one line what the kernel changes over the previous step.
    """

    name: str
    summary: str
    params: dict[str, int]
    block: tuple[int, int, int]
    block_tile: tuple[int, int]
    model: TrafficModel
    grid_rows_first: bool = False
    dynamic_smem_bytes: int = 0
    template: str = ""
    file: str = ""
    min_cc: tuple[int, int] = (7, 0)

    def runs_on(self, compute_capability: str) -> bool:
        """Whether the kernel can be compiled for compute capability '8.0' etc. (cp.async, for
        one, needs sm_80)."""
        major, minor = (int(x) for x in compute_capability.split("."))
        return (major, minor) >= self.min_cc

    def unavailable_reason(self, arch: str) -> str:
        """One line saying why the kernel is left out on `arch`."""
        return f"{self.name} needs sm_{self.min_cc[0]}{self.min_cc[1]} or newer; not run on {arch}"

    @property
    def source_file(self) -> str:
        """The `.cu` file in `kernels/` holding this kernel."""
        return f"{self.file or self.name}.cu"

    @property
    def name_expression(self) -> str:
        """The template instantiation NVRTC compiles, e.g. 'register_tiling_2d<128,128,8,8,8>'."""
        return f"{self.template or self.name}<{','.join(str(v) for v in self.params.values())}>"

    @property
    def threads_per_block(self) -> int:
        """Threads in one block (product of `block`)."""
        x, y, z = self.block
        return x * y * z

    def grid(self, m: int, n: int) -> tuple[int, int, int]:
        """Grid dimensions covering an M x N output with `block_tile` tiles."""
        bm, bn = self.block_tile
        if self.grid_rows_first:
            return (_cdiv(m, bm), _cdiv(n, bn), 1)
        return (_cdiv(n, bn), _cdiv(m, bm), 1)


def _spec(name, summary, params, block, block_tile, model_tiles, thread_tile, rows_first=False):
    return KernelSpec(name, summary, params, block, block_tile,
                      TrafficModel(block_tile=model_tiles, thread_tile=thread_tile), rows_first)


def tiled_spec(name: str, summary: str, params: dict[str, int], **extra) -> KernelSpec:
    """A kernel whose blocks own a BM x BN tile of C and whose threads own TM x TN results:
    block size BM*BN / (TM*TN), GMEM model K(1/BM + 1/BN), SMEM model K(1/TM + 1/TN)."""
    bm, bn, tm, tn = params["BM"], params["BN"], params["TM"], params["TN"]
    return KernelSpec(name, summary, dict(params), (bm * bn // (tm * tn), 1, 1), (bm, bn),
                      TrafficModel(block_tile=(bm, bn), thread_tile=(tm, tn)), **extra)


def autotuned_spec(params: dict[str, int]) -> KernelSpec:
    """The `autotuned` entry at tile `params` (BM, BN, BK, TM, TN)."""
    return tiled_spec("autotuned", f"bank_conflict_free at the searched tile {params['BM']}x{params['BN']}, "
                                   f"BK={params['BK']}, {params['TM']}x{params['TN']} per thread", params)


def pipeline_smem_bytes(params: dict[str, int]) -> int:
    """Dynamic shared memory of the cp.async kernels (`async_copy`, `full_tiles`;
    kernels/pipeline.cuh): STAGES x BK x (BM + 4 + BN) floats, in bytes."""
    return params["STAGES"] * params["BK"] * (params["BM"] + 4 + params["BN"]) * 4


T128 = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}
WARP = {"BM": 128, "BN": 128, "BK": 16, "WM": 16, "WN": 64, "TM": 4, "TN": 8}
ASYNC = {"BM": 128, "BN": 256, "BK": 16, "WM": 32, "WN": 128, "TM": 8, "TN": 16, "STAGES": 3}
PIPELINED = ("async_copy", "full_tiles")  # kernels on kernels/pipeline.cuh


def pipelined_spec(name: str, summary: str, params: dict[str, int]) -> KernelSpec:
    """A cp.async kernel (sm_80+) at tile `params` (BM, BN, BK, WM, WN, TM, TN, STAGES)."""
    return tiled_spec(name, summary, params, dynamic_smem_bytes=pipeline_smem_bytes(params), min_cc=(8, 0))


LADDER: tuple[KernelSpec, ...] = (
    _spec("naive", "one thread per element of C; a warp reads 32 rows of A (uncoalesced)",
          {"BS": 32}, (32, 32, 1), (32, 32), (1, 1), None, rows_first=True),
    _spec("gmem_coalescing", "a warp owns 32 consecutive columns of C: coalesced B and C",
          {"BS": 32}, (1024, 1, 1), (32, 32), (1, 1), None, rows_first=True),
    _spec("smem_tiling", "32x32 tiles of A and B staged in shared memory",
          {"BS": 32}, (1024, 1, 1), (32, 32), (32, 32), (1, 1), rows_first=True),
    _spec("register_tiling_1d", "64x64 block tile, each thread a column of TM=8 results",
          {"BM": 64, "BN": 64, "BK": 8, "TM": 8}, (512, 1, 1), (64, 64), (64, 64), (8, 1)),
    _spec("register_strip", "64x64 block tile, each thread a 1x8 row strip, its A values in registers",
          {"BM": 64, "BN": 64, "BK": 8, "TN": 8}, (512, 1, 1), (64, 64), (64, 64), (1, 8)),
    _spec("register_tiling_2d", "128x128 block tile, each thread an 8x8 outer-product tile",
          {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}, (256, 1, 1), (128, 128), (128, 128), (8, 8)),
    tiled_spec("vectorized", "128-bit global and shared loads, A tile transposed", T128),
    tiled_spec("bank_conflict_free", "thread tile split into 4x4 pieces, padded A tile: no bank conflicts",
               T128, template="bank_conflict_free"),
    autotuned_spec(T128),
    tiled_spec("warptiling", "16x64 warp tiles between the 128x128 block tile and 4x8 thread tiles", WARP),
    pipelined_spec("async_copy", "3-stage cp.async pipeline, 128x256 block, 32x128 warp, 8x16 thread tiles", ASYNC),
    pipelined_spec("full_tiles", "blocks wholly inside C run the pipeline without bounds checks", ASYNC),
)

BY_NAME = {k.name: k for k in LADDER}


def names() -> list[str]:
    """Every name `--kernel` accepts, the ladder in order and then the reference."""
    return [k.name for k in LADDER] + [REFERENCE]


def select(requested: list[str] | None, device_name: str | None = None) -> list[KernelSpec]:
    """The ladder entries for `--kernel` names (all of them for None or empty), in ladder order,
    with `autotuned` at the tile tuned for `device_name` (`tuning.tuned_params`).
    'cublas' is accepted and ignored here (the reference always runs). Raises UsageError for an
    unknown name, listing the valid ones."""
    unknown = [r for r in requested or [] if r not in BY_NAME and r != REFERENCE]
    if unknown:
        raise UsageError(f"unknown kernel {unknown[0]!r}; valid: {', '.join(names())}")
    chosen = [k for k in LADDER if not requested or k.name in requested]
    if device_name is not None:
        from .tuning import tuned_params

        chosen = [autotuned_spec(tuned_params(device_name)) if k.name == "autotuned" else k for k in chosen]
    return chosen


def kernels_dir() -> Path:
    """The folder of the `.cu` sources: roofline/kernels/ in an installed wheel, kernels/ beside
    roofline/ in a source checkout (editable install or PYTHONPATH). Raises RunError when
    neither holds them."""
    here = Path(__file__).resolve().parent
    for folder in (here / "kernels", here.parent / "kernels"):
        if (folder / "common.cuh").is_file():
            return folder
    raise RunError(f"the CUDA kernel sources are missing (looked in {here / 'kernels'} and "
                   f"{here.parent / 'kernels'}); reinstall roofline")


_INCLUDE = re.compile(r'^#include "([^"]+)"[ \t]*$', re.MULTILINE)


def _expand(folder: Path, name: str, seen: set[str]) -> str:
    if name in seen:
        return ""
    seen.add(name)
    text = (folder / name).read_text().replace("#pragma once\n", "")
    return _INCLUDE.sub(lambda m: _expand(folder, m.group(1), seen), text)


def source(spec: KernelSpec) -> str:
    """The kernel's CUDA source with its local includes (`#include "x.cuh"`) inlined, each once,
    so that the text is self-contained (CuPy's compile cache keys on the source text, not on
    included files)."""
    return _expand(kernels_dir(), spec.source_file, set())



_PARAM_NAMES = {
    "vectorized": ("BM", "BN", "BK", "TM", "TN"),
    "bank_conflict_free": ("BM", "BN", "BK", "TM", "TN"),
    "autotuned": ("BM", "BN", "BK", "TM", "TN"),
    "warptiling": ("BM", "BN", "BK", "WM", "WN", "TM", "TN"),
    **{name: ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "STAGES") for name in PIPELINED},
}


def variant(expression: str) -> KernelSpec:
    """A ladder kernel at other tile sizes, from a name expression such as
    'warptiling<128,128,16,32,64,8,8>' (the template parameters in declaration order). Only the
    tiled kernels from `vectorized` on take variants. Raises UsageError for an unknown kernel or
    the wrong number of parameters; the kernel's own static_asserts reject invalid tiles at
    compile time."""
    match = re.fullmatch(r"\s*(\w+)\s*<([\d\s,]+)>\s*", expression)
    if not match or match.group(1) not in _PARAM_NAMES:
        raise UsageError(f"cannot read {expression!r}; expected e.g. warptiling<128,128,16,32,64,8,8> "
                         f"with one of: {', '.join(_PARAM_NAMES)}")
    name, values = match.group(1), [int(v) for v in match.group(2).split(",")]
    keys = _PARAM_NAMES[name]
    if len(values) != len(keys) or min(values) < 1:
        raise UsageError(f"{name} takes {len(keys)} positive parameters ({', '.join(keys)})")
    params = dict(zip(keys, values))
    if name == "autotuned":
        return autotuned_spec(params)
    base = BY_NAME[name]
    if name in PIPELINED:
        return pipelined_spec(name, base.summary, params)
    return tiled_spec(name, base.summary, params, template=base.template)
