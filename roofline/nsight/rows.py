"""One row per profiled launch, whatever form a report came in: the kernel's name, its metrics in
base units, its text cells, and what the reading found (cut short, damaged cells, display
rounding, left out). The pages (`nsight.pages`), the text (`nsight.text`) and the binary report
(`nsight.binary`) all end here; `nsight.launches` turns rows into launches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from ..model.units import plural
from .dialect import unit_fits
from .metrics import Reading, read, reads

TEXT_COLUMNS = ("Kernel Name", "Process Name", "Host Name", "Block Size", "Grid Size", "Device", "CC", "Context",
                "Stream", "Kernel Time")


NVTX_COLUMN = "thread Domain:Push/Pop_Range"  # how a raw CSV export made --nvtx heads its ranges' column
_RANGE = re.compile(r'"([^"]*)"')
_MESSAGE = re.compile(r":(?:REGISTERED|ASCII|UNICODE):")


def nvtx_cell(cell: str) -> list[str] | None:
    """The NVTX push/pop ranges of a raw CSV export's range cell, outermost first, each as its
    message ('aten::linear, seq = 41', 'Thunk:#name=...,hlo_op=gemm_fusion_dot.3,...#'): the cell
    holds the thread, then one quoted 'Domain:Name:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg' per
    range, whose message follows its type; None for a cell with no range."""
    ranges = []
    for quoted in _RANGE.findall(cell):
        parts = _MESSAGE.split(quoted)
        ranges.append(parts[-1] if len(parts) > 1 else quoted)
    return ranges or None


@dataclass
class Row:
    """One profiled launch as a report holds it: the kernel's name (demangled where the report
    has it so), metric values in base units, text cells ('Grid Size', 'CC',
    'device__attribute_display_name', ...), the process, whether the row was cut short, the
    cells of metrics a roofline reads that hold no number (`bad`: metric -> the cell's text), and
    the NVTX ranges around the launch where a binary report recorded them."""

    kernel: str
    values: dict[str, float] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    process_id: int | None = None
    incomplete: bool = False
    bad: dict[str, str] = field(default_factory=dict)
    rounding: dict[str, float] = field(default_factory=dict)  # metric -> half the step its display rounds to
    nvtx: list[str] | None = None  # the NVTX ranges open around the launch, outermost first (`ncu --nvtx`)
    sampled: dict | None = None  # its PM-sampling series (`nsight.sampling`), {"unreadable": version} where unread
    left_out: bool = False  # for a damaged figure (`check_rows`, `check_rates`): kept for its place in the launch order

    @cached_property
    def reading(self) -> Reading:
        """`nsight.metrics.read` of the row's values and text, worked out once for the checks
        and the launches that each ask for it (a row is not changed once its export is read);
        display-rounded sizes read at the shared-memory allocation granule of the row's compute
        capability (`arch.limits_for`; 128 B where the report does not say)."""
        return read(self.values, self.text, self.rounding, smem_granule(self))


def smem_granule(row: Row) -> int:
    """The shared-memory allocation unit, bytes, of the compute capability a row names (its 'CC'
    column or device attributes), else 128 B (whose multiples hold the 256 B ones too)."""
    major = row.values.get("device__attribute_compute_capability_major")
    if major is None:
        found = re.match(r"\s*(\d+)\.(\d+)", row.text.get("CC", ""))
        major = int(found.group(1)) if found else None
    return 128 if major is None or major >= 8 else 256


def half_step(cell: str, factor: float) -> float | None:
    """Half the step of a value shown with a unit prefix and a few digits (`8.19` Kbyte: 5 B), in
    base units; None for a value shown in base units, which is exact."""
    if factor <= 1:
        return None
    digits = re.search(r"[.,](\d+)\s*$", cell.strip())
    return 0.5 * factor * 10.0 ** -(len(digits.group(1)) if digits else 0)


@dataclass(frozen=True)
class Rows:
    """The launches a report holds, how it was read, one-line notes on what was left out,
    whether the form prints the sections' figures rather than the counters (`printed`: the
    details page and ncu's text output), and the launches that failed and so hold no row
    (`failed`: ncu's text gives them no figure at all), and whether it holds the sections'
    bodies (`bodies`: made with --print-details all)."""

    rows: list[Row]
    read_with: str
    notes: tuple[str, ...] = ()
    printed: bool = False
    failed: tuple[str, ...] = ()
    bodies: bool = False  # printed with --print-details all (the sections' bodies are there)


def column_plan(name: str, scale: float | None, unit: str | None) -> tuple[float | None, str | None]:
    """How a metric's values are stored: (the factor to base units, None when they are left out;
    the unit to name in the note of metrics left out, None when none is due). Base units where
    the export gives no unit (`unit` None); device attributes in the units their names say (kHz,
    bytes). A value in a unit this reader does not know, or of the wrong kind for its metric (a
    duration in bytes), is left out, and named if a roofline reads that metric."""
    if name.startswith("device__attribute_"):
        if unit and unit.lower().endswith("hz") and scale is not None:
            scale /= 1e3  # a clock printed in Hz or MHz: the attribute's own unit is kHz
        return (scale if scale is not None else 1.0), None
    if scale is None or (unit is not None and not unit_fits(name, unit)):
        return None, (unit or "") if reads(name) else None
    return scale, None


def store_value(row: Row, name: str, x: float, scale: float | None, unit: str | None, unknown: dict[str, str]) -> None:
    """`x` of metric `name` in `unit` (`scale` to base units) kept in `row` or noted (`keep_value`)."""
    keep_value(row, name, x, column_plan(name, scale, unit), unknown)


def keep_value(row: Row, name: str, x: float, plan: tuple[float | None, str | None], unknown: dict[str, str]) -> None:
    """`x` of metric `name` kept in `row` as its `column_plan` says, or its unit noted in `unknown`."""
    factor, unfit = plan
    if factor is not None:
        row.values[name] = x * factor
    elif unfit is not None:
        unknown[name] = unfit


def unknown_units_note(unknown: dict[str, str]) -> list[str]:
    """A note naming the metrics left out for a unit `unit_scale` does not know, or one of the
    wrong kind for the metric (none: no note)."""
    if not unknown:
        return []
    return [f"{plural(len(unknown), 'metric')} in units this reader does not know or that do not fit them, left out: "
            + ", ".join(f"{k} ({v or 'no unit'})" for k, v in list(unknown.items())[:3])]
