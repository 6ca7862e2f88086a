"""A kernel of the user's own, from a `.cu` file, with the ladder's calling convention

    (int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C)

row-major, C = alpha*A*B + beta*C. A kernel in a tensor-core precision (`dtype` bf16, fp16 or tf32)
takes the tensor ladder's convention instead: A and B as `const __nv_bfloat16*`, `const __half*`
or `const float*` (TF32 values in FP32 words), B stored N x K, C = alpha*A*B^T + beta*C in FP32
(`model.problem`); on a compute capability 9.0 GPU it is compiled for sm_90a, so it may use
wgmma and TMA. Python knows only what the user says about its launch: the
entry (a kernel name or a template expression), the block, the grid as an expression in M, N, K,
the dynamic shared memory, and optionally the block tile BM x BN x BK and thread tile TM x TN of
the traffic model (seed lesson 000's formulas; without them the kernel has no model). These come
from command-line flags or from the file itself, whose lines of the form

    // roofline entry: my_sgemm<64,64,8,8,8>
    // roofline block: 64
    // roofline grid: cdiv(N,64), cdiv(M,64)

declare them (keys: KEYS; anywhere in the file, by custom at its top); a flag overrides the
file's value. How the file is compiled (`build_options`: `// roofline options:` and `// roofline
compiler:`) is declared the same way and kept in `UserKernel.build`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any
from pathlib import Path

from ..build_options import CompileSettings, declared as declared_build
from ..declarations import WORKLOAD, Declaration, kind, refuse, scan
from ..errors import UsageError
from ..files import from_cwd, read_source, shown_path
from ..model.launch import GridExpression, parse_block, parse_sizes
from ..model.precision import DTYPES
from ..model.problem import Problem
from ..model.traffic import ModelFigures, TrafficModel
from ..model.units import cdiv, plural
from .families import BY_NAME, REFERENCE, KernelSpec, from_expression

KEYS = ("entry", "block", "grid", "dynamic-smem", "tile", "thread-tile", "thread-x", "name", "dtype", "options",
        "compiler", "reads-c")
THREAD_X = ("rows", "cols")  # what `thread-x` declares: the dimension of C consecutive threads step along
REQUIRED = ("entry", "block", "grid")
TILE_SOURCE = "user"
_ENTRY = re.compile(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)*\s*(<[^;{}]*>)?")
_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}")


def read_header(text: str, where: str = "source", declared: list[Declaration] | None = None) -> dict[str, str]:
    """The `// roofline KEY: VALUE` lines of a kernel file (`declarations.scan` of `text`, or
    `declared` where the caller scanned it already) as {key: value}. Raises UsageError, naming
    `where` and the line, for an unknown or repeated key, an empty value, or a line that names a
    key in another case or without the colon."""
    found: dict[str, str] = {}
    for d in scan(text) if declared is None else declared:
        if d.problem is not None:
            refuse(d, where, KEYS)
            continue
        key, value, number = d.key, d.value, d.line
        if key not in KEYS:
            raise UsageError(f"{where}:{number}: unknown key {key!r} in '// roofline {key}:'; valid: {', '.join(KEYS)}")
        if key in found:
            raise UsageError(f"{where}:{number}: key {key!r} given twice")
        if not value:
            raise UsageError(f"{where}:{number}: key {key!r} has no value")
        found[key] = value
    return found


def warp_layout_of(block_tile: tuple[int, int], thread_tile: tuple[int, int],
                   block_x: int | None = None, thread_x: str | None = None) -> tuple[int, int] | None:
    """The thread tiles (rows, cols) one warp of a user's kernel covers (`UserKernel.warp_layout`):
    32 consecutive threads along the block's x, which walks down the rows of C where `thread_x`
    says 'rows' and along a row where it says 'cols'; undeclared, along a row of BN/TN thread tiles
    unless `block_x` is the tile's BM/TM rows of them (and not also its columns); `block_x` None
    (a record that kept only the threads per block) reads it along a row. None where a row of
    thread tiles is not a whole part of a warp or a whole number of warps."""
    (bm, bn), (tm, tn) = block_tile, thread_tile
    rows, cols = bm // tm, bn // tn
    down = block_x == rows and block_x != cols  # x walks down the rows of thread tiles
    if thread_x is not None:
        down = thread_x == "rows"
    along = rows if down else cols
    if along < 1 or (32 % along and along % 32):
        return None
    walk = min(32, along)
    return (walk, 32 // walk) if down else (32 // walk, walk)


def traffic_model_of(block_tile: tuple[int, int], thread_tile: tuple[int, int] | None,
                     block_x: int | None = None, thread_x: str | None = None, dtype: str = "fp32") -> TrafficModel:
    """The traffic model of a user's kernel declared with `block_tile` (BM, BN) and `thread_tile`
    (TM, TN; None: no shared-memory level), its warps read along the block's x
    (`warp_layout_of`, `block_x` None where unknown). A kernel of one result per thread that
    reads A and B straight from global memory (block tile 1 x 1, thread tile 1 x 1 or none) and
    declares `thread_x` has an L1 level instead of a shared-memory one: the sectors its warps'
    loads touch (`TrafficModel.figures`), as the ladder's naive and gmem_coalescing have; in FP32
    alone (`dtype`), whose B is K x N of 4-byte elements, as the sectors are counted."""
    if _direct(block_tile, thread_tile) and thread_x is not None and dtype == "fp32":
        return TrafficModel(block_tile=block_tile, thread_tile=None, warp_layout=_direct_warp(block_x, thread_x))
    warp = warp_layout_of(block_tile, thread_tile, block_x, thread_x) if thread_tile is not None else None
    return TrafficModel(block_tile=block_tile, thread_tile=thread_tile, warp_layout=warp)


def _direct(block_tile: tuple[int, int], thread_tile: tuple[int, int] | None) -> bool:
    """A kernel of one result per thread that reads A and B straight from global memory: block
    tile 1 x 1 (no reuse through shared memory), thread tile 1 x 1 or none."""
    return tuple(block_tile) == (1, 1) and thread_tile in (None, (1, 1))


def _direct_warp(block_x: int | None, thread_x: str) -> tuple[int, int]:
    """The distinct rows and columns of C (rows, cols) one warp of a one-result-per-thread kernel
    spans: 32 consecutive threads, min(32, block x) distinct ones along `thread_x` ('rows' or
    'cols'), and ceil(32 / block x) lines of the block's y across (a block x of 24 puts a warp
    over 24 lines and 2 across: 48 places for 32 results, as its loads meet them)."""
    along = min(32, block_x or 32)
    across = cdiv(32, along)
    return (along, across) if thread_x == "rows" else (across, along)


@dataclass(frozen=True)
class UserKernel:
    """A user's kernel (see the module docstring): `path` is the absolute file, `entry` what NVRTC
    instantiates, `block` the (x, y, z) threads per block, `grid` the grid expression's text,
    `dynamic_smem_bytes` the dynamic shared memory per launch in bytes, `tile` (BM, BN, BK) and
    `thread_tile` (TM, TN) the traffic model's tiles (None: no model), `build` the compiler asked
    for and its options (`build_options.CompileSettings`)."""

    name: str
    path: Path
    entry: str
    block: tuple[int, int, int]
    grid_text: str
    dynamic_smem_bytes: int = 0
    tile: tuple[int, int, int] | None = None
    thread_tile: tuple[int, int] | None = None
    dtype: str = "fp32"
    workload: bool = False  # declared as a workload of any signature (`workload.spec`): graded, not run as a GEMM
    reads_c: bool = False  # computes alpha * acc + beta * C reading C even where beta = 0: checked on a zeroed C
    thread_x: str | None = None  # 'rows' or 'cols': the dimension of C threadIdx.x steps along (None: undeclared)
    variant: str = ""  # 'a' or 'f': compiled for the target asked for by name (kernels --arch sm_90a)
    build: CompileSettings = CompileSettings()
    # that workload (`workload.spec.Workload`) as its file declared it, read once: graded from this, not the file again
    declared: Any = field(default=None, compare=False, repr=False)

    tile_source = TILE_SOURCE
    smem_expression = None  # the dynamic shared memory is a number, not a compiler expression

    @property
    def name_expression(self) -> str:
        """What NVRTC instantiates and CuPy looks up: the entry as given."""
        return self.entry

    @property
    def kernel_name(self) -> str:
        """The function's name without template arguments or namespaces (Nsight Compute's filter)."""
        return self.entry.split("<", 1)[0].strip().split("::")[-1]

    @property
    def summary(self) -> str:
        """One line: where the kernel comes from."""
        return f"your kernel {self.entry} from {self.path.name}"

    @property
    def params(self) -> dict[str, int]:
        """The model's tiles by name (BM, BN, BK, TM, TN), as the ladder's parameters are named."""
        out = dict(zip(("BM", "BN", "BK"), self.tile or ()))
        out.update(zip(("TM", "TN"), self.thread_tile or ()))
        return out

    @property
    def threads_per_block(self) -> int:
        """Threads in one block."""
        x, y, z = self.block
        return x * y * z

    def target(self, arch: str) -> str:
        """The compile target on GPU target `arch`: the variant asked for (sm_90a for `variant` 'a'),
        else sm_90a for a tensor-core precision on sm_90."""
        if self.variant:
            return arch + self.variant
        return "sm_90a" if arch == "sm_90" and self.dtype != "fp32" else arch

    def tma_boxes(self) -> None:
        """A user kernel gets no tensor maps: it takes the eight standard arguments."""
        return None

    @property
    def fixed_dynamic_smem_bytes(self) -> int:
        """The dynamic shared memory each launch gets, bytes."""
        return self.dynamic_smem_bytes

    @property
    def source_name(self) -> str:
        """The file compiler messages name: the path as the user's file system knows it, bytes
        that are not UTF-8 (which NVRTC cannot take) written as '\\xff'."""
        return shown_path(self.path)

    def source_text(self) -> str:
        """The file's text. Raises UsageError when it cannot be read."""
        return read_source(self.path)

    @property
    def compile_options(self) -> tuple[str, ...]:
        """NVRTC options besides the target: C++17 (unless the file's options choose a dialect),
        the file's folder for its own includes, and the options of `build` in NVRTC's spelling
        (`build_options.nvrtc_options`)."""
        from ..build_options import declares_std, nvrtc_options

        std = () if declares_std(self.build.options) else ("-std=c++17",)
        return (*std, f"-I{shown_path(self.path.parent)}", *nvrtc_options(self.build.options))

    def with_build(self, build: CompileSettings) -> "UserKernel":
        """This kernel compiled with `build` instead (its workload's declaration too)."""
        declared = self.declared if self.declared is None else replace(self.declared, build=build)
        return replace(self, build=build, declared=declared)

    @property
    def model(self) -> TrafficModel | None:
        """The traffic model of the declared tiles, with the warp layout `warp_layout` gives; None
        without `tile`."""
        if self.tile is None:
            return None
        return traffic_model_of(self.tile[:2], self.thread_tile, self.block[0], self.thread_x, self.dtype)

    @property
    def warp_layout(self) -> tuple[int, int] | None:
        """The thread tiles one warp covers, (rows, cols), for the model's shared-memory bytes served
        (a warp reading one address gets it broadcast): CUDA numbers a block's threads x first, so a
        warp is 32 consecutive x. Where the block's x counts the tile's rows of thread tiles
        (block BM/TM x BN/TN, not square) a warp walks down rows; otherwise it walks along a row of
        BN/TN thread tiles, as the ladder's kernels do (`families._row_major_warp`). None without a
        thread tile, or where a row of thread tiles is not a whole part of a warp."""
        if self.tile is None or self.thread_tile is None:
            return None
        return warp_layout_of(self.tile[:2], self.thread_tile, self.block[0], self.thread_x)

    def figures(self, problem: Problem) -> ModelFigures | None:
        """The model's figures for `problem`; None without `tile` ("no model")."""
        return None if self.model is None else self.model.figures(problem)

    def grid(self, problem: Problem) -> tuple[int, int, int]:
        """The grid for `problem`. Raises UsageError, naming the file, when the expression gives an
        impossible grid."""
        try:
            return GridExpression(self.grid_text).evaluate(problem)
        except UsageError as exc:
            raise exc if exc.message.startswith(self.path.name) else exc.prefixed(f"{self.path.name}: ") from None

    def tile_grid(self, problem: Problem) -> tuple[int, int, int]:
        """The grid the waves are counted in: the launch grid."""
        return self.grid(problem)

    def launch_notes(self, problem: Problem) -> list[str]:
        """Where the declared launch and model disagree with each other at `problem`: a thread
        tile that gives another number of threads than the block has, a grid with fewer blocks
        than C has tiles. Either may be meant (a thread that owns several thread tiles, a
        grid-stride loop), so these are notes, not errors."""
        entry = self.entry.split("<")[0].strip()
        # a graded kernel declares a signature of its own: only a GEMM of the ladder's convention is read for it
        notes = [] if self.workload else [n for n in (convention_note(self.source_text(), self.entry,
                                                                     f"{self.name} ({entry})"),) if n]
        threads = self.threads_per_block
        direct = self.tile is not None and _direct(self.tile[:2], self.thread_tile)
        if direct and self.thread_x is not None and self.dtype == "fp32":  # its L1 level (`traffic_model_of`)
            # one result per thread, read straight from global memory: the block owns its threads' results
            x, y, z = self.grid(problem)
            if x * y * z * threads < problem.results:
                notes.append(f"{self.name}: the grid launches {plural(x * y * z * threads, 'thread')} for "
                             f"{problem.results:,} results of C at {problem.text()}; unless each thread computes "
                             "several, part of C stays unwritten")
            return notes
        if direct and self.thread_x is not None:
            notes.append(f"{self.name}: thread-x gives an L1 level to an FP32 kernel alone (B K x N, 4-byte "
                         f"elements); a {self.dtype} kernel's B is N x K, which the L1 model does not read")
            return notes
        if direct and self.dtype == "fp32":
            notes.append(f"{self.name}: a 1x1 block tile reads A and B from global memory, which its L1 mostly "
                         "serves; '// roofline thread-x: rows' or 'cols' (the dimension of C that threadIdx.x steps "
                         "along) gives it an L1 level")
            return notes
        if self.tile and self.thread_tile:
            (bm, bn, _), (tm, tn) = self.tile, self.thread_tile
            if bm * bn // (tm * tn) != threads:
                notes.append(f"{self.name}: a {bm}x{bn} block tile in {tm}x{tn} thread tiles is "
                             f"{bm * bn // (tm * tn)} threads, but the block has {threads}; the model's SMEM "
                             "figures assume each thread reuses a TM x TN tile")
        if self.tile:
            x, y, z = self.grid(problem)
            tiles = cdiv(problem.m, self.tile[0]) * cdiv(problem.n, self.tile[1])
            if x * y * z < tiles:
                notes.append(f"{self.name}: the grid launches {plural(x * y * z, 'block')} for "
                             f"{plural(tiles, 'block tile')} of C at {problem.text()}; unless each block loops over "
                             "several, part of C stays unwritten")
        return notes

    def describe(self) -> dict:
        """The launch as text values, keyed as the header's keys (for results files and child processes)."""
        shown = from_cwd(self.path)  # child processes share the working folder
        if self.workload:  # its launch is its file's: the path (and how it is compiled) rebuilds it
            return {"name": self.name, "path": str(shown), "workload": "1", **self.build.describe()}
        out = {"name": self.name, "path": str(shown), "entry": self.entry,
               "block": ",".join(str(v) for v in self.block), "grid": self.grid_text,
               "dynamic-smem": str(self.dynamic_smem_bytes)}
        if self.dtype != "fp32":
            out["dtype"] = self.dtype
        if self.tile:
            out["tile"] = "x".join(str(v) for v in self.tile)
        if self.thread_tile:
            out["thread-tile"] = "x".join(str(v) for v in self.thread_tile)
        if self.thread_x:
            out["thread-x"] = self.thread_x
        if self.reads_c:
            out["reads-c"] = "yes"
        if self.variant:
            out["variant"] = self.variant
        return {**out, **self.build.describe()}


