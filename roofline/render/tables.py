"""Terminal tables (rich), built from typed data; functions here return tables and never print.

No cell is ever cut: figures and names keep one line each (their column as wide as its widest
cell), and the few columns of free text (verdicts, sources, remedies) wrap at word boundaries.
Where the terminal is too narrow for every column, the run, counters, kernels, profile and
device tables continue in a second table (the kernel name repeated), so at 80 columns each line
still reads whole. The run table's columns come in order of importance, so the first table holds
the time, rate, occupancy and bound.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from ..model.occupancy import RESOURCES, Occupancy
from ..model.roofs import memory_floor
from ..model.peaks import LABELS
from ..model.units import figure, plural
from ..model.energy import STABLE_ENERGY
from ..model.timing import FULL_CLOCK_SHARE, paired
from .text import (
    MEMORY_NAMES,
    ascii_text,
    bound_by_size,
    bound_cell,
    chosen_tile,
    display_names,
    gemm_title,
    l2_note,
    launch_shape,
    limiters,
    occupancy_cell,
    percent,
    precision_cell,
    profiled_kernel_verdict,
    roof_name,
    run_verdict_line,
    spill_cell,
    tensor_precision,
    waves_cell,
)

if TYPE_CHECKING:  # annotations only: the occupancy table loads neither pydantic's models nor numpy
    from ..analysis.compare import WorkComparison
    from ..model.device import DeviceSpec
    from ..results.profile import ProfileResults
    from ..results.schema import KernelRecord, Results

WRAP = "wrap"  # third element of a column spec: free text that wraps at word boundaries
WRAP_MIN = 24  # the narrowest a wrapping column gets, in characters (less where its text is shorter)
WRAP_LONGEST_WORD = 48  # a longer word (a metric name) folds rather than widen its column further

# The rules of the two boxes used here, in ASCII with the same layout, for an output that cannot
# show Unicode (rich would otherwise swap in its ASCII box, which adds borders and so width).
_PLAIN_BOXES = {
    box.SIMPLE_HEAD: box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True),
    box.SIMPLE: box.Box("    \n    \n -- \n    \n    \n -- \n    \n    \n", ascii=True),
}


def plain(renderable):
    """`renderable` for an ASCII-only output: a table's rules drawn with '-' in the same layout and
    its text in ASCII forms ('±' -> '+/-', `text.ascii_text`) before rich lays it out, so that its
    columns hold the longer forms (`_fit` sized them so: `_width`); anything else unchanged."""
    if isinstance(renderable, Table) and renderable.box in _PLAIN_BOXES:
        renderable.box = _PLAIN_BOXES[renderable.box]
        if isinstance(renderable.title, str):
            renderable.title = ascii_text(renderable.title)
        for column in renderable.columns:
            if isinstance(column.header, str):
                column.header = ascii_text(column.header)
            column._cells = [ascii_text(c) if isinstance(c, str) else c for c in column._cells]
    return renderable


def _ascii_output() -> bool:
    """Whether standard output holds ASCII only (a C locale), as rich decides it: an encoding that
    is not UTF-something."""
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower()
    return not encoding.startswith("utf")


def _width(text: str, ascii_only: bool) -> int:
    """The columns `text` takes on the output: its ASCII form's length where the output holds ASCII
    only ('±' takes three there), else its cell length."""
    return len(ascii_text(text)) if ascii_only else cell_len(text)


def _table(title: str, columns: list[tuple[str, ...]]) -> Table:
    """A table of `columns`, each (header, justify) or (header, justify, WRAP); size it with
    `_sized` once its rows are in."""
    t = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, title_justify="left")
    for name, justify, *how in columns:
        wrap = WRAP in how
        t.add_column(name, justify=justify, no_wrap=not wrap, overflow="fold")
    return t


def _narrowest_column(header: str, cells: list[str], wrap: bool) -> int:
    """The narrowest a column can be with nothing cut: a one-line column as wide as its widest cell
    (header lines included); a wrapping one no narrower than its longest word (up to
    WRAP_LONGEST_WORD) and WRAP_MIN characters, or its widest cell where that is narrower."""
    texts = [str(c) for c in cells] + str(header).split("\n")
    ascii_only = _ascii_output()
    widest = max((_width(line, ascii_only) for c in texts for line in c.split("\n")), default=1)
    if not wrap:
        return widest
    word = max((_width(w, ascii_only) for c in texts for w in c.split()), default=1)
    return min(widest, max(min(word, WRAP_LONGEST_WORD), WRAP_MIN))


def _sized(t: Table) -> Table:
    """`t` with each column's narrowest width set (`_narrowest_column`), so that rich wraps the
    free text and never cuts a cell."""
    for column in t.columns:
        column.min_width = _narrowest_column(column.header, list(column.cells), not column.no_wrap)
    return t


@lru_cache(maxsize=None)
def _rules_and_padding(n: int) -> int:
    """The columns a table of `n` columns takes beyond its cells: padding, separators, edges."""
    t = _table("", [("", "left")] * n)
    for column in t.columns:
        column.min_width = 1
    console = Console(width=10_000)
    return Measurement.get(console, console.options, t).minimum - n


def _share_width(t: Table, room: int) -> None:
    """Where `t`'s columns at their natural widths (their widest cells) overflow `room`
    characters, fix each wrapping column's width: the one-line columns keep theirs, the wrapping
    ones share what is left by their natural widths, none narrower than its `min_width`; a word
    longer than its column (a flag, a metric name) then folds onto the next line, never cut."""
    ascii_only = _ascii_output()
    natural = [max([_width(line, ascii_only) for c in [column.header, *column.cells] for line in str(c).split("\n")]
                   or [1]) for column in t.columns]
    if sum(natural) <= room:
        return
    fixed = sum(n for n, column in zip(natural, t.columns) if column.no_wrap)
    wrapping = [(n, column) for n, column in zip(natural, t.columns) if not column.no_wrap]
    left, total = room - fixed, sum(n for n, _ in wrapping)
    if not wrapping or left <= 0:
        return
    for n, column in wrapping:
        column.width = max(column.min_width or 1, min(n, left * n // total))


def _fit(title: str, key: tuple[str, ...], columns: list[tuple[str, ...]], rows: list[list[str]],
         width: int, styles: list[str | None] | None = None) -> list[Table]:
    """One table of `key` and `columns` when it fits `width`; else as few tables as fit, the
    columns kept in order and each table led by the key column (the first titled `title`, the
    others 'continued'). A table fits when its columns at their narrowest (`_narrowest_column`)
    and its rules fit."""
    styles = styles or [None] * len(rows)
    specs = [key] + list(columns)
    narrowest = [_narrowest_column(spec[0], [row[i] for row in rows], WRAP in spec[2:])
                 for i, spec in enumerate(specs)]

    def build(t_title, picks):
        t = _table(t_title, [key] + [columns[i] for i in picks])
        for row, style in zip(rows, styles):
            t.add_row(row[0], *(row[1 + i] for i in picks), style=style)
        for column, i in zip(t.columns, [-1, *picks]):
            column.min_width = narrowest[i + 1]
        _share_width(t, width - _rules_and_padding(len(t.columns)))
        return t

    def needs(start, end):
        return narrowest[0] + sum(narrowest[1 + start:1 + end]) + _rules_and_padding(1 + end - start)

    tables, start = [], 0
    while start < len(columns):
        end = len(columns)
        while end > start + 1 and needs(start, end) > width:
            end -= 1
        tables.append(build(title if not tables else "continued", range(start, end)))
        start = end
    return tables


def _check(k: KernelRecord) -> str:
    if not k.timed:
        return "FAILED" if not k.verified else "not timed"
    if k.rel_error == 0:
        return "= cuBLAS"  # the same FMA order along K: bit for bit the reference
    return f"{k.rel_error:.0e}" if k.rel_error is not None else "-"


def _spread(timing) -> str:
    if timing is None:
        return ""
    return f"{100 * timing.spread:.1f}%" + ("(!)" if timing.noisy else "")


def _conditions(timing, reference, timed: bool) -> list[str]:
    """The cells a timing in rounds adds: the CI95 half-width of its median ('(!)' when not
    stable), the SM clock its samples saw, its throttled samples of all, and %cuBLAS at full
    clock ('none' where no round ran unthrottled; '100.0' for the reference; '-' for a kernel not timed
    in the reference's rounds, such as a user's kernel in its own process)."""
    if not timed or timing is None:
        return ["-", "-", "-", "-"]
    half = timing.ci95_half
    ci = "-" if half is None else f"±{100 * half:.1f}%" + ("(!)" if not timing.stable else "")
    clocks = timing.clock_mhz
    mhz = "-" if clocks is None else (f"{clocks[0]:,}" if clocks[0] == clocks[1] else f"{clocks[0]:,}-{clocks[1]:,}")
    hot = timing.throttled_samples
    throttled = "-" if hot is None else f"{hot}/{timing.repeat}"
    if not timing.conditions_recorded or (reference is not None and timing.rounds is None):
        full = "-"  # which samples ran at full clock is not known, or none ran in the reference's rounds
    elif reference is None:
        full = "100.0" if timing.full_clock_ms else "none"
    else:
        pairs = paired(timing, reference, full_clock=True)
        full = f"{pairs.pct:.1f}" if pairs else "none"
    return [ci, mhz, throttled, full]


def energy_bytes(k) -> tuple[float | None, str]:
    """The bytes a kernel's bytes per joule count: its DRAM bytes where Nsight Compute counted them,
    else its model's DRAM bytes (`model.dram`), else its model's GMEM bytes (the L2's requests,
    for a file whose DRAM bytes are not modelled); (None, '') for none."""
    counted = k.measured.dram_bytes if getattr(k, "measured", None) else None
    if counted:
        return counted, "counted DRAM"
    model = getattr(k, "model", None)
    if model is not None and model.dram_bytes:
        return model.dram_bytes, "model DRAM"
    return (model.gmem_bytes, "model GMEM") if model is not None and model.gmem_bytes else (None, "")


def _energy_cells(energy, flops: float, with_ci: bool = False, nbytes: float | None = None) -> list[str]:
    """J per launch, with `with_ci` its CI95 over the loops ('±2.1 %', '(!)' when not stable),
    average W, GFLOP/J and GB/J (of `nbytes`) of a kernel's energy loops ('-' where not measured)."""
    if energy is None:
        return ["-"] * (5 if with_ci else 4)
    per_j = energy.gflop_per_j(flops)
    ci = []
    if with_ci:
        half = energy.ci95_half
        ci = [f"±{100 * half:.1f} %{' (!)' if not energy.stable else ''}" if half is not None else "-"]
    per_b = energy.bytes_per_j(nbytes)
    return [_joules(energy.joules_per_launch), *ci, f"{energy.watts:,.0f}", f"{per_j:,.0f}" if per_j else "-",
            f"{per_b / 1e9:#.3g}" if per_b else "-"]


