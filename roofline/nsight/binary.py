"""The binary report (`.ncu-rep`), read through NVIDIA's report reader `ncu_report` (the
`ncu-report` package on PyPI, or the module in an installed Nsight Compute's `extras/python`)
in a child Python process, each value scaled by the unit it gives; where that reader is
missing or fails, through `ncu --import REPORT --csv --page raw --print-units base`
(`nsight.run.export_raw`).

The child is this module run through `roofline.child` (`python -m roofline.nsight.binary`, the
request {"report": PATH} on its stdin, the launches its answer as one line of JSON).
"""

from __future__ import annotations

import glob
import importlib
import json
import math
import os
import re
import shutil
import sys
from pathlib import Path

from .. import child
from ..errors import UsageError
from .checks import check_rows
from .dialect import unit_scale
from .metrics import reads
from .pages import parse_csv
from . import sampling
from .rows import Row, Rows, store_value
from .run import export_raw

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


CHILD = "roofline.nsight.binary"
READ_TIMEOUT_S = 600
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
                         "values": {}, "text": {}, "nvtx": _nvtx_stack(action)}
            names = list(action.metric_names())
            if sampling.holds_samples(names):
                try:
                    row["sampled"] = sampling.read_action(action, names)
                except AttributeError:  # an ncu_report without timelines
                    row["sampled"] = {"unreadable": getattr(module, "__version__", None) or "older than 2025.4"}
            for name in names:
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
                    else:  # what a launch that failed records
                        row["text"][name] = "nan" if math.isnan(value) else "inf"
            out.append(row)
    return out


def _nvtx_stack(action) -> list[str] | None:
    """The NVTX push/pop ranges open around a launch, outermost first, of every domain (the default
    one first), where the report was made with `ncu --nvtx`; None where it holds no NVTX state."""
    state = action.nvtx_state() if hasattr(action, "nvtx_state") else None
    if state is None:
        return None
    ranges: list[str] = []
    for domain_id in sorted(state.domains()):
        domain = state.domain_by_id(domain_id)
        if domain is not None:
            ranges += [str(r) for r in domain.push_pop_ranges()]
    return ranges


def _module_failure(reply: child.Reply) -> str:
    """Why the report reader's child gave no launches, in a few words: timed out, died (with its
    signal or code), or its last line on stderr."""
    if reply.failure == "timeout":
        return f"it took longer than {READ_TIMEOUT_S} s"
    said = reply.stderr_tail or reply.why or ""
    code = f"exit code {reply.returncode}" if reply.returncode not in (None, 0) else "no answer"
    return f"{code}: {said}" if said else code


def _rows_from_module(path: Path, why: list[str] | None = None) -> tuple[list[Row], int] | None:
    """`_module_rows` of `path` from a child Python process, as rows in base units, and how many
    records were cut short (a launch without a name or any metric: what `ncu_report` gives for the
    record a truncated file ends inside); None when the module is missing, fails or faults (then
    `why`, where given, gets the reason in a few words)."""
    if _ncu_report_module() is None:
        return None
    reply = child.ask(CHILD, {"report": str(path)}, READ_TIMEOUT_S)
    if reply.returncode != 0 or not isinstance(reply.answer, list):  # timed out, faulted, or failed
        if why is not None:
            why.append(_module_failure(reply))
        return None
    rows, unknown, cut = [], {}, 0
    for item in reply.answer:
        if not item["kernel"] and not item["values"] and not item["text"]:
            cut += 1
            continue
        row = Row(kernel=item["kernel"] or "", text=item["text"], nvtx=item.get("nvtx"), sampled=item.get("sampled"))
        row.bad = {name: cell for name, cell in item["text"].items() if cell in ("nan", "inf") and reads(name)}
        for name, (value, unit) in item["values"].items():
            store_value(row, name, value, unit_scale(unit), unit, unknown)
        pid = row.values.get("launch__process_id")
        row.process_id = int(pid) if pid is not None else None
        rows.append(row)
    return rows, cut


def read_report(path: Path, source: str | None = None) -> Rows:
    """The launches in an `.ncu-rep` report: through NVIDIA's report reader `ncu_report` (the
    ncu-report package, or the module beside an ncu on PATH; in a child process), else ncu's CSV
    export. A truncated file (`ncu_report` reads the launches before the cut and an empty record
    for the one cut) keeps its whole launches, with a note saying it is truncated. Raises
    NcuError when neither is installed, UsageError when the file is not a report they can read
    (damaged, or truncated inside its first launch). Messages name `source` (default: the path)."""
    source = source or str(path)
    failed: list[str] = []
    found = _rows_from_module(path, failed)
    rows, cut = found if found is not None else ([], 0)
    if cut and not rows:
        raise UsageError(f"{source}: a truncated report (the file ends inside its first launch's record): no "
                         "launch in it is whole; copy the .ncu-rep again, or profile again")
    if rows:  # none: no module, not a report it knows, or it failed; ncu itself then says why
        rows, notes = check_rows(rows, source)
        if cut:
            notes.insert(0, f"a truncated report: the file ends inside the record of launch {len(rows)} (cut short); "
                            f"the {len(rows)} whole launch{'es' if len(rows) > 1 else ''} before it are read, any "
                            "after it are lost (copy the .ncu-rep again for all of them)")
        return Rows(rows, "Nsight Compute's Python report interface (ncu_report)", tuple(notes))
    tried = _ncu_report_module() is not None
    if shutil.which("ncu") is None and tried:
        head = path.read_bytes()[:4] if path.is_file() else b""
        why = ("it failed on it: the file is damaged or truncated (cut short); copy it again" if head == b"NVR\x00"
               else "it failed on it, or the file is no report")
        raise UsageError(f"{source}: NVIDIA's report reader (ncu_report) cannot read it as an Nsight Compute report "
                         f"({why})")
    exported = export_raw(path)
    report = parse_csv(exported, source)
    said = f" ({failed[0][:160]})" if failed else ""
    note = (f"Nsight Compute's Python report interface could not read it{said}: read through ncu's CSV export, "
            "which holds no PM sampling",) if tried else ()
    return Rows(report.rows, "ncu --import --csv --page raw", report.notes + note)


if __name__ == "__main__":  # the child process of `_rows_from_module`
    child.answer(json.dumps(_module_rows(child.request()["report"])))