def check_name(name: str, where: str, remedy: str = "'// roofline name:' or {declare} name=...") -> str:
    """A user kernel's name: 1 to 64 letters, digits and . _ + -, not a ladder kernel's or the
    reference's. Raises UsageError naming `where` and how to choose another (`remedy`, which may
    name the parameter `{name}`)."""
    if not _NAME.fullmatch(name):
        raise UsageError(f"{where}: kernel name {name!r} must be 1 to 64 letters, digits, '.', '_', '+' or '-'; "
                         f"choose another ({remedy})", "name", ["declare"])
    taken = {n.lower() for n in BY_NAME} | {REFERENCE}
    if name.lower() in taken:
        what = "the reference" if name.lower() == REFERENCE else "a ladder kernel"
        raise UsageError(f"{where}: {name!r} is the name of {what}; give your kernel another ({remedy})", "name",
                         ["declare"])
    return name


def load(path: Path, flags: dict[str, str | None] | None = None) -> UserKernel:
    """The user kernel in file `path`: the header's launch description with `flags` (keys as in
    KEYS, None for not given) overriding it. Raises UsageError (one line) for an unreadable file,
    a missing entry, block or grid, or any value that does not parse."""
    path = Path(path).expanduser()
    text = read_source(path)
    declared = scan(text)  # the file read and its lines scanned once, whichever kind it declares
    from ..workload.spec import spec_beside  # the workload package imports this one

    if kind(declared) == WORKLOAD or spec_beside(path) is not None:
        return _from_workload(path, flags, text, declared)
    values = read_header(text, str(path), declared)
    values.update({k: v for k, v in (flags or {}).items() if v is not None})
    missing = [k for k in REQUIRED if k not in values]
    if missing:
        raise UsageError(f"{path}: no {', '.join(missing)} given; a GEMM of the ladder's calling convention declares "
                         f"{'them' if len(missing) > 1 else 'it'} in the file ('// roofline {missing[0]}: ...') or with "
                         f"{{declare}} {missing[0]}=...; a kernel of any other signature declares its arguments "
                         f"('// roofline arg:' lines, or a spec {path.with_suffix('.toml').name} beside it: "
                         "docs/grade.md)", "declare")
    try:
        return _kernel(path, values, text)
    except UsageError as exc:
        raise exc if exc.message.startswith(str(path)) else exc.prefixed(f"{path}: ") from None