def _joules(j: float) -> str:
    """Three significant figures, trailing zeros kept so a column reads alike: 1.20, 12.9, 61.0, 123."""
    return f"{j:,.0f}" if j >= 100 else f"{j:#.3g}"


def energy_lines(doc: Results) -> list[str]:
    """How a run's energy was measured: the loops per kernel, whether the power came from the energy
    counter's updates inside them, and which kernels' joules are not stable. None without energy."""
    energies = [(k.name, k.energy) for k in doc.kernels if k.energy is not None]
    if doc.reference.energy is not None:
        energies.append(("cublas", doc.reference.energy))
    if not energies:
        return []
    loops = max(len(e.loops_j) for _, e in energies)
    if loops <= 1:
        lines = ["energy: one loop of launches per kernel between two readings of NVML's energy counter (no CI95)"]
    else:
        windowed = all(e.windowed for _, e in energies)
        lines = [f"energy: {loops} loops of launches per kernel, in rounds across the kernels; W read between the "
                 + ("energy counter's updates inside each loop" if windowed else
                    "energy counter's readings at each loop's ends (it updated too seldom inside some loops)")
                 + "; J per launch the median over the loops, the L2 flush's own subtracted"]
    unstable = [name for name, e in energies if e.stable is False]
    if unstable:
        lines.append(f"energy not stable (CI95 over {100 * STABLE_ENERGY:g} %): {', '.join(unstable)}")
    kinds = sorted({energy_bytes(k)[1] for k in doc.kernels if k.energy is not None and energy_bytes(k)[0]})
    if kinds:
        lines.append(f"GB/J: bytes per joule, of {' or '.join(kinds)} bytes (counted where Nsight Compute counted "
                     "them, else the model's)")
    lines += _sustained_lines(doc)
    return lines


def _sustained_lines(doc: Results) -> list[str]:
    """Where a kernel's energy loops (a second of back-to-back launches) ran at a lower SM clock
    than its timing's top one: the clock and time per launch there against those timed, since its
    J and W are that sustained state's (a power cap lowers the clock; the timing's short bursts
    mostly escape it). Nothing where the loops' clock was not read."""
    pairs = [(k.name, k.energy, k.timing, k.time_ms) for k in doc.kernels if k.energy is not None and k.timing]
    if doc.reference.energy is not None and doc.reference.timing is not None:
        pairs.append(("cublas", doc.reference.energy, doc.reference.timing, doc.reference.time_ms))
    share = FULL_CLOCK_SHARE
    slow = []
    for name, e, t, ms in pairs:
        top = t.clock_mhz[1] if t.clock_mhz else None
        if e.clock_mhz is not None and top and e.clock_mhz < share * top:
            slow.append(f"{name} {e.clock_mhz:,} MHz and {e.ms_per_launch:.3f} ms a launch (timed {ms:.3f} ms, "
                        f"up to {top:,} MHz)")
    if not slow:
        return []
    return ["energy loops are a second of sustained load each, and these ran at a lower clock than when timed "
            "(the power cap): their J and W are that state's, a launch's share of the loop (its L2 flush included) "
            "longer than its timed ms: " + "; ".join(slow)]


