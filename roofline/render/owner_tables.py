"""A profile's GPU time by op or by module (`analysis.owners`): one row per op and phase, or per
module in tree order, with its time, share, launches, work rate, floor, distance from it, binding
roof and longest kernel."""

from __future__ import annotations

from rich.table import Table

from ..analysis.owners import OwnerChanges, OwnerRow, Owners
from ..results.profile import ProfileResults
from .tables import _fit
from .text import display_names, middle_cut, roof_name


def _rate(r: OwnerRow) -> str:
    """The row's largest kind of work as a rate over its whole time ('312 T bf16_tensor'), or '-'."""
    rate = r.gflops()
    return f"{rate:,.0f} {r.main_precision}" if rate is not None else "-"


def rows_tables(owners: Owners, width: int = 200, top: int | None = None) -> list[Table]:
    """A profile's owned GPU time by op or module, rows already summed (`analysis.owners.owners_of`):
    `top` rows (None: all): ms (its launches' durations under Nsight Compute summed), where a trace
    gave them their time in the program that time (program ms), share of the profiled time, launches,
    GFLOP/s of its largest kind of work over its time, its floor (ms: each kernel at its own roof),
    its time over that floor, the roof binding most of the floor, and its longest kernel with that
    kernel's share of the row; a module row holds its submodules, and splits its time into forward
    and backward (and the optimizer's, where a row shown holds some: a JAX step's update under a
    scope of its own, a PyTorch step's optimizer)."""
    key, rows = owners.key, owners.rows
    timed = owners.program_source is not None  # a trace gave the rows their time in the program
    shown = rows[:top] if top else rows
    total = owners.total_ms or 1.0
    body = []
    # a module's time by phase: forward and backward, and the optimizer's where a row holds some
    phases = ("forward", "backward") + (("optimizer",) if any("optimizer" in r.phase_ms for r in shown) else ())
    if key == "module":
        names = [("  " * r.depth) + middle_cut(r.name.rsplit(".", 1)[-1] if r.depth else r.name, 40) for r in shown]
    else:
        names = display_names([r.name for r in shown], 40)
    # the longest kernel of each row, kernels whose names the cut makes read alike told apart (' #2')
    longest = display_names([r.kernels[0][0] if r.kernels else "-" for r in shown], 40)
    for r, name, first in zip(shown, names, longest):
        first_ms = r.kernels[0][1] if r.kernels else 0.0
        cells = [name]
        if key == "op":
            cells.append(r.phase or "-")
        cells += [f"{r.time_ms:,.3f}"]
        if timed:
            cells.append(f"{r.program_ms:,.3f}" if r.program_ms is not None else "-")
        cells.append(f"{100 * r.time_ms / total:.1f}%")
        if key == "module":
            cells += [f"{r.phase_ms[p]:,.3f}" if p in r.phase_ms else "-" for p in phases]
        cells += [f"{r.launches:,}", _rate(r),
                  (f"{r.floor_ms:.4f}" if r.floor_ms < 1 else f"{r.floor_ms:,.3f}") if r.floor_ms else "-",
                  f"{r.times_floor:.2f}x" if r.times_floor else "-",
                  (f"{roof_name(r.binding)} ({roof_name(r.near)} as near)" if r.near else roof_name(r.binding))
                  if r.binding else "-",
                  first, f"{100 * first_ms / r.time_ms:.0f}%" if r.time_ms else "-"]
        body.append(cells)
    left = f", the {len(shown)} {'first' if key == 'module' else 'longest'} of {len(rows)}" if len(shown) < len(rows) else ""
    title = f"GPU time by {key}{' and phase' if key == 'op' else ' (submodules included)'}{left}"
    columns = ([("phase", "left")] if key == "op" else []) + [("ms", "right")]
    columns += [("program ms", "right")] if timed else []
    columns += [("share", "right")]
    if key == "module":
        columns += [(f"{p} ms", "right") for p in phases]
    columns += [("launches", "right"), ("GFLOP/s", "right"), ("floor ms", "right"), ("x floor", "right"),
                ("binding", "left"), ("longest kernel", "left"), ("of the row", "right")]
    return _fit(title, (key, "left"), columns, body, width)