def _from_workload(path: Path, flags: dict[str, str | None] | None, text: str,
                   declared: list[Declaration]) -> UserKernel:
    """A workload's kernel from its file (`workload_kernel`), from its text and declarations as
    `load` read them. Raises UsageError for launch flags (a workload declares its launch itself)."""
    from ..workload import spec as workload_spec
    given = [k for k, v in (flags or {}).items() if v is not None]
    if given:
        spec = path.with_suffix(".toml")
        where = (f"its spec, {spec.name} beside it" if spec.is_file() and not any(d.key == "arg" for d in declared)
                 else "its '// roofline' lines")
        raise UsageError(f"{path}: a workload declares its launch in {where}; {{declare}} {given[0]}= applies to a "
                         "GEMM kernel: change the launch there", "declare")
    return workload_kernel(workload_spec.load_kernel(path, text=text, declared=declared))


def workload_kernel(w) -> UserKernel:
    """A workload's kernel (`workload.spec.Workload`: its `// roofline arg:` lines declare a kernel
    of any signature) as a kernel to compile: its grid and shared memory at the workload's sizes,
    `workload` set; for sm_90a on sm_90 when it declares tensor-core work."""
    grid, block, smem = w.launch()
    tensor = any(k.endswith("_tensor") for k in w.work().flops)
    return UserKernel(name=w.name, path=w.path, entry=w.entry, block=block, grid_text=", ".join(map(str, grid)),
                      dynamic_smem_bytes=smem, dtype="bf16" if tensor else "fp32", workload=True, declared=w,
                      build=w.build)


