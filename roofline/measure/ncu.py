"""Nsight Compute (`ncu`) from the outside: run a command under it with roofline's one metric
list, and read every report people have, in every form and ncu version, into one row per
profiled launch. `run --profile` (`measure.counters`), `profile -- COMMAND` and `profile --import`
all go through here: one metric list (`model.ncu_metrics.COLLECT`), one parser, one error type
(`NcuError`), one permission check.

Running: `ncu --clock-control none --target-processes all --metrics <COLLECT> -o <report>
[--log-file ...] [filters] COMMAND ...` keeps the clocks as they are and follows child processes.

Reading (`read`):
- `.ncu-rep` through Nsight Compute's own Python interface (`ncu_report`, in ncu's
  `extras/python` folder), each value scaled by the unit the interface gives; where the
  interface is missing, through `ncu --import REPORT --csv --page raw --print-units base`.
- `--page raw` CSV of any metric set and ncu version: a unit row or base units; SI prefixes
  (K/M/G/T = 1000, Ki/Mi/Gi = 1024); times (ns, nsecond, us, usecond, ms, msecond, s, second);
  rates (`/s`, `/second`, `hz`, `cycle/nsecond`, `sector/us`); thousands separators, or a
  locale's decimal comma (`27.595.520`, `65,77`: decided for the whole file); `n/a`, `nan`,
  `no data` and per-instance lists as no value, except that text, `nan` or `inf` in a metric a
  roofline reads (`ncu_metrics.reads`, by exact name) is a damaged figure (`check_rows` leaves that
  launch out, naming it); the program's output, `==PROF==`/`==WARNING==`
  lines before or among the table; any CSV quoting, a `,`, `;` or tab separator, a byte-order
  mark, UTF-8 or UTF-16.
- `--page details` CSV (ID ... Section Name, Metric Name, Metric Unit, Metric Value; 11, 12, 15,
  20 or 21 columns; rule rows and trailing commas ignored), pivoted to one row per launch, labels
  mapped back to metrics (`model.ncu_metrics.details_metric`).
Values end up in base units: ns, bytes, Hz, instructions, per second for rates.
"""

from __future__ import annotations

import codecs
import csv
import glob
import importlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path

from ..errors import RunError, UsageError
from ..model.arch import limits_for_cc
from ..model.device import DeviceSpec, from_preset
from ..model.kernel_names import label
from ..model.launches import DEFAULT_LAUNCH_COUNT, Launch, from_reading
from ..model.ncu_metrics import COLLECT, DEVICE_NAMES, TIME, WHERE, Reading, details_metric, implausible, read, reads
from ..model.peaks import fp32_cores_per_sm
from ..model.presets import PRESETS, find_preset
from ..model.units import plural
from ..nsight import text as nsight_text
from .nvml import tensor_clock_mhz

INSTALL_HINT = ("install Nsight Compute (it comes with the CUDA toolkit, or from developer.nvidia.com/nsight-compute) "
                "and put `ncu` on PATH")
PERMISSION_FIX = ("allow profiling for all users: as root, `echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
                  "> /etc/modprobe.d/ncu-permissions.conf` and reboot (or run as root)")
TEXT_COLUMNS = ("Kernel Name", "Process Name", "Host Name", "Block Size", "Grid Size", "Device", "CC", "Context",
                "Stream", "Kernel Time")
NO_VALUE = {"", "n/a", "na", "nan", "-nan", "no data", "-", "inf", "-inf", "(null)"}
NON_FINITE = {"nan", "-nan", "+nan", "inf", "-inf", "+inf"}  # no value in general; a damaged cell where a roofline reads
REEXPORT = ("export the report again (ncu --import REPORT.ncu-rep --csv --page raw > report.csv) or profile the "
            "program again")


class NcuError(RunError):
    """ncu is missing, may not read the counters, or failed; the message says which in one line."""


def find_ncu() -> str:
    """The `ncu` executable on PATH. Raises NcuError saying how to get it."""
    exe = shutil.which("ncu")
    if exe is None:
        raise NcuError(f"ncu (Nsight Compute) is not on PATH; {INSTALL_HINT}")
    return exe


def check_permission(log: str) -> None:
    """Raise NcuError when ncu's output says it may not read the GPU's counters."""
    if "ERR_NVGPUCTRPERM" in log:
        raise NcuError(f"ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM); {PERMISSION_FIX}")


@dataclass(frozen=True)
class Options:
    """What to profile: `kernel_regex` (ncu `-k regex:`), launches to skip first and the most to
    profile (`launch_skip`, `launch_count`), and whether profiling starts with the program
    (`from_start`; off: only between cudaProfilerStart and cudaProfilerStop)."""

    kernel_regex: str | None = None
    launch_skip: int = 0
    launch_count: int = DEFAULT_LAUNCH_COUNT
    from_start: bool = True

    def check(self) -> "Options":
        """Raises UsageError for a regex that does not compile or counts out of range."""
        if self.kernel_regex is not None:
            if not self.kernel_regex.strip():
                raise UsageError("--kernel-regex is empty; give a pattern such as 'gemm|attn'")
            try:
                re.compile(self.kernel_regex)
            except re.error as exc:
                raise UsageError(f"--kernel-regex {self.kernel_regex!r} is not a regular expression: {exc}") from None
        if self.launch_skip < 0:
            raise UsageError(f"--launch-skip must be 0 or more, got {self.launch_skip}")
        if self.launch_skip > 10**9:
            raise UsageError(f"--launch-skip must be at most 1,000,000,000, got {self.launch_skip:,}")
        if not 1 <= self.launch_count <= 100_000:
            raise UsageError(f"--launch-count must be 1 to 100,000, got {self.launch_count}")
        return self

    def ncu_flags(self) -> list[str]:
        """These options as ncu's flags."""
        flags = ["--launch-skip", str(self.launch_skip), "--launch-count", str(self.launch_count)]
        if self.kernel_regex:
            flags += ["-k", f"regex:{self.kernel_regex}"]
        if not self.from_start:
            flags += ["--profile-from-start", "off"]
        return flags


