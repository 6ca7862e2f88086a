"""One Nsight Compute report, whatever form it came in, read whole: its launches, the GPU they
are read against, how it was read and the notes on what was left out. `profile --import` and
`profile -- COMMAND` both read through `read`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
import tempfile
from pathlib import Path

from ..errors import UsageError
from ..model.device import DeviceSpec, from_preset
from ..model.units import plural
from .binary import read_report
from .checks import check_rates
from .compression import inner_suffix, unpacked
from .device import choose, one_gpu
from .dialect import decode
from .launches import Launch, from_rows
from .metrics import BODIES, INSTRUCTION, RAW, ROOFLINE_SECTION, WHERE, unrepeated
from .pages import parse_csv
from .rows import Rows
from .text import failed_note


BINARY_MAGIC = b"NVR\x00"  # the first bytes of every .ncu-rep (ncu 2019 to 2025)
PRINTED_ONLY_HEADLINES = ("fp32", "fp64", "l2", "l1")  # figures the raw page of a --set full report has


class NoLaunches(UsageError):
    """A report that holds no launch a roofline can place (none, or none with a duration)."""


@dataclass(frozen=True)
class Report:
    """A report read: its placeable `launches` (in launch order), the `device` they are read
    against and where it came from (`device_from`: 'report' for the report's own attributes or
    the GPU it names, 'gpu' for the --gpu preset or device file of a report that names none,
    'gpu over report' for one that names another GPU of the same compute capability), how the
    file was read (`read_with`) and one-line `notes` on what was left out and why."""

    launches: list[Launch]
    device: DeviceSpec
    device_from: str
    read_with: str
    notes: tuple[str, ...] = ()


def read_rows(path: Path, source: str | None = None) -> Rows:
    """Any Nsight Compute report made elsewhere: a binary `.ncu-rep` (by its name, or by its
    first bytes), else a CSV export of any page, form or version, or ncu's text output; any of
    them gzip-, xz- or bzip2-compressed (`report.csv.gz`: `nsight.compression`); messages name
    `source` (default: the path). Raises UsageError for a file that is none of them (or a
    compressed one that does not unpack whole), NcuError where a binary report needs a reader
    that is missing."""
    path = Path(path)
    source = source or str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    data, packed = unpacked(data, source)
    if data.startswith(BINARY_MAGIC):
        if packed is None:
            return read_report(path, source)
        with tempfile.TemporaryDirectory(prefix="roofline-") as folder:  # ncu_report reads files, not bytes
            inner = Path(folder) / "report.ncu-rep"
            inner.write_bytes(data)
            return read_report(inner, source)
    text = decode(data)
    suffix = inner_suffix(path.name) if packed else path.suffix.lower()
    if suffix == ".ncu-rep" and not ('"ID"' in text[:100_000] and "Kernel Name" in text[:100_000]):
        if packed is None:
            return read_report(path, source)  # a binary report of another make (a CSV export so named is read as one)
    if text.lstrip().startswith("{"):  # JSON: one of roofline's own files, or a profiler trace (ncu's text may
        # start with '[' of its process lines, never with '{')
        head = text[:200_000]
        try:
            json.loads(text)
            whole = True
        except (ValueError, RecursionError):
            whole = False  # cut short or damaged: named by what it began as, and said to be broken
        what = ("a PyTorch profiler trace, which `roofline show` and `comms` read, or `profile --import REPORT "
                "--trace` beside a report" if '"traceEvents"' in head else
                "a roofline file (results, profile or grade), which `roofline show`, `plot` and `compare` read"
                if '"schema"' in head else "JSON")
        if not whole:
            what = f"JSON that does not parse (cut short or damaged; it begins as {what})" if what != "JSON" \
                else "JSON that does not parse (cut short or damaged)"
        raise UsageError(f"{path}: {what}, not an Nsight Compute report (a .ncu-rep, a CSV export or ncu's text "
                         "output)")
    if "\x00" in text[:4000] or (b"\x00" in data[:4000] and not text.strip()):
        what = f"a {packed} file of binary data" if packed else "a binary file"
        raise UsageError(f"{path}: not a CSV export ({what}), nor an Nsight Compute report (whose first bytes are "
                         "'NVR')")
    return parse_csv(text, source)


def read(path: Path, gpu: str | None = None, source: str | None = None) -> Report:
    """The report in file `path` (`read_rows`: any form) as launches read against a GPU: the
    report's own (its device attributes, or the one GPU it names), else the preset or device
    file `gpu` names (`model.device.from_preset`; checked against the compute capability the
    report records: `nsight.device.choose`). Launches whose rates no kernel reaches on that GPU
    are left out with a note (`nsight.checks.check_rates`). Messages name `source` (default: the
    path). Raises UsageError for an unknown `gpu`, a missing or unreadable file, a GPU of
    another architecture, a report of launches on two kinds of GPU (`nsight.device.one_gpu`),
    or a report whose GPU is unknown; NoLaunches (a UsageError) for one
    with no placeable launch; NcuError where a binary report needs a reader that is missing."""
    path = Path(path)
    source = source or str(path)
    preset = from_preset(gpu) if gpu is not None else None
    if not path.is_file():
        raise UsageError(f"{path}: no such report file" if not path.exists() else f"{path}: not a report file")
    rows = read_rows(path, source)
    one_gpu(rows.rows, source)
    launches, left_out = from_rows(rows.rows)
    if not launches:
        if rows.failed and not rows.rows:
            raise NoLaunches(f"{source}: holds no launch that ran ({failed_note(rows.failed)}); profile it again once "
                             "it runs")
        held = f"{plural(len(rows.rows), 'launch', 'launches')} without a duration" if rows.rows else "no launch"
        raise NoLaunches(f"{source}: holds {held}, so nothing can be placed on a roofline; profile with "
                         f"{WHERE['time']}")
    notes = left_out + list(rows.notes)
    if rows.printed and any(k in x.missing for x in launches for k in PRINTED_ONLY_HEADLINES):
        notes.append("this form prints the sections' figures, not the counters behind them: the raw page of the "
                     "same report has every counter it holds (ncu --import REPORT.ncu-rep --csv --page raw)")
    device, device_from = choose(rows.rows, preset, source, notes)
    kept, over_peak = check_rates(rows.rows, device, source)
    if over_peak:  # those launches left out, the others read
        launches = from_rows(kept)[0]
        notes += over_peak
    used = made_with(rows)
    for launch in launches:  # hints name only what the report was not made with
        launch.missing.update({k: unrepeated(v, used) for k, v in launch.missing.items()})
    return Report(launches, device, device_from, rows.read_with, tuple(notes))


def made_with(rows: Rows) -> frozenset[str]:
    """The options a report shows it was made with (`metrics.BODIES`: the sections' bodies are
    there; `metrics.RAW`: the raw page, or a binary report, which holds every counter;
    `metrics.ROOFLINE_SECTION`: a launch holds the section's instruction rates)."""
    used = {BODIES} if rows.bodies else set()
    if RAW in rows.read_with or "ncu_report" in rows.read_with:
        used.add(RAW)
    if any(k.startswith(INSTRUCTION.split("{}")[0]) for row in rows.rows for k in row.values):
        used.add(ROOFLINE_SECTION)
    return frozenset(used)