def near_line(owners: Owners) -> list[str]:
    """What 'X (Y as near)' in the binding column means, where a row has one."""
    if not any(r.near for r in owners.rows):
        return []
    return ["binding: the roof holding most of a row's floor; 'L2 (BF16 tensor as near)': over most of that floor, the "
            "second roof's floor is within 5 % of it, so either may bind (which one is within what the ceilings' own "
            "measurement can tell)"]


def owned_line(doc: ProfileResults, key: str | None = None) -> str:
    """How much of the profiled time has an owner, and from what; by `key` ('module'), how much of it
    a module owns (the rest is the table's '(no module)' row); where a trace gave the launches their
    time in the program, what the two times are."""
    a = doc.attribution
    share = a.time_ms / doc.total_time_ms if doc.total_time_ms else 0.0
    line = (f"{share:.1%} of the profiled GPU time ({a.time_ms:,.3f} of {doc.total_time_ms:,.3f} ms) is owned by an op "
            f"or a module, read from {a.source}")
    if key == "module" and doc.total_time_ms:
        total = doc.total_time_ms
        moduled = sum(w.time_ms for w in a.owned if w.module)
        stepped = sum(w.time_ms for w in a.owned if not w.module and w.phase == "optimizer")
        line += (f"; by a module, {moduled / total:.1%} ({moduled:,.3f} ms)"
                 + (f", by the optimizer {stepped / total:.1%}" if stepped else "")
                 + f"; the rest, {max(0.0, 1 - (moduled + stepped) / total):.1%}, is '(no module)'. Each row holds its "
                   "submodules; plot --kind module draws each module's own launches alone, so no time is drawn twice")
    if a.program_source is None:
        return line
    timed = [w for w in a.owned if w.program_ms is not None]
    program = sum(w.program_ms for w in timed)
    under = sum(w.time_ms for w in timed)
    return (f"{line}. ms: each launch under Nsight Compute (replayed alone, floors and x floor read on it); "
            f"program ms: the same launches as the program ran them, from {a.program_source}: "
            f"{program:,.3f} ms where Nsight Compute took {under:,.3f} ms"
            + (f" ({sum(w.launches for w in a.owned) - sum(w.launches for w in timed):,} owned launches have none)"
               if len(timed) < len(a.owned) else ""))


def changes_tables(changes: OwnerChanges, width: int = 200, top: int | None = 40) -> list[Table]:
    """Two profiles by op or module (`analysis.owners.compare_owners`), the largest change in time
    first (`top` rows): ms before and after, the change, each one's time over its floor."""
    rows = changes.rows[:top] if top else changes.rows
    body = []
    for r in rows:
        change = f"{100 * r.change:+.1f}%" if r.change is not None else ("new" if r.before_ms is None else "gone")
        body.append([middle_cut(r.name, 60)] + ([r.phase or "-"] if changes.key == "op" else [])
                    + [f"{r.before_ms:,.3f}" if r.before_ms is not None else "-",
                       f"{r.after_ms:,.3f}" if r.after_ms is not None else "-", change,
                       f"{r.before_times_floor:.2f}x" if r.before_times_floor else "-",
                       f"{r.after_times_floor:.2f}x" if r.after_times_floor else "-"])
    left = f", the {len(rows)} that moved most of {len(changes.rows)}" if len(rows) < len(changes.rows) else ""
    title = (f"GPU time by {changes.key}: {changes.before} ({changes.before_ms:,.3f} ms) -> {changes.after} "
             f"({changes.after_ms:,.3f} ms){left}")
    columns = ([("phase", "left")] if changes.key == "op" else []) + [
        ("before ms", "right"), ("after ms", "right"), ("change", "right"), ("x floor before", "right"),
        ("x floor after", "right")]
    return _fit(title, (changes.key, "left"), columns, body, width)