@dataclass(frozen=True)
class ProfileRun:
    """A finished `ncu` run: the report it wrote (None when it wrote none), the command's exit
    code (ncu passes the application's on), and ncu's own lines ('==PROF==', '==ERROR==',
    '==WARNING==', the list of kernels it saw when none matched)."""

    report: Path | None
    returncode: int
    log: list[str]

    def warnings(self) -> list[str]:
        """ncu's warning and error lines, without the prefix (clock control notes left out)."""
        out = []
        for ln in self.log:
            for tag in ("==WARNING==", "==ERROR=="):
                if ln.startswith(tag) and "unmodified GPU clocks" not in ln:
                    out.append(ln[len(tag):].strip())
        return out

    def available_kernels(self) -> list[str]:
        """The kernel names ncu lists when a filter matched none of them."""
        names, inside = [], False
        for ln in self.log:
            if ln.startswith("Available Kernels"):
                inside = True
            elif inside and re.match(r"^\s*\d+\.\s", ln):
                names.append(ln.split(".", 1)[1].strip())
            elif inside:
                inside = False
        return names


def run(command: list[str], options: Options, report_base: Path, timeout_s: float | None = None,
        stdout_to_stderr: bool = False, capture: bool = False) -> ProfileRun:
    """Run `command` under ncu with `options` and the metric list `COLLECT`, writing
    `<report_base>.ncu-rep`. The command's own output passes through (its standard output to
    standard error with `stdout_to_stderr`; kept out of sight with `capture`); ncu's log is
    captured. Raises NcuError when ncu is missing, may not read the counters, or times out."""
    exe = find_ncu()
    log_path = Path(str(report_base) + ".log")
    cmd = [exe, "--clock-control", "none", "--target-processes", "all", "--metrics", ",".join(COLLECT),
           "--log-file", str(log_path), "-o", str(report_base), "-f", *options.ncu_flags(), *command]
    output = subprocess.DEVNULL if capture else 2 if stdout_to_stderr else None
    try:
        proc = subprocess.run(cmd, timeout=timeout_s, stdout=output, stderr=subprocess.DEVNULL if capture else None)
    except subprocess.TimeoutExpired:
        raise NcuError(f"the profile took longer than {timeout_s:g} s; profile fewer launches (--launch-count)") from None
    log = log_path.read_text(errors="replace").splitlines() if log_path.exists() else []
    check_permission("\n".join(log))
    report = Path(str(report_base) + ".ncu-rep")
    return ProfileRun(report if report.exists() else None, proc.returncode, log)


