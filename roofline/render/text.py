"""Numbers and sentences for people: percentages, figures, limiter names and the verdict of each
kernel, written from the data `model.roofs.verdict` returns."""

from __future__ import annotations

import os
from decimal import ROUND_HALF_UP, Decimal

from ..model.occupancy import Occupancy
from ..model.roofs import COMPUTE_LEVEL, LAUNCH, SHARED_LEVELS, Verdict, level_bytes
from ..model.timeline import ROOF_NAMES
from ..model.units import figure, plural
from ..model.waves import Waves
from ..model.precision import PRECISIONS
from .encoding import PLAIN_ERRORS, ascii_text  # (kept apart: the console loads the handler alone)

NEAR = 1.5  # a profiled kernel within this factor of its roof (two thirds of it or more) is near it
SHORT_LIMITER = {"registers": "regs", "shared_memory": "smem", "warps": "warps", "blocks": "blocks"}


def percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as a percentage rounded half up, trailing '.0' dropped: 0.4375 -> '43.8',
    0.0625 -> '6.3', 1 -> '100'."""
    q = Decimal(repr(100 * fraction)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    text = f"{q:f}"
    return text[: -(decimals + 1)] if decimals and text.endswith("." + "0" * decimals) else text


def limiters(occ: Occupancy, short: bool = False) -> str:
    """The resources that limit an occupancy, joined: 'registers', 'warps+blocks' ('-' for none)."""
    names = [SHORT_LIMITER.get(x, x) if short else x for x in occ.limiters]
    return "+".join(names) or "-"


def occupancy_cell(occ: Occupancy | None) -> str:
    """'25% regs' for a table cell; '-' when unknown."""
    return "-" if occ is None else f"{percent(occ.occupancy)}% {limiters(occ, short=True)}"


def occupancy_phrase(occ: Occupancy | None) -> str:
    """'occupancy 25 % (registers)' for a sentence."""
    return "occupancy n/a" if occ is None else f"occupancy {percent(occ.occupancy)} % ({limiters(occ)})"


def bound_cell(v: Verdict) -> str:
    """The binding level and the time over its floor, for a table cell: 'fp32 1.36'."""
    return f"{v.binding.level.lower()} {v.times_floor:.2f}"


def compute_basis(roof) -> str:
    """Where a compute roof (`roofs.Roof`) comes from, for a verdict's parentheses: 'best rate seen'
    (raised to the best rate its file saw), 'FP16 cuBLAS' (a BF16 ceiling that is cuBLAS's FP16
    rate), 'measured' or 'theoretical'."""
    return ("best rate seen" if roof.seen else roof.borrowed if roof.borrowed else "measured" if roof.measured
            else "theoretical")


def _basis(v: Verdict) -> str:
    b = v.binding
    if b.level not in MEMORY_NAMES:  # a compute roof: FP32, or a tensor-core one ('BF16 tensor')
        return compute_basis(b.roof)
    if b.level == "L1":
        return ("measured" if b.counted else "model") + " sector bytes, the shared-memory data path"
    source = "measured bytes" if b.counted else "model bytes"
    return source + (", best bandwidth seen" if b.roof.seen else ", measured bandwidth" if b.roof.measured else "")


def tail_phrase(w: Waves) -> str:
    """How a grid fills the GPU, for a verdict: '32 blocks fill 32 of 132 block slots: 24 % of the
    GPU busy', or for several waves '133 blocks take 2 waves of 132 block slots, the last 1 % full:
    50 % of the GPU busy'; where an SM holds several slots, the SMs the last wave keeps busy, which
    the share counts ('576 blocks take 3 waves of 264 block slots, the last 18 % full (48 of 132
    SMs): 79 % of the GPU busy')."""
    busy = f"{percent(w.utilization, 0)} % of the GPU busy"
    if w.full_waves == 1:
        sms = f" ({min(w.blocks, w.sms):,} of {w.sms:,} SMs)" if w.sms != w.block_slots else ""
        fill = "fills" if w.blocks == 1 else "fill"
        return f"{plural(w.blocks, 'block')} {fill} {w.blocks:,} of {w.block_slots:,} block slots{sms}: {busy}"
    sms = f" ({min(w.last_wave_blocks, w.sms):,} of {w.sms:,} SMs)" if w.sms != w.block_slots else ""
    return (f"{w.blocks:,} blocks take {w.full_waves:,} waves of {w.block_slots:,} block slots, the last "
            f"{percent(w.last_wave_efficiency, 0)} % full{sms}: {busy}")


def waves_cell(w: Waves | None) -> str:
    """'3.88' for a table cell (three significant digits: '0.0038' for one block of 264 slots), with
    the share of the SMs busy when the tail costs more than a tenth of the time: '0.24 (48% busy)';
    '-' unknown."""
    if w is None:
        return "-"
    return f"{w.waves:.3g}" + (f" ({percent(w.utilization, 0)}% busy)" if w.tail_matters else "")


def launch_phrase(v: Verdict) -> str:
    """'launch-bound: 0.0042 ms, 1.3x the 0.0031 ms an empty kernel takes to launch and finish'."""
    b = v.binding
    return (f"launch-bound: {v.time_ms:.4f} ms, {v.times_floor:.1f}x the {b.floor_ms:.4f} ms an empty kernel takes "
            "to launch and finish")


