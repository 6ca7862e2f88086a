"""`roofline kernels`: the ladder's model, and its resources for a target, offline.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..console import integer, present
from ..defaults import DEFAULT_SIZE
from ..errors import RunError, UsageError
from ..outcome import Outcome
from . import gemm
from .gemm import LAUNCH, _check_autotuned, precision

if TYPE_CHECKING:
    from ..ladder.families import KernelSpec
    from ..ladder.user import UserKernel
    from ..measure.nvrtc_compile import KernelResources
    from ..model.arch import ArchLimits
    from ..model.device import DeviceSpec
    from ..model.occupancy import Occupancy
    from ..model.problem import Problem
    from ..model.roofs import Verdict
    from ..model.traffic import ModelFigures
    from ..model.waves import Waves


MOUNT = dict(short_help="The ladder's model, and its resources for a target, offline.")


def command(
    size: int = typer.Option(DEFAULT_SIZE, "--size", parser=integer, metavar="N", help="Square problem size for the model."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME", help="GPU preset (or device file, mygpu.toml): its target, limits and peaks."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XY", help="Target (default: this machine's GPU)."),
    model_only: bool = typer.Option(False, "--model-only", help="Skip compiling: the traffic model alone."),
    autotuned_tile: Optional[str] = typer.Option(None, "--autotuned-tile", metavar="BM,BN,BK,TM,TN",
                                                 help="List autotuned at this tile."),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
    source: Optional[list[Path]] = typer.Option(None, "--source", metavar="FILE.cu",
                                                help="List your own kernel (repeatable) instead of the ladder."),
    entry: Optional[str] = LAUNCH["entry"],
    block: Optional[str] = LAUNCH["block"],
    grid: Optional[str] = LAUNCH["grid"],
    dynamic_smem: Optional[str] = LAUNCH["dynamic-smem"],
    tile: Optional[str] = LAUNCH["tile"],
    thread_tile: Optional[str] = LAUNCH["thread-tile"],
    name: Optional[str] = LAUNCH["name"],
    ladder_kind: Optional[str] = typer.Option(None, "--ladder", metavar="fp32|tensor",
                                              help="fp32: the SGEMM ladder (default); tensor: the tensor-core ladder."),
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="fp32|bf16|fp16|tf32",
                                        help="Input precision; bf16, fp16 and tf32 list the tensor ladder."),
):
    """The SGEMM ladder, the tensor-core ladder (--ladder tensor, --dtype), or with --source your own
    kernels: traffic model and, for a target, registers, local (spill) and shared memory and
    occupancy, compiled offline through NVRTC (no GPU needed)."""

    gemm.problems(size)
    users = gemm.user_kernels(source or [], dict(zip(LAUNCH, (entry, block, grid, dynamic_smem, tile, thread_tile,
                                                              name))))
    if users and autotuned_tile is not None:
        raise UsageError("--autotuned-tile lists the ladder's autotuned kernel; it does not apply with --source")
    listing = kernels(size, gpu, arch, model_only, autotuned_tile, sources=users, ladder_kind=ladder_kind,
                          dtype=dtype)
    present(view(listing, model_only, autotuned_tile), as_json)


@dataclass(frozen=True)
class KernelRow:
    """One kernel of the listing: its model at the size, and for a target its resources and
    occupancy (or why it has none)."""

    spec: KernelSpec | UserKernel
    figures: ModelFigures | None
    floors: Verdict | None = None
    resources: KernelResources | None = None
    dynamic_smem_bytes: int = 0
    occupancy: Occupancy | None = None
    unavailable: str | None = None
    error: str | None = None
    waves: Waves | None = None


@dataclass(frozen=True)
class KernelListing:
    """The ladder (or the user's kernels) at one size, for a target `arch` (None: model only) and
    a `device` (for floors); `notes` on user kernels whose launch and model disagree."""

    size: int
    arch: str | None
    device: DeviceSpec | None
    rows: list[KernelRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dtype: str = "fp32"  # the precision listed (`model.precision.DTYPES`)

    @property
    def compute_level(self) -> str:
        """The compute roof the floors are read against: 'FP32', 'BF16 tensor', ..."""
        from ..model.roofs import COMPUTE_LEVEL
        from ..model.precision import PRECISIONS
        return COMPUTE_LEVEL[PRECISIONS[self.dtype].key]

    def to_json(self) -> dict:
        """The listing as JSON: per kernel its template and tile source, model, floors (with a
        device), and for a target registers, local_bytes, shared memory and the occupancy JSON."""
        from ..ladder.user import UserKernel
        out = []
        for r in self.rows:
            row = {"name": r.spec.name, "summary": r.spec.summary, "template": r.spec.name_expression,
                   "tile_source": r.spec.tile_source, "threads_per_block": r.spec.threads_per_block}
            if isinstance(r.spec, UserKernel):
                row["source"] = r.spec.describe()
            if r.resources is not None:
                row.update(registers=r.resources.registers, local_bytes=r.resources.local_bytes,
                           static_smem_bytes=r.resources.static_smem_bytes,
                           dynamic_smem_bytes=r.dynamic_smem_bytes, occupancy=r.occupancy.to_dict())
            for key in ("unavailable", "error"):
                if getattr(r, key):
                    row[key] = getattr(r, key)
            if r.waves is not None:
                row["waves"] = asdict(r.waves)
            row["model"] = asdict(r.figures) if r.figures is not None else None
            if r.floors is not None:
                v = r.floors
                dram = v.floor("DRAM")
                row["floors"] = {"memory_floor_ms": dram.floor_ms if dram else None,
                                 "memory_floor_aside": dram.aside if dram else None,
                                 "compute_floor_ms": v.floor(self.compute_level).floor_ms,
                                 "binding": "memory" if v.binding.level == "DRAM" else "compute"}
            out.append(row)
        return {"size": self.size, "arch": self.arch, "device": self.device.name if self.device else None,
                "kernels": out, "notes": list(self.notes)}

    @property
    def errors(self) -> list[str]:
        """The kernels that did not compile or cannot launch on the target, one message each."""
        return [r.error for r in self.rows if r.error]


def kernels(size: int = DEFAULT_SIZE, gpu: str | None = None, arch: str | None = None,
            model_only: bool = False, autotuned_tile: str | None = None,
            sources: list[UserKernel] | None = None, ladder_kind: str | None = None,
            dtype: str | None = None) -> KernelListing:
    """The ladder's traffic model at size^3 (or, with `sources`, the user's kernels instead) and,
    for a target (`--arch`, `--gpu`'s, else this machine's GPU when NVML sees one), each kernel
    compiled offline through NVRTC: registers, local and shared memory, occupancy. With a `gpu`
    preset, floors against its peaks, and the autotuned kernel and the shape-dispatching ones at
    the tiles `run` would pick on that GPU. `model_only` skips compiling. Raises UsageError for bad input, RunError when NVRTC is
    missing or cannot target the arch; a kernel that does not compile, or cannot launch on the
    target, is a row with an `error`. `ladder_kind` and `dtype` pick the ladder and precision as
    for `run` (`precision`): the tensor ladder's wgmma rungs compile for sm_90a."""
    from ..ladder.families import KernelSpec
    from ..model.problem import Problem
    from ..ladder.user import UserKernel
    from ..render.text import chosen_tile
    from ..ladder import families
    from ..model.device import from_preset
    from ..model.device import named_limits
    from ..model.arch import parse_arch
    from ..model.roofs import plain_verdict
    from ..ladder import tiles
    from ..measure import compile_pool, nvml, nvrtc_compile
    sources = list(sources or [])
    dtype = precision(ladder_kind, dtype, sources)
    sources = [u if u.workload else replace(u, dtype=dtype) for u in sources]
    _check_autotuned(autotuned_tile, dtype)
    problem = Problem(size, size, size, dtype).validate()
    limits = named_limits(gpu, arch)  # validated even with --model-only
    if limits is None and not model_only and nvml.nvml_compute_capability():
        limits = nvml.this_gpu_limits()
    if model_only:
        limits = None
    preset = from_preset(gpu) if gpu else None
    if sources:
        for user in sources:
            user.grid(problem)
        specs = list(sources)
    else:
        autotuned = tiles.resolve(preset.name if preset else None, autotuned_tile) if dtype == "fp32" else None
        specs = families.select(None, autotuned, dtype)
        if preset is not None:  # tile_by_shape, split_k, wgmma_by_shape at the tile they pick for that GPU
            specs = [s.for_problem(problem, preset) for s in specs]
    if limits is not None:
        nvrtc_compile.check_target(limits.arch)
    fits_in_l2 = preset is not None and preset.fits_in_l2(problem.working_set_bytes)
    rows = []
    target = limits or (parse_arch(preset.arch) if preset else None)  # --model-only: the preset's arch still rules
    for spec in specs:
        figures = spec.figures(problem)
        floors = (plain_verdict(figures, preset.roofs, fits_in_l2=fits_in_l2, precision=problem.precision_key)
                  if preset and figures else None)
        if target is not None and isinstance(spec, KernelSpec) and not spec.family.runs_on(target.compute_capability):
            # no floors for a kernel that cannot run there: nothing would bind it
            rows.append(KernelRow(spec, figures, None, unavailable=spec.family.unavailable_reason(target.arch)))
        else:
            rows.append(KernelRow(spec, figures, floors))
    if limits is not None:
        to_compile = [r for r in rows if r.unavailable is None]
        compiled = compile_pool.compile_in_fresh_process([r.spec for r in to_compile], limits.arch)
        done = {id(r): _compiled_row(r, res, limits, problem, preset) for r, res in zip(to_compile, compiled)}
        rows = [done.get(id(r), r) for r in rows]
    notes = [n for s in specs if isinstance(s, UserKernel) for n in s.launch_notes(problem)]
    chosen = [s for s in specs if isinstance(s, KernelSpec) and s.tile_source == "shape"]
    runnable = {r.spec.name for r in rows if r.unavailable is None}
    notes += [f"{s.name} picks {chosen_tile(s.params, short=True)} on {preset.name}" for s in chosen if s.name in runnable]
    if not chosen and not sources:
        dispatching = "tile_by_shape and split_k" if dtype == "fp32" else "wgmma_persistent and wgmma_by_shape"
        notes.append(f"{dispatching} at their own tile (--gpu picks theirs)")
    if preset is not None and limits is None:
        notes.append("floors without waves: --model-only has no occupancy")
    if fits_in_l2:
        notes.append(f"A, B and C ({problem.working_set_bytes / 2**20:,.1f} MB) fit in the {preset.name}'s "
                     f"{preset.l2_bytes / 2**20:,.0f} MB L2: no DRAM floor binds (the modelled re-reads are L2 hits)")
    elif preset is not None and any(r.floors is not None and r.floors.binding.level == "DRAM" for r in rows):
        notes.append("memory ms: the model's GMEM requests at DRAM bandwidth, an upper bound: on a GPU with a large L2 "
                     "most of them are L2 hits, and a kernel may run faster than this floor")
    return KernelListing(size, limits.arch if limits else None, preset, rows, notes, dtype)


