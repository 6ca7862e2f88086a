"""Nsight Compute's CSV exports, read into rows (`nsight.rows`), and its text output through
`nsight.text`:

- `--page raw` of any metric set and ncu version: a unit row or base units (`--print-units
  base`); text, `nan` or `inf` in a metric a roofline reads is a damaged figure (`nsight.checks`);
  the program's output and `==PROF==`/`==WARNING==` lines before or among the table; any CSV
  quoting, a `,`, `;` or tab separator (the dialect: `nsight.dialect`).
- `--page details` (ID ... Section Name, Metric Name, Metric Unit, Metric Value; 11, 12, 15, 20
  or 21 columns; rule rows and trailing commas ignored), pivoted to one row per launch, labels
  mapped back to metrics (`nsight.metrics.details_metric`); sizes the page prints rounded
  (`8.19 Kbyte/block`) keep the half step they round to.
Pure: text in, rows out.
"""

from __future__ import annotations

import csv
import io
import re

from ..errors import UsageError
from . import text as nsight_text
from .checks import check_rows, damaged
from .dialect import NO_VALUE, decimal_mark, int_cell, mark_note, number, unit_scale
from .metrics import TIME, details_metric, reads
from .rows import (NVTX_COLUMN, TEXT_COLUMNS, Row, Rows, column_plan, half_step, keep_value, nvtx_cell, store_value,
                   unknown_units_note)

NO_KERNELS = re.compile(r"^==WARNING==\s*No kernels were profiled", re.MULTILINE | re.IGNORECASE)


def header_row(lines: list[str]) -> tuple[int, str, list[str]] | None:
    """The line index, separator and cells of the table's header: the first line with an 'ID'
    and a 'Kernel Name' cell."""
    for i, line in enumerate(lines):
        if line.startswith("==") or "ID" not in line or "Kernel Name" not in line:
            continue
        for sep in (",", ";", "\t"):
            cells = [c.strip().lstrip("\ufeff").strip() for c in next(csv.reader([line], delimiter=sep), [])]
            if "ID" in cells and "Kernel Name" in cells:
                return i, sep, cells
    return None


def parse_csv(text: str, source: str = "report") -> Rows:
    """The launches in a CSV export of Nsight Compute, raw or details page (this module's
    docstring says which forms), or in ncu's text output. Raises UsageError (one line, naming
    `source`) when the text holds no such table, saying so where ncu profiled no kernel."""
    if not text.strip():
        raise UsageError(f"{source}: the file is empty")
    lines = text.lstrip("\ufeff").splitlines()
    found = header_row(lines)
    if found is None and nsight_text.looks_like_text(text):
        return _text_output(text, source)
    if found is None and nsight_text.is_summary(text):
        raise UsageError(f"{source}: ncu's --print-summary output (each kernel's minimum, maximum and average over "
                         "its invocations) holds no launch to place; print the report without --print-summary "
                         "(ncu -i REPORT.ncu-rep > report.txt) or export it (ncu -i REPORT.ncu-rep --csv --page raw)")
    if found is None and NO_KERNELS.search(text):
        raise UsageError(f"{source}: ncu profiled no kernel (it printed \"No kernels were profiled\"): the program "
                         "launched none, or ncu's filters (--kernel-name, --launch-skip, --launch-count, "
                         "--profile-from-start off) matched none; profile it again")
    if found is None:
        errors = [ln.split("==ERROR==", 1)[1].strip() for ln in lines if "==ERROR==" in ln]
        why = f" (ncu said: {errors[0]})" if errors else ""
        raise UsageError(f"{source}: not an Nsight Compute CSV export: no header row with \"ID\" and \"Kernel Name\", "
                         f"nor ncu's text output (a launch line and its sections){why}; "
                         "export one with `ncu --import REPORT --csv --page raw > report.csv`")
    start, sep, header = found
    if start == len(lines) - 1 and not text.endswith(("\n", "\r")):  # the file ends inside its header row
        raise UsageError(f"{source}: cut short inside its header row (a truncated file?): no launch follows the "
                         f"{len(header)} column names it holds; copy or export the report again")
    body = "\n".join(ln for ln in lines[start + 1:] if not ln.startswith("=="))
    records = [r for r in csv.reader(io.StringIO(body), delimiter=sep) if any(c.strip() for c in r)]
    again = next((r for r in records if r and r[0].strip() == "ID" and "Kernel Name" in r), None)
    if again is not None:
        raise UsageError(f"{source}: holds a second export after the first (another header row); import each report "
                         "on its own")
    cut = body.count('"') % 2 == 1  # the file ends inside a quoted value: its last row is cut short
    lost = ()
    if "Metric Name" in header and "Metric Value" in header:
        report = _details(header, records[:-1] if cut else records, source)
        if cut and records:  # its last metric's row, cut inside a quoted value, is left out: said, not silent
            last, name = records[-1], header.index("Metric Name")
            metric = last[name].strip() if name < len(last) and last[name].strip() else "a metric"
            lost = (f"the export ends inside a quoted value (cut short?): its last row ({metric} of launch "
                    f"{last[header.index('ID')].strip()}) is left out, and what that launch "
                    "lacks is worked out from its other rows or said missing; export the report again",)
    else:
        report = _raw(header, records, source, cut)
    rows, notes = check_rows(report.rows, source)
    return Rows(rows, report.read_with, report.notes + lost + tuple(notes), report.printed, bodies=report.bodies)