def _kernel(path: Path, values: dict[str, str], text: str) -> UserKernel:
    entry = values["entry"].strip()
    if not _ENTRY.fullmatch(entry):
        raise UsageError(f"{path}: entry {entry!r} is not a kernel name or template expression like my_sgemm<64,8>")
    grid = GridExpression.parse(values["grid"])
    smem_text = values.get("dynamic-smem", "0").strip()
    smem = re.fullmatch(r"(\d+)\s*(k|kb|kib)?", smem_text, re.IGNORECASE) if smem_text.isascii() else None
    if smem is None:  # bytes, or whole KiB as occupancy --smem takes them ('48k' is 49,152)
        raise UsageError(f"{path}: dynamic-smem {smem_text!r} must be a number of bytes (0 or more, or KiB as 48k)")
    smem_bytes = int(smem.group(1)) * (1024 if smem.group(2) else 1)
    tile = parse_sizes(values["tile"], 3, "tile", "128x128x8") if "tile" in values else None
    thread_tile = parse_sizes(values["thread-tile"], 2, "thread-tile", "8x8") if "thread-tile" in values else None
    if thread_tile is not None and tile is None:
        raise UsageError(f"{path}: a thread tile needs the block tile too ('// roofline tile: BMxBNxBK', or "
                         "{declare} tile=BMxBNxBK)", "declare")
    if thread_tile is not None and (tile[0] % thread_tile[0] or tile[1] % thread_tile[1]):
        raise UsageError(f"{path}: thread tile {thread_tile[0]}x{thread_tile[1]} does not divide the block tile "
                         f"{tile[0]}x{tile[1]} (each thread owns a TM x TN piece of it)")
    name = check_name(values.get("name", path.stem), str(path))
    dtype = values.get("dtype", "fp32").strip().lower()
    if dtype not in DTYPES:
        raise UsageError(f"{path}: dtype {dtype!r} must be one of {', '.join(DTYPES)}")
    check_element(path, text, entry, dtype)
    reads_c = values.get("reads-c", "no").strip().lower()
    if reads_c not in ("yes", "no"):
        raise UsageError(f"{path}: reads-c {reads_c!r} must be yes (it reads C even where beta = 0: checked on a "
                         "zeroed C) or no (the default: checked on a C of NaN)")
    thread_x = values.get("thread-x", "").strip() or None
    if thread_x is not None and thread_x not in THREAD_X:
        raise UsageError(f"{path}: thread-x {values['thread-x'].strip()!r} must be rows or cols: the dimension of C "
                         "that consecutive threads (threadIdx.x) step along")
    build = declared_build(values, path.resolve().parent, str(path))
    return UserKernel(name=name, path=path.resolve(), entry=entry, block=parse_block(values["block"]),
                      grid_text=grid.text.strip(), dynamic_smem_bytes=smem_bytes, tile=tile,
                      thread_tile=thread_tile, dtype=dtype, build=build, reads_c=reads_c == "yes",
                      thread_x=thread_x)