def timing_lines(doc: Results) -> list[str]:
    """How a run timed in rounds was timed, under what clock, and what that does to its figures:
    the rounds and burst; how many samples ran throttled and under which reasons; and where no
    sample ran at full clock, that the full-clock readings are missing. None for files timed
    before rounds."""
    r = doc.timed_in_rounds
    if r is None:
        return []
    timings = [k.timing for k in doc.kernels if k.timed and k.timing] + [doc.reference.timing]
    timings = [t for t in timings if t is not None]
    total = sum(t.repeat for t in timings)
    hot = sum(t.throttled_samples or 0 for t in timings)
    reasons = list(dict.fromkeys(x for t in timings for x in t.reasons_seen))
    top = f" of {r.top_clock_mhz:,} MHz" if r.top_clock_mhz else ""
    share = f"{100 * r.full_clock_share:g} %" if r.full_clock_share else "a share"
    lines = [f"timed in {r.rounds} rounds of {r.burst} launch{'es' if r.burst > 1 else ''} per kernel, cuBLAS "
             f"first and the kernels in turn{f' ({r.seconds:.1f} s)' if r.seconds is not None else ''}; CI95: of the "
             "median; MHz: NVML's SM clock "
             + ("polled while each launch ran" if r.clock_read_per == "launch" else "around each burst")
             + "; check: the relative error of C against cuBLAS's on random inputs (||C - C_ref|| / ||C_ref||; "
             "'= cuBLAS': the same bits)"]
    if not any(t.conditions_recorded for t in timings):
        lines.append("no clock or throttling recorded (NVML did not say on this GPU): %cuBLAS full is not known")
        return lines
    # samples that saw a reason at full clock and were left unmarked (the clock-only policy of later files)
    held = sum(1 for t in timings if t.reasons and t.throttled and t.sm_clock_mhz
               for why, mark in zip(t.reasons, t.throttled) if why and not mark)
    if hot:
        why = f" ({', '.join(reasons)})" if reasons else ""
        cause = f"below {share}{top}" if held else f"under a clock cap{why} or below {share}{top}"
        lines.append(f"throttled: {hot} of {total} samples ran {cause}; "
                     "ms, GFLOP/s and %cuBLAS read every sample as run, %cuBLAS full the unthrottled rounds alone")
    else:
        lines.append(f"no sample ran throttled (at or above {share}{top}"
                     + (", no clock cap seen)" if not reasons else ")"))
    if held:
        lines.append(f"NVML reported a clock cap ({', '.join(reasons)}) during {held} samples whose clock held at or "
                     f"above {share}{top}: not counted as throttled (NVML's reasons trail the clock)")
    if hot and not any(t.full_clock_ms for t in timings):
        lines.append("no sample ran at full clock: the full-clock readings are missing; a shorter --budget or a "
                     "cooler card gives some")
    apart = [k.name for k in doc.kernels if k.timed and k.timing and k.timing.rounds is None]
    if apart:
        lines.append(f"timed apart from cuBLAS's rounds (each in its own process): {', '.join(apart)}; their %cuBLAS "
                     "is the ratio of the two medians, with no full-clock pairing")
    unstable = [k.name for k in doc.kernels if k.timed and k.timing and k.timing.stable is False]
    if unstable:
        lines.append(f"not stable (CI95 over 1 % or spread over 2 %): {', '.join(unstable)}; a larger --budget "
                     "takes more samples")
    return lines


ENERGY_NAMES = {"fp32": "FP32", "fp16_tensor": "FP16 tensor", "dram": "DRAM", "l2": "L2"}


def energy_rows(energy) -> list[tuple[str, str]]:
    """The device table's rows of its energy ceilings (`model.energy.EnergyCeilings`): the idle
    power, then per resource its fitted energy per FLOP or byte and the power at no rate, each
    with the fit's standard error; none where not measured."""
    if energy is None:
        return []
    rows = [("idle power (measured)", f"{energy.idle_w:,.0f} W")]
    for f in energy.fits:
        name = f"energy per {f.unit} ({ENERGY_NAMES.get(f.kind, f.kind)}, fitted)"
        if not f.resolved:  # the power did not rise with the rate: no energy per unit was measured
            rows.append((name, f"not resolved: the power did not rise with the rate over {f.points} loads "
                               f"({f.pj_per_unit:.2g} ± {f.pj_error:.2g} pJ, {f.static_w:,.0f} W at no rate: "
                               "held at the power limit?); not used"))
            continue
        rows.append((name, f"{f.pj_per_unit:.3g} ± {f.pj_error:.2g} pJ; {f.static_w:,.0f} ± {f.static_error:,.0f} W at no "
                           f"rate ({f.points} loads)"))
    rows.append(("energy measured at", energy.measured_at))
    return rows


def _measured_dram(dev) -> str:
    """'4,283 GB/s', or what a device record without a measured DRAM rate says instead."""
    return f"{dev.measured_dram_gbps:,.0f} GB/s" if dev.measured_dram_gbps is not None else "DRAM not measured"