def reuse_phrase(v: Verdict) -> str:
    """For a kernel a memory level binds, the work each byte of that level carries against what the
    compute roof needs (the ridge point at these roofs): '; 68 FLOP per L2 byte, where the BF16
    tensor roof needs 84: more reuse at this level lowers the floor by at most 1.24x' (below that
    the compute floor binds; a kernel far above its floor has other causes first). The FLOPs and bytes are
    the floors' (floor x roof, times the busy share of the GPU where `verdict` divided by it); what
    the roof needs is the ridge point at the rates the busy SMs get, so the kernel reaches the compute
    roof exactly where its FLOP per byte reaches it. '' where no compute floor is read, or the level is
    not a memory one."""
    b = v.binding
    compute = next((f for f in v.floors if f.level not in MEMORY_NAMES and f.level != LAUNCH and not f.aside), None)
    if b is None or compute is None or b.level not in MEMORY_NAMES or not b.floor_ms or not compute.floor_ms:
        return ""
    busy = v.waves.utilization if v.waves is not None else 1.0
    level_busy = 1.0 if b.level in SHARED_LEVELS else busy  # the chip's L2 and DRAM serve whatever SMs run
    flops = compute.floor_ms * compute.roof.value * busy  # GFLOP/s x ms: the same unit as the bytes below
    nbytes = b.floor_ms * b.roof.value * level_busy
    done, ridge = flops / nbytes, compute.roof.value * busy / (b.roof.value * level_busy)
    return (f"; {figure(done)} FLOP per {b.level} byte, where the {compute.level} roof needs {figure(ridge)}: "
            f"more reuse at this level lowers the floor by at most {ridge / done:.2f}x")


# The sampled unit (`model.timeline.SHARE_OF`) that does the work a verdict's binding roof reads.
UNIT_OF_LEVEL = {"FP32": "fma", "FP64": "fp64", "DRAM": "dram", "L2": "l2", "SMEM": "l1", "L1": "l1"}
SAMPLED_BUSY = 0.8  # a steady part this near its busiest unit's peak ...
VERDICT_FAR = 0.6  # ... while the verdict's roof is this far or further: the samples name the bound
STEADY_MOST = 0.5  # (a steady part of at least this share of the run)


def sampled_phrase(timeline, v: Verdict) -> str:
    """Where a kernel's timeline (`results.timeline.Timeline`, sampled over the whole run) reads
    otherwise than its verdict `v`: its steady part (at least STEADY_MOST of the time) runs
    another unit at SAMPLED_BUSY of its peak or more while the binding roof is at VERDICT_FAR or
    less. Then that unit binds first, through work the verdict's floors do not count (an L1tex
    unit kept busy by shared-memory wavefronts, which a broadcast read costs in full for the 4
    bytes it serves: the H100's FP32 register_tiling_1d at 88 % of it, its FP32 roof at 31 %).
    '' otherwise."""
    b = v.binding
    times = v.times_floor
    if timeline is None or timeline.cut_short or b is None or not times:
        return ""
    steady = next((p for p in timeline.phases() if p.name == "steady"), None)
    if steady is None or steady.share < STEADY_MOST or steady.roof_share < SAMPLED_BUSY or 1 / times > VERDICT_FAR:
        return ""
    unit = UNIT_OF_LEVEL.get(b.level, "tensor" if b.level.endswith("tensor") else None)
    if unit is None or steady.roof == unit:
        return ""
    why = (" (a shared-memory or L1 request costs the unit wavefronts, whatever bytes it serves; the floors count "
           "bytes)" if steady.roof == "l1" else " (work the floors of FLOPs and bytes do not count)")
    name = ROOF_NAMES.get(steady.roof, steady.roof)
    return (f"; its samples read otherwise: through its steady part ({100 * steady.share:.0f} % of the time) the "
            f"{name} runs at {100 * steady.roof_share:.0f} % of its peak, the {b.level} roof at {100 / times:.0f} %: "
            f"the {name} binds first{why}")


def verdict_sentence(name: str, v: Verdict, occ: Occupancy | None) -> str:
    """One line: which roof binds `name`, on what figures, how far the kernel is from it, and its
    occupancy: 'full_tiles: FP32-bound (measured); 1.26x its floor of 2.216 ms (79 % of that
    ceiling); occupancy 12.5 % (registers)', then the tail and an L2-resident working set when
    they matter."""
    b = v.binding
    times = v.times_floor
    tail = f"; tail: {tail_phrase(v.waves)}, which the floors count" if v.waves and v.waves.tail_matters else ""
    if v.l2_resident:
        tail += "; no DRAM floor: A, B and C fit in L2, where the modelled re-reads are served"
    if b.level == LAUNCH:
        return f"{name}: {launch_phrase(v)}; {occupancy_phrase(occ)}"
    if b.level not in MEMORY_NAMES and not any(f.level in MEMORY_NAMES and not f.aside for f in v.floors):
        # no bytes at any level that can bind (a kernel of one's own with no tile declared, not profiled; or
        # one reading global memory directly whose L1 sectors were not counted): nothing to bind against but
        # its work, which says how far it is from that roof and not what holds it there
        why = ("its GMEM requests are its L1's (it stages nothing in shared memory), whose sectors the model counts "
               "only where the file declares thread-x (// roofline thread-x: rows|cols)"
               if any(f.aside == "L1" for f in v.floors) else "no traffic model")
        return (f"{name}: {why}, so its {b.level} floor ({_basis(v)}) is the only one known; "
                f"{times:.2f}x that floor of {b.floor_ms:.3f} ms ({100 / times:.0f} % of that roof); "
                f"{occupancy_phrase(occ)}{tail}")
    if times >= 0.9995:  # at its roof to rounding (a ceiling raised to this kernel's own rate reads 1.00x)
        return (f"{name}: {b.level}-bound ({_basis(v)}); {times:.2f}x its floor of {b.floor_ms:.3f} ms "
                f"({100 / times:.0f} % of that ceiling){reuse_phrase(v)}; {occupancy_phrase(occ)}{tail}")
    if b.level not in MEMORY_NAMES:  # above a compute ceiling: on the roof, not a miscount
        basis = "measured ceiling, so the measurement is low" if b.roof.measured else \
            "theoretical peak, so the clock or the peak is wrong"
        return (f"{name}: {b.level}-bound, at its roof: {100 / times:.0f} % of the {basis} "
                f"({b.floor_ms:.3f} ms floor); {occupancy_phrase(occ)}{tail}")
    if b.counted:  # counted bytes are what moved: it is the bandwidth ceiling that was beaten
        basis = "measured" if b.roof.measured else "theoretical"
        why = (f"the counted bytes moved faster than the {basis} {b.level} bandwidth ({b.roof.value:,.0f} GB/s) "
               "allows: that ceiling is below what this level sustains")
    else:
        why = ("the hardware moved fewer bytes than the model counts at that level (a cache nearer the SMs served "
               "some, or the L2 kept more of the panels than the wave model assumes)")
    return (f"{name}: ran {1 / times:.2f}x faster than its highest floor, {b.level} ({_basis(v)}, "
            f"{b.floor_ms:.3f} ms): {why}; {occupancy_phrase(occ)}{tail}")