@dataclass
class Row:
    """One profiled launch as a report holds it: the kernel's name (demangled where the report
    has it so), metric values in base units, text cells ('Grid Size', 'CC',
    'device__attribute_display_name', ...), the process, whether the row was cut short, and the
    cells of metrics a roofline reads that hold no number (`bad`: metric -> the cell's text)."""

    kernel: str
    values: dict[str, float] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    process_id: int | None = None
    incomplete: bool = False
    bad: dict[str, str] = field(default_factory=dict)
    rounding: dict[str, float] = field(default_factory=dict)  # metric -> half the step its display rounds to
    left_out: bool = False  # for a damaged figure (`check_rows`, `check_rates`): kept for its place in the launch order

    @cached_property
    def reading(self) -> Reading:
        """`model.ncu_metrics.read` of the row's values and text, worked out once for the checks
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


def _half_step(cell: str, factor: float) -> float | None:
    """Half the step of a value shown with a unit prefix and a few digits (`8.19` Kbyte: 5 B), in
    base units; None for a value shown in base units, which is exact."""
    if factor <= 1:
        return None
    digits = re.search(r"[.,](\d+)\s*$", cell.strip())
    return 0.5 * factor * 10.0 ** -(len(digits.group(1)) if digits else 0)


@dataclass(frozen=True)
class Report:
    """The launches a report holds, how it was read, and one-line notes on what was left out."""

    rows: list[Row]
    read_with: str
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------- units and numbers

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3, "Ti": 1024.0**4}
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "nseconds": 1.0, "us": 1e3, "usecond": 1e3, "useconds": 1e3,
            "ms": 1e6, "msecond": 1e6, "mseconds": 1e6, "s": 1e9, "second": 1e9, "seconds": 1e9}
_WORDS = ("byte", "inst", "instruction", "cycle", "warp", "thread", "block", "sector", "request", "wavefront",
          "pass", "register", "issue", "SM", "cluster", "transaction", "branche", "branch", "count", "op", "flop")


def _factor(part: str) -> float | None:
    part = part.strip()
    if part in _TIME_NS:
        return _TIME_NS[part]
    if part.lower().endswith("hz") and part[:-2] in _PREFIX:
        return _PREFIX[part[:-2]]
    for word in _WORDS:
        for spelling in (word, word + "s"):
            if part.endswith(spelling) and part[: -len(spelling)] in _PREFIX:
                return _PREFIX[part[: -len(spelling)]]
    return None


def unit_scale(unit: str) -> float | None:
    """The factor that takes a value in `unit` as ncu writes it ('Mbyte', 'us', 'Ghz',
    'Kbyte/cycle', 'cycle/nsecond', 'Tbyte/s', 'register/thread', '%') to base units: ns for a
    time, Hz or per second for a rate, bytes, counts. None for a unit this reader does not know."""
    unit = unit.strip()
    if unit in ("", "%", "ratio"):
        return 1.0
    head, _, tail = unit.partition("/")
    top = _factor(head)
    if top is None:
        return None
    if not tail:
        return top
    if tail.strip() in _TIME_NS:
        return top / (_TIME_NS[tail.strip()] * 1e-9)  # per second
    bottom = _factor(tail)
    return top / bottom if bottom else None


_COMMA_DECIMAL = re.compile(r"[-+]?\d{1,3}(\.\d{3}){2,}(,\d+)?|[-+]?\d+,(\d{1,2}|\d{4,})|[-+]?\d{1,3}(\.\d{3})+,\d+")
_DOT_DECIMAL = re.compile(r"[-+]?\d{1,3}(,\d{3}){2,}(\.\d+)?|[-+]?\d+\.(\d{1,2}|\d{4,})|[-+]?\d{1,3}(,\d{3})+\.\d+")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_PLAIN = re.compile(r"[-+]?\d+(\.\d*)?([eE][-+]?\d+)?")  # a number as Python writes it, no separator


def decimal_mark(cells) -> str:
    """'.' or ',': the decimal mark of a file's numbers, by which reading more of them are
    unambiguous ('65,77' and '27.595.520' read only with a decimal comma; '342.75', '0.000000' and
    '1,234.5' only with a point); a point when none tells."""
    comma = dot = 0
    for c, times in Counter(c.strip() for c in cells).items():  # each distinct cell read once
        if len(c) > 40 or not c[:1].isdigit() and c[:1] not in "-+":
            continue
        if _COMMA_DECIMAL.fullmatch(c):
            comma += times
        elif _DOT_DECIMAL.fullmatch(c):
            dot += times
    return "," if comma > dot else "."


def ambiguous_marks(cells) -> str | None:
    """A cell whose value depends on the decimal mark ('117.344': 117 or 117,344) in a file where
    no cell tells the mark (`decimal_mark`), or None."""
    found = None
    for c in dict.fromkeys(c.strip() for c in cells):  # distinct cells, in the file's order
        if _COMMA_DECIMAL.fullmatch(c) or _DOT_DECIMAL.fullmatch(c):
            return None
        if found is None and re.fullmatch(r"[-+]?\d{1,3}[.,]\d{3}", c):
            found = c
    return found


def _mark_note(cells: list[str]) -> list[str]:
    cell = ambiguous_marks(cells)
    return [f"numbers such as '{cell}' read with a decimal point: nothing in the file tells a decimal comma "
            "(a comma-decimal locale) apart"] if cell else []


def number(cell: str, mark: str = ".") -> float | None:
    """A cell as a finite number, thousands separators dropped (`mark` is the decimal mark);
    None for no value ('n/a', 'nan', empty), a list of per-instance values, or text."""
    if _PLAIN.fullmatch(cell) and (mark == "." or "." not in cell):  # most cells: no separators, no spaces
        x = float(cell)
        return x if math.isfinite(x) else None
    text = cell.strip().replace("\u202f", "").replace("\xa0", "")
    if text.lower() in NO_VALUE or ";" in text:
        return None
    group = "," if mark == "." else "."
    if group in text and not re.fullmatch(rf"[-+]?\d{{1,3}}(\{group}\d{{3}})+(\{mark}\d*)?([eE][-+]?\d+)?", text):
        return None  # separators where no thousands are (a cell cut short): no number
    text = text.replace(",", "") if mark == "." else text.replace(".", "").replace(",", ".")
    if not _NUMBER.fullmatch(text):
        return None
    x = float(text)
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------- text

def decode(data: bytes) -> str:
    """The text of an export: UTF-16 (with or without a byte-order mark), UTF-8 (with or without
    one), else Windows-1252."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    head = data[:4000]
    if head.count(b"\x00") > len(head) // 4:
        return data.decode("utf-16-le" if head[1:2] == b"\x00" else "utf-16-be", errors="replace")
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _header(lines: list[str]) -> tuple[int, str, list[str]] | None:
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