def run_tables(doc: Results, width: int = 200) -> list[Table]:
    """The run summary: one row per kernel plus cuBLAS. Columns: median ms, GFLOP/s, % of cuBLAS,
    occupancy and its limiters, the binding floor against the NVML peaks ('fp32 1.36': FP32-bound,
    1.36x its floor; a tensor-core run's compute floor is its precision's roof, 'bf16 tensor'; floors divided by the share of the GPU the grid keeps busy, the `waves`
    column when recorded), then the details: spread (the interquartile range over the median, '(!)' when
    noisy; cuBLAS's too, which every %cuBLAS divides by),
    registers, spills (local memory per thread, bytes; the column only where a kernel has some),
    model arithmetic intensity, the binding floor against measured ceilings and counted
    bytes ('measured x', when the device has measured ceilings), and the check against cuBLAS."""
    p, dev = doc.problem, doc.device
    measured = dev.measured_fp32_gflops is not None
    if doc.precision == "fp32":
        peaks = f"{dev.peak_fp32_gflops:,.0f} GFLOP/s, {dev.peak_dram_gbps:,.0f} GB/s"
        if measured:
            peaks += f"; measured {dev.measured_fp32_gflops:,.0f} GFLOP/s, {_measured_dram(dev)}"
    else:  # a tensor-core run: the roof of its precision, named
        found = doc.peak_gflops(measured=True)
        borrowed = dev.roofs.roof(doc.precision).borrowed if found else None  # BF16 read at cuBLAS FP16's rate
        peaks = f"{doc.compute_level} {doc.peak_gflops():,.0f} GFLOP/s, DRAM {dev.peak_dram_gbps:,.0f} GB/s"
        if measured:
            peaks += (f"; measured {f'{found:,.0f} GFLOP/s' if found else ''}"
                      f"{f' ({borrowed})' if borrowed else ''}{', ' if found else ''}{_measured_dram(dev)}")
    columns = [("ms", "right"), ("GFLOP/s", "right"), ("%cuBLAS", "right"), ("occupancy", "left"),
               ("bound x", "left"), ("spread", "right"), ("regs", "right"), ("AI", "right")]
    with_waves = any(k.waves is not None for k in doc.kernels)
    if with_waves:
        columns.insert(4, ("waves", "right"))
    with_spills = any(k.local_bytes for k in doc.kernels)
    if with_spills:  # beside the registers: local memory per thread (stack frame, spills, arrays), where a kernel has some
        columns.insert(columns.index(("regs", "right")) + 1, ("local", "right"))
    if measured:
        columns.append(("measured x", "left"))
    rounds = doc.timed_in_rounds is not None  # timed with cuBLAS in rounds: each sample's conditions recorded
    if rounds:  # the conditions, beside the spread: CI95 of the median, clock, throttled samples, full clock
        at = columns.index(("spread", "right")) + 1
        columns[at:at] = [("CI95", "right"), ("MHz", "right"), ("throttled", "right"), ("%cuBLAS full", "right")]
    with_energy = any(k.energy is not None for k in doc.kernels) or doc.reference.energy is not None
    energy_ci = with_energy and any(e is not None and len(e.loops_j) > 1
                                    for e in [k.energy for k in doc.kernels] + [doc.reference.energy])
    if with_energy:
        columns += [("J", "right"), *([("J CI95", "right")] if energy_ci else []), ("W", "right"), ("GFLOP/J", "right"),
                    ("GB/J", "right")]
    columns.append(("check", "left"))
    rows, styles = [], []
    flops = p.problem.flops
    for k in doc.kernels:
        ok = k.timed
        pct = None
        if ok:  # from the rounds it shared with cuBLAS where timed so (`pct_of_reference`), else the two medians
            pct = k.pct_of_reference if k.pct_of_reference is not None else 100 * doc.reference.time_ms / k.time_ms
        row = [k.name, f"{k.time_ms:.3f}" if ok else "-", f"{k.gflops:,.0f}" if ok else "-",
               f"{pct:.1f}" if pct is not None else "-", occupancy_cell(k.occupancy),
               *([waves_cell(k.waves)] if with_waves else []),
               bound_cell(doc.floors(k)) if ok else "-", _spread(k.timing),
               *(_conditions(k.timing, doc.reference.timing, ok) if rounds else []),
               str(k.registers) if k.registers is not None else "-",
               *([spill_cell(k.local_bytes)] if with_spills else []),
               figure(k.model.arithmetic_intensity) if k.model else "no model"]
        if measured:
            row.append(bound_cell(doc.verdict(k)) if ok else "-")
        if with_energy:
            row += _energy_cells(k.energy, flops, energy_ci, energy_bytes(k)[0])
        row.append(_check(k))
        rows.append(row)
        styles.append(None if ok else "red")
    ref = doc.reference
    rows.append(["cublas", f"{ref.time_ms:.3f}", f"{ref.gflops:,.0f}", "100.0", "-", *(["-"] if with_waves else []),
                 "-", _spread(ref.timing), *(_conditions(ref.timing, None, True) if rounds else []),
                 "-", *(["-"] if with_spills else []), "-",
                 *(["-"] if measured else []), *(_energy_cells(ref.energy, flops, energy_ci) if with_energy else []),
                 "reference"])
    styles.append("bold")
    title = f"{gemm_title(p.problem)} on {dev.name} ({peaks}){l2_note(doc)}"
    return _fit(title, ("kernel", "left"), columns, rows, width, styles)


def sweep_tables(doc: Results, width: int = 200) -> list[Table]:
    """GFLOP/s of every kernel at every size of a sweep (a column per size), cuBLAS last; '-'
    where a kernel failed or was not run at that size."""
    points = sorted(doc.sweep or [], key=lambda p: p.problem.problem.flops)
    names = list(dict.fromkeys(k.name for p in points for k in p.kernels))
    square = all(p.problem.problem.square for p in points)
    columns = [(str(p.problem.m) if square else p.problem.problem.text(), "right") for p in points]
    rows = []
    for name in names:
        cells = []
        for p in points:
            k = next((k for k in p.kernels if k.name == name), None)
            cells.append(f"{k.gflops:,.0f}" if k is not None and k.timed else "-")
        rows.append([name] + cells)
    rows.append(["cublas"] + [f"{p.reference.gflops:,.0f}" for p in points])
    styles = [None] * len(names) + ["bold"]
    p0 = doc.problem.problem
    what = f", GEMM {tensor_precision(p0)}," if p0.tensor else ""  # say the precision
    title = f"GFLOP/s by {'size (M = N = K)' if square else 'shape (M x N x K)'}{what} on {doc.device.name}{l2_note(doc)}"
    tables = _fit(title, ("kernel", "left"), columns, rows, width, styles)
    bound = []
    for name in names:
        cells = [bound_by_size(doc.sweep_verdict(p, name)) for p in points]
        if any(c != "-" for c in cells):
            bound.append([name] + cells)
    if bound:
        tables += _fit("what binds each size: the floor and the time over it ('tail': the idle SMs of the last "
                       "wave cost more than a tenth of the time; 'launch': an empty kernel's launch binds)",
                       ("kernel", "left"), columns, bound, width)
    chosen = []
    for name in names:
        cells = [chosen_tile(k.params, short=True) if k is not None and k.params else "-"
                 for k in (next((x for x in p.kernels if x.name == name), None) for p in points)]
        if any(c != "-" for c in cells):
            chosen.append([name] + cells)
    if chosen:
        tables += _fit("the tile each size got from the kernels that choose by shape (block tile, thread tile, "
                       "K/slices)", ("kernel", "left"), columns, chosen, width)
    return tables


def sweep_below_floor_note(doc: Results) -> str | None:
    """A line explaining figures below 1 in the sweep's 'what binds' table, when there are some."""
    for p in doc.sweep or []:
        for k in p.kernels:
            v = doc.sweep_verdict(p, k.name)
            if v is not None and v.times_floor is not None and v.times_floor < 1 and v.binding.level in MEMORY_NAMES:
                return ("below 1 in 'what binds': faster than a floor of modelled bytes: the hardware moved fewer bytes "
                        "than the model counts there (an L1 serving part of the GMEM requests, or the L2 keeping more "
                        "of the panels than the wave model assumes).")
    return None


def verdict_lines(doc: Results) -> list[str]:
    """One sentence per timed kernel: the binding ceiling, the distance to it, occupancy, and the
    local memory of a kernel that spills; a kernel that picked its tile by shape is named with
    that tile. In a tensor-core run, a kernel bound by another floor is also read against the
    compute roof of its precision (`compute_phrase`)."""
    return [run_verdict_line(doc, k, doc.verdict(k)) for k in doc.kernels if k.timed]


def _moved(pairs, move: str | None) -> str:
    """The 'moved (CI95)' cell: 'same', or 'higher'/'lower' with by how many points, so that a move the
    intervals tell apart but too small to matter reads as small ('higher, +0.03 points')."""
    if move in (None, "same") or not pairs:
        return move or "-"
    b, a = pairs
    return f"{move}, {a.pct - b.pct:+.2g} points"


