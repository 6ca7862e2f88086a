"""Nsight Compute's text output, the form people paste into issues, forum posts and READMEs:
`ncu ./app` and `ncu -i REPORT.ncu-rep`, with or without `--print-details all`, turned into the
records of the details page (`ncu --csv`), which `nsight.pages` reads. Pure: text in, rows out.

What a text report looks like (ncu 2019 to 2026): a process line `[PID] NAME@HOST`; per launch a
line `  KERNEL (GX, GY, GZ)x(BX, BY, BZ), Context C, Stream S, Device D, CC M.m` (older versions
print `  KERNEL, DATE TIME, Context C, Stream S` and no launch size); then per section a line
`    Section: NAME` and tables framed by lines of dashes, one dash run per column (metric name,
unit, value; the oldest versions print no header row), rule text (its results separated by a
line of two dash runs) and the bodies' sub-tables
between them. Around it: the program's own output and ncu's `==PROF==`, `==WARNING==` and
`==ERROR==` lines. Values keep their thousands separators and markers; `(!)` is dropped. A launch
whose every value is `nan` or `n/a` (what ncu prints for a launch that failed, after `==ERROR==
LaunchFailed`) is reported as failed and given no rows; sections before any launch line (a text
whose start was cut) are left out with a note. The text has no launch IDs: launches are
numbered in the order printed, which is the order they ran.

Pastes move things about: a launch line is found at any indentation (column 0 in a README's
fenced block, one or four spaces in a note) and the tables below it are read by their own dash
lines; free text after a value (`305.41  # slow`) is a note beside it, not part of it; a text cut
inside a table keeps the rows printed before the cut (a last line without its line end may be
cut inside its value, and is dropped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HEADER = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
          "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
PROCESS = re.compile(r"^\s*\[(?P<pid>\d+)\]\s+(?P<name>.+?)(?:@(?P<host>\S+))?\s*$")
LAUNCH = re.compile(r"^[ \t]*(?P<kernel>\S.*?)(?:\s+\((?P<grid>\d+,\s*\d+,\s*\d+)\)x\((?P<block>\d+,\s*\d+,\s*\d+)\))?"
                    r"(?:,\s+\d{4}-\w{3}-\d{1,2}\s+[\d:]+)?,\s+Context\s+(?P<context>\d+),\s+Stream\s+(?P<stream>\d+)"
                    r"(?:,\s+Device\s+(?P<device>\d+))?(?:,\s+CC\s+(?P<cc>\d+\.\d+))?.*$")
SECTION = re.compile(r"^\s*Section:\s+(?P<name>.+?)\s*$")
DASHES = re.compile(r"^\s*-+(\s+-+)+\s*$")
MARKER = re.compile(r"^\(!\)\s*")  # ncu's mark on a value outside its expected range
# A value and free text a person wrote after it ('305.41  # note', '1.47 ms (warm)'): the text
# begins with a mark or a letter, never with '(' or ';' (ncu's own '1 (NVIDIA H200)', '32; 32').
ANNOTATED = re.compile(r"^(?P<value>[-+]?\d[\d.,]*(?: \d{3})*(?:[eE][-+]?\d+)?)\s+(?P<note>(?:#|//|--|<-|[A-Za-z]).*)$")
BODY = re.compile(r"^\s*Table Name\s*:")  # a section body's table, printed with --print-details all


# `--print-summary`: statistics over launches, under a line per kernel that ends ', Invocations 12' (per-kernel)
# or, with the launch's shape, ', Block Size 256, Grid Size 8192, 1 invocations'
SUMMARY = re.compile(r"^\s*\S.*, (?:Invocations \d+|\d+ invocations)\s*$", re.I)


def is_summary(text: str) -> bool:
    """Whether `text` is ncu's `--print-summary` output: per kernel, the minimum, maximum and
    average over its invocations, not the launches themselves."""
    return any(SUMMARY.match(line) for line in text.splitlines()[:5000]) and "Minimum" in text and "Average" in text


def looks_like_text(text: str) -> bool:
    """Whether `text` holds ncu's text output: a launch line followed by a section line."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if LAUNCH.match(line) and any(SECTION.match(x) for x in lines[i + 1:i + 6]):
            return True
    return False


@dataclass
class _Launch:
    fields: dict[str, str]
    rows: list[list[str]] = field(default_factory=list)


@dataclass
class TextReport:
    """The details-page records of a text report (`HEADER` columns), one-line notes (failed
    launches, sections without a launch, text after values), whether it was cut short inside a
    table (and in which section), its failed launches ('launch 0 (render(...))'), which have no
    records, and whether it holds the sections' bodies (`--print-details all`)."""

    header: list[str]
    records: list[list[str]]
    notes: list[str]
    cut: bool  # the last launch's table ends without its closing line (the file was cut)
    failed: list[str] = field(default_factory=list)
    cut_in: str = ""  # the section whose table the text ends in, where `cut`
    bodies: bool = False  # printed with --print-details all: the sections' body tables are there