def _compiled_row(row: KernelRow, res: KernelResources | RunError, limits: ArchLimits, problem: Problem,
                  preset: DeviceSpec | None) -> KernelRow:
    from ..model.roofs import plain_verdict
    from ..model.waves import waves_of
    from ..measure import nvrtc_compile
    spec = row.spec
    if isinstance(res, RunError):
        return replace(row, error=str(res))
    try:
        dynamic = nvrtc_compile.dynamic_smem_bytes(spec, limits.arch)
    except RunError as exc:
        return replace(row, error=str(exc))
    occ, why = nvrtc_compile.launch_check(res, limits, spec.threads_per_block, dynamic)
    error = f"{spec.name} cannot launch on {limits.arch}: {why}" if why else None
    waves = waves_of(spec.tile_grid(problem), preset.sm_count, occ.active_blocks_per_sm) if preset and not why else None
    floors = row.floors
    if waves is not None and row.figures is not None:  # the floors at the share of the GPU the grid keeps busy
        floors = plain_verdict(row.figures, preset.roofs, waves=waves,
                               fits_in_l2=preset.fits_in_l2(problem.working_set_bytes), precision=problem.precision_key)
    return replace(row, resources=res, dynamic_smem_bytes=dynamic, occupancy=occ, error=error, waves=waves,
                   floors=floors)


def view(listing: KernelListing, model_only: bool, autotuned_tile: str | None) -> Outcome:
    """The ladder's (or the user's) kernels: the notes first (the offline fallback said where a
    script sees it); the tables, why a kernel is unavailable, what an uncompiled tile lacks; a
    kernel that did not compile or cannot launch is a failure."""
    notes = list(listing.notes)
    if listing.arch is None and not model_only:  # the offline fallback
        notes.insert(0, "no CUDA GPU found and no target given: the traffic model alone; add --arch sm_XY or "
                        "--gpu NAME for registers, spills and occupancy")

    def view(width: int) -> list:
        from ..render.tables import kernels_tables

        shown = [*kernels_tables(listing, width), *(row.unavailable for row in listing.rows if row.unavailable)]
        if listing.arch is None and autotuned_tile is not None:
            why = "with --model-only" if model_only else "without a target"
            shown.append(f"--autotuned-tile is not compiled {why}, so the compiler has not checked the tile; "
                         + ("drop --model-only" if model_only else "add --arch sm_XY"))
        return shown

    return Outcome(listing.to_json(), view, tuple(notes), notes_first=True, failures=tuple(listing.errors))