def parse_csv(text: str, source: str = "report") -> Report:
    """The launches in a CSV export of Nsight Compute, raw or details page (this module's
    docstring says which forms). Raises UsageError (one line, naming `source`) when the text holds
    no such table."""
    lines = text.lstrip("\ufeff").splitlines()
    found = _header(lines)
    if found is None and nsight_text.looks_like_text(text):
        return _text(text, source)
    if found is None:
        errors = [ln.split("==ERROR==", 1)[1].strip() for ln in lines if "==ERROR==" in ln]
        why = f" (ncu said: {errors[0]})" if errors else ""
        raise UsageError(f"{source}: not an Nsight Compute CSV export: no header row with \"ID\" and \"Kernel Name\", "
                         f"nor ncu's text output (a launch line and its sections){why}; "
                         "export one with `ncu --import REPORT --csv --page raw > report.csv`")
    start, sep, header = found
    body = "\n".join(ln for ln in lines[start + 1:] if not ln.startswith("=="))
    records = [r for r in csv.reader(io.StringIO(body), delimiter=sep) if any(c.strip() for c in r)]
    again = next((r for r in records if r and r[0].strip() == "ID" and "Kernel Name" in r), None)
    if again is not None:
        raise UsageError(f"{source}: holds a second export after the first (another header row); import each report "
                         "on its own")
    cut = body.count('"') % 2 == 1  # the file ends inside a quoted value: its last row is cut short
    if "Metric Name" in header and "Metric Value" in header:
        report = _details(header, records[:-1] if cut else records, source)
    else:
        report = _raw(header, records, source, cut)
    rows, notes = check_rows(report.rows, source)
    return Report(rows, report.read_with, report.notes + tuple(notes))


def _text(text: str, source: str) -> Report:
    """ncu's text output (`nsight.text`), read as the details page it prints."""
    parsed = nsight_text.parse(text)
    report = _details(parsed.header, parsed.records, source)
    rows = report.rows
    if parsed.cut and rows:
        rows[-1].incomplete = True
    rows, notes = check_rows(rows, source)
    return Report(rows, "ncu's text output (ncu ./app, ncu -i REPORT)", tuple(parsed.notes) + report.notes + tuple(notes))


def _damaged(cell: str) -> bool:
    """Whether a cell of a metric a roofline reads, which gave no number, is damaged rather than
    not collected: text, or a non-finite number ('n/a', empty cells and per-instance lists are not
    collected)."""
    text = cell.strip().lower()
    return text in NON_FINITE or (text not in NO_VALUE and ";" not in text)


def _launch(row: Row, index: int) -> str:
    """'launch 12 (elementwise_kernel [direct_copy_kernel_cuda])': the row's launch ID (else its
    position) and the name a table shows."""
    return f"launch {row.text.get('ID') or index} ({label(row.kernel) if row.kernel else 'no kernel name'})"


def _left_out(found: list[tuple[int, str]], rows: list[Row], source: str, why: str) -> tuple[list[Row], list[str]]:
    """The rows, those `found` ((row index, what is wrong) each) marked `left_out` (they keep
    their places in the launch order), and a note naming them; a report left with none is
    refused (UsageError) naming the first and how many more."""
    if not found:
        return rows, []
    first = {}
    for i, what in found:
        first.setdefault(i, what)
    for i in first:
        rows[i].left_out = True
    if not any(not row.incomplete and not row.left_out for row in rows):
        more = f" ({plural(len(found) - 1, 'more damaged figure')} after it)" if len(found) > 1 else ""
        raise UsageError(f"{source}: {found[0][1]}{more}; {why}")
    shown = "; ".join(list(first.values())[:3]) + (f"; and {len(first) - 3} more" if len(first) > 3 else "")
    return rows, [f"{plural(len(first), 'launch', 'launches')} left out for a damaged figure in a metric the "
                  f"roofline reads ({why.split(':')[0]}): {shown}"]


def check_rows(rows: list[Row], source: str) -> tuple[list[Row], list[str]]:
    """The rows, those with a damaged figure where a roofline reads one marked `left_out` (`ncu_metrics.reads`,
    by exact metric name): a metric cell that holds text, 'nan' or 'inf', a negative count, time
    or size, or a duration beyond any real launch (`ncu_metrics.implausible`); and one note naming
    each launch left out (its ID and kernel), the metric and the value. Rows cut short are left
    out elsewhere, not checked. Raises UsageError, naming the first damaged figure, when no launch
    is left."""
    found = []
    for i, row in enumerate(rows):
        if row.incomplete or row.left_out:
            continue
        for name, cell in row.bad.items():
            found.append((i, f"{_launch(row, i)}: {name} is {cell!r}, not a number"))
        for name, x in row.values.items():
            if x < 0 and reads(name):
                found.append((i, f"{_launch(row, i)}: {name} is {x:g}, below zero"))
        why = implausible(row.reading)
        if why:
            found.append((i, f"{_launch(row, i)}: {why}"))
    return _left_out(found, rows, source, f"the report is damaged: {REEXPORT}")


