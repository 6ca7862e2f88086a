"""Tables of what changed between two results files (`analysis.compare.WorkComparison`) and of the
regression gate (`analysis.check.Check`): times, FLOP/s, bytes per level, occupancy, the fraction
of the binding roof, each change read as noise, faster or slower with its cause where the counted
bytes show one."""

from __future__ import annotations

from rich.table import Table

from ..analysis.check import Check
from ..analysis.compare import MATCHED, Delta, WorkComparison, pct, share
from ..model.timeline import ROOF_NAMES
from .tables import WRAP, _arrow, _fit, compare_tables
from .text import display_names, percent

TOP = 25  # a profile's kernels shown, by the longer of their two times


def _rate(g: float | None) -> str:
    if g is None:
        return "-"
    return f"{g / 1e3:,.3g} T" if g >= 1e3 else f"{g:,.3g} G"


def _occ(x: float | None) -> str:
    return f"{percent(x)}%" if x is not None else "-"


def _level(d: Delta, level: str) -> str:
    """A level's change of bytes (per FLOP between two problem sizes), '(model)' where both are the model's."""
    lc = next((lc for lc in d.shown_levels if lc.level == level), None)
    change = d.level_change(lc) if lc is not None else None
    if change is None:
        return "-"
    if change == 0:
        return "same" + ("" if lc.counted else " (model)")
    return pct(change) + ("" if lc.counted else " (model)")


def _reading(d: Delta) -> str:
    if d.slowdown is None:
        return "not measured: no binding roof in both files"
    paired = d.reference_move  # its % of the reference, each file's from the rounds it shared with the reference
    if d.is_noise:  # a binding roof that moved is said here too: the fractions are of different roofs
        moved = f"; the binding roof moved, {d.binding_moved}" if d.binding_moved else ""
        held = (f"; its % of the reference is {paired}: the reference's own time moved"
                if paired in ("higher", "lower") else "")
        return f"noise (within {share(d.noise)}){moved}{held}"
    rose = "rose" if d.slowdown > 0 else "fell"  # the direction a byte count must take to explain it
    what = d.cause or (f"no byte count {rose} with it" if d.levels else "no bytes in both files")
    if d.binding_moved:  # the two fractions are of different roofs: say which
        what += f"; the binding roof moved, {d.binding_moved}"
    if d.roofs_differ and not d.cause:
        what += f" (its {d.binding[1]} roof differs between the GPUs)"
    if paired == "same":  # the reference moved with it: the run's clock or machine (or the size), not the kernel
        what += ("; its % of the reference held: the reference's rate moved with it (the problem's size, not the "
                 "kernel)" if d.per_flop else
                 "; its % of the reference held: the reference moved with it (the device, not the kernel)")
    elif paired in ("higher", "lower") and (paired == "higher") == (d.slowdown > 0):  # the two tables disagree
        what += f"; its % of the reference is {paired}: the reference's own {'rate' if d.per_flop else 'time'} moved more"
    return f"{d.reading}: {what}"


def _row(d: Delta, name: str, profile: bool, joules: bool = False) -> list[str]:
    ms = _arrow(f"{d.before_ms:,.3f}", f"{d.after_ms:,.3f}")
    row = [name]
    if profile:
        row.append(d.configuration or d.launch or "-")
    row += [ms, pct(d.time_change), _arrow(_rate(d.before_gflops), _rate(d.after_gflops)),
            *(_level(d, lvl) for lvl in ("dram", "l2", "l1/shared")),
            _arrow(_occ(d.before_occupancy), _occ(d.after_occupancy)),
            _arrow(_occ(d.before_fraction), _occ(d.after_fraction))]
    if joules:
        row.append(_arrow(f"{d.joules[0]:.3g}", f"{d.joules[1]:.3g}") if d.joules else "-")
    return row + [_reading(d)]


def change_tables(cmp: WorkComparison, width: int = 200, top: int | None = TOP) -> list[Table]:
    """Two runs first side by side (`render.tables.compare_tables`: speedup, registers, the
    two-roof reading and the move toward it, the reference). Then per matched kernel (and first
    the step, for profiles): ms before -> after, the time change, FLOP/s, the change of DRAM, L2
    and L1 with shared-memory bytes ('(model)' where both are the model's), theoretical occupancy, the fraction of the
    binding roof, and the reading (noise, or faster/slower with the cause). A profile shows its
    `top` kernels by the longer of their two times."""
    profile = cmp.is_step
    per = "/FLOP" if cmp.per_flop else ""  # two problem sizes: bytes per FLOP
    columns = ([("grid x block", "right")] if profile else []) + [
        ("ms", "right"), ("time", "right"), ("FLOP/s", "right"), (f"DRAM bytes{per}", "right"),
        (f"L2 bytes{per}", "right"), (f"L1/shared bytes{per}", "right"), ("occupancy", "left"), ("of roof", "left")]
    joules = any(d.joules for d in cmp.kernels)  # both files measured with --energy: J per launch
    columns += [("J", "right")] if joules else []
    columns.append(("reading", "left", WRAP))
    deltas = cmp.kernels
    if profile and top and len(deltas) > top:
        deltas = sorted(deltas, key=lambda d: -max(d.before_ms, d.after_ms))[:top]
    names = display_names([d.label for d in deltas], 40, [d.label for d in cmp.kernels])
    rows, styles = [], []
    if cmp.step is not None:
        rows.append(_row(cmp.step, "step", profile, joules))
        rows[-1][1] = "-"
        styles.append("bold")
    for d, name in zip(deltas, names):
        rows.append(_row(d, name, profile, joules))
        styles.append(None if d.is_noise or (d.slowdown or 0) < 0 else "red")
    devices = cmp.before.device.name if cmp.same_device else f"{cmp.before.device.name} -> {cmp.after.device.name}"
    shown = f"top {len(deltas)} of {len(cmp.kernels)}" if len(deltas) < len(cmp.kernels) else str(len(deltas))
    what = ("profile" if profile else f"runs ({cmp.before.problem} -> {cmp.after.problem}, read per FLOP)"
            if cmp.per_flop else f"run ({cmp.after.problem})")
    runs = [] if cmp.is_step else compare_tables(cmp, width)
    return (runs + _fit(f"what changed, {what} on {devices}: {shown} matched kernel{'s' if len(cmp.kernels) != 1 else ''}", ("kernel", "left"), columns,
                        rows, width, styles) + phase_change_tables(cmp, width))