def _text_output(text: str, source: str) -> Rows:
    """ncu's text output (`nsight.text`), read as the details page it prints. A last launch cut
    short (the text ends inside one of its tables, or it lacks the sections every other launch
    ends with) is read from what it printed, with a note, where its duration is among that;
    else it is left out as cut short."""
    parsed = nsight_text.parse(text)
    report = _details(parsed.header, parsed.records, source)
    rows = report.rows
    cut_notes = []
    if rows and (parsed.cut or rows[-1].incomplete):
        last = rows[-1]
        last.incomplete = TIME not in last.values
        if not last.incomplete:
            where = f" inside its {parsed.cut_in} section" if parsed.cut and parsed.cut_in else ""
            cut_notes.append(f"the text ends{where} before launch {last.text.get('ID', len(rows) - 1)} "
                             f"({last.kernel[:60]}) is printed whole (cut short): that launch is read from what was "
                             "printed before the cut")
    rows, notes = check_rows(rows, source)
    return Rows(rows, "ncu's text output (ncu ./app, ncu -i REPORT)",
                tuple(parsed.notes) + tuple(cut_notes) + report.notes + tuple(notes), printed=report.printed,
                failed=tuple(parsed.failed), bodies=parsed.bodies)


def _raw(header: list[str], records: list[list[str]], source: str, cut: bool = False) -> Rows:
    id_col = header.index("ID")
    units, data = None, []
    for r in records:
        cell = r[id_col].strip() if id_col < len(r) else ""
        if not cell and units is None and not data:
            units = r
        elif int_cell(cell) is not None:
            data.append(r)
    cells = [c for r in data for c in r]
    mark = decimal_mark(cells)
    scales = [unit_scale(u) for u in units] if units else [1.0] * len(header)
    scales += [1.0] * (len(header) - len(scales))
    unknown: dict[str, str] = {}
    text_columns = {i for i, name in enumerate(header) if name in TEXT_COLUMNS or name in ("ID", "Process ID")}
    used = [reads(name) for name in header]
    plan = [column_plan(name, scales[i], units[i].strip() if units and i < len(units) else None)
            for i, name in enumerate(header)]
    numbers: dict[str, float | None] = {}  # a report repeats its cells: each distinct one read once
    rows, seen = [], set()
    nvtx_col = next((i for i, name in enumerate(header) if name.startswith(NVTX_COLUMN)), None)
    if nvtx_col is not None:
        text_columns.add(nvtx_col)
    for j, r in enumerate(data):
        row = Row(kernel=_cell(r, header, "Kernel Name"), process_id=int_cell(_cell(r, header, "Process ID")),
                  incomplete=len(r) < len(header) or (cut and j == len(data) - 1),
                  nvtx=nvtx_cell(r[nvtx_col]) if nvtx_col is not None and nvtx_col < len(r) else None)
        _check_once(seen, row.process_id, int_cell(r[id_col]), row.kernel, source)
        for i, (name, cell) in enumerate(zip(header, r)):
            if i in text_columns:
                row.text[name] = cell.strip()
                continue
            x = numbers[cell] if cell in numbers else numbers.setdefault(cell, number(cell, mark))
            if x is None:
                if cell.strip() and cell.strip().lower() not in NO_VALUE and ";" not in cell:
                    row.text[name] = cell.strip()
                if used[i] and damaged(cell):
                    row.bad[name] = cell.strip()
                continue
            keep_value(row, name, x, plan[i], unknown)
            if plan[i][0] is not None and plan[i][0] > 1 and (half := half_step(cell, plan[i][0])) is not None:
                row.rounding[name] = half
        rows.append(row)
    notes = unknown_units_note(unknown) + mark_note(cells)
    if units is None and rows:
        notes.append("the export has no unit row: its numbers are read as base units (ns, bytes, Hz)")
    return Rows(rows, "raw CSV export (ncu --csv --page raw)", tuple(notes))