def counters_phrase(counted: Verdict, model_only: Verdict, figures, found) -> str:
    """The clause a verdict read from Nsight Compute's bytes gets where the model's bytes alone
    name another roof: which, how far, the level whose modelled and counted bytes differ, and that
    the counted ones are read. `counted` is the verdict with the counts (`found`, a
    `traffic.CountedTraffic`), `model_only` the same kernel's without them (`figures`, its
    `traffic.ModelFigures`). '' where both name the same roof (binding, or as near: `Verdict.agrees`) or a
    figure is missing. Example
    (wgmma_tma, BF16 8192^3 on the H200): '; the model alone names BF16 tensor (1.56x): it counts
    4.63 GB of DRAM bytes against 6.50 GB counted (0.71x: its blocks kept less of A and B in the L2
    than the waves model assumes); the verdict reads the counted bytes, which are what moved'."""
    b, m = counted.binding, model_only.binding
    if b is None or m is None or counted.agrees(model_only) or model_only.times_floor is None or found is None:
        return ""
    model, seen = level_bytes(figures), level_bytes(None, found)
    level = b.level if b.level in model and b.level in seen else m.level if m.level in model and m.level in seen \
        else None
    if level is None:
        return ""
    mb, cb = model[level].nbytes, seen[level].nbytes
    why = (": its blocks kept less of A and B in the L2 than the waves model assumes" if level == "DRAM" and mb < cb
           else "")
    return (f"; the model alone names {m.level} ({model_only.times_floor:.2f}x): it counts {mb / 1e9:,.2f} GB of "
            f"{level} bytes against {cb / 1e9:,.2f} GB counted ({mb / cb:.2f}x{why}); the verdict reads the counted "
            "bytes, which are what moved")


WAVEFRONT_BYTES = 128  # what one pass through the 32 banks of 4 bytes serves (CUDA programming guide)
CONFLICTS_SAID = 0.5  # bank conflicts per conflict-free pass from which a SMEM-bound verdict names them


def conflicts_phrase(v: Verdict, found) -> str:
    """For a kernel shared memory binds, the bank conflicts Nsight Compute counted (`found`, a
    `traffic.CountedTraffic`), where there are at least CONFLICTS_SAID per pass its bytes need:
    '; 1.22 G bank conflicts counted, 2.27 per 128-byte pass its bytes need: each a further pass
    that the bytes do not show, and the first thing to remove (its passes with them take 6.917 ms
    at the SMEM ceiling; it ran 2.08x that, the shared-memory pipe 48 % busy)'. The passes with the conflicts are not a
    floor (a conflict-free layout removes them) but what this kernel asks of the pipe: its bytes'
    passes plus one per conflict, 128 bytes each, at the binding SMEM roof. '' otherwise."""
    b = v.binding
    if b is None or b.level != "SMEM" or found is None or not found.bank_conflicts or not found.smem_bytes:
        return ""
    passes = found.smem_bytes / WAVEFRONT_BYTES
    per_pass = found.bank_conflicts / passes
    if per_pass < CONFLICTS_SAID:
        return ""
    busy = ""
    if v.time_ms and b.floor_ms:
        with_conflicts = b.floor_ms * (passes + found.bank_conflicts) / passes
        busy = (f" (its passes with them take {with_conflicts:.3f} ms at the SMEM ceiling; it ran "
                f"{v.time_ms / with_conflicts:.2f}x that, the shared-memory pipe {100 * with_conflicts / v.time_ms:.0f} % busy)")
    return (f"; {found.bank_conflicts / 1e9:,.3g} G bank conflicts counted, {per_pass:.2f} per {WAVEFRONT_BYTES}-byte "
            f"pass its bytes need: each a further pass that the bytes do not show, and the first thing to remove{busy}")


def kernel_counters_phrase(doc, k, v: Verdict) -> str:
    """`counters_phrase` of kernel `k` of run `doc` (`results.schema.Results`), read as `v`, and its
    bank conflicts where shared memory binds (`conflicts_phrase`): '' for a kernel without counts
    or without a model. The line `show` and the HTML report both give."""
    if k.counted is None or k.model is None:
        return ""
    return counters_phrase(v, doc.model_verdict(k), k.model, k.counted) + conflicts_phrase(v, k.counted)


def compute_phrase(v: Verdict, level: str) -> str:
    """The clause a tensor-core run's verdict gets when another floor binds: how the kernel
    stands against the compute roof of its precision (`level`, 'BF16 tensor'): '; BF16 tensor
    roof (theoretical): 1.43x its floor of 0.139 ms (70 % of that roof)'. '' where that roof binds,
    or without a time or such a floor. (A run's measured ceilings are at least what it saw:
    `results.schema.Results.roofs`.)"""
    f, b = v.floor(level), v.binding
    if f is None or b is None or b.level == level or v.time_ms is None or not f.floor_ms:
        return ""
    basis = compute_basis(f.roof)
    times = v.time_ms / f.floor_ms
    return (f"; {level} roof ({basis}): {times:.2f}x its floor of {f.floor_ms:.3f} ms ({100 / times:.0f} % of that "
            "roof)")


