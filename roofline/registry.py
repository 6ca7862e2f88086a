"""The SGEMM ladder: one entry per kernel, read in order from naive to register-tiled.

Each `KernelSpec` names its source in `kernels/`, its template parameters (tile sizes), how it is
launched (block and grid as functions of the problem) and its traffic model (`model.TrafficModel`).
One generic launcher (`runner`) serves every entry; adding a kernel is adding an entry here and a
`.cu` file there. cuBLAS, the reference, is not an entry: it has no source and no traffic model.
"""

from __future__ import annotations

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
    its columns. `summary` says in one line what the kernel changes over the previous step.
    """

    name: str
    summary: str
    params: dict[str, int]
    block: tuple[int, int, int]
    block_tile: tuple[int, int]
    model: TrafficModel
    grid_rows_first: bool = False

    @property
    def source_file(self) -> str:
        """The `.cu` file in `kernels/` holding this kernel."""
        return f"{self.name}.cu"

    @property
    def name_expression(self) -> str:
        """The template instantiation NVRTC compiles, e.g. 'register_tiling_2d<128,128,8,8,8>'."""
        return f"{self.name}<{','.join(str(v) for v in self.params.values())}>"

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

    def tile_text(self) -> str:
        """The template parameters as 'BM=128 BN=128 BK=8 TM=8 TN=8'."""
        return " ".join(f"{k}={v}" for k, v in self.params.items())


def _spec(name, summary, params, block, block_tile, model_tiles, thread_tile, rows_first=False):
    return KernelSpec(name, summary, params, block, block_tile,
                      TrafficModel(block_tile=model_tiles, thread_tile=thread_tile), rows_first)


LADDER: tuple[KernelSpec, ...] = (
    _spec("naive", "one thread per element of C; a warp reads 32 rows of A (uncoalesced)",
          {"BS": 32}, (32, 32, 1), (32, 32), (1, 1), None, rows_first=True),
    _spec("gmem_coalescing", "a warp owns 32 consecutive columns of C: coalesced B and C",
          {"BS": 32}, (1024, 1, 1), (32, 32), (1, 1), None),
    _spec("smem_tiling", "32x32 tiles of A and B staged in shared memory",
          {"BS": 32}, (1024, 1, 1), (32, 32), (32, 32), (1, 1)),
    _spec("register_tiling_1d", "64x64 block tile, each thread a column of TM=8 results",
          {"BM": 64, "BN": 64, "BK": 8, "TM": 8}, (512, 1, 1), (64, 64), (64, 64), (8, 1)),
    _spec("register_strip", "64x64 block tile, each thread a 1x8 row strip, its A values in registers",
          {"BM": 64, "BN": 64, "BK": 8, "TN": 8}, (512, 1, 1), (64, 64), (64, 64), (1, 8)),
    _spec("register_tiling_2d", "128x128 block tile, each thread an 8x8 outer-product tile",
          {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}, (256, 1, 1), (128, 128), (128, 128), (8, 8)),
)

BY_NAME = {k.name: k for k in LADDER}


def names() -> list[str]:
    """Every name `--kernel` accepts, the ladder in order and then the reference."""
    return [k.name for k in LADDER] + [REFERENCE]


def select(requested: list[str] | None) -> list[KernelSpec]:
    """The ladder entries for `--kernel` names (all of them for None or empty), in ladder order.
    'cublas' is accepted and ignored here (the reference always runs). Raises UsageError for an
    unknown name, listing the valid ones."""
    if not requested:
        return list(LADDER)
    unknown = [r for r in requested if r not in BY_NAME and r != REFERENCE]
    if unknown:
        raise UsageError(f"unknown kernel {unknown[0]!r}; valid: {', '.join(names())}")
    return [k for k in LADDER if k.name in requested]


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


def source(spec: KernelSpec) -> str:
    """The kernel's CUDA source with `common.cuh` inlined, so that the text is self-contained
    (CuPy's compile cache keys on the source text, not on included files)."""
    folder = kernels_dir()
    common = (folder / "common.cuh").read_text()
    text = (folder / spec.source_file).read_text()
    return text.replace('#include "common.cuh"', common)