# the element types a GEMM's A and B may be declared with, and the dtypes each holds
ELEMENT_DTYPES = {"float": ("fp32", "tf32"), "__nv_bfloat16": ("bf16",), "nv_bfloat16": ("bf16",),
                  "__half": ("fp16",), "half": ("fp16",)}
_BOUNDS = r"(?:__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)\s*)?"


def check_element(path: Path, text: str, entry: str, dtype: str) -> None:
    """Raise UsageError (one line) when the signature of the kernel `entry` in `text` (the file
    `path`'s) declares A and B of another element type than precision `dtype` holds
    (`element_of_a`): a float kernel listed or run as BF16 would be modelled with the wrong bytes,
    or fail its check for no reason of its own. Nothing is said where the signature cannot be read."""
    element = element_of_a(text, entry)
    if element is not None and dtype not in ELEMENT_DTYPES[element]:
        holds = ELEMENT_DTYPES[element]
        which = (f"{holds[0]} (or {holds[1]} for a kernel that reads B stored N x K, as the tensor ladder's)"
                 if len(holds) > 1 else holds[0])
        raise UsageError(f"{path.name}: {entry.split('<')[0].strip()} takes {element} A and B (its signature), not "
                         f"{dtype}; give {{dtype}} {which}, or a kernel of {dtype} operands", "dtype")


