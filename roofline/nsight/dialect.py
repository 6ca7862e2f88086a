"""The CSV dialect of Nsight Compute's exports, whatever ncu version, locale or editor made the
file: its encoding (UTF-8 or UTF-16, with or without a byte-order mark; else Windows-1252), its
decimal mark (decided for the whole file: `27.595.520` and `65,77` only read with a decimal
comma), thousands separators, no-value cells (`n/a`, `nan`, `no data`, per-instance lists) and
units as ncu writes them: SI prefixes (K/M/G/T = 1000, Ki/Mi/Gi = 1024), times (ns, nsecond, us,
usecond, ms, msecond, s, second), rates (`/s`, `/second`, `hz`, `cycle/nsecond`, `sector/us`).
Pure: cells in, numbers in base units out (ns, bytes, Hz, counts, per second for rates).
"""

from __future__ import annotations

import codecs
import math
import re
from collections import Counter
from functools import lru_cache

NO_VALUE = {"", "n/a", "na", "nan", "-nan", "no data", "-", "inf", "-inf", "(null)"}
NON_FINITE = {"nan", "-nan", "+nan", "inf", "-inf", "+inf"}  # no value in general; a damaged cell where a roofline reads
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3, "Ti": 1024.0**4}
TIME_NS = {"ns": 1.0, "nsecond": 1.0, "nseconds": 1.0, "us": 1e3, "usecond": 1e3, "useconds": 1e3,
            "ms": 1e6, "msecond": 1e6, "mseconds": 1e6, "s": 1e9, "second": 1e9, "seconds": 1e9}
_WORDS = ("byte", "inst", "instruction", "cycle", "warp", "thread", "block", "sector", "request", "wavefront",
          "pass", "register", "issue", "SM", "cluster", "transaction", "branche", "branch", "count", "op", "flop")


def _factor(part: str) -> float | None:
    part = part.strip()
    if part in TIME_NS:
        return TIME_NS[part]
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
    if tail.strip() in TIME_NS:
        return top / (TIME_NS[tail.strip()] * 1e-9)  # per second
    bottom = _factor(tail)
    return top / bottom if bottom else None


_KINDS = (  # (metric pattern, what its unit must be): a value in a unit of another kind is not read
    (re.compile(r"gpu__time_duration"), "time"),
    (re.compile(r"(cycles_elapsed\.avg\.per_second|__frequency)$"), "rate"),
    (re.compile(r"__bytes.*\.per_second$"), "rate"),
    (re.compile(r"__bytes[\w]*(\.sum|\.avg|\.max|\.min)?$"), "bytes"),
    (re.compile(r"pct"), "percent"),
)


@lru_cache(maxsize=4096)  # asked once per cell: a metric's unit is the same on every row
def unit_fits(name: str, unit: str) -> bool:
    for pattern, kind in _KINDS:
        if pattern.search(name):
            if kind == "time":
                return unit in TIME_NS
            if kind == "rate":
                return unit.lower().endswith("hz") or unit.partition("/")[2].strip() in TIME_NS
            if kind == "bytes":
                return "byte" in unit and "/" not in unit
            return unit == "%"
    return True


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


def mark_note(cells: list[str]) -> list[str]:
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
    if " " in text and re.fullmatch(r"[-+]?\d{1,3}( \d{3})+([.,]\d+)?", text):
        text = text.replace(" ", "")  # a space between thousands, as some locales print them ('13 181 137')
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


def int_cell(cell: str) -> int | None:
    x = number(cell)
    return int(x) if x is not None and x == int(x) else None


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