def columns_note(doc: Results) -> str | None:
    """A line on the two readings the run table gives each kernel, where it gives both: 'bound x' at the
    datasheet roofs from the model's bytes, 'measured x' at the measured ceilings with the counted
    bytes, which the verdicts read; None where the table has no 'measured x'."""
    if doc.device.measured_fp32_gflops is None:
        return None
    counted = " and the bytes Nsight Compute counted" if any(k.counted for k in doc.kernels) else ""
    return ("bound x: the time over the highest floor of the model's bytes and work at the datasheet roofs, each "
            "floor of the SMs (compute, shared memory) divided by the share of them the grid's waves keep busy; measured "
            f"x: the same at the measured ceilings (each at least the best rate this file saw){counted}, as the "
            "verdicts below read it; the two may name different roofs")


def below_floor_note(doc: Results) -> str | None:
    """A line explaining 'bound x' below 1, when some kernel has one."""
    if any(k.timed and doc.floors(k).times_floor < 1 for k in doc.kernels):
        return ("bound x below 1: faster than a floor of modelled bytes at its theoretical roof: the hardware moved "
                "fewer bytes than the model counts there (an L1 serving part of the GMEM requests, or the L2 keeping "
                "more of the panels than the wave model assumes).")
    return None


def counters_tables(doc: Results, width: int = 200) -> list[Table]:
    """Model bytes against the bytes Nsight Compute counted, per level, for profiled kernels;
    none when no kernel was profiled. Ratios are model / counted; figures in GB."""
    rows = [k for k in doc.kernels if k.counted is not None]
    if not rows:
        return []

    def gb(x):
        return f"{x / 1e9:,.2f}" if x is not None else "-"

    def ratio(a, b):
        return f"{a / b:.2f}" if a is not None and b else "-"

    columns = [(c, "right") for c in ("model GMEM", "L2", "ratio", "model DRAM", "DRAM", "ratio", "L1", "model SMEM",
                                      "SMEM", "ratio", "conflicts", "executed/useful")]
    table_rows = []
    flops = doc.problem.problem.flops
    tensor = doc.problem.problem.tensor  # the FLOPs counted on the tensor cores, in the problem's precision
    for k in rows:
        me = k.counted
        gmem, smem = (k.model.gmem_bytes, k.model.smem_served_bytes or k.model.smem_bytes) if k.model else (None, None)
        dram = k.model.dram_bytes if k.model else None
        executed = me.tensor_flops if tensor else me.fp32_flops
        table_rows.append([k.name, gb(gmem), gb(me.l2_bytes), ratio(gmem, me.l2_bytes),
                           gb(dram), gb(me.dram_bytes), ratio(dram, me.dram_bytes), gb(me.l1_bytes),
                           gb(smem), gb(me.smem_bytes), ratio(smem, me.smem_bytes),
                           f"{int(me.bank_conflicts):,}" if me.bank_conflicts is not None else "-",
                           _executed(executed, flops)])
    return _fit("model against Nsight Compute (GB; ratio = model / counted; model DRAM: the bytes its waves fetch "
                "past the L2; conflicts: shared-memory bank conflicts; executed/useful: the FLOPs counted over "
                "2*M*N*K, the work GFLOP/s is of)", ("kernel", "left"), columns, table_rows, width)


def counters_notes(doc: Results) -> list[str]:
    """Lines under the counters table where a ratio needs its reason: a kernel whose GMEM requests
    are its L1's (naive, gmem_coalescing: the L1 serves most, and its L1 level is read instead), and
    a counted SMEM of nothing where the model counts bytes (wgmma reads its operands through
    descriptors and TMA writes them: `smsp__sass_data_bytes_mem_shared` counts neither, and the
    verdict reads the model's bytes there), and modelled DRAM bytes further than `DRAM_TOLERANCE`
    from the counted ones (the verdict reads the counted)."""
    from ..model.dram import DRAM_TOLERANCE, agrees_with_count

    rows = [k for k in doc.kernels if k.counted is not None and k.model is not None]
    direct = [k.name for k in rows if k.model.l1_bytes]
    blind = [k.name for k in rows if (k.model.smem_served_bytes or k.model.smem_bytes) and k.counted.smem_bytes == 0]
    lines = []
    if direct:
        lines.append(f"{', '.join(direct)}: model GMEM is the requests of loads that go straight to global memory, "
                     "which the L1 serves most of (the L2 sees what it misses); the verdict reads their L1 level")
    if blind:
        lines.append(f"{', '.join(blind)}: SMEM counted 0: wgmma reads its operands from shared memory through "
                     "descriptors and the TMA writes them, neither counted by smsp__sass_data_bytes_mem_shared; the "
                     "verdict reads the model's SMEM bytes")
    apart = {k.name: k.model.dram_bytes / k.counted.dram_bytes for k in rows
             if k.model.dram_bytes and k.counted.dram_bytes
             and not agrees_with_count(k.model.dram_bytes, k.counted.dram_bytes)}
    if apart:
        lo, hi = min(apart.values()), max(apart.values())
        span = f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}"
        lines.append(f"{', '.join(apart)}: model DRAM {span}x the counted bytes, outside the wave model's "
                     f"{100 * DRAM_TOLERANCE:.0f} % tolerance; the verdicts read the counted bytes, as wherever there "
                     "are counts, and a run of these kernels without --profile would read the model's (where the "
                     "model misses: docs/model.md)")
    return lines


def _executed(executed: float | None, useful: float) -> str:
    """Counted (executed) FLOPs over the problem's useful ones, for a cell: '1.00', or with the
    padding of partial tiles the hardware also computed: '1.016 (+1.6 % padding)'; '-' uncounted."""
    if executed is None or not useful:
        return "-"
    over = executed / useful - 1
    return f"{executed / useful:.3f} (+{100 * over:.1f} % padding)" if over > 0.001 else f"{executed / useful:.2f}"


def _light_cells(listing, kernel) -> list[str]:
    """A graded kernel's declared work as cells (`KernelListing.declared`): GFLOP (all precisions),
    compulsory MB, FLOP per byte, and with a device its speed of light (the device's roofs, no launch
    floor) and the roof that binds it."""
    d = listing.declared(kernel)
    flops = sum(d["flops"].values())
    cells = [figure(flops / 1e9) if flops else "-", figure(d["bytes"] / 1e6),
             figure(d["flop_per_byte"]) if d["flop_per_byte"] else "-"]
    if listing.device is None:
        return cells
    return cells + [f"{d['t_sol_ms']:.4g}" if d["binding_level"] is not None else "-", d["binding_level"] or "no roof"]


