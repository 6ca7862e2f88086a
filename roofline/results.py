"""The results file (schema 1): build it from a run, write it atomically, read it back checked.

Units are fixed by the key names or here: bytes, milliseconds, GFLOP/s, GB/s (1e9 B/s).
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
from pathlib import Path

from . import files
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


def annotate(doc: dict) -> dict:
    """Add (or refresh) each timed kernel's `verdict` (`hierarchy.verdict`) from the document's
    own device, problem and, where present, measured ceilings and counters. Returns `doc`."""
    from .hierarchy import verdict

    for k in doc["kernels"]:
        v = verdict(k, doc["device"], doc["problem"])
        if v is not None:
            k["verdict"] = v
    return doc


def build(out, ceilings=None) -> dict:
    """The results document for a `runner.RunOutput`; with `ceilings` (`ceilings.Ceilings`) the
    device object also carries measured_dram_gbps, measured_fp32_gflops and when they were taken."""
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
            "params": dict(r.spec.params),
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
            "dynamic_smem_bytes": r.spec.dynamic_smem_bytes,
            "local_bytes": r.local_bytes,
            "occupancy": r.occupancy.to_dict() if r.occupancy else None,
            "driver_active_blocks_per_sm": r.driver_blocks_per_sm,
            "model": r.model.to_dict(),
            "floors": r.floors.to_dict(t.median_ms if t else None),
            "timing": t.to_dict() if t else None,
            "sm_clock_mhz_before_after": list(r.sm_clock_mhz),
        }
        kernels.append(k)
    device = out.device.to_dict()
    if ceilings is not None:
        device.update(measured_dram_gbps=ceilings.dram_gbps, measured_fp32_gflops=ceilings.fp32_gflops,
                      measured_at=ceilings.measured_at, measured_method=ceilings.method)
    return annotate({
        "schema": SCHEMA,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "tool": f"roofline {__version__}",
        "device": device,
        "problem": {"m": problem.m, "n": problem.n, "k": problem.k, "dtype": "float32",
                    "alpha": 1.0, "beta": 0.0, "layout": "row-major"},
        "reference": {"name": "cublas", "via": "cupy.matmul", "tf32": False,
                      "gflops": ref_gflops, "time_ms": ref_ms,
                      "timing": out.reference.to_dict(),
                      "sm_clock_mhz_before_after": list(out.reference_clock_mhz)},
        "kernels": kernels,
    })


def build_sweep(outputs: list, ceilings=None) -> dict:
    """The results document of a size sweep: the largest problem's full document, plus `sweep`,
    one entry per problem (smallest first) with its problem, the reference's rate and time, and
    each kernel's name, gflops, time_ms, verified and pct_of_reference."""
    docs = [build(o, ceilings) for o in outputs]
    doc = dict(docs[-1])
    doc["sweep"] = [{"problem": d["problem"],
                     "reference": {"gflops": d["reference"]["gflops"], "time_ms": d["reference"]["time_ms"]},
                     "kernels": [{key: k[key] for key in ("name", "gflops", "time_ms", "verified", "pct_of_reference")}
                                 for k in d["kernels"]]}
                    for d in docs]
    return doc


def write_atomic(doc: dict, path: Path) -> None:
    """Write `doc` as JSON to `path` atomically (`files.write_atomic`): an interrupted write never
    leaves a half-written file, and an earlier file stays whole. Raises UsageError for a path that
    cannot be written, RunError when the write fails."""

    def write(tmp: str) -> None:
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())

    files.write_atomic(path, write)


def _require(obj, keys, where):
    if not isinstance(obj, dict):
        raise UsageError(f"{where} must be an object")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise UsageError(f"{where} lacks {', '.join(missing)}")


# Bounds far beyond any GPU: a value outside them is a corrupt file, not a measurement.
MIN_GFLOPS = 1e-6  # a thousand FLOP/s
MAX_GFLOPS = 1e7
MAX_GBPS = 1e7
MAX_AI = 1e9