def phase_change_tables(cmp: WorkComparison, width: int = 200) -> list[Table]:
    """Two files' kernels with a timeline in both (`analysis.compare.PhaseChange`): ms, each phase's
    share of the time, the SMs busy in the tail wave and the steady part's busiest unit and its
    share of its peak, before -> after; none without such kernels."""
    if not cmp.phases:
        return []

    def phase(shares: dict, name: str) -> str:
        return f"{100 * shares[name]:.1f}%" if name in shares else "-"

    def frac(x: float | None, unit: str | None = None) -> str:
        return "-" if x is None else f"{ROOF_NAMES.get(unit, unit)} {100 * x:.0f}%" if unit else f"{100 * x:.0f}%"

    rows = [[p.kernel, _arrow(f"{p.before_ms:,.3f}", f"{p.after_ms:,.3f}"),
             *(_arrow(phase(p.before_shares, n), phase(p.after_shares, n)) for n in ("fill", "steady", "drain", "tail")),
             _arrow(frac(p.before_tail_busy), frac(p.after_tail_busy)),
             _arrow(frac(p.before_steady, p.before_unit), frac(p.after_steady, p.after_unit))]
            for p in cmp.phases]
    columns = [("ms", "right"), ("fill", "right"), ("steady", "right"), ("drain", "right"), ("tail wave", "right"),
               ("SMs in tail", "right"), ("steady at", "right")]
    return _fit("over their runs (kernels with a timeline in both): each phase's share of the time, before -> after",
                ("kernel", "left"), columns, rows, width)


def check_lines(result: Check) -> list[str]:
    """One line per failing kernel, then the unmatched and the unmeasured, then a summary line."""
    worse = (f"slower by more than {share(result.max_drop)}" if result.measure == "time"
             else f"further from its binding roof by more than {share(result.max_drop)}")
    lines = []
    failed = [g for g in result.kernels if g.failed]
    for g in failed:
        d = g.delta
        if result.measure == "time":
            figures = f"{d.before_ms:,.3f} -> {d.after_ms:,.3f} ms"
        else:
            figures = f"{d.before_fraction:.1%} -> {d.after_fraction:.1%} of its binding roof"
        word = "slower" if result.measure == "time" else "further"
        lines.append(f"{word}: {d.label}: {figures} ({pct(g.slowdown)}; noise {share(d.noise)}, "
                     f"--max-drop {share(result.max_drop)})")
    for name in result.broken:
        lines.append(f"failed: {name}: verified and timed in the baseline, not in the new file (a wrong answer or a "
                     "failed run: roofline show names which)")
    c = result.comparison
    gone = [g for g in c.gone if g not in result.broken]
    for which, names in (("gone (in the baseline only, not gated)", gone), ("new (not gated)", c.new),
                         ("not gated, no binding roof in both", result.unmeasured)):
        if names:  # one kernel a line: a profile's labels are long
            lines += [f"{which}:", *(f"  {name}" for name in names)]
    n = len(result.kernels)
    across = "" if result.measure == "time" else f" (different GPUs: {c.before.device.name} -> " \
        f"{c.after.device.name}, so each kernel's fraction of its binding roof is compared, not its time)"
    step = result.step
    if step is not None and step.slowdown is not None:
        d = step.delta
        lines.append(f"{'slower: ' if step.failed else ''}{d.label}: {d.before_ms:,.3f} -> {d.after_ms:,.3f} ms "
                     f"({pct(step.slowdown)}; noise {share(d.noise)}, --max-drop {share(result.max_drop)})")
    untimed = f"{len(result.broken)} kernel(s) the baseline verified and timed did not verify or time"
    if result.passed:
        worst = max((g for g in result.kernels if g.slowdown is not None), key=lambda g: g.slowdown, default=None)
        part = ""
        if c.is_step and min(c.held) < MATCHED:  # two programs, or one changed past recognition: say how little
            part = (f"; they hold {100 * c.held[0]:.3g} % of the first step's GPU time and {100 * c.held[1]:.3g} % of "
                    "the second's, so the rest was not gated")
        lines.append(f"gate passed{' on what it matched' if part else ''}: none of {n} matched kernels is {worse} and "
                     f"beyond its noise{across}{part}")
        if worst and worst.slowdown > 0:
            within = " (within its noise)" if worst.slowdown <= worst.delta.noise else ""
            lines.append(f"  the largest slowdown: {worst.delta.label} {pct(worst.slowdown)}{within}")
    elif not failed and result.broken and not (step is not None and step.failed):
        lines.append(f"gate failed: {untimed} in the new file; none of {n} matched kernels is {worse} and beyond "
                     f"its noise{across}")
    elif not failed:  # the step alone
        lines.append(f"gate failed: the step is {pct(step.slowdown)} slower, beyond its noise, though none of "
                     f"{n} matched kernels is: the kernels in one file only (above) account for it")
    else:
        lines.append(f"gate failed: {len(failed)} of {n} matched kernels {worse} and beyond their noise"
                     f"{across}{f', and {untimed}' if result.broken else ''}")
    return lines