def _check_once(seen: set, process_id: int | None, launch: int | None, kernel: str, source: str) -> None:
    """Raise UsageError when a launch (process, ID) comes twice: a repeated row, or exports joined."""
    key = (process_id, launch)
    if key in seen:
        raise UsageError(f"{source}: launch ID {launch} appears twice ({kernel[:60]}): a repeated row, or two "
                         "exports joined; import each report on its own")
    seen.add(key)


def _cell(r: list[str], header: list[str], name: str) -> str:
    i = header.index(name) if name in header else None
    return r[i].strip() if i is not None and i < len(r) else ""


METRICS_SECTION = "Command line profiler metrics"  # what --metrics collects: the counters themselves


def _mark_cut(by_launch: dict[tuple, Row], ends: dict[tuple, tuple[str, str]], shown: dict[tuple, set]) -> None:
    """Mark the details page's last launch cut short where every other launch ends with the same
    row, the last one lacks it and shows nothing the others do not: a file cut between two rows
    (no quote left open to tell), not a launch of another metric set (two runs' text joined)."""
    keys = list(by_launch)
    if len(keys) < 2 or keys[-1] not in shown:
        return
    others = {ends.get(k) for k in keys[:-1]}
    everything = set().union(*(shown.get(k, set()) for k in keys[:-1]))
    if len(others) == 1 and None not in others and others.pop() not in shown[keys[-1]] \
            and shown[keys[-1]] <= everything:  # a launch cut short shows only what the others show
        by_launch[keys[-1]].incomplete = True


def _details(header: list[str], records: list[list[str]], source: str) -> Rows:
    col = {name: i for i, name in enumerate(header)}
    need = ("ID", "Kernel Name", "Metric Name", "Metric Value")
    values = [r[col["Metric Value"]] for r in records if col["Metric Value"] < len(r)]
    mark = decimal_mark(values)
    by_launch: dict[tuple, Row] = {}
    unknown: dict[str, str] = {}
    ends: dict[tuple, tuple[str, str]] = {}  # per launch, the (section, label) it ends with
    shown: dict[tuple, set] = {}  # per launch, every (section, label) it shows
    for r in records:
        if len(r) <= max(col[n] for n in need):
            continue
        launch = int_cell(r[col["ID"]])
        if launch is None:
            continue
        pid = int_cell(r[col["Process ID"]]) if "Process ID" in col and col["Process ID"] < len(r) else None
        key = (pid, launch)
        row = by_launch.get(key)
        if row is None:
            row = by_launch[key] = Row(kernel=r[col["Kernel Name"]].strip(), process_id=pid)
            row.text["ID"] = str(launch)
            for name in TEXT_COLUMNS:
                if name in col and col[name] < len(r):
                    row.text[name] = r[col[name]].strip()
        elif row.kernel != r[col["Kernel Name"]].strip():
            raise UsageError(f"{source}: launch ID {launch} names two kernels ({row.kernel[:40]}; "
                             f"{r[col['Kernel Name']].strip()[:40]}): two exports joined? Import each report on its own")
        label = r[col["Metric Name"]].strip()
        if not label:
            continue  # a rule row
        unit = r[col["Metric Unit"]].strip() if "Metric Unit" in col and col["Metric Unit"] < len(r) else ""
        section = r[col["Section Name"]].strip() if "Section Name" in col and col["Section Name"] < len(r) else ""
        ends[key] = (section, label)
        shown.setdefault(key, set()).add((section, label))
        metric = details_metric(label, section, unit)
        cell = r[col["Metric Value"]]
        if metric is None:
            continue
        x = number(cell, mark)
        if x is None:
            if cell.strip() and cell.strip().lower() not in NO_VALUE and ";" not in cell:
                row.text[metric] = cell.strip()
            if reads(metric) and damaged(cell) and metric not in row.values:
                row.bad.setdefault(metric, cell.strip())
            continue
        if metric not in row.values:  # a label repeated in another section: the first reading stands
            scale = unit_scale(unit)
            store_value(row, metric, x, scale, unit, unknown)
            if metric in row.values and scale is not None and (half := half_step(cell, scale)) is not None:
                row.rounding[metric] = half
    _mark_cut(by_launch, ends, shown)
    sections = {section for seen in shown.values() for section, _ in seen} - {"", METRICS_SECTION}
    body = col.get("Body Item Label")
    bodies = body is not None and any(body < len(r) and r[body].strip() for r in records)
    return Rows(list(by_launch.values()), "details CSV export (ncu --csv, --page details)",
                tuple(unknown_units_note(unknown) + mark_note(values)), printed=bool(sections), bodies=bodies)