def check_rates(rows: list[Row], device: DeviceSpec, source: str) -> tuple[list[Row], list[str]]:
    """The rows, those whose work or bytes over their time exceed `device`'s theoretical
    peaks (per precision; DRAM and L2 bandwidth) by more than `ncu_metrics.OVER_PEAK_FACTOR` marked
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
            found.append((i, f"{_launch(row, i)}: {why}, which no kernel reaches on {device.name}"))
    return _left_out(found, rows, source, "the report is damaged, or was recorded on another GPU")


def _int(cell: str) -> int | None:
    x = number(cell)
    return int(x) if x is not None and x == int(x) else None


def _raw(header: list[str], records: list[list[str]], source: str, cut: bool = False) -> Report:
    id_col = header.index("ID")
    units, data = None, []
    for r in records:
        cell = r[id_col].strip() if id_col < len(r) else ""
        if not cell and units is None and not data:
            units = r
        elif _int(cell) is not None:
            data.append(r)
    cells = [c for r in data for c in r]
    mark = decimal_mark(cells)
    scales = [unit_scale(u) for u in units] if units else [1.0] * len(header)
    scales += [1.0] * (len(header) - len(scales))
    unknown: dict[str, str] = {}
    text_columns = {i for i, name in enumerate(header) if name in TEXT_COLUMNS or name in ("ID", "Process ID")}
    used = [reads(name) for name in header]
    plan = [_column_plan(name, scales[i], units[i].strip() if units and i < len(units) else None)
            for i, name in enumerate(header)]
    numbers: dict[str, float | None] = {}  # a report repeats its cells: each distinct one read once
    rows, seen = [], set()
    for j, r in enumerate(data):
        row = Row(kernel=_cell(r, header, "Kernel Name"), process_id=_int(_cell(r, header, "Process ID")),
                  incomplete=len(r) < len(header) or (cut and j == len(data) - 1))
        _check_once(seen, row.process_id, _int(r[id_col]), row.kernel, source)
        for i, (name, cell) in enumerate(zip(header, r)):
            if i in text_columns:
                row.text[name] = cell.strip()
                continue
            x = numbers[cell] if cell in numbers else numbers.setdefault(cell, number(cell, mark))
            if x is None:
                if cell.strip() and cell.strip().lower() not in NO_VALUE and ";" not in cell:
                    row.text[name] = cell.strip()
                if used[i] and _damaged(cell):
                    row.bad[name] = cell.strip()
                continue
            _keep(row, name, x, plan[i], unknown)
            if plan[i][0] is not None and plan[i][0] > 1 and (half := _half_step(cell, plan[i][0])) is not None:
                row.rounding[name] = half
        rows.append(row)
    notes = _unknown_units(unknown) + _mark_note(cells)
    if units is None and rows:
        notes.append("the export has no unit row: its numbers are read as base units (ns, bytes, Hz)")
    return Report(rows, "raw CSV export (ncu --csv --page raw)", tuple(notes))


def _unknown_units(unknown: dict[str, str]) -> list[str]:
    """A note naming the metrics left out for a unit `unit_scale` does not know, or one of the
    wrong kind for the metric (none: no note)."""
    if not unknown:
        return []
    return [f"{plural(len(unknown), 'metric')} in units this reader does not know or that do not fit them, left out: "
            + ", ".join(f"{k} ({v or 'no unit'})" for k, v in list(unknown.items())[:3])]


def _check_once(seen: set, process_id: int | None, launch: int | None, kernel: str, source: str) -> None:
    """Raise UsageError when a launch (process, ID) comes twice: a repeated row, or exports joined."""
    key = (process_id, launch)
    if key in seen:
        raise UsageError(f"{source}: launch ID {launch} appears twice ({kernel[:60]}): a repeated row, or two "
                         "exports joined; import each report on its own")
    seen.add(key)


_KINDS = (  # (metric pattern, what its unit must be): a value in a unit of another kind is not read
    (re.compile(r"gpu__time_duration"), "time"),
    (re.compile(r"(cycles_elapsed\.avg\.per_second|__frequency)$"), "rate"),
    (re.compile(r"__bytes.*\.per_second$"), "rate"),
    (re.compile(r"__bytes[\w]*(\.sum|\.avg|\.max|\.min)?$"), "bytes"),
    (re.compile(r"pct"), "percent"),
)


@lru_cache(maxsize=4096)  # asked once per cell: a metric's unit is the same on every row
def _unit_fits(name: str, unit: str) -> bool:
    for pattern, kind in _KINDS:
        if pattern.search(name):
            if kind == "time":
                return unit in _TIME_NS
            if kind == "rate":
                return unit.lower().endswith("hz") or unit.partition("/")[2].strip() in _TIME_NS
            if kind == "bytes":
                return "byte" in unit and "/" not in unit
            return unit == "%"
    return True


def _cell(r: list[str], header: list[str], name: str) -> str:
    i = header.index(name) if name in header else None
    return r[i].strip() if i is not None and i < len(r) else ""


def _column_plan(name: str, scale: float | None, unit: str | None) -> tuple[float | None, str | None]:
    """How a metric's values are stored: (the factor to base units, None when they are left out;
    the unit to name in the note of metrics left out, None when none is due). Base units where
    the export gives no unit (`unit` None); device attributes in the units their names say (kHz,
    bytes). A value in a unit this reader does not know, or of the wrong kind for its metric (a
    duration in bytes), is left out, and named if a roofline reads that metric."""
    if name.startswith("device__attribute_"):
        if unit and unit.lower().endswith("hz") and scale is not None:
            scale /= 1e3  # a clock printed in Hz or MHz: the attribute's own unit is kHz
        return (scale if scale is not None else 1.0), None
    if scale is None or (unit is not None and not _unit_fits(name, unit)):
        return None, (unit or "") if reads(name) else None
    return scale, None


def _store(row: Row, name: str, x: float, scale: float | None, unit: str | None, unknown: dict[str, str]) -> None:
    """`x` of metric `name` in `unit` (`scale` to base units) kept in `row` or noted (`_keep`)."""
    _keep(row, name, x, _column_plan(name, scale, unit), unknown)


def _keep(row: Row, name: str, x: float, plan: tuple[float | None, str | None], unknown: dict[str, str]) -> None:
    """`x` of metric `name` kept in `row` as its `_column_plan` says, or its unit noted in `unknown`."""
    factor, unfit = plan
    if factor is not None:
        row.values[name] = x * factor
    elif unfit is not None:
        unknown[name] = unfit


def _details(header: list[str], records: list[list[str]], source: str) -> Report:
    col = {name: i for i, name in enumerate(header)}
    need = ("ID", "Kernel Name", "Metric Name", "Metric Value")
    values = [r[col["Metric Value"]] for r in records if col["Metric Value"] < len(r)]
    mark = decimal_mark(values)
    by_launch: dict[tuple, Row] = {}
    unknown: dict[str, str] = {}
    for r in records:
        if len(r) <= max(col[n] for n in need):
            continue
        launch = _int(r[col["ID"]])
        if launch is None:
            continue
        pid = _int(r[col["Process ID"]]) if "Process ID" in col and col["Process ID"] < len(r) else None
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
        metric = details_metric(label, section, unit)
        cell = r[col["Metric Value"]]
        if metric is None:
            continue
        x = number(cell, mark)
        if x is None:
            if cell.strip() and cell.strip().lower() not in NO_VALUE and ";" not in cell:
                row.text[metric] = cell.strip()
            if reads(metric) and _damaged(cell) and metric not in row.values:
                row.bad.setdefault(metric, cell.strip())
            continue
        if metric not in row.values:  # a label repeated in another section: the first reading stands
            scale = unit_scale(unit)
            _store(row, metric, x, scale, unit, unknown)
            if metric in row.values and scale is not None and (half := _half_step(cell, scale)) is not None:
                row.rounding[metric] = half
    return Report(list(by_launch.values()), "details CSV export (ncu --csv, --page details)",
                  tuple(_unknown_units(unknown) + _mark_note(values)))


# ---------------------------------------------------------------- binary reports

def _ncu_report_module():
    """Nsight Compute's Python report interface, found beside the `ncu` on PATH, or None."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    exe = shutil.which("ncu")
    if exe is None:
        return None
    real = Path(os.path.realpath(exe)).parent
    folders = [real / "extras" / "python", real.parent / "extras" / "python",
               *(Path(p) for p in glob.glob(str(real.parent / "nsight-compute*" / "extras" / "python"))),
               *(Path(p) for p in sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True))]
    for folder in folders:
        if (folder / "ncu_report.py").exists():
            sys.path.insert(0, str(folder))
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(str(folder))
    return None


