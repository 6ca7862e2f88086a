"""The results file (schema 1): build it from a run, write it atomically, read it back checked.

Units are fixed by the key names or by DESIGN.md: bytes, milliseconds, GFLOP/s, GB/s (1e9 B/s).
Required keys (`load` checks them):
  schema, device{name, compute_capability, sm_count, peak_fp32_gflops, peak_dram_gbps},
  problem{m, n, k, dtype}, reference{name, gflops, time_ms},
  kernels[{name, gflops, time_ms, pct_of_reference, verified, rel_error, registers,
           threads_per_block, static_smem_bytes, occupancy{...}, model{...}}]
A kernel that was not timed (failed to compile or verify) has gflops and time_ms null and
verified false; readers must never draw it as a point.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import tempfile
from pathlib import Path

from .errors import UsageError

SCHEMA = 1
DEFAULT_PATH = Path("roofline-results.json")

_REQUIRED = {
    "device": ("name", "compute_capability", "sm_count", "peak_fp32_gflops", "peak_dram_gbps"),
    "problem": ("m", "n", "k", "dtype"),
    "reference": ("name", "gflops", "time_ms"),
}
_KERNEL_KEYS = ("name", "gflops", "time_ms", "pct_of_reference", "verified", "rel_error", "registers",
                "threads_per_block", "static_smem_bytes", "occupancy", "model")
_MODEL_KEYS = ("gmem_accesses_per_result", "smem_accesses_per_result", "flops", "gmem_bytes",
               "arithmetic_intensity")


def gflops(flops: int, time_ms: float) -> float:
    """FLOPs done in `time_ms` milliseconds, as GFLOP/s."""
    return flops / (time_ms * 1e-3) / 1e9


def build(out) -> dict:
    """The results document for a `runner.RunOutput`."""
    from . import __version__

    problem = out.problem
    ref_ms = out.reference.median_ms
    ref_gflops = gflops(problem.flops, ref_ms)
    kernels = []
    for r in out.kernels:
        t = r.timing
        k = {
            "name": r.spec.name,
            "summary": r.spec.summary,
            "template": r.spec.name_expression,
            "gflops": gflops(problem.flops, t.median_ms) if t else None,
            "time_ms": t.median_ms if t else None,
            "pct_of_reference": 100 * ref_ms / t.median_ms if t else None,
            "verified": bool(r.verified),
            "rel_error": r.rel_error if r.rel_error is not None and math.isfinite(r.rel_error) else None,
            "unwritten_elements": r.unwritten,
            "error": r.error,
            "registers": r.registers,
            "threads_per_block": r.spec.threads_per_block,
            "static_smem_bytes": r.static_smem_bytes,
            "local_bytes": r.local_bytes,
            "occupancy": r.occupancy.to_dict() if r.occupancy else None,
            "driver_active_blocks_per_sm": r.driver_blocks_per_sm,
            "model": r.model.to_dict(),
            "floors": r.floors.to_dict(t.median_ms if t else None),
            "timing": t.to_dict() if t else None,
            "sm_clock_mhz_before_after": list(r.sm_clock_mhz),
        }
        kernels.append(k)
    return {
        "schema": SCHEMA,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "tool": f"roofline {__version__}",
        "device": out.device.to_dict(),
        "problem": {"m": problem.m, "n": problem.n, "k": problem.k, "dtype": "float32",
                    "alpha": 1.0, "beta": 0.0, "layout": "row-major"},
        "reference": {"name": "cublas", "via": "cupy.matmul", "tf32": False,
                      "gflops": ref_gflops, "time_ms": ref_ms,
                      "timing": out.reference.to_dict(),
                      "sm_clock_mhz_before_after": list(out.reference_clock_mhz)},
        "kernels": kernels,
    }


def write_atomic(doc: dict, path: Path) -> None:
    """Write `doc` as JSON to `path` through a temporary file in the same folder and a rename, so
    an interrupted write never leaves a half-written file (the old file, if any, stays whole).
    Raises UsageError when the folder does not exist or cannot be written."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"cannot write {path}: folder {folder} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _require(obj, keys, where):
    if not isinstance(obj, dict):
        raise UsageError(f"{where} must be an object")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise UsageError(f"{where} lacks {', '.join(missing)}")


def _positive_number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise UsageError(f"{where} must be a positive number, got {value!r}")


def validate(doc, source: str = "results") -> dict:
    """Check a results document against schema 1 and return it.

    Raises UsageError (one line, naming the file and the first problem) for a wrong schema,
    missing keys, or peaks that are not positive numbers."""
    if not isinstance(doc, dict):
        raise UsageError(f"{source}: not a roofline results file (top level is not an object)")
    if doc.get("schema") != SCHEMA:
        raise UsageError(f"{source}: schema {doc.get('schema')!r} is not supported; expected {SCHEMA}")
    try:
        for key, keys in _REQUIRED.items():
            _require(doc.get(key), keys, key)
        _positive_number(doc["device"]["peak_fp32_gflops"], "device.peak_fp32_gflops")
        _positive_number(doc["device"]["peak_dram_gbps"], "device.peak_dram_gbps")
        if not isinstance(doc.get("kernels"), list):
            raise UsageError("kernels must be a list")
        for i, k in enumerate(doc["kernels"]):
            _require(k, _KERNEL_KEYS, f"kernels[{i}]")
            _require(k["model"], _MODEL_KEYS, f"kernels[{i}].model")
            if k["verified"] and k["gflops"] is not None:
                _positive_number(k["gflops"], f"kernels[{i}].gflops")
                _positive_number(k["model"]["arithmetic_intensity"], f"kernels[{i}].model.arithmetic_intensity")
    except UsageError as exc:
        raise UsageError(f"{source}: {exc}") from None
    return doc


def load(path: Path) -> dict:
    """Read and validate a results file. Raises UsageError for a missing, unreadable, non-JSON or
    wrong-schema file, with a one-line message naming it."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such results file; create one with `roofline run --all`") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError, OSError) as exc:
        raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    return validate(doc, str(path))


def merge(docs: list[dict], sources: list[str]) -> dict:
    """One document from several results files of the same device and problem (e.g. runs of
    different `--kernel`s): kernels in file order, a later file's kernel replacing an earlier one of
    the same name; device and reference from the first. Raises UsageError when the files disagree
    on device or problem."""
    first = docs[0]
    merged = dict(first)
    kernels: dict[str, dict] = {}
    for doc, src in zip(docs, sources):
        for key in ("name", "peak_fp32_gflops", "peak_dram_gbps"):
            if doc["device"][key] != first["device"][key]:
                raise UsageError(f"{src}: device {key} differs from {sources[0]}'s; one chart shows one device")
        if {k: doc["problem"][k] for k in "mnk"} != {k: first["problem"][k] for k in "mnk"}:
            raise UsageError(f"{src}: problem size differs from {sources[0]}'s; one chart shows one size")
        for k in doc["kernels"]:
            kernels[k["name"]] = k
    merged["kernels"] = list(kernels.values())
    return merged
