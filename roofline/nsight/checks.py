"""The checks a report's figures pass before a roofline reads them: a damaged figure (text, `nan`
or `inf` where a number belongs, a negative count, a duration no launch has, a rate above the
GPU's peaks) leaves out the launch it is in, with a note naming the launch, the metric and the
value; only the metrics a roofline reads are checked (`nsight.metrics.reads`, by exact name),
and a report is refused only when no launch is left.
"""

from __future__ import annotations

from ..errors import UsageError
from ..model.device import DeviceSpec
from ..model.units import plural
from .dialect import NO_VALUE, NON_FINITE
from .metrics import implausible, reads
from .names import label
from .rows import Row

REEXPORT = ("export the report again (ncu --import REPORT.ncu-rep --csv --page raw > report.csv) or profile the "
            "program again")


def damaged(cell: str) -> bool:
    """Whether a cell of a metric a roofline reads, which gave no number, is damaged rather than
    not collected: text, or a non-finite number ('n/a', empty cells and per-instance lists are not
    collected)."""
    text = cell.strip().lower()
    return text in NON_FINITE or (text not in NO_VALUE and ";" not in text)


def describe(row: Row, index: int) -> str:
    """'launch 12 (elementwise_kernel [direct_copy_kernel_cuda])': the row's launch ID (else its
    position) and the name a table shows."""
    return f"launch {row.text.get('ID') or index} ({label(row.kernel) if row.kernel else 'no kernel name'})"


def _left_out(found: list[tuple[int, str]], rows: list[Row], source: str, why: str,
              what: str = "damaged") -> tuple[list[Row], list[str]]:
    """The rows, those `found` ((row index, what is wrong) each) marked `left_out` (they keep
    their places in the launch order), and a note naming them (`what`: 'damaged' for a damaged
    figure, 'failed' for a launch that failed); a report left with none is refused (UsageError)
    naming the first and how many more."""
    if not found:
        return rows, []
    first = {}
    for i, said in found:
        first.setdefault(i, said)
    for i in first:
        rows[i].left_out = True
    if not any(not row.incomplete and not row.left_out for row in rows):
        more = (f" ({plural(len(found) - 1, 'more damaged figure')} after it)" if what == "damaged" else
                f" (and {plural(len(found) - 1, 'more launch', 'more launches')})") if len(found) > 1 else ""
        raise UsageError(f"{source}: {found[0][1]}{more}; {why}")
    shown = "; ".join(list(first.values())[:3]) + (f"; and {len(first) - 3} more" if len(first) > 3 else "")
    if what == "failed":
        return rows, [f"{plural(len(first), 'launch', 'launches')} that failed left out (every figure nan, as ncu "
                      f"records a launch that failed): {shown}"]
    return rows, [f"{plural(len(first), 'launch', 'launches')} left out for a damaged figure in a metric the "
                  f"roofline reads ({why.split(':')[0]}): {shown}"]


def check_rows(rows: list[Row], source: str) -> tuple[list[Row], list[str]]:
    """The rows, those with a damaged figure where a roofline reads one marked `left_out` (`metrics.reads`,
    by exact metric name): a metric cell that holds text, 'nan' or 'inf', a negative count, time
    or size, or a duration beyond any real launch (`metrics.implausible`); and one note naming
    each launch left out (its ID and kernel), the metric and the value. Rows cut short are left
    out elsewhere, not checked. Raises UsageError, naming the first damaged figure, when no launch
    is left."""
    failed = [(i, describe(row, i)) for i, row in enumerate(rows) if not row.incomplete and not row.left_out
              and _failed(row)]
    rows, notes = _left_out(failed, rows, source, "the launch failed: ncu records every figure of a launch that "
                            "failed as nan (==ERROR== LaunchFailed); profile it again once it runs", what="failed")
    found = []
    for i, row in enumerate(rows):
        if row.incomplete or row.left_out:
            continue
        for name, cell in row.bad.items():
            found.append((i, f"{describe(row, i)}: {name} is {cell!r}, not a number"))
        for name, x in row.values.items():
            if x < 0 and reads(name):
                found.append((i, f"{describe(row, i)}: {name} is {x:g}, below zero"))
        why = implausible(row.reading)
        if why:
            found.append((i, f"{describe(row, i)}: {why}"))
    rows, damaged_notes = _left_out(found, rows, source, f"the report is damaged: {REEXPORT}")
    return rows, notes + damaged_notes


def _failed(row: Row) -> bool:
    """A launch that failed: every figure a roofline reads (launch and device attributes apart)
    is nan or n/a, as ncu records a launch that did not run; one nan among numbers is damage."""
    return bool(row.bad) and all(c.strip().lower() in NON_FINITE | NO_VALUE for c in row.bad.values()) and \
        not any(reads(n) for n in row.values if not n.startswith(("device__", "launch__")))


def check_rates(rows: list[Row], device: DeviceSpec, source: str) -> tuple[list[Row], list[str]]:
    """The rows, those whose work or bytes over their time exceed `device`'s theoretical
    peaks (per precision; DRAM and L2 bandwidth) by more than `metrics.OVER_PEAK_FACTOR` marked
    `left_out`, and a note naming them: a damaged figure, or a report read against another GPU. Raises
    UsageError, naming the launch (ID and kernel), the metric and the rate, when none is left."""
    gflops = dict(device.peaks_gflops or {"fp32": device.peak_fp32_gflops})
    gbps = {"dram": device.peak_dram_gbps, "l2": device.roofs.l2_gbps}
    found = []
    for i, row in enumerate(rows):
        if row.incomplete or row.left_out:
            continue
        why = implausible(row.reading, gflops, gbps)
        if why:
            found.append((i, f"{describe(row, i)}: {why}, which no kernel reaches on {device.name}"))
    return _left_out(found, rows, source, "the report is damaged, or was recorded on another GPU")
