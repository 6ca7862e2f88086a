"""`roofline kernels`: the ladder's model, and its resources for a target, offline.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..console import present
from ..defaults import DEFAULT_SIZE
from ..errors import RunError, UsageError
from ..outcome import Outcome
from . import gemm
from .gemm import _check_autotuned, precision

if TYPE_CHECKING:
    from ..ladder.listing import KernelListing, KernelRow
    from ..ladder.user import UserKernel
    from ..measure.nvrtc_compile import KernelResources
    from ..model.arch import ArchLimits
    from ..model.device import DeviceSpec
    from ..model.problem import Problem


MOUNT = dict(short_help="The ladder's model, and its resources for a target, offline.")


RENAMED = {"--source": "give your kernel files as arguments: roofline kernels FILE.cu",
           **{f"--{key}": f"--declare {key}=VALUE" for key in gemm.FORMER_FLAGS}}


def command(
    sources: Optional[list[Path]] = typer.Argument(None, metavar="FILE.cu...",
                                                   help="List your own kernels instead of the ladder; or problems in "
                                                        "a kernel benchmark's format (problem.py: a PyTorch Model "
                                                        "with get_inputs; a GPU MODE task's reference.py, a problem "
                                                        "per case), each with its speed of light on --gpu."),
    size: Optional[list[str]] = typer.Option(None, "--size", metavar="N|NAME=VALUE",
                                             help=f"The problem's size, square (default {DEFAULT_SIZE}): N, or M=, N= "
                                                  "and K= alike; a graded kernel's declared size, e.g. C=8192; a GPU "
                                                  "MODE task's cases by generate_input's arguments, e.g. m=4096 "
                                                  "(repeatable)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME",
                                      help="GPU preset (or device file, mygpu.toml): its target, limits and peaks."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XY", help="Target (default: this machine's GPU)."),
    model_only: bool = typer.Option(False, "--model-only", help="Skip compiling: the traffic model alone."),
    autotuned_tile: Optional[str] = typer.Option(None, "--autotuned-tile", metavar="BM,BN,BK,TM,TN",
                                                 help="List autotuned at this tile."),
    declare: Optional[list[str]] = typer.Option(None, "--declare", metavar="KEY=VALUE",
                                                help="Your kernel's launch as its '// roofline KEY: VALUE' lines would "
                                                     "say it (repeatable; one file)."),
    compile_option: Optional[list[str]] = typer.Option(None, "--compile-option", metavar="OPTION",
                                                       help=gemm.COMPILE_OPTION_HELP),
    compiler: Optional[str] = typer.Option(None, "--compiler", metavar="auto|nvcc|nvrtc", help=gemm.COMPILER_HELP),
    ladder_kind: Optional[str] = typer.Option(None, "--ladder", metavar="fp32|tensor",
                                              help="fp32: the SGEMM ladder (default); tensor: the tensor-core ladder."),
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="fp32|bf16|fp16|tf32",
                                        help="Input precision; bf16, fp16 and tf32 list the tensor ladder."),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
):
    """The SGEMM ladder, the tensor-core ladder (--ladder tensor, --dtype), or your own kernels
    (FILE.cu): traffic model and, for a target, registers, local (stack) and shared memory and
    occupancy, compiled offline (no GPU needed): the ladders through NVRTC, your files through nvcc
    where a CUDA toolkit is found, else NVRTC (--compiler picks; --compile-option adds options)."""
    from ..workload.problem import task_reference

    sources = [task_reference(p) for p in sources or []]  # a GPU MODE task named by its folder: its reference.py
    for p in sources:
        if Path(p).suffix not in (".cu", ".cuh", ".py"):
            raise UsageError(f"{p}: kernels lists CUDA files (.cu, .cuh) or a kernel benchmark's problems (.py); "
                             "this is neither")
    if sources and any(Path(p).suffix == ".py" for p in sources):
        if autotuned_tile is not None or declare or ladder_kind or dtype:
            raise UsageError("a problem file lists its own sizes and types: {declare}, {ladder} and {dtype} do not "
                             "apply to it ({size} NAME=VALUE picks a GPU MODE task's cases)", "declare",
                             ["ladder", "dtype", "size"])
        present(problems_view(list(sources), gpu, size), as_json)
        return
    users = gemm.user_kernels(list(sources or []), gemm.declared(declare), gemm.compile_settings(compiler, compile_option))
    if size and users and all(u.workload for u in users):  # graded kernels at sizes of their own (N too)
        bare = [s for s in size if "=" not in s]
        if bare:
            named = list(dict.fromkeys(n for u in users for n in u.declared.sizes))
            if not named:
                raise UsageError(f"{{size}} {bare[0]}: {users[0].name} declares no sizes to set", "size")
            example = bare[0] if bare[0].isdigit() else "1024"
            raise UsageError(f"{{size}} {bare[0]}: {users[0].name} declares its sizes by name ({', '.join(named)}); "
                             f"give {{size}} NAME=VALUE, e.g. {{size}} {named[0]}={example}", "size")
        users = _resized(users, size)
        size = None
    problem = gemm.gemm_problems(size)[0]
    if not problem.m == problem.n == problem.k:
        raise UsageError("{size}: kernels lists the model at a square size; give --size N", "size")
    if users and autotuned_tile is not None:
        raise UsageError("--autotuned-tile lists the ladder's autotuned kernel; it does not apply to your kernels")
    listing = kernels(problem.m, gpu, arch, model_only, autotuned_tile, sources=users, ladder_kind=ladder_kind,
                      dtype=dtype)
    present(view(listing, model_only, autotuned_tile), as_json)






def kernels(size: int = DEFAULT_SIZE, gpu: str | None = None, arch: str | None = None,
            model_only: bool = False, autotuned_tile: str | None = None,
            sources: list[UserKernel] | None = None, ladder_kind: str | None = None,
            dtype: str | None = None) -> KernelListing:
    """The ladder's traffic model at size^3 (or, with `sources`, the user's kernels instead) and,
    for a target (`--arch`, `--gpu`'s, else this machine's GPU when NVML sees one), each kernel
    compiled offline (NVRTC; a user's file as `measure.toolchain.choose` decides): registers, local and shared memory, occupancy. With a `gpu`
    preset, floors against its peaks, and the autotuned kernel and the shape-dispatching ones at
    the tiles `run` would pick on that GPU. `model_only` skips compiling. Raises UsageError for bad input, RunError when NVRTC is
    missing or cannot target the arch; a kernel that does not compile, or cannot launch on the
    target, is a row with an `error`. `ladder_kind` and `dtype` pick the ladder and precision as
    for `run` (`precision`): the tensor ladder's wgmma rungs compile for sm_90a."""
    from ..ladder.listing import KernelListing, KernelRow
    from ..ladder.families import KernelSpec
    from ..model.problem import Problem
    from ..ladder.user import UserKernel
    from ..render.text import chosen_tile
    from ..ladder import families
    from ..model.device import from_preset
    from ..model.device import named_limits
    from ..model.arch import arch_variant
    from ..model.roofs import COMPUTE_LEVEL, plain_verdict
    from ..ladder import tiles
    from ..measure import compile_pool, nvml, nvrtc_compile
    sources = list(sources or [])
    dtype = precision(ladder_kind, dtype, sources)
    sources = [u if u.workload else replace(u, dtype=dtype) for u in sources]
    variant = arch_variant(arch) if arch else ""
    if variant:  # your kernels compile for the target named (sm_90a's wgmma); the ladders keep their own
        sources = [replace(u, variant=variant) for u in sources]
    _check_autotuned(autotuned_tile, dtype)
    problem = Problem(size, size, size, dtype).validate()
    limits = named = named_limits(gpu, arch)  # validated even with --model-only
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
        from ..measure.toolchain import NVCC, pinned
        specs = [pinned(s, limits.arch) if isinstance(s, UserKernel) else s for s in specs]  # once, for every child
        if any(not isinstance(s, UserKernel) or s.build.compiler != NVCC for s in specs):
            nvrtc_compile.check_target(limits.arch)  # nvcc's own targets are its errors to give
    rows, roofless = [], []
    # --model-only: the target named (--arch, --gpu's) still rules what can run there
    target = limits or named or (preset.arch_limits if preset else None)
    for spec in specs:
        figures = spec.figures(problem)
        floors = (plain_verdict(figures, preset.roofs, precision=problem.precision_key)
                  if preset and figures else None)
        compute = COMPUTE_LEVEL[problem.precision_key]
        if floors is not None and (floors.binding is None or floors.floor(compute) is None):
            # the GPU has no roof of the problem's precision
            floors = None
            roofless.append(spec.name)
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
    if roofless:
        why = (f"its device file gives no flops_per_sm_per_clock.{problem.precision_key}"
               if preset.source.startswith("device file") else "its datasheet gives none")
        notes.append(f"{', '.join(roofless)}: the {preset.name} has no {problem.dtype.upper()} tensor-core roof ({why}), "
                     f"so no floors are read for {'it' if len(roofless) == 1 else 'them'}")
    notes += [_light_note(s, preset) for s in specs if isinstance(s, UserKernel) and s.workload]
    chosen = [s for s in specs if isinstance(s, KernelSpec) and s.tile_source == "shape"]
    runnable = {r.spec.name for r in rows if r.unavailable is None}
    notes += [f"{s.name} picks {chosen_tile(s.params, short=True)} on {preset.name}" for s in chosen if s.name in runnable]
    if not chosen and not sources:
        dispatching = "tile_by_shape and split_k" if dtype == "fp32" else "wgmma_persistent and wgmma_by_shape"
        if dtype == "fp32" and preset is None and autotuned_tile is None:
            notes.append(f"{dispatching} at their own tile, autotuned at its default (--gpu picks theirs, and "
                         "autotuned's tile tuned for that GPU)")
        else:
            notes.append(f"{dispatching} at their own tile (--gpu picks theirs)")
    gemm_rows = not sources or not all(u.workload for u in sources)  # a graded file declares its own sizes
    if preset is not None and limits is None and gemm_rows:
        notes.append("floors without waves and without DRAM: --model-only has no occupancy, and the DRAM bytes "
                     "follow from the blocks that run at once")
    if preset is not None and gemm_rows:
        l2 = "" if preset.roofs.l2_gbps else f" (no L2 bandwidth is known for the {preset.name}: no L2 floor)"
        notes.append(f"memory ms: the highest memory floor at the theoretical roofs: GMEM requests at the L2{l2} (a "
                     "kernel that reads A and B directly: at its L1), the bytes the waves fetch at DRAM, SMEM and L1 "
                     "bytes at the shared-memory data path")
    if preset is not None and gemm_rows and preset.fits_in_l2(problem.working_set_bytes):
        notes.append(f"A, B and C ({problem.working_set_bytes / 2**20:,.1f} MB) fit in the {preset.name}'s "
                     f"{preset.l2_bytes / 2**20:,.0f} MB L2: DRAM serves only the compulsory bytes (with the L2 "
                     "cold, as runs time it)")
    # each kernel's compile target (sm_90a for wgmma); the listing's is theirs where all share one
    built = {r.spec.name: (r.spec.target(limits.arch) if isinstance(r.spec, UserKernel)
                           else r.spec.family.target(limits.arch))
             for r in rows if r.unavailable is None} if limits else {}
    shown_arch = (next(iter(set(built.values()))) if len(set(built.values())) == 1 else limits.arch) if limits else None
    targets = {name: t for name, t in built.items() if t != shown_arch}
    return KernelListing(size, shown_arch, preset, rows, notes, dtype, targets)


def _resized(users: list[UserKernel], sizes: list[str]) -> list[UserKernel]:
    """Graded kernels (`users`, each a workload) at the sizes `sizes` set ('C=8192'), as `run
    --size` sets them (`grade.workloads`), each compiled as it was. Raises UsageError as that does."""
    from ..ladder.user import workload_kernel
    from .grade import workloads

    resized = workloads([u.declared for u in users], sizes=sizes)
    return [workload_kernel(w).with_build(u.build) for u, w in zip(users, resized)]


def _light_note(kernel: UserKernel, preset: DeviceSpec | None) -> str:
    """What a graded kernel's declared work allows (`listing.declared_work`): its FLOPs, compulsory
    bytes and intensity, and with a GPU named its speed of light there (theoretical roofs, no launch
    floor); the traffic model's columns are a GEMM's."""
    from ..ladder.listing import declared_work

    d = declared_work(kernel, preset)
    flops = ", ".join(f"{v / 1e9:,.4g} GFLOP {k}" for k, v in d["flops"].items() if v) or "no FLOPs"
    ai = f", {d['flop_per_byte']:,.3g} FLOP/B" if d["flop_per_byte"] else ""
    text = f"{kernel.name}: {d['workload']}: {flops}, {d['bytes'] / 1e6:,.4g} MB compulsory{ai}"
    if preset is None:
        return text + "; --gpu NAME gives its speed of light"
    return text + (f"; T_SOL on {preset.name} {d['t_sol_ms']:.4g} ms ({d['binding_level']} binds, theoretical roofs, "
                   "no launch floor)" if d["binding_level"] is not None else f"; no roof on {preset.name} for its work")


def _compiled_row(row: KernelRow, res: KernelResources | RunError, limits: ArchLimits, problem: Problem,
                  preset: DeviceSpec | None) -> KernelRow:
    from ..model.roofs import plain_verdict
    from ..model.dram import blocks_in_step
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
    floors, figures = row.floors, row.figures
    if waves is not None and figures is not None:  # the floors at the share of the GPU the grid keeps busy
        if preset.usable_l2_bytes and spec.model is not None:  # and the DRAM bytes of those waves
            in_step = blocks_in_step(waves.block_slots, waves.sms, occ.active_warps_per_sm, waves.blocks)
            figures = spec.model.with_dram(figures, problem, in_step, preset.usable_l2_bytes)
        floors = plain_verdict(figures, preset.roofs, waves=waves, precision=problem.precision_key)
    return replace(row, figures=figures, resources=res, dynamic_smem_bytes=dynamic, occupancy=occ, error=error,
                   waves=waves, floors=floors)


def problems_view(paths: list[Path], gpu: str | None, sizes: list[str] | None = None) -> Outcome:
    """Problems in a kernel benchmark's format (`workload.problem`), each with its work, compulsory
    bytes and speed of light on the GPU `gpu` names (a preset or device file; else this machine's,
    through NVML) (`analysis.problems`); of a GPU MODE task, the cases `sizes` picks (NAME=VALUE).
    Raises UsageError for a file that is not a problem (a .cu beside them included), or without a
    GPU to read the roofs of."""
    from .. import documents
    from ..analysis.problems import bounds
    from ..console import rich_console
    from ..model.device import from_preset
    from ..progress import Bar

    others = [p for p in paths if Path(p).suffix != ".py"]
    if others:
        raise UsageError(f"{others[0]}: give problems (.py) alone; kernel files are listed without them")
    if gpu is not None:
        device = from_preset(gpu)
    else:
        from ..measure import nvml

        if not nvml.nvml_compute_capability():
            raise UsageError("a problem's speed of light is read against a GPU's roofs: give --gpu NAME (h200, "
                             "h100-sxm, a100-sxm4-80gb, ...), or run it where NVML sees a GPU", "gpu")
        device = nvml.from_nvml()
    bar = Bar(rich_console(err=True))  # a level of KernelBench's problems takes minutes (its RNNs)
    with bar.bar:
        found = bounds(paths, device, sizes, bar)
    return Outcome(documents.to_json(found), lambda width: documents.view(found, width), failures=tuple(found.errors),
                   usage=not found.missing_only)  # a package to install is a failure to run (1), not bad input (2)


def view(listing: KernelListing, model_only: bool, autotuned_tile: str | None) -> Outcome:
    """The ladder's (or the user's) kernels: the notes first (the offline fallback said where a
    script sees it); the listing's tables and lines (`documents`); a kernel that did not compile
    or cannot launch is a failure."""
    from .. import documents

    notes = list(listing.notes)
    if listing.arch is None and not model_only:  # the offline fallback
        notes.insert(0, "no CUDA GPU found and no target given: the traffic model alone; add --arch sm_XY or "
                        "--gpu NAME for registers, local memory and occupancy")
    return Outcome(documents.to_json(listing),
                   lambda width: documents.view(listing, width, model_only=model_only, autotuned_tile=autotuned_tile),
                   tuple(notes), notes_first=True, failures=tuple(listing.errors))
