"""A profile's kernels over their runs, as `show` prints them (`results.timeline`): per kernel with a
timeline, its phases (fill, steady, drain, tail wave) with their share of the time, the SMs busy and
the unit nearest its peak in each, the tail the waves model predicts beside the one sampled, the
clock's range, what the samples add up to, and the phase that costs most."""

from __future__ import annotations

from rich.table import Table

from ..model.timeline import MIN_PHASE_INTERVALS, ROOF_NAMES, TAIL_BUSY, Phase, one_partial_wave, predicted_tail
from ..results.timeline import TimedKernel
from .tables import _fit
from .text import display_names

PHASES = ("fill", "steady", "drain", "tail")


NAMED_FROM = 0.05  # a phase's busiest unit is named from this share of its peak; below, every unit is near idle


def _phase_cell(p: Phase | None) -> str:
    if p is None:
        return "-"
    unit = (f"{ROOF_NAMES.get(p.roof, p.roof)} {100 * p.roof_share:.0f}%" if p.roof_share >= NAMED_FROM
            else f"every unit under {100 * NAMED_FROM:.0f}%")
    return f"{100 * p.share:.1f}% ({100 * p.busy:.0f}% SMs, {unit})"


def predicted(k: TimedKernel) -> tuple[float, float] | None:
    """The waves model's tail for `k` (`model.timeline.predicted_tail`): its share of the time and of
    the SMs busy; None without a grid and occupancy, or where the model predicts none."""
    w = k.waves
    return predicted_tail(w.blocks, w.block_slots, w.sms) if w is not None else None


LOCKSTEP = ("a kernel of several blocks per SM, whose tail the waves model reads for blocks that end together and run "
            "at the SM's full rate alone; a lone block no faster leaves less, and blocks that drift apart over many "
            "waves end over about one block's time")


def _shared(k: TimedKernel) -> bool:
    """Whether `k`'s SMs hold more than one of its blocks at once: then the waves model's tail is of
    blocks in lockstep, a block alone on an SM running at the SM's full rate (`model.waves`'
    assumption); one that runs no faster alone (bound by its own latency) leaves less, and blocks
    that drift apart over many waves end over about one block's time. On an H100 (`run --timeline`,
    2026-12-07) the FP32 and BF16 rungs of two to four blocks per SM came to 0.3 % to 11.4 % of the
    time against the model's 12.5 % at 4096^3, and to 5.9 % to 6.5 % against its 3.1 % at 8192^3."""
    w = k.waves
    return w is not None and w.block_slots > w.sms


def costliest(k: TimedKernel) -> str | None:
    """One line: the phase that loses most time against the roof (`model.timeline.Phase.lost_us`:
    beyond each interval's busiest unit at its peak), and how."""
    phases = k.timeline.phases()
    if not phases:
        return None
    part = (f" the {100 * k.timeline.covered:.0f} % of its run sampled" if k.timeline.cut_short else " the whole run")
    lost = sum(p.lost_us for p in phases)
    worst = max(phases, key=lambda p: p.lost_us)
    what = {"fill": "filling (the first blocks starting, the pipeline filling)",
            "steady": "the steady part of the run", "drain": "draining (the SMs busy below the steady level)",
            "tail": "the tail wave"}[worst.name]
    if not k.timeline.cut_short and one_partial_wave(k.timeline.busy):
        what = (f"its one partial wave (its grid never keeps {100 * TAIL_BUSY:.0f} % of the SMs busy; the table reads "
                "it as one steady phase)")
    of_time = "of the time sampled" if k.timeline.cut_short else "of the time"
    # read as the phase table reads it: below NAMED_FROM no unit is named (4.9 % is not "5 %" there and "under 5%" here)
    level = (f"at {100 * worst.roof_share:.0f} % of the {ROOF_NAMES.get(worst.roof, worst.roof)}'s peak on average"
             if worst.roof_share >= NAMED_FROM else f"every unit under {100 * NAMED_FROM:.0f} % of its peak on average")
    return (f"{k.label}: most time lost in {what}: {100 * worst.share:.0f} % {of_time} on {100 * worst.busy:.0f} % of "
            f"the SMs, {level} ({worst.lost_us:,.0f} of its {worst.time_us:,.0f} µs beyond what each interval's "
            f"busiest unit, whichever it is, would take at its peak; {lost:,.0f} µs over{part})")