NUMERIC_KINDS = ("ValueKind_FLOAT", "ValueKind_DOUBLE", "ValueKind_UINT32", "ValueKind_UINT64")


def _module_rows(path: str) -> list[dict]:
    """The launches of report `path` through ncu's Python module, as plain data: kernel name,
    numeric metrics with their units, text metrics. Runs in a child process (`read_report`):
    the module is native code, and a fault in it must not take roofline down."""
    module = _ncu_report_module()
    if module is None:
        raise ImportError("ncu_report not found")
    ctx = module.load_report(path)
    demangled = getattr(module.IAction, "NameBase_DEMANGLED", None)
    numeric = {getattr(module.IMetric, k) for k in NUMERIC_KINDS if hasattr(module.IMetric, k)}
    string = getattr(module.IMetric, "ValueKind_STRING", None)
    out = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            row: dict = {"kernel": action.name(demangled) if demangled is not None else action.name(),
                         "values": {}, "text": {}}
            for name in action.metric_names():
                if not re.match(r"[a-z0-9_]+__\w", name):
                    continue  # sampled series and rule data, not launch metrics
                metric = action.metric_by_name(name)
                if metric is None or not metric.has_value():
                    continue
                kind = metric.kind()
                if kind == string:
                    row["text"][name] = metric.as_string()
                elif kind in numeric:
                    value = metric.as_double()
                    if math.isfinite(value):
                        row["values"][name] = [value, metric.unit() or ""]
            out.append(row)
    return out