def near_phrase(v: Verdict, covered: str | None = None) -> str:
    """The clause a verdict gets where a second floor is within `roofs.TIE` of the binding one (the
    ceilings' own measurement cannot order the two: `Verdict.near`): '; its L2 floor as near (0.181 ms,
    1.06x)'. '' where there is none, or where it is the level `covered` (a tensor-core run's compute
    roof, which `compute_phrase` already reads)."""
    n = v.near
    if n is None or n.level == covered or v.time_ms is None or not n.floor_ms:
        return ""
    return f"; its {n.level} floor as near ({n.floor_ms:.3f} ms, {v.time_ms / n.floor_ms:.2f}x)"


def spill_cell(local_bytes: int | None) -> str:
    """Local memory per thread for a table cell: '1,440 B', '0', '-' where not recorded."""
    if local_bytes is None:
        return "-"
    return f"{local_bytes:,} B" if local_bytes else "0"


def spill_phrase(local_bytes: int | None, registers: int | None, times_floor: float | None = None) -> str:
    """The clause a verdict gets for a kernel with local memory ('' for none): '; local memory:
    1,440 B per thread beside its 32 registers (register spills or arrays kept in memory), read and
    written through L1/L2 and not in the model', and when the kernel is `times_floor` 2x or more
    over its floor, that this is the likeliest reason. Local memory (register spills and arrays
    the compiler could not keep in registers; bytes per thread from the compiled kernel's
    attributes) lives in DRAM behind L1 and L2."""
    if not local_bytes:
        return ""
    regs = f" beside its {plural(registers, 'register')}" if registers else ""
    why = f": the likeliest reason it is {times_floor:.0f}x its floor" if times_floor and times_floor >= 2 else ""
    return f"; local memory: {local_bytes:,} B per thread{regs} (register spills or arrays kept in memory), read " \
           f"and written through L1/L2 and not in the model{why}"


LEVEL_NAMES = {"L1": "L1/shared", "SMEM": "L1/shared"}
MEMORY_NAMES = ("DRAM", "L2", "L1", "SMEM")


def roof_name(level: str) -> str:
    """A roof's name for people: 'DRAM', 'L2', 'L1/shared', 'BF16 tensor', 'FP32'."""
    return LEVEL_NAMES.get(level, level)


WORK_NAMES = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16", "tensor": "tensor-core", "other tensor": "other tensor-core"}
BYTE_NAMES = {"dram": "DRAM", "l2": "L2", "l1": "L1", "smem": "shared-memory"}