def _number(value, where, low=0.0, high=math.inf, low_inclusive=False):
    """A finite int or float in (low, high] ([low, high] with `low_inclusive`); raises UsageError
    naming `where` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where} must be a number, got {value!r}")
    try:
        ok = math.isfinite(value) and (low <= value if low_inclusive else low < value) and value <= high
    except OverflowError:
        ok = False
    if not ok:
        raise UsageError(f"{where} must be in {'[' if low_inclusive else '('}{low:g}, {high:g}], got {value!r}")


def _size(value, where) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
        raise UsageError(f"{where} must be an integer in 1..{MAX_SIZE}, got {value!r}")


MAX_SIZE = 2**31


def _kernel(k: dict, where: str, flops: int) -> None:
    _require(k, _KERNEL_KEYS, where)
    if not isinstance(k["name"], str) or not k["name"]:
        raise UsageError(f"{where}.name must be a non-empty string")
    if not isinstance(k["verified"], bool):
        raise UsageError(f"{where}.verified must be true or false, got {k['verified']!r}")
    model = k["model"]
    _require(model, _MODEL_KEYS, f"{where}.model")
    for key in ("flops", "gmem_bytes", "gmem_accesses_per_result", "arithmetic_intensity"):
        _number(model[key], f"{where}.model.{key}", 0, 1e24)
    if abs(model["flops"] - flops) > 1e-9 * flops:
        raise UsageError(f"{where}.model.flops is {model['flops']:g}, but the problem's 2*M*N*K is {flops:g}")
    if model["smem_accesses_per_result"] is not None:
        _number(model["smem_accesses_per_result"], f"{where}.model.smem_accesses_per_result", 0, 1e24)
    if not (k["verified"] and k["gflops"] is not None):
        return  # never drawn: only its presence matters
    _number(k["gflops"], f"{where}.gflops", MIN_GFLOPS, MAX_GFLOPS)
    _number(k["model"]["arithmetic_intensity"], f"{where}.model.arithmetic_intensity", 0, MAX_AI)
    regs = k["registers"]
    if regs is not None and (isinstance(regs, bool) or not isinstance(regs, int) or not 1 <= regs <= 255):
        raise UsageError(f"{where}.registers must be an integer in 1..255 or null, got {regs!r}")
    measured = k.get("measured")
    if measured is not None:
        if not isinstance(measured, dict):
            raise UsageError(f"{where}.measured must be an object")
        for key, value in measured.items():
            _number(value, f"{where}.measured.{key}", 0, 1e21, low_inclusive=True)
    occ = k["occupancy"]
    if occ is not None:
        _require(occ, ("occupancy", "limiters"), f"{where}.occupancy")
        _number(occ["occupancy"], f"{where}.occupancy.occupancy", -1e-9, 1)
        if not isinstance(occ["limiters"], list) or not all(isinstance(x, str) for x in occ["limiters"]):
            raise UsageError(f"{where}.occupancy.limiters must be a list of names")


def _sweep(sweep) -> None:
    if not isinstance(sweep, list) or not sweep:
        raise UsageError("sweep must be a non-empty list")
    sizes = set()
    for i, point in enumerate(sweep):
        where = f"sweep[{i}]"
        _require(point, ("problem", "reference", "kernels"), where)
        _require(point["problem"], ("m", "n", "k"), f"{where}.problem")
        for key in ("m", "n", "k"):
            _size(point["problem"][key], f"{where}.problem.{key}")
        if point["problem"]["m"] in sizes:
            raise UsageError(f"{where}: size {point['problem']['m']} appears twice in the sweep")
        sizes.add(point["problem"]["m"])
        _number(point["reference"].get("gflops") if isinstance(point["reference"], dict) else None,
                f"{where}.reference.gflops", MIN_GFLOPS, MAX_GFLOPS)
        if not isinstance(point["kernels"], list):
            raise UsageError(f"{where}.kernels must be a list")
        for j, k in enumerate(point["kernels"]):
            _require(k, ("name", "gflops", "verified"), f"{where}.kernels[{j}]")
            if not isinstance(k["name"], str) or not k["name"]:
                raise UsageError(f"{where}.kernels[{j}].name must be a non-empty string")
            if not isinstance(k["verified"], bool):
                raise UsageError(f"{where}.kernels[{j}].verified must be true or false")
            if k["verified"] is True and k["gflops"] is not None:
                _number(k["gflops"], f"{where}.kernels[{j}].gflops", MIN_GFLOPS, MAX_GFLOPS)


def validate(doc, source: str = "results") -> dict:
    """Check a results document against schema 1 and return it.

    Raises UsageError (one line, naming the file and the first problem) for a wrong schema,
    missing keys, values of the wrong type, numbers outside any plausible range (peaks, rates and
    intensities must be positive and finite), or two kernels of one name."""
    if not isinstance(doc, dict):
        raise UsageError(f"{source}: not a roofline results file (top level is not an object)")
    schema = doc.get("schema")
    if schema is None:
        raise UsageError(f"{source}: not a roofline results file (no schema field)")
    if type(schema) is not int or schema != SCHEMA:
        raise UsageError(f"{source}: schema {schema!r} is not supported; expected {SCHEMA}")
    try:
        for key, keys in _REQUIRED.items():
            _require(doc.get(key), keys, key)
        _number(doc["device"]["peak_fp32_gflops"], "device.peak_fp32_gflops", 0, MAX_GFLOPS)
        _number(doc["device"]["peak_dram_gbps"], "device.peak_dram_gbps", 1e-3, MAX_GBPS)
        _number(doc["reference"]["gflops"], "reference.gflops", MIN_GFLOPS, MAX_GFLOPS)
        for key in ("measured_dram_gbps", "measured_fp32_gflops"):
            if doc["device"].get(key) is not None:
                _number(doc["device"][key], f"device.{key}", 0, MAX_GBPS)
        if not isinstance(doc["device"]["name"], str):
            raise UsageError("device.name must be a string")
        for key in ("m", "n", "k"):
            _size(doc["problem"][key], f"problem.{key}")
        for key in ("sm_count", "max_sm_clock_mhz"):
            if doc["device"].get(key) is not None:
                _number(doc["device"][key], f"device.{key}", 0, 1e6)
        if not isinstance(doc.get("kernels"), list):
            raise UsageError("kernels must be a list")
        seen = set()
        flops = 2 * doc["problem"]["m"] * doc["problem"]["n"] * doc["problem"]["k"]
        for i, k in enumerate(doc["kernels"]):
            _kernel(k, f"kernels[{i}]", flops)
            if k["name"] in seen:
                raise UsageError(f"kernel {k['name']!r} appears twice")
            seen.add(k["name"])
        if "sweep" in doc:
            _sweep(doc["sweep"])
    except UsageError as exc:
        raise UsageError(f"{source}: {exc}") from None
    return doc


def load(path: Path) -> dict:
    """Read and validate a results file. Raises UsageError for a missing, unreadable, non-JSON or
    wrong-schema file, with a one-line message naming it."""
    path = Path(path)
    try:
        if path.is_dir():
            raise UsageError(f"{path}: is a folder, not a results file")
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


def merge(docs: list[dict], sources: list[str], notes: list[str] | None = None) -> dict:
    """One document from several results files of the same device and problem (e.g. runs of
    different `--kernel`s): kernels in file order, a later file's kernel replacing an earlier one of
    the same name (each replacement is said in `notes`, when given); device and reference from the
    first. Raises UsageError when the files disagree on device or problem."""
    first = docs[0]
    swept = [src for doc, src in zip(docs, sources) if "sweep" in doc]
    if len(docs) > 1 and swept:
        raise UsageError(f"{swept[0]} holds a size sweep, which is not merged with other results files; "
                         "give it alone to --results")
    merged = dict(first)
    kernels: dict[str, dict] = {}
    for doc, src in zip(docs, sources):
        for key in ("name", "peak_fp32_gflops", "peak_dram_gbps"):
            if doc["device"][key] != first["device"][key]:
                raise UsageError(f"{src}: device {key} differs from {sources[0]}'s; one chart shows one device")
        if {k: doc["problem"][k] for k in "mnk"} != {k: first["problem"][k] for k in "mnk"}:
            raise UsageError(f"{src}: problem size differs from {sources[0]}'s; one chart shows one size")
        for k in doc["kernels"]:
            if k["name"] in kernels and notes is not None:
                notes.append(f"{k['name']} is in more than one results file; drawn from {src}, the last")
            kernels[k["name"]] = k
    merged["kernels"] = list(kernels.values())
    return merged