def _rows_from_module(path: Path) -> list[Row] | None:
    """`_module_rows` of `path` from a child Python process, as rows in base units; None when
    the module is missing, fails or faults."""
    if _ncu_report_module() is None:
        return None
    try:
        proc = subprocess.run([sys.executable, "-m", "roofline.measure.ncu", str(path)], capture_output=True,
                              text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0 or not proc.stdout.startswith("["):
        return None
    rows, unknown = [], {}
    for item in json.loads(proc.stdout):
        row = Row(kernel=item["kernel"], text=item["text"])
        for name, (value, unit) in item["values"].items():
            _store(row, name, value, unit_scale(unit), unit, unknown)
        pid = row.values.get("launch__process_id")
        row.process_id = int(pid) if pid is not None else None
        rows.append(row)
    return rows


def read_report(path: Path) -> Report:
    """The launches in an `.ncu-rep` report: through NVIDIA's report reader `ncu_report` (the
    ncu-report package, or the module beside an ncu on PATH; in a child process), else ncu's CSV
    export. Raises NcuError when neither is installed, UsageError when the file is not a report
    they can read."""
    rows = _rows_from_module(path)
    if rows:  # none: no module, not a report it knows, or it failed; ncu itself then says why
        rows, notes = check_rows(rows, str(path))
        return Report(rows, "Nsight Compute's Python report interface (ncu_report)", tuple(notes))
    tried = _ncu_report_module() is not None
    exe = shutil.which("ncu")
    if exe is None and tried:
        raise UsageError(f"{path}: NVIDIA's report reader (ncu_report) cannot read it as an Nsight Compute report "
                         "(it failed on it, or the file is no report)")
    if exe is None:
        raise NcuError(f"reading {path} (a binary .ncu-rep) needs NVIDIA's report reader: in the roofline folder run "
                       "pip install '.[nsight]' (the ncu-report package; no Nsight Compute needed), or put ncu on the "
                       "PATH; or export it where ncu is, with `ncu --import REPORT --csv --page raw > report.csv`, and "
                       "import the CSV")
    proc = subprocess.run([exe, "--import", str(path), "--csv", "--page", "raw", "--print-units", "base"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        why = (proc.stderr or proc.stdout).strip().splitlines()
        raise UsageError(f"{path}: ncu cannot read it as a report ({why[-1] if why else 'no output'})")
    report = parse_csv(proc.stdout, str(path))
    note = ("Nsight Compute's Python report interface could not read it: read through ncu's CSV export",) if tried else ()
    return Report(report.rows, "ncu --import --csv --page raw", report.notes + note)


def read_file(path: Path) -> Report:
    """Any Nsight Compute report made elsewhere: a binary `.ncu-rep` (by its name, or a file
    that is not text), else a CSV export of any page, form or version. Raises UsageError for a
    file that is neither, NcuError where a binary report needs an ncu that is missing."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    text = decode(data)
    if path.suffix.lower() == ".ncu-rep" and not ('"ID"' in text[:100_000] and "Kernel Name" in text[:100_000]):
        return read_report(path)  # a binary report (a CSV export so named is read as one)
    if "\x00" in text[:4000] or (b"\x00" in data[:4000] and not text.strip()):
        raise UsageError(f"{path}: not a CSV export (a binary file); give an Nsight Compute report a .ncu-rep name")
    return parse_csv(text, str(path))


# ---------------------------------------------------------------- the GPU a report names

def _attr(row: Row, name: str) -> float | None:
    value = row.values.get(f"device__attribute_{name}")
    return float(value) if value is not None and value > 0 else None


def report_cc(rows: list[Row]) -> str | None:
    """The compute capability a report records ('9.0'), or None."""
    row = rows[0]
    major = row.values.get("device__attribute_compute_capability_major")
    minor = row.values.get("device__attribute_compute_capability_minor")
    if major and minor is not None and minor >= 0:
        return f"{int(major)}.{int(minor)}"
    cc = row.text.get("CC", "").strip().replace(",", ".")
    return cc if re.fullmatch(r"\d+\.\d+", cc) else None


def presets_of(cc: str | None) -> str:
    """The preset names of compute capability `cc` (all of them when it is unknown), for a message."""
    names = [p.aliases[0] if p.aliases else p.name for p in PRESETS if cc is None or p.compute_capability == cc]
    return ", ".join(names) if names else "none"


def _named_preset(rows: list[Row], cc: str | None, sm: float | None) -> DeviceSpec | None:
    """The preset of the one GPU a report without device attributes names (the NUMA Affinity
    section's 'Device Names', '1 (NVIDIA H200)', on the details page and in the text), where its
    compute capability and SM count are the report's; else None."""
    found = re.fullmatch(r"\s*1\s*\((?P<name>[^,()]+)\)\s*", rows[0].text.get(DEVICE_NAMES, ""))
    preset = find_preset(found["name"].strip()) if found else None
    if preset is None or (cc is not None and preset.compute_capability != cc) or (sm and int(sm) != preset.sm_count):
        return None
    device = from_preset(found["name"].strip())
    return replace(device, source=f"{device.source}; the report names this GPU ({found['name'].strip()}) but holds "
                                  "no device attributes")


def device_from_rows(rows: list[Row], source: str = "report") -> DeviceSpec:
    """The GPU a report's first launch ran on, from its device attributes: name, SM count, max SM
    and memory clocks, bus width, memory and L2 size (peaks by `model.roofs` and `model.peaks`,
    FP32 cores from the per-SM count of the architecture), per-SM limits for the occupancy
    calculator. Raises UsageError when the report does not hold them, naming the presets of its
    compute capability to give with --gpu."""
    row = rows[0]
    name = str(row.text.get("device__attribute_display_name") or row.text.get("device__attribute_device_name")
               or "").strip()
    if not name and not re.fullmatch(r"\d*", row.text.get("Device", "").strip()):
        name = row.text["Device"].strip()
    sm = _attr(row, "multiprocessor_count") or row.values.get("launch__sm_count")
    cc = report_cc(rows)
    clock_khz = _attr(row, "max_gpu_frequency_khz") or _attr(row, "clock_rate")
    mem_khz = _attr(row, "max_mem_frequency_khz") or _attr(row, "memory_clock_rate")
    bus = _attr(row, "global_memory_bus_width") or _attr(row, "fb_bus_width")
    if not (name and sm and cc and clock_khz and mem_khz and bus):
        named = _named_preset(rows, cc, sm)
        if named is not None:
            return named
        had = f"compute capability {cc}" if cc else "no compute capability"
        raise UsageError(f"{source}: the report holds no device attributes ({had}) to take the GPU's peaks from; "
                         f"name it with --gpu, one of: {presets_of(cc)}")
    try:
        limits = limits_for_cc(cc, **{key: int(v) for key, attr in (
            ("max_warps_per_sm", "max_warps_per_multiprocessor"), ("max_blocks_per_sm", "max_blocks_per_multiprocessor"),
            ("registers_per_sm", "max_registers_per_multiprocessor"), ("max_registers_per_block", "max_registers_per_block"),
            ("smem_per_sm_bytes", "max_shared_memory_per_multiprocessor"),
            ("max_smem_per_block_optin_bytes", "max_shared_memory_per_block_optin"),
            ("reserved_smem_per_block_bytes", "reserved_shared_memory_per_block"),
            ("max_threads_per_block", "max_threads_per_block")) if (v := _attr(row, attr)) is not None})
    except UsageError as exc:
        raise UsageError(f"{source}: recorded on {name}: {exc}") from None
    cores = fp32_cores_per_sm(cc) * int(sm)
    sm_mhz, mem_mhz = clock_khz / 1e3, mem_khz / 1e3
    l2 = _attr(row, "l2_cache_size")
    return DeviceSpec.build(
        name=name, compute_capability=cc, sm_count=int(sm), fp32_cores=cores, sm_clock_mhz=sm_mhz,
        mem_clock_mhz=mem_mhz, bus_width_bits=int(bus), limits=limits,
        source=f"device attributes in the Nsight Compute report ({source}); FP32 cores {fp32_cores_per_sm(cc)} per SM",
        memory_bytes=int(_attr(row, "total_memory") or 0) or None, tensor_clock_mhz=tensor_clock_mhz(name),
        l2_bytes=int(l2) if l2 else None,
    )


# ---------------------------------------------------------------- rows to launches

def _demangled(names: list[str]) -> dict[str, str]:
    """Mangled names ('_Z...', as `--print-kernel-base mangled` exports them) demangled by
    c++filt where it is installed; the others as they are."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    exe = shutil.which("c++filt")
    if not mangled or exe is None:
        return {}
    proc = subprocess.run([exe], input="\n".join(mangled), capture_output=True, text=True)
    out = proc.stdout.splitlines()
    return dict(zip(mangled, out)) if proc.returncode == 0 and len(out) == len(mangled) else {}


def launch_order(rows: list[Row]) -> list[int]:
    """Each row's 0-based place in the report's launch sequence: by launch ID where every row has
    a distinct one, else as the report lists them (ncu lists launches in the order they ran).
    Rows left out later keep their places, so a gap shows where a launch is missing."""
    ids = [_int(r.text.get("ID", "")) for r in rows]
    if all(i is not None for i in ids) and len(set(ids)) == len(ids):
        rank = {i: n for n, i in enumerate(sorted(ids))}
        return [rank[i] for i in ids]
    return list(range(len(rows)))


def launches(rows: list[Row]) -> tuple[list[Launch], list[str]]:
    """The launches of report rows that can be placed on a roofline (`model.ncu_metrics.read`,
    `model.launches.from_reading`), and one-line notes on the rows left out: cut short, or
    without a name or a duration."""
    demangled = _demangled([r.kernel for r in rows])
    order = launch_order(rows)
    out, cut, timeless, bad = [], 0, 0, []
    for i, row in enumerate(rows):
        if row.left_out:  # a damaged figure: said where it was found
            continue
        if row.incomplete:
            cut += 1
            continue
        try:
            out.append(from_reading(demangled.get(row.kernel, row.kernel), row.reading, row.process_id,
                                    order[i]))
        except ValueError:
            given = row.text.get(TIME, row.values.get(TIME))
            if given is None or not row.kernel:
                timeless += 1
            else:  # a duration is there, but no duration: zero (`check_rows` left the damaged ones out)
                bad.append(f"{_launch(row, i)} has {TIME} {given!r}")
    notes = []
    if cut:
        notes.append(f"{plural(cut, 'report row')} left out: cut short (a truncated file?)")
    if timeless:
        notes.append(f"{plural(timeless, 'launch', 'launches')} left out: no kernel name or no duration "
                     f"({WHERE['time']} has it)")
    if bad:
        notes.append(f"{plural(len(bad), 'launch', 'launches')} left out for a duration that is none: " + "; ".join(bad[:3]))
    return out, notes


if __name__ == "__main__":  # the child process of `_rows_from_module`
    print(json.dumps(_module_rows(sys.argv[1])))