def kernels_tables(listing, width: int = 200) -> list[Table]:
    """The ladder with its model figures (`api.KernelListing`): for a target, registers, local
    bytes, shared memory, occupancy and, for a device, the waves the grid takes; for a device, the
    floors in ms (at the share of the GPU the grid keeps busy) and the binding one. Kernels that
    declare their own work (graded files) and GEMM kernels listed together get a table each: the
    first at the sizes they declare, the second at the GEMM size."""
    declared = [r for r in listing.rows if getattr(r.spec, "workload", None)]
    if declared and len(declared) < len(listing.rows):
        gemm = [r for r in listing.rows if not getattr(r.spec, "workload", None)]
        return kernels_tables(replace(listing, rows=gemm), width) + kernels_tables(replace(listing, rows=declared), width)
    n = listing.size
    where = f" on {listing.device.name}" if listing.device else ""
    if listing.arch:  # the compilers by name ('NVRTC', 'nvcc'): which one built which kernel is a note's
        used = sorted({r.resources.compiler.split()[0] for r in listing.rows
                       if r.resources is not None and r.resources.compiler})
        arch = listing.arch + (f", {'/'.join(sorted(set(listing.targets.values())))} where a kernel needs it"
                               if listing.targets else "")
        where += f" ({arch}, compiled through {' and '.join(used)})" if used else f" ({arch})"
    compiled = listing.arch is not None
    columns = [("threads", "right")]
    if compiled:
        columns += [("regs", "right"), ("local B", "right"), ("smem B", "right"), ("occupancy", "left")]
    with_waves = any(r.waves is not None for r in listing.rows)
    if with_waves:
        columns.append(("waves", "right"))
    # graded files declare their work, not a GEMM's tiles: their compulsory work and speed of light instead
    graded = bool(listing.rows) and all(getattr(r.spec, "workload", None) for r in listing.rows)
    if graded:
        columns += [("GFLOP", "right"), ("MB", "right"), ("FLOP/B", "right")]
        if listing.device:
            columns += [("T_SOL ms", "right"), ("binds", "left")]
    else:
        columns += [("GMEM acc/res", "right"), ("SMEM acc/res", "right"), ("GMEM GB", "right"), ("AI", "right")]
        if listing.device:
            columns += [("memory ms", "right"), (f"{listing.compute_level} ms", "right"), ("binds", "left")]
    rows = []
    for r in listing.rows:
        mo = r.figures
        row = [r.spec.name, str(r.spec.threads_per_block)]
        if compiled and r.resources is None:
            row += ["-", "-", "-", "does not compile" if r.error else "n/a on this target"]
        elif compiled:
            res = r.resources
            if r.dynamic_smem_bytes and res.static_smem_bytes:  # both: static + dynamic
                smem = f"{res.static_smem_bytes:,}+{r.dynamic_smem_bytes:,} dyn"
            else:
                smem = f"{res.static_smem_bytes + r.dynamic_smem_bytes:,}" + (" dyn" if r.dynamic_smem_bytes else "")
            row += [str(res.registers), str(res.local_bytes), smem,
                    "cannot launch" if r.error else occupancy_cell(r.occupancy)]
        if with_waves:
            row.append(waves_cell(r.waves))
        if graded:
            rows.append(row + _light_cells(listing, r.spec))
            continue
        if mo is None:
            row += ["no model", "-", "-", "-"]
        else:
            smem_acc = mo.smem_accesses_per_result
            row += [figure(mo.gmem_accesses_per_result), figure(smem_acc) if smem_acc is not None else "-",
                    figure(mo.gmem_bytes / 1e9), figure(mo.arithmetic_intensity)]
        if r.floors is not None:
            v = r.floors
            memory = memory_floor(v)
            row += [f"{figure(memory.floor_ms)} {memory.level}" if memory else "-",
                    figure(v.floor(listing.compute_level).floor_ms),
                    v.binding.level if memory else f"{v.binding.level} (the only floor)"]  # no memory roof known
        elif listing.device:  # no model (a kernel of yours without --tile): no floors either
            row += ["-", "-", "-"]
        rows.append(row)
    ladder = "SGEMM ladder" if listing.dtype == "fp32" else f"tensor-core ladder, {listing.dtype.upper()} (TN)"
    yours = "your kernels" + ("" if listing.dtype == "fp32" else f", {listing.dtype.upper()} (TN)")
    what = yours if all(r.spec.tile_source == "user" for r in listing.rows) else ladder
    if listing.rows and all(getattr(r.spec, "workload", None) for r in listing.rows):  # graded files: no GEMM
        return _fit(f"your kernels, at the sizes they declare{where}", ("kernel", "left"), columns, rows, width)
    return _fit(f"{what}, model at {n}x{n}x{n}{where}", ("kernel", "left"), columns, rows, width)


LIMIT_NAMES = {"registers": "registers", "shared_memory": "shared memory", "warps": "warps", "blocks": "blocks"}


def occupancy_table(o: Occupancy) -> Table:
    """Blocks per SM each resource allows, what one block takes of it, which resources limit, and
    the result."""
    smem = o.static_smem_bytes + o.dynamic_smem_bytes
    t = _table(f"{o.arch}: {o.registers_per_thread} registers x {o.threads_per_block} threads, "
               f"{smem:,} B shared memory per block",
               [("resource", "left"), ("blocks/SM", "right"), ("one block takes", "right", WRAP), ("limits", "left")])
    rounded = o.smem_per_block_bytes != smem + o.reserved_smem_bytes  # up to the SM's allocation unit
    reserved = (f" ({smem:,} B + {o.reserved_smem_bytes:,} B reserved{', rounded up to the allocation unit' if rounded else ''})"
                if o.reserved_smem_bytes else "")
    per_block = {
        "registers": plural(o.registers_per_block, "register"),
        "shared_memory": f"{o.smem_per_block_bytes:,} B{reserved}" + (", opt-in" if o.smem_opt_in else ""),
        "warps": plural(o.warps_per_block, "warp"),
        "blocks": "1 block slot",
    }
    for res in RESOURCES:
        limit = o.block_limits[res]
        t.add_row(LIMIT_NAMES[res], "no limit" if limit is None else str(limit), per_block[res],
                  "yes" if res in o.limiters else "")
    t.add_section()
    t.add_row("active", str(o.active_blocks_per_sm),
              f"{o.active_warps_per_sm} of {plural(o.max_warps_per_sm, 'warp')} = {percent(o.occupancy)} %", "",
              style="bold")
    return _sized(t)


def device_table(d: DeviceSpec) -> Table:
    """A device's peaks, ceilings and per-SM limits, each value beside its label; where the
    figures come from is `d.source`, for a line of its own (`device_source`)."""
    t = Table(title=d.name, show_header=False, box=box.SIMPLE, title_justify="left")
    t.add_column("what", no_wrap=True)
    t.add_column("value", justify="right", no_wrap=True)
    lim = d.arch_limits
    roofs = d.roofs
    rows = [
        ("compute capability", f"{d.compute_capability} ({d.arch})"),
        ("SMs", str(d.sm_count)),
        ("FP32 cores", f"{d.fp32_cores:,}" if d.fp32_cores else "-"),
        ("max SM clock", f"{d.max_sm_clock_mhz:,.0f} MHz" if d.max_sm_clock_mhz else "-"),
        ("max memory clock", f"{d.max_mem_clock_mhz:,.0f} MHz" if d.max_mem_clock_mhz else "-"),
        ("memory bus", f"{d.memory_bus_width_bits:,} bit" if d.memory_bus_width_bits else "-"),
        ("memory", f"{d.memory_bytes / 1e9:,.1f} GB" if d.memory_bytes else "-"),
        ("peak FP32", f"{d.peak_fp32_gflops:,.0f} GFLOP/s"),
        ("peak DRAM bandwidth", f"{d.peak_dram_gbps:,.0f} GB/s"),
        ("shared-memory bandwidth", f"{roofs.smem_gbps:,.0f} GB/s" if roofs.smem_gbps else "-"),
    ]
    if d.measured_fp32_gflops is not None:
        rows += [("measured FP32", f"{d.measured_fp32_gflops:,.0f} GFLOP/s "
                                   f"({100 * d.measured_fp32_gflops / d.peak_fp32_gflops:.0f} %)"),
                 ("measured DRAM (copy)", f"{d.measured_dram_gbps:,.0f} GB/s "
                                          f"({100 * d.measured_dram_gbps / d.peak_dram_gbps:.0f} %)"),
                 ("measured at", d.measured_at or "-")]
    if d.launch_latency_ms is not None:
        rows.append(("launch latency (empty kernel)", f"{1000 * d.launch_latency_ms:,.1f} µs"))
    rows += energy_rows(d.measured_energy)
    rows += [
        ("ridge point", f"{d.ridge_point:.1f} FLOP/B"),
        ("registers per SM", f"{lim.registers_per_sm:,}"),
        ("shared memory per SM", f"{lim.smem_per_sm_bytes:,} B"),
        ("shared memory per block (opt-in)", f"{lim.max_smem_per_block_optin_bytes:,} B"),
        ("max warps per SM", str(lim.max_warps_per_sm)),
        ("max blocks per SM", str(lim.max_blocks_per_sm)),
    ]
    for row in rows:
        t.add_row(*row)
    return _sized(t)