def convention_note(text: str, entry: str, name: str) -> str | None:
    """Where the signature of kernel `entry` in `text` is not the GEMM calling convention (eight
    parameters, A and B of float, bf16 or half): what `run` would do with it (launch it with those
    eight arguments), and what a kernel of another signature declares instead; None where it is, or
    where the signature cannot be read."""
    params = signature_of(text, entry)
    if params is None:
        return None
    fix = "a kernel of another signature declares its arguments ('// roofline arg:' lines, docs/grade.md)"
    if len(params) != 8:
        return (f"{name} takes {plural(len(params), 'parameter')}, not the eight of the GEMM calling convention (int M, "
                f"int N, int K, float alpha, const T* A, const T* B, float beta, float* C) that run launches it with; "
                f"{fix}")
    a = _param_type(params[4])
    if a in ("double", "int", "int8_t", "char", "__nv_fp8_e4m3", "__nv_fp8_e5m2"):
        return f"{name} takes {a} A and B, not the float, bf16 or half of the GEMM calling convention; {fix}"
    return None


def signature_of(text: str, entry: str) -> list[str] | None:
    """The parameters of the __global__ function `entry` names (template arguments aside) as its
    signature in `text` spells them, or None where it cannot be read (no such signature, or one
    with parentheses or a macro in its parameter list)."""
    base = re.escape(entry.split("<")[0].strip().split("::")[-1])
    found = re.search(r"__global__\s+" + _BOUNDS + r"void\s+" + _BOUNDS + base + r"\s*\(([^()]*)\)", text)
    if found is None or not found.group(1).strip() or found.group(1).strip() == "void":
        return None
    params = [p.strip() for p in found.group(1).split(",")]
    # a macro (GEMM_PARAMS), a default argument or a pack is not read: each parameter a type and a name
    if any(len(re.sub(r"[*&]", " ", p).split()) < 2 or "=" in p or "..." in p for p in params):
        return None
    return params