def _and(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def uncounted_phrase(kinds: list[str]) -> str:
    """What `ProfiledKernel.uncounted` names, in groups: 'FP16 and tensor-core work; FP32
    ADD/MUL; L2 and shared-memory bytes'; 'operations' for every kind of work."""
    kinds = list(kinds)
    work = [WORK_NAMES[k] for k in kinds if k in WORK_NAMES]
    part = [f"{k.split(' ')[0].upper()} {k.split(' ', 1)[1]}" for k in kinds if k not in WORK_NAMES and " " in k]
    nbytes = [BYTE_NAMES[k] for k in kinds if k in BYTE_NAMES]
    groups = (["operations"] if {"fp32", "tensor"} <= set(kinds) else [_and(work) + " work"] if work else []) \
        + part + ([_and(nbytes) + " bytes"] if nbytes else [])
    return "; ".join(groups)


def precision_cell(k, device) -> str:
    """A profiled kernel's precision for a table or chart label: 'bf16 TC', with '?' after it
    where other kinds of its work were not counted (or counted in part), '?' alone where none of
    its work was (`ProfiledKernel.uncounted`)."""
    if k.precision == "unknown":
        return "?"
    work_uncounted = [u for u in k.uncounted(device) if u not in BYTE_NAMES]
    return k.precision + (" TC" if k.tensor_core else "") + ("?" if work_uncounted else "")


def _off_clock(clock_mhz: float | None, nominal_mhz: float | None) -> bool:
    return bool(clock_mhz and nominal_mhz and abs(clock_mhz / nominal_mhz - 1) > 0.03)


def _as_near(v: Verdict) -> str:
    """'; its BF16 tensor roof as near (86 %)' where another floor is within `roofs.TIE` of the
    binding one (`Verdict.near`), else ''."""
    f = v.near
    if f is None or not v.time_ms:
        return ""
    return f"; its {roof_name(f.level)} roof as near ({100 * f.floor_ms / v.time_ms:.0f} %)"


def profile_verdict(v: Verdict, occ: Occupancy | None, achieved: float | None, blocks: int | None, sm_count: int,
                    uncounted: list[str] | tuple[str, ...] = (), clock_mhz: float | None = None,
                    nominal_mhz: float | None = None, nominal_times: float | None = None) -> str:
    """One line on a profiled kernel: how close it is to the roof that binds it and, when it is
    far, the likeliest reason the counters show (a grid smaller than the GPU, achieved occupancy
    far below the theoretical one, or latency and instruction issue). A roof that follows the SM
    clock is read at the kernel's `clock_mhz`; when that is more than 3 % off the `nominal_mhz`
    its nominal roof assumes, the reading against the nominal roof (`nominal_times`) is given
    beside it. Where kinds of work or bytes were not counted (`uncounted`), their roofs are not
    placed and no verdict blames latency or the grid: it says another roof may bind instead."""
    b, times = v.binding, v.times_floor
    if b is None or times is None:
        return f"nothing counted places it (not counted: {uncounted_phrase(list(uncounted))})" if uncounted \
            else "no work or bytes counted"
    roof = roof_name(b.level)
    # the clock matters where the roof follows it: not for a measured ceiling that binds at both
    off = _off_clock(clock_mhz, nominal_mhz) and not (nominal_times and abs(nominal_times / times - 1) < 0.005)
    # floors of the units each SM has to itself are of the SMs the grid keeps busy; the L2's and the
    # DRAM's are the whole chip's (`roofs.verdict`)
    busy = 1.0 if b.level in SHARED_LEVELS or v.waves is None else v.waves.utilization
    kept = f" of the {percent(busy, 0)} % of the GPU its waves keep busy" if 0.95 <= busy < 0.995 else ""
    clock = (f" at the {clock_mhz:,.0f} MHz it ran at" + (
        f"; {100 / nominal_times:.0f} % at the nominal {nominal_mhz:,.0f} MHz" if nominal_times else "")) if off else ""
    share = f"{100 / times:.0f} %{kept}{clock}"
    if times < 1:  # a profile's bytes and work are counted: it is the ceiling that was beaten
        moved = "its counted bytes moved faster than" if b.level in MEMORY_NAMES else "it ran faster than"
        low = "the measurement is low" if b.roof.measured else "the clock or the peak is wrong"
        kind = "measured ceiling" if b.roof.measured else "theoretical peak"
        return f"at its {roof} roof: {moved} the {kind} allows ({share}), so {low}"
    # a floor of the SMs the grid keeps busy: where that is part of the GPU, said, with the reading
    # against the whole GPU's roof, which the chart draws
    part = (f" on the {percent(busy, 0)} % of the GPU its grid keeps busy ({times / busy:.1f}x below the whole "
            f"GPU's)") if busy < 0.95 else ""
    far = f"{times:.1f}x below its {roof} roof" + (
        f" at its {clock_mhz:,.0f} MHz" + (f" ({nominal_times:.1f}x at the nominal {nominal_mhz:,.0f} MHz)"
                                            if nominal_times else "") if off else "") + part
    if uncounted and times > 1.25:  # no blame on latency, occupancy or the grid: an uncounted roof may be it
        reading = f"near its {roof} roof ({share}){part}" if times <= NEAR else far
        tail = f"tail: {tail_phrase(v.waves)}; " if v.waves is not None and v.waves.tail_matters else ""
        return f"{tail}{reading}; not counted: {uncounted_phrase(list(uncounted))}, so another roof may bind instead"
    if v.waves is not None and v.waves.tail_matters:
        of = f"the whole GPU's {roof} roof" if b.level in SHARED_LEVELS else f"the {roof} roof of the SMs it keeps busy"
        return f"tail: {tail_phrase(v.waves)}; at {100 / times:.0f} % of {of}"
    if times <= 1.25:
        return f"at its {roof} roof ({share}){_as_near(v)}"
    if times <= NEAR:
        return f"near its {roof} roof ({share}){_as_near(v)}"
    if blocks is not None and blocks < sm_count and blocks / sm_count * times <= NEAR:  # the idle SMs explain it
        return f"{plural(blocks, 'block')} for {sm_count} SMs: the grid leaves SMs idle ({100 / times:.0f} % of {roof})"
    if occ is not None and achieved is not None and occ.occupancy and achieved < 0.5 * occ.occupancy:
        return (f"latency-bound: achieved occupancy {percent(achieved)} % of a possible {percent(occ.occupancy)} % "
                f"({100 / times:.0f} % of {roof})")
    if times <= 2:  # between near and far: the distance alone, no cause guessed
        said = ([f"on the {percent(busy, 0)} % of the GPU its waves keep busy"] if kept else []) + \
            ([clock.strip()] if clock else [])
        return f"at {100 / times:.0f} % of its {roof} roof" + (f" ({'; '.join(said)})" if said else "")
    return f"{far}: latency or instruction issue, not bandwidth"


def profiled_kernel_verdict(doc, k, v: Verdict | None = None) -> str:
    """`profile_verdict` of kernel `k` of profile `doc` (`results.profile.ProfileResults`), with
    its reading `v` (`doc.verdict(k)`, worked out where not given), its nominal-clock reading, its
    blocks and what was not counted: the line the profile table and the HTML report both show."""
    v = v or doc.verdict(k)
    b = v.binding
    nominal_times = None
    if b is not None and v.times_floor:
        nominal = doc.nominal_verdict(k)
        nominal_times = nominal.times_floor if nominal.binding and nominal.binding.level == b.level else None
    blocks = k.grid[0] * k.grid[1] * k.grid[2] if k.grid else None
    return profile_verdict(v, k.occupancy, k.achieved_occupancy, blocks, doc.device.sm_count,
                           k.uncounted(doc.device), k.clock_mhz, doc.nominal_clock_mhz(b.level) if b else None,
                           nominal_times) + sampled_phrase(k.timeline, v)


def tensor_clock_note(tensor_mhz: float | None, max_mhz: float | None) -> str | None:
    """Why tensor-core peaks use another clock than the CUDA cores', or None when they do not."""
    if not tensor_mhz or not max_mhz or abs(tensor_mhz - max_mhz) < 0.5:
        return None
    return (f"tensor-core peaks (FP64's aside) use {tensor_mhz:,.0f} MHz, the clock the datasheet's tensor figures imply; the "
            f"maximum SM clock ({max_mhz:,.0f} MHz) would overstate them, since a tensor-core load runs at the "
            "power limit below it")


def middle_cut(name: str, width: int) -> str:
    """`name` in at most `width` characters, its middle replaced by '...' when too long, so that
    kernels that differ only at the end stay apart: 'nvjet_sm90_tst_256x...opA_bias_TNT' (ASCII,
    so that the cut reads the same on any terminal)."""
    if len(name) <= width:
        return name
    head = (width - 1) * 3 // 5
    return name[:head] + "..." + name[len(name) - (width - 3 - head):]


def launch_shape(grid, block) -> str:
    """'2x64x1 x 384': a launch's grid and its block's threads, each one number where it is 1-D (the
    kernel table's 'grid x block' column); `grid`, `block`: three ints each."""
    grid, block = [int(d) for d in grid], [int(d) for d in block]
    g = "x".join(map(str, grid)) if grid[1:] != [1, 1] else str(grid[0])
    b = "x".join(map(str, block)) if block[1:] != [1, 1] else str(block[0])
    return f"{g} x {b}"


def short_label(label: str, width: int) -> str:
    """A kernel's label in at most `width` characters with its launch configuration written short
    ('vectorized_elem...copy_kernel_cuda] [32000 x 128]': `launch_shape`), for tables too narrow for `label_cut`'s whole suffix; a label
    without one is `middle_cut`."""
    from ..results.profile import LAUNCH_LABEL

    found = LAUNCH_LABEL.search(label)
    if not found:
        return middle_cut(label, width)
    short = launch_shape(*(part.split("x") for part in found.group()[2:-1].split(" blocks of ")))
    return middle_cut(label[:found.start()], max(12, width - len(short) - 3)) + f" [{short}]"


def label_cut(label: str, width: int) -> str:
    """A kernel's label in at most `width` characters (about: never shorter than its launch suffix
    and 12 more), `middle_cut` in its name alone where it ends in a launch configuration
    (`results.profile.launch_label`: ' [320x1x1 blocks of 512x1x1]'), so that what tells apart two
    kernels of one name, its launch, is never what the cut takes."""
    from ..results.profile import LAUNCH_LABEL

    found = LAUNCH_LABEL.search(label)
    if not found or len(label) <= width:
        return middle_cut(label, width)
    return middle_cut(label[:found.start()], max(12, width - len(found.group()))) + found.group()


TELLS_APART = 6  # characters of where two names differ that a cut shows to tell them apart at a glance
END_KEPT = 8  # characters of a name's end kept by a cut in three pieces (`_cuts_apart`)


def _cut_at(name: str, width: int, head: int) -> str:
    """`name` in `width` characters: its first `head`, '...', and its end (whole where it fits)."""
    return name if len(name) <= width else name[:head] + "..." + name[len(name) - (width - 3 - head):]


def _shared_ends(names: list[str]) -> dict[str, int]:
    """For each of different `names`, the longest prefix it shares with any other: with one of its
    neighbours in sorted order, so O(n log n)."""
    ordered = sorted(names)
    lcp = [len(os.path.commonprefix([a, b])) for a, b in zip(ordered, ordered[1:])]
    return {n: max(lcp[i - 1] if i else 0, lcp[i] if i < len(lcp) else 0) for i, n in enumerate(ordered)}


def _differs(names: list[str]) -> dict[str, tuple[int, int]]:
    """Where each of different `names` differs from the nearest of the others: [start, end) past the
    longest prefix and before the longest suffix it shares with any of them (empty where one holds
    another whole)."""
    start = _shared_ends(names)
    ends = _shared_ends([n[::-1] for n in names])
    return {n: (start[n], max(start[n], len(n) - ends[n[::-1]])) for n in names}


def _shown(length: int, start: int, end: int, head: int, width: int) -> int:
    """How many characters of [start, end) of a name of `length` a cut at `head` (`_cut_at`) shows."""
    if length <= width:
        return end - start
    tail_from = length - (width - 3 - head)
    return max(0, min(end, head) - start) + max(0, end - max(start, tail_from))


def _tokens_apart(names: list[str], width: int) -> dict[str, str] | None:
    """Each of `names` as its head, '...' and the parts of it (between '_') that not every one of
    them holds, in their order, cut at the end to `width` where they are too long: cuDNN's kernels
    that differ in a tile and a split, 'sm90_xmma_...tilesize64x64x64_segment_on' beside
    'sm90_xmma...tilesize64x64x64_segment_off' and 'sm90_xmma_wgra...tilesize128x64x64_split'.
    None where these read alike."""
    common = set.intersection(*(set(n.split("_")) for n in names))
    out = {}
    for n in names:
        own = "_".join(t for t in n.split("_") if t and t not in common)
        if not own:
            return None
        head = max(8, width - 3 - len(own))
        out[n] = n if len(n) <= width else (n[:head] + "..." + own)[:width]
    return out if len(set(out.values())) == len(names) else None


def _cuts_apart(names: list[str], width: int) -> dict[str, str] | None:
    """Cuts in `width` characters for different names that `middle_cut` makes read alike, each
    showing where it differs from the others (`_differs`: up to `TELLS_APART` characters of it):
    one '...' for all of them where one place shows that of each, as near the middle as it can
    ('multi_tensor_apply_kernel [Binary...des]' beside 'multi_tensor_apply_kernel [Pointw...des]');
    else each its head and the parts of it that not all of them hold (`_tokens_apart`); else each
    its head, '...', a piece from just before where it differs, '...' and its end
    ('sm80_xmma_gemm...ze64x128x8_s...x_cublas'). None where these still read alike."""
    where = _differs(names)
    need = {n: min(TELLS_APART, b - a) for n, (a, b) in where.items()}
    default, best, chosen = (width - 1) * 3 // 5, None, None
    for head in range(1, width - 3):
        cuts = [_cut_at(n, width, head) for n in names]
        if len(set(cuts)) == len(names) and all(_shown(len(n), *where[n], head, width) >= need[n] for n in names):
            if best is None or abs(head - default) < best:
                best, chosen = abs(head - default), dict(zip(names, cuts))
    if chosen is not None:
        return chosen
    tokens = _tokens_apart(names, width)
    if tokens is not None:
        return tokens
    piece = TELLS_APART + 6
    head = width - 6 - piece - END_KEPT
    if head < 4:
        return None
    chosen = {n: n if len(n) <= width else
              n[:head] + "..." + n[max(head, where[n][0] - 2):][:piece] + "..." + n[-END_KEPT:] for n in names}
    return chosen if len(set(chosen.values())) == len(names) else None


def display_names(names: list[str], width: int, universe: list[str] | None = None) -> list[str]:
    """Each name cut to `width` (`middle_cut`); different names that the cut makes read alike are
    cut where they differ instead (`_cuts_apart`), so that different kernels can be told apart by
    their own characters, each the same in every table whatever its rows' order (show ranks by
    time, whatif by saving) and whichever of them it shows: given `universe` (every name of the
    file), names are told apart over all of it. Only names that no one cut tells apart get ' ~2',
    ' ~3', ... in the order of their full names (not ' #2': a profile's names carry that themselves,
    `nsight.names`). Rows of one name (a kernel at two launch configurations) keep it: their other
    columns tell them apart."""
    everyone = list(dict.fromkeys([*(universe or ()), *names]))
    alike: dict[str, list[str]] = {}
    for name in everyone:
        alike.setdefault(middle_cut(name, width), []).append(name)
    shown: dict[str, str] = {}
    for cut, group in alike.items():
        group.sort()
        apart = _cuts_apart(group, width) if len(group) > 1 else {group[0]: cut}
        if apart is not None and not set(apart.values()) & (set(alike) - {cut}):
            shown.update(apart)
        else:
            shown.update({name: cut if rank == 1 else f"{middle_cut(cut, width - 3)} ~{rank}"
                          for rank, name in enumerate(group, 1)})
    return [shown[name] for name in names]


def tensor_precision(problem) -> str:
    """A tensor-core problem's precision for a title: 'BF16 (TN, FP32 accumulate)' (`model.problem`)."""
    return f"{PRECISIONS[problem.dtype].title} (TN, FP32 accumulate)"


def gemm_title(problem) -> str:
    """A run's problem for a title: 'SGEMM 4096x4096x4096' for FP32 (row-major; the S says it),
    'GEMM 4096x4096x4096 BF16 (TN, FP32 accumulate)' for a tensor-core precision (`model.problem`)."""
    size = f"{problem.m}x{problem.n}x{problem.k}"
    return f"GEMM {size} {tensor_precision(problem)}" if problem.tensor else f"SGEMM {size}"


def l2_note(doc) -> str:
    """', L2 flushed before each launch' (or ', L2 warm') for the title of results document
    `doc`; '' where the file does not say."""
    return {"cold": ", L2 flushed before each launch", "warm": ", L2 warm"}.get(doc.l2 or "", "")


def chosen_tile(params: dict[str, int], short: bool = False) -> str:
    """The tile a kernel picked by shape: '128x256, 8x16 per thread, K in 4 slices' (short:
    '128x256 8x16 K/4'), and '..., each tile's 4 blocks adding them together' (short: '... K/4
    together') where every block of a tile adds a share of its slices (REDUCERS > 1); a tensor-core
    kernel's, which has no thread tile, '128x256 block tile' (short: '128x256'); '' for parameters
    without a block tile."""
    if "BN" in params and not {"TM", "TN"} & set(params):  # wgmma_ws names no BM: two 64-row consumers, 128
        return f"{params.get('BM', 128)}x{params['BN']}" + ("" if short else " block tile")
    if not {"BM", "BN", "TM", "TN"} <= set(params):
        return ""
    splits = params.get("SPLITS", 1)
    together = splits > 1 and params.get("REDUCERS", 1) > 1
    if short:
        return (f"{params['BM']}x{params['BN']} {params['TM']}x{params['TN']}" + (f" K/{splits}" if splits > 1 else "")
                + (" together" if together else ""))
    return (f"{params['BM']}x{params['BN']}, {params['TM']}x{params['TN']} per thread"
            + (f", K in {splits} slices" if splits > 1 else "")
            + (f", each tile's {splits} blocks adding them together" if together else ""))


def named_with_tile(k) -> str:
    """A run kernel's name for its verdict, with the tile it picked by shape where it did (`chosen_tile`):
    'split_k (128x256, 8x16 per thread, K in 4 slices)'."""
    tile = chosen_tile(k.params) if k.tile_source == "shape" and k.params else ""
    return f"{k.name} ({tile})" if tile else k.name


def bound_by_size(v: Verdict | None) -> str:
    """A sweep cell: the binding floor and the time over it, 'tail' first when the idle SMs of the
    grid's last wave cost more than a tenth of the time: 'FP32 1.27', 'tail FP32 1.10',
    'launch 1.4'; '-' without a reading."""
    if v is None or v.binding is None or v.times_floor is None:
        return "-"
    tail = "tail " if v.waves is not None and v.waves.tail_matters and v.binding.level != LAUNCH else ""
    return f"{tail}{v.binding.level} {v.times_floor:.2f}"


def dram_note(doc) -> str | None:
    """Why a run's kernels have no DRAM floor of modelled bytes, when some modelled kernel has none:
    the file records no L2 size, or it was read without the kernel families that work them out."""
    lacking = [k.name for k in doc.kernels if k.timed and k.model is not None and k.model.dram_bytes is None
               and not (k.counted is not None and k.counted.dram_bytes)]
    if not lacking:
        return None
    why = ("the file records no L2 size (written before roofline recorded it)" if not doc.device.l2_bytes
           else "no kernel family of that name or its blocks per SM are not recorded")
    return (f"no DRAM bytes modelled for {', '.join(lacking[:3])}{' and others' if len(lacking) > 3 else ''}: {why}; "
            f"{'their verdicts have' if len(lacking) > 1 else 'its verdict has'} no DRAM floor "
            "(roofline run --profile counts DRAM)")


def roofs_line(doc) -> str:
    """For a profile: which roofs its verdicts and floors read, the ceilings measured on the GPU (where it
    records them: `roofline profile` measures them on the GPU it runs on) or the theoretical peaks
    alone (a report made elsewhere and imported), each compute roof at the SM clock the kernel ran at."""
    d = doc.device
    clocked = sum(1 for k in doc.kernels if k.clock_mhz)
    clock = ("each compute roof at the SM clock the kernel ran at" if clocked == len(doc.kernels) else
             "each compute roof at the nominal SM clock (the report records no kernel's clock)" if not clocked else
             f"each compute roof at the SM clock the kernel ran at where the report records it ({clocked} of "
             f"{len(doc.kernels)}), else at the nominal one")
    if d.has_measured_ceilings:
        when = f" on {d.measured_at[:10]}" if d.measured_at else ""
        return (f"Verdicts read the ceilings measured on this {d.name}{when} where one was measured, its theoretical "
                f"peaks elsewhere, {clock}")
    return f"Verdicts read the theoretical peaks of the {d.name} alone ({d.source}): nothing was measured on it, {clock}"


OLD_L2_METHOD = "L2-resident __ldcg stream;"  # the L2 ceiling's method in files measured before the best of three


def l2_by_one_stream(doc) -> bool:
    """Whether `doc`'s measured L2 ceiling came from one `__ldcg` stream (`OLD_L2_METHOD`), which
    reads low: where a rate in the file went past it, the best rate seen, which may be low too."""
    d = doc.device
    return bool(d.measured_l2_gbps and OLD_L2_METHOD in (d.measured_method or ""))


def ceiling_lines(doc) -> list[str]:
    """One line per measured ceiling a rate in the file went past (`Results.beaten`): what was
    measured, what was seen and by whom, and what the verdicts read instead."""
    lines, own = [], doc.device.roofs
    one_stream = l2_by_one_stream(doc)
    read_at = doc.problem.problem.text() if getattr(doc, "sweep", None) else None  # a sweep's sizes are named
    for b in doc.beaten:
        unit = "GB/s" if b.memory else "GFLOP/s"
        name, at = b.by.split(" at ", 1) if " at " in b.by else (b.by, read_at)
        where = f" at {at}" if at else ""
        if b.memory:
            moved = f"{'counted' if b.counted else 'modelled'} {b.level} bytes" + (
                " (its GMEM requests)" if b.level == "L2" and not b.counted else "")
            what = (f"at which {name} moved its {moved}{where}" if b.level in SHARED_LEVELS
                    else f"at which {name}'s busy SMs moved its {moved}{where}")
        else:
            what = f"{name} {'reached' if name == 'cuBLAS' else 'reached on the SMs its grid kept busy'}{where}"
        # only counted bytes can go past a theoretical roof here (`seen_rates` leaves modelled ones out)
        then = (f"verdicts read the theoretical {figure(b.used)} {unit}, which those counted bytes went past: that "
                "roof or the counter is off" if b.used < b.seen else f"verdicts read {figure(b.used)} {unit}")
        borrowed = getattr(own.roof(b.level), "borrowed", None)
        how = (f"cuBLAS FP16's {figure(b.measured)} {unit} (device --measure timed no BF16 product then)" if borrowed else
               f"measured at {figure(b.measured)} {unit} by an __ldcg stream alone (which reads low)"
               if b.level == "L2" and one_stream else f"measured at {figure(b.measured)} {unit}")
        if b.level == "L2" and one_stream:  # said once, in this line
            then += (", which may be low too: roofline device --measure now takes the best of streams, chunks and "
                     "bulk copies; a kernel read as L2-bound near another roof may be bound by that one")
        lines.append(f"{b.level} ceiling: {how}, below the {figure(b.seen)} {unit} "
                     f"{what} in this file, so the measurement is low; {then}")
    # a run's own precision, or the precisions a profile's kernels did work in: an FP32 run has no BF16 roof to read
    used = ({doc.compute_level} if hasattr(doc, "compute_level") else
            {COMPUTE_LEVEL[key] for k in doc.kernels for key in (k.flops or {}) if key in COMPUTE_LEVEL})
    for level in own.fp16_for:
        if level in used and not any(b.level == level for b in doc.beaten) and own.roof(level) is not None:
            lines.append(f"{level} ceiling: cuBLAS FP16's {figure(own.roof(level).value)} GFLOP/s, measured before "
                         f"each tensor precision was; roofline device --measure now measures {level}'s own")
    if one_stream and not any(b.level == "L2" for b in doc.beaten):
        lines.append(f"L2 ceiling: measured at {figure(doc.device.measured_l2_gbps)} GB/s by an __ldcg stream alone, "
                     "which reads low against the best of streams, chunks and bulk copies that roofline device "
                     "--measure now takes; a kernel read as L2-bound near another roof may be bound by that "
                     "one: measure again")
    return lines


def run_verdict_line(doc, k, v: Verdict) -> str:
    """The verdict of timed kernel `k` of run `doc` read as `v`, as `show` and the HTML report both give
    it: the binding ceiling and the distance to it (`verdict_sentence`), in a tensor-core run the
    compute roof of its precision beside another binding floor (`compute_phrase`), a second floor
    within 5 % (`near_phrase`), its spills, its counters' word (`kernel_counters_phrase`) and its
    samples' (`sampled_phrase`)."""
    tensor = doc.precision != "fp32"
    return (verdict_sentence(named_with_tile(k), v, k.occupancy)
            + (compute_phrase(v, doc.compute_level) if tensor else "")
            + near_phrase(v, doc.compute_level if tensor else None)
            + spill_phrase(k.local_bytes, k.registers, v.times_floor) + kernel_counters_phrase(doc, k, v)
            + sampled_phrase(k.timeline, v))