def device_source(d: DeviceSpec) -> str:
    """The line under the device table: 'source: NVML' or the preset's datasheets."""
    return f"source: {d.source}"


def peaks_tables(d: DeviceSpec, width: int = 200) -> list[Table]:
    """A device's roof per precision and per memory level: theoretical (per SM per clock x SMs x
    clock, with the clock and the per-SM figure's source) and, where measured, the measured
    ceiling beside it; split to fit `width`. Empty when the device has no clock to compute them from."""
    compute, memory = d.precision_peaks, d.memory_peaks
    if not compute:
        return []
    measured = dict(d.measured_peaks_gflops or {}, fp32=d.measured_fp32_gflops)
    rows = []
    for key, p in compute.items():
        got = measured.get(key)
        rows.append([LABELS[key], f"{p.value / 1e3:,.1f} T{'OP' if key == 'int8_tensor' else 'FLOP'}/s",
                     f"{p.per_sm_per_clock:,.0f} x {p.sm_count} x {p.clock_mhz:,.0f} MHz",
                     f"{got / 1e3:,.1f} ({100 * got / p.value:.0f} %)" if got else "-", p.source])
    dram_clock = f"{d.max_mem_clock_mhz:,.0f} MHz x 2 x {d.memory_bus_width_bits:,} bit / 8" \
        if d.max_mem_clock_mhz and d.memory_bus_width_bits else "datasheet"
    levels = [("DRAM", d.peak_dram_gbps, dram_clock, d.measured_dram_gbps, d.source)]
    for level, got in (("L2", d.measured_l2_gbps), ("L1", d.measured_smem_gbps)):
        p = memory.get(level)
        if p or got:
            how = f"{p.per_sm_per_clock:,.1f} B x {p.sm_count} x {p.clock_mhz:,.0f} MHz" if p else "-"
            levels.append(("L1/shared" if level == "L1" else level, p.value if p else None, how, got,
                           p.source if p else "measured only"))
    for name, value, how, got, source in levels:
        rows.append([name, f"{value / 1e3:,.1f} TB/s" if value else "-", how,
                     f"{got / 1e3:,.1f}" + (f" ({100 * got / value:.0f} %)" if value else "") if got else "-", source])
    for row in rows:  # the source's name; the figures it gives are in the JSON's peak_sources
        half = "; GeForce: half" in row[4]
        row[4] = row[4].split(" (")[0].split(";")[0].removeprefix("preset: ") + (
            " (GeForce: half, FP32 accumulate)" if half else "")
    columns = [("theoretical", "right"), ("per SM per clock\nx SMs x clock", "right"), ("measured", "right"),
               ("source", "left", WRAP)]
    if all(row[3] == "-" for row in rows):
        columns.pop(2)
        rows = [row[:3] + row[4:] for row in rows]
    return _fit(f"{d.name}: roofs per precision and memory level", ("roof", "left"), columns, rows, width)


def _arrow(before: str, after: str) -> str:
    return before if before == after else f"{before} -> {after}"


def _pct_move(pairs, move: str | None) -> str:
    """Two paired %cuBLAS, '57.1 -> 56.9' (one figure where they agree); with more decimals where
    they differ (their intervals apart: `move` 'higher' or 'lower') but round alike."""
    for digits in (1, 2, 3):
        b, a = f"{pairs[0].pct:.{digits}f}", f"{pairs[1].pct:.{digits}f}"
        if b != a or move in (None, "same"):
            break
    return _arrow(b, a)


def compare_tables(cmp: WorkComparison, width: int = 200) -> list[Table]:
    """Two run files side by side (`analysis.compare.WorkComparison` of runs): per kernel in both,
    median ms before and after, the speedup (before / after), where both runs timed it in rounds
    with cuBLAS its paired %cuBLAS before and after and whether their CI95s overlap ('same') or
    not ('higher', 'lower'; both columns only where some kernel has them), registers, occupancy
    and the binding floor of the two-roof reading before and after ('fp32 2.27 -> fp32 1.36'),
    and whether the kernel moved toward its roof; cuBLAS last, whose own speedup is the share of
    the device and of noise."""
    paired_any = any(c.vs_reference for c in cmp.in_both)
    columns = [("ms before", "right"), ("ms after", "right"), ("speedup", "right"),
               *([("%cuBLAS", "right"), ("moved (CI95)", "left")] if paired_any else []),
               ("regs", "left"), ("occupancy", "left"), ("bound x", "left"), ("roof", "left")]

    def cell(x, show=str) -> str:
        return show(x) if x is not None else "-"

    def occupancy(x: float) -> str:
        return f"{percent(x)}%"

    rows, styles = [], []
    for c in cmp.in_both:
        (rb, ra), (fb, fa) = c.registers, c.floors
        bound = _arrow(bound_cell(fb) if fb else "failed", bound_cell(fa) if fa else "failed")
        pairs = c.vs_reference
        rows.append([c.label, cell(c.before_ms, "{:.3f}".format), cell(c.after_ms, "{:.3f}".format),
                     cell(c.speedup, "{:.2f}x".format),
                     *([_pct_move(pairs, c.reference_move) if pairs else "-", _moved(pairs, c.reference_move)]
                       if paired_any else []), _arrow(cell(rb), cell(ra)),
                     _arrow(cell(c.before_occupancy, occupancy), cell(c.after_occupancy, occupancy)), bound,
                     c.roof_move])
        styles.append(None if c.speedup is not None else "red")
    ref_b, ref_a = cmp.reference_ms
    rows.append(["cublas", f"{ref_b:.3f}", f"{ref_a:.3f}", f"{cmp.reference_speedup:.2f}x",
                 *(["100.0", "-"] if paired_any else []), "-", "-", "-", "reference"])
    styles.append("bold")
    pb, pa = cmp.problems
    problem = (gemm_title(pb) if pb == pa  # 'SGEMM 4096x4096x4096' or 'GEMM ... BF16 (TN, FP32 accumulate)'
               else f"{'GEMM' if pb.tensor or pa.tensor else 'SGEMM'} {pb.text()} -> {pa.text()}")
    device = cmp.before.device.name if cmp.same_device else f"{cmp.before.device.name} -> {cmp.after.device.name}"
    return _fit(f"before -> after: {problem} on {device}", ("kernel", "left"), columns, rows, width, styles)