UNEVEN = 0.05  # a sampled tail wave this much longer (share of the time) than the waves model's is said to be so


def uneven(k: TimedKernel) -> str | None:
    """One line where `k`'s sampled tail wave is longer than the waves model allows (by more than
    `UNEVEN` of the time, and more than two intervals): the model takes every block as long as the
    others, so a longer tail is the kernel's own last blocks running longer (a block that finishes a
    reduction, blocks of more work at the end); None otherwise, or without a prediction or a tail."""
    guess = predicted(k)
    tail = next((p for p in k.timeline.phases() if p.name == "tail"), None)
    tl = k.timeline
    # beyond the model's by more than UNEVEN and more than two intervals (the last one is part-filled)
    margin = max(UNEVEN, 2 * sorted(tl.dt_us)[len(tl.dt_us) // 2] / sum(tl.dt_us))
    if guess is None or tail is None or tl.cut_short or tail.share <= guess[0] + margin:
        return None
    return (f"{k.label}: its tail wave ({100 * tail.share:.1f} % of the time on {100 * tail.busy:.0f} % of the SMs) is "
            f"longer than the waves model's {'lockstep reading' if _shared(k) else 'prediction'} for its grid "
            f"({100 * guess[0]:.1f} %), which takes every block as long as the others: by the samples its last "
            "blocks took longer than the rest (a block that finishes a reduction, more work at the end of the grid)")


SAME_LENGTH = 0.05  # a sampled launch this close to its timed calls' median duration lasted as long as they did


def other_clocks(kernels: list[TimedKernel]) -> str | None:
    """One line naming the kernels whose sampled launch ran at another clock than their timed calls
    (a run's: NVML's median through them; `TimedKernel.clock_apart`); None where there are none.
    Where such a launch lasted as long as its timed calls (within `SAME_LENGTH`), they ran at one
    effective clock, so NVML's reading is not the clock the SMs held (on an H100, BF16 GEMMs that
    NVML read at 1,980 MHz sampled at 1.55 GHz, each launch within 1 % of its timed median at 8192^3,
    the measured BF16 ceiling 79 % of the datasheet's at 1,980 MHz); otherwise the sampled launch is a
    run apart, its intervals' rates and shares of its own clock."""
    apart = [k for k in kernels if k.clock_apart]
    if not apart:
        return None

    def same_length(k: TimedKernel) -> bool:
        return not k.timeline.cut_short and abs(sum(k.timeline.dt_us) / 1e3 / k.time_ms - 1) <= SAME_LENGTH

    named = "; ".join(f"{k.label} {k.sampled_mhz / 1e3:.2f} GHz against {k.timed_mhz:,.0f} MHz" for k in apart)
    line = (f"the launches Nsight Compute sampled ran at other SM clocks (their intervals' median) than NVML read "
            f"through the timed calls (its median): {named}.")
    same = [k.label for k in apart if same_length(k)]
    if same:
        line += (f" {'Each' if len(same) == len(apart) else 'Those of ' + ', '.join(same) + ': each'} sampled launch "
                 f"lasted as long as its timed calls (within {100 * SAME_LENGTH:.0f} %), so both ran at one clock, "
                 "the sampled one by these counters: NVML's reading is not the clock the SMs held through them")
    if len(same) < len(apart):
        line += ("; the others' sampled launches are runs apart from their timed calls, their intervals' rates and "
                 "shares of their own clocks" if same else " Each sampled launch is a run apart from the timed calls, "
                 "its intervals' rates and shares of its own clock")
    return line + "."


TOP = 10  # kernels with a timeline shown (all are in the results file)


def shown_kernels(doc, top: int | None = TOP) -> tuple[list[TimedKernel], int]:
    """The `top` longest kernels of `doc` with a timeline (None: all), in the order of the file's
    kernel table (a run's ladder order, a profile's by time), so that rows read across the tables
    of one `show`; and how many have one."""
    found = doc.timed_kernels()
    chosen = {id(k) for k in (found[:top] if top else found)}
    place = {}
    for i, k in enumerate(doc.kernels):
        place.setdefault(k.name, i)
    kept = [k for k in found if id(k) in chosen]
    return sorted(kept, key=lambda k: place.get(k.name, len(place))), len(found)


def timeline_tables(doc, width: int = 200, top: int | None = TOP) -> list[Table]:
    """The table of the `top` longest kernels of results file `doc` (a profile or a run) with a
    timeline (None: all; none with one: no table)."""
    kernels, timed = shown_kernels(doc, top)
    if not kernels:
        return []
    rows, top_ghz, clipped = [], (doc.device.max_sm_clock_mhz or 0) / 1000 or None, False
    # named as the kernel table names them (its '#2' over every name of the file), with the launch where
    # kernels share a name
    names = display_names([k.name for k in kernels], 40, [k.name for k in doc.kernels])
    for k, name in zip(kernels, [n + k.label[len(k.name):] for k, n in zip(kernels, names)]):
        tl = k.timeline
        by = {p.name: p for p in tl.phases()}
        guess = predicted(k)
        clocks = [c for c in tl.clock_ghz if c]
        if clocks and top_ghz and max(clocks) > top_ghz:  # an interval's cycles over its busy time: noise past the top
            clocks, clipped = [min(c, top_ghz) for c in clocks], True
        closure = tl.closure.get("dram")
        cut = tl.cut_short  # the start of the run only: no drain or tail wave seen
        rows.append([name, f"{len(tl.t_us):,}" + (f" (first {100 * tl.covered:.0f}% of the run)" if cut else ""),
                     *(_phase_cell(by.get(p)) if not (cut and p in ("drain", "tail")) else "not sampled"
                       for p in PHASES),
                     ((f"{100 * guess[0]:.1f}%" if guess[0] >= 0.0005 else "<0.1%")
                      + f" ({100 * guess[1]:.0f}% SMs{', lockstep' if _shared(k) else ''})") if guess else "-",
                     f"{min(clocks):.2f}-{max(clocks):.2f}" if clocks else "-",
                     f"{100 * (closure - 1):+.1f}%".replace("-0.0%", "+0.0%")
                     if closure is not None and not cut else "-"])
    columns = [("intervals", "right"), ("fill", "left"), ("steady", "left"), ("drain", "left"), ("tail wave", "left"),
               ("waves model's tail", "left"), ("GHz", "right"), ("DRAM sampled", "right")]
    left = f", the {len(kernels)} longest of {timed}" if len(kernels) < timed else ""
    return _fit(f"Kernels over their runs (Nsight Compute's PM sampling){left}: each phase's share of the time, the SMs "
                "busy, and the unit nearest its peak by Nsight Compute's throughput of it (its busiest part, % of "
                "the unit's peak; not the verdict's bytes over a bandwidth); GHz: the SM clock's range"
                + (f" (an interval's clock is its cycles over its busy time: above the card's {top_ghz:.2f} GHz it is "
                   "the samples' noise, shown at it)" if clipped else "")
                + "; DRAM sampled: the sampled DRAM throughput against the counted bytes"
                + (f"; lockstep: {LOCKSTEP}" if any(_shared(k) for k in kernels if predicted(k)) else ""),
                ("kernel", "left"), columns, rows, width)


def timeline_lines(doc, top: int | None = TOP) -> list[str]:
    """Under the table: per kernel of `doc` with a timeline (the `top` longest; None: all), the
    phase that costs most, after a line saying so where its samples cover only the start of its run
    (`results.timeline.Timeline.cut_note`), and before one where its tail wave is longer than the
    waves model allows (`uneven`); then one on the kernels sampled at another clock than they were
    timed at (`other_clocks`)."""
    shown, _ = shown_kernels(doc, top)
    lines = [line for k in shown for line in (k.timeline.cut_note(k.label), costliest(k), uneven(k)) if line]
    few = [k.label for k in shown if len(k.timeline.t_us) < MIN_PHASE_INTERVALS]
    if few:
        lines.append(f"{len(few)} of the kernels shown sampled in fewer than {MIN_PHASE_INTERVALS} intervals (a launch "
                     "of a few tens of µs) have no phases: each interval is a twentieth of the run or more, its first "
                     f"and last part-filled; to see one's phases, time a longer launch of it: {', '.join(few[:5])}"
                     + (", ..." if len(few) > 5 else ""))
    return lines + [line for line in (other_clocks(shown),) if line]