def _spans(dashes: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"-+", dashes)]


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """A table row split at its columns: each column runs from its dash run's start to the next's
    (names are left-aligned, units and values right-aligned under their dashes)."""
    cells = []
    for i, (start, _) in enumerate(spans):
        end = spans[i + 1][0] if i + 1 < len(spans) else len(line)
        cells.append(line[start:end].strip())
    return cells


def parse(text: str) -> TextReport:
    """The launches of ncu's text output as details-page records (see the module docstring)."""
    launches: list[_Launch] = []
    process = {"Process ID": "", "Process Name": "", "Host Name": ""}
    current: _Launch | None = None
    section = ""
    spans: list[tuple[int, int]] | None = None  # inside a table: its columns
    seen_dashes, header_row, rule_indent = 0, False, 0
    orphans: set[str] = set()
    annotated: list[str] = []  # values with text after them: 'launch 0 Duration '1.47  # warm''
    bodies = row_last = False  # row_last: the last line read was a table's row
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("=="):
            continue
        bodies = bodies or bool(BODY.match(line))
        row_last = False if line.strip() else row_last
        if spans is not None:
            if DASHES.match(line):
                seen_dashes += 1
                if seen_dashes == (3 if header_row else 2):  # the closing line: a header row has a line under it
                    spans = None
                continue
            shift = len(line) - len(line.lstrip()) - rule_indent  # ncu 2022 indents rows 2 past their rule
            cells = _cells(line, [(a + shift, b + shift) for a, b in spans] if shift > 0 else spans)
            if cells and cells[0] == "Metric Name":
                header_row = True
                continue
            if current is not None and cells and cells[0]:
                unit, value = (cells[1], cells[-1]) if len(cells) >= 3 else ("", cells[-1])
                value = MARKER.sub("", value)
                if m := ANNOTATED.match(value):
                    annotated.append(f"launch {len(launches) - 1} {cells[0]} {value!r}")
                    value = m["value"]
                current.rows.append([section, cells[0], unit, value])
                row_last = True
            continue
        if (m := PROCESS.match(line)) and not line.startswith("    "):
            process = {"Process ID": m["pid"], "Process Name": m["name"], "Host Name": m["host"] or ""}
            continue
        if (m := LAUNCH.match(line)) and "Section:" not in line:
            current = _Launch({**process, "Kernel Name": m["kernel"].strip(), "Context": m["context"],
                               "Stream": m["stream"], "Device": m["device"] or "", "CC": m["cc"] or "",
                               "Grid Size": f"({m['grid']})" if m["grid"] else "",
                               "Block Size": f"({m['block']})" if m["block"] else ""})
            launches.append(current)
            section = ""
            continue
        if m := SECTION.match(line):
            section = m["name"]
            continue
        if DASHES.match(line) and current is None and section and len(_spans(line)) >= 3:
            orphans.add(section)  # a section before any launch line: the file's start was cut
        if DASHES.match(line) and current is not None and len(_spans(line)) >= 3:  # two runs: a rule's separator
            spans, seen_dashes, header_row = _spans(line), 1, False
            rule_indent = len(line) - len(line.lstrip())
    cut = spans is not None and current is not None
    if cut and row_last and not text.endswith(("\n", "\r")):
        current.rows.pop()  # the last line has no line end: it may be cut inside its value
    records, failed = [], []
    for i, launch in enumerate(launches):
        values = [r[3] for r in launch.rows]
        if values and all(v.lower() in ("nan", "-nan", "n/a") for v in values) and any("nan" in v.lower() for v in values):
            failed.append(f"launch {i} ({launch.fields['Kernel Name'][:60]})")
            continue
        base = [str(i)] + [launch.fields.get(c, "") for c in HEADER[1:11]]
        records += [base + r for r in launch.rows]
    notes = []
    if orphans:
        notes.append("sections before the first launch line (the text's start cut off?) left out: the launch they "
                     "belong to is not named")
    if failed:
        notes.append(failed_note(failed))
    if annotated:
        notes.append(f"{len(annotated)} value{'s' if len(annotated) > 1 else ''} with text after {'them' if len(annotated) > 1 else 'it'} "
                     f"(read as a note beside the value): {'; '.join(annotated[:3])}")
    return TextReport(HEADER, records, notes, cut, failed, section if cut else "", bodies)


def failed_note(failed: list[str] | tuple[str, ...]) -> str:
    """The note on launches that failed (`TextReport.failed`), naming the first three."""
    return (f"{len(failed)} failed launch{'es' if len(failed) > 1 else ''} (every value nan, as ncu prints a "
            f"launch that failed) left out: {'; '.join(failed[:3])}")