def _si(giga: float | None, unit: str) -> str:
    """A rate given in G`unit` with a readable prefix: 685,659 -> '686 T', 379 -> '379 G'."""
    if giga is None:
        return "-"
    value, prefix = (giga / 1e3, "T") if giga >= 1e3 else (giga, "G")
    return f"{value:,.3g} {prefix}{unit}" if value < 1000 else f"{value:,.0f} {prefix}{unit}"


def _launch_shape(k) -> str:
    """'(2,64,1)x384': the grid, and the threads of a block (its shape when not 1-D); '-' where the
    report gives neither."""
    return launch_shape(k.grid, k.block) if k.grid and k.block else "-"


def _total_ms(ms: float) -> str:
    """A kernel's GPU time in ms to a microsecond, or to three figures below 10 us."""
    return f"{ms:,.3f}" if ms >= 0.01 else f"{ms:.3g}"


def profile_tables(doc: ProfileResults, width: int = 200, top: int | None = 25) -> list[Table]:
    """A profile's kernels by GPU time (the `top` first): GPU time (all its launches, ms), share,
    launches, precision ('?' after it
    where other kinds of work were not counted, '?' alone where none was), rate of the work counted
    (executed: a GEMM's padding of partial tiles included), arithmetic intensity at DRAM, L2 and L1 (FLOP per
    byte), achieved DRAM bandwidth, the SM clock it ran at, the binding roof (at that clock) and
    the time over its floor, occupancy theoretical/achieved with the limiter, and a one-line
    verdict; then, where the report lacks figures, what is missing and where to get it
    (`missing_tables`)."""
    columns = [("ms", "right"), ("share", "right"), ("launches", "right"), ("grid x block", "right"),
               ("precision", "left"), ("executed FLOP/s", "right"),
               ("AI DRAM", "right"), ("AI L2", "right"), ("AI L1", "right"), ("DRAM", "right"), ("MHz", "right"),
               ("bound", "left"), ("theor./ach. occupancy", "left"), ("verdict", "left", WRAP)]
    rows = []
    kernels = doc.kernels[:top] if top else doc.kernels
    for k, name in zip(kernels, display_names([k.name for k in kernels], 40, [k.name for k in doc.kernels])):
        v = doc.verdict(k)
        b = v.binding
        bound = f"{roof_name(b.level)} {v.times_floor:.2f}x" if b is not None and v.times_floor else "-"
        precision = precision_cell(k, doc.device)
        achieved = f"{percent(k.achieved_occupancy)}" if k.achieved_occupancy is not None else "-"
        occ = (f"-/{achieved}%" if achieved != "-" else "-") if k.occupancy is None else (
            f"{percent(k.occupancy.occupancy)}/{achieved}% {limiters(k.occupancy, short=True)}")
        dram = k.bytes.get("dram")
        rows.append([name, _total_ms(k.time_ms), f"{percent(k.time_share)}%", f"{k.launches:,}", _launch_shape(k),
                     precision,
                     _si(k.gflops, "FLOP/s" if k.precision != "int8" else "OP/s"),
                     *(f"{x:.3g}" if x else "-" for x in (k.intensity("dram"), k.intensity("l2"), k.intensity("l1"))),
                     f"{dram / (k.time_ms * 1e6):,.0f} GB/s" if dram else "-",
                     f"{k.clock_mhz:,.0f}" if k.clock_mhz else "-", bound,
                     occ, profiled_kernel_verdict(doc, k, v)])
    shown = f"top {len(kernels)} of {len(doc.kernels)} kernels" if len(kernels) < len(doc.kernels) \
        else plural(len(kernels), "kernel")
    title = (f"{doc.device.name}: {shown} by GPU time, {plural(doc.launches_profiled, 'launch', 'launches')}, "
             f"{doc.total_time_ms:,.3f} ms profiled")
    return _fit(title, ("kernel", "left"), columns, rows, width) + missing_tables(doc, width)


MISSING_WHAT = {
    "time": ("the duration", "the launch is left out"),
    "clock": ("the SM clock", "roofs at the nominal clock"),
    "fp64": ("FP64 operations", "no FP64 roof placed"),
    "fp32": ("FP32 operations", "no FP32 roof placed"),
    "fp16": ("FP16 operations (CUDA cores)", "no FP16 roof placed"),
    "tensor": ("tensor-core operations", "no tensor roof placed"),
    "dram": ("DRAM bytes", "no DRAM roof placed"),
    "l2": ("L2 bytes", "no L2 roof placed"),
    "l1": ("L1 bytes", "no L1 floor under the L1/shared roof"),
    "smem": ("shared-memory bytes", "no shared-memory floor under the L1/shared roof"),
    "registers": ("registers", "no theoretical occupancy, no waves"),
    "shared_memory": ("shared memory per block", "no theoretical occupancy, no waves"),
    "launch_size": ("grid and block", "no occupancy, no waves"),
}


def missing_tables(doc: ProfileResults, width: int = 200) -> list[Table]:
    """What the report does not hold, once per figure: how many kernels lack it, what that
    leaves out of the reading, and the ncu option that brings it (`metrics.WHERE`); none when
    nothing is missing. A partial count ('fp32 ADD/MUL': FMAs only) says its figure is a lower
    bound."""
    from ..nsight.metrics import EVERYTHING  # here: importing the nsight package loads every reader

    found = doc.missing()
    if not found:
        return []
    merged: dict[str, tuple[set[int], str, list[str]]] = {}  # tensor-core input types on one row
    for what, kernels in found.items():
        key = "tensor" if what.endswith("_tensor") else what
        had, _, types = merged.get(key, (set(), "", []))
        hint = doc.kernels[kernels[0]].missing[what]
        merged[key] = (had | set(kernels), hint, types + ([LABELS[what].split()[0]] if key == "tensor" else []))
    rows = []
    for key, (kernels, where, types) in merged.items():
        base, _, part = key.partition(" ")
        if part:  # some instruction kinds of a precision: e.g. 'fp32 ADD/MUL'
            what, effect = f"{base.upper()} {part} instructions", f"{base.upper()} FLOPs are a lower bound"
        else:
            what, effect = MISSING_WHAT.get(key, (key, ""))
        if key == "tensor":
            what = f"tensor-core operations on {', '.join(types)} inputs"
        rows.append([what, f"{len(kernels):,} of {len(doc.kernels):,}", effect, where])
    title = f"not in this report (the results file names each figure's source); {EVERYTHING}"
    return _fit(title, ("not counted", "left", WRAP),
                [("kernels", "right"), ("so", "left", WRAP), ("where to get it", "left", WRAP)], rows, width)