def _param_type(param: str) -> str | None:
    """The type word of one parameter ('const float* __restrict__ A' -> 'float'), None where unclear."""
    words = re.sub(r"[*&]", " ", param).split()
    types = [w for w in words[:-1] if w not in ("const", "__restrict__", "__restrict", "volatile", "unsigned", "signed")]
    return types[0] if len(types) == 1 else None


def element_of_a(text: str, entry: str) -> str | None:
    """The element type of the fifth parameter (A, in the calling convention `(int M, int N, int
    K, float alpha, const T* A, ...)`) of the __global__ function `entry` names (its template
    arguments aside), as its signature in `text` spells it: one of ELEMENT_DTYPES' keys; None
    where it cannot be read (no such signature, fewer parameters, a macro or template type)."""
    params = signature_of(text, entry)
    if params is None or len(params) < 5:
        return None
    a = _param_type(params[4])
    return a if a in ELEMENT_DTYPES else None


def kernels_in(text: str) -> list[str]:
    """The __global__ functions `text` defines, by name, a template's with '<...>' after it
    ('tiled<...>'), in the order of the file; what a message about a missing entry lists."""
    found = re.finditer(r"(template\s*<[^;{}]*?>\s*)?__global__\s+" + _BOUNDS + r"void\s+" + _BOUNDS
                        + r"([A-Za-z_]\w*)\s*\(", text)
    return list(dict.fromkeys(m.group(2) + ("<...>" if m.group(1) else "") for m in found))


def missing_entry(file_name: str, entry: str, text: str) -> str:
    """What to say of an entry `entry` that file `file_name` (its text `text`) has no kernel of:
    the kernels it has, and for a template named without its arguments, that they are missing."""
    have = kernels_in(text)
    base = entry.split("<")[0].strip()
    if "<" not in entry and f"{base}<...>" in have:
        return (f"{file_name}: {base} is a template: give its arguments in the entry (--declare "
                f"entry={base}<...> or '// roofline entry: {base}<...>')")
    listed = f"; it has {', '.join(have)}" if have else "; it defines no __global__ function"
    return f"{file_name} has no kernel {entry!r}{listed}"


def from_description(d: dict) -> UserKernel:
    """The kernel `UserKernel.describe` wrote (a child process's way of receiving it)."""
    build = CompileSettings.from_description(d)  # as the parent compiles it (its nvcc too), the file's own aside
    if d.get("workload"):
        return load(Path(d["path"])).with_build(build)
    flags = {k: d.get(k) for k in KEYS}
    return replace(load(Path(d["path"]), flags).with_build(build), variant=d.get("variant", ""))


def to_argument(kernel: "UserKernel | KernelSpec") -> str:
    """One command-line argument that names `kernel` for a child process: a ladder kernel's name
    expression (which carries its tile), or a user kernel's launch description as JSON."""
    return json.dumps(kernel.describe()) if isinstance(kernel, UserKernel) else kernel.name_expression


def from_argument(text: str) -> "UserKernel | KernelSpec":
    """The kernel `to_argument` named. Raises UsageError when it names none."""
    return from_description(json.loads(text)) if text.startswith("{") else from_expression(text)
