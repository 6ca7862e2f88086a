"""A GPU described by its user (`--gpu mygpu.toml`), for one that has no preset: a TOML or JSON
file with the fields `roofline device --json` prints, checked as a preset's figures are.

    name = "NVIDIA GeForce RTX 5070"
    compute_capability = "12.0"
    sm_count = 48
    fp32_cores = 6144             # CUDA cores: peak FP32 = cores x 2 FLOP x max_sm_clock_mhz
    max_sm_clock_mhz = 2512       # the boost clock
    peak_dram_gbps = 672          # or max_mem_clock_mhz and memory_bus_width_bits
    l2_bytes = 50331648           # optional, as are memory_bytes and source
    tensor_clock_mhz = 1830       # optional: the clock the tensor-core figures assume (default:
                                  #   max_sm_clock_mhz; datasheets' tensor figures often imply a lower one)
    [flops_per_sm_per_clock]      # optional: a precision's rate where the architecture's table
    fp16_tensor = 1024            #   does not hold for this part (keys: peaks.PRECISIONS)

Every other figure (per-SM limits, the other precisions' rates, the L2's bandwidth) comes from the
compute capability's tables, as for a preset.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from pathlib import Path
from typing import Annotated

from annotated_types import Ge, Gt, Le
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..errors import UsageError
from .arch import ARCHS, NEWEST_CC, ArchLimits, cc_key, limits_for_cc
from .peaks import PRECISIONS
from .presets import SUFFIXES, is_device_file  # (there: telling a preset's name from a file's needs no pydantic)


class DeviceFile(BaseModel):
    """The figures a device file gives; unknown keys are refused (a misspelt one would be lost)."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    compute_capability: str
    sm_count: Annotated[int, Ge(1), Le(10**4)]
    fp32_cores: Annotated[int, Ge(1), Le(10**7)]
    max_sm_clock_mhz: Annotated[float, Gt(0), Le(10**5)]
    peak_dram_gbps: Annotated[float, Gt(0), Le(1e6)] | None = None
    max_mem_clock_mhz: Annotated[float, Gt(0), Le(1e6)] | None = None
    memory_bus_width_bits: Annotated[int, Ge(8), Le(1 << 16)] | None = None
    memory_bytes: Annotated[int, Ge(1)] | None = None
    l2_bytes: Annotated[int, Ge(1)] | None = None
    tensor_clock_mhz: Annotated[float, Gt(0), Le(10**5)] | None = None
    source: str = ""
    flops_per_sm_per_clock: dict[str, Annotated[float, Gt(0), Le(1e6)]] = {}

    @field_validator("compute_capability")
    @classmethod
    def _a_real_compute_capability(cls, cc: str) -> str:
        cc = cc.strip()
        if not re.fullmatch(r"\d{1,2}\.\d", cc):
            raise ValueError(f"{cc!r} is not a compute capability; give it as major.minor, e.g. \"9.0\" for an H100")
        if cc not in ARCHS and (7, 0) <= cc_key(cc) <= cc_key(NEWEST_CC):  # older than 7.0: limits_for_cc says so
            raise ValueError(f"no GPU has compute capability {cc}; known: {', '.join(ARCHS)} (one newer than "
                             f"{NEWEST_CC} takes the newest one's allocation units)")
        return cc

    @field_validator("flops_per_sm_per_clock")
    @classmethod
    def _known_precisions(cls, rates: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(rates) - set(PRECISIONS))
        if unknown:
            raise ValueError(f"unknown precision {unknown[0]!r}; known: {', '.join(PRECISIONS)}")
        return rates


def read(path: Path, derived: frozenset[str] = frozenset()) -> tuple[DeviceFile, ArchLimits, dict]:
    """The figures a device file gives (module docstring), checked, the per-SM limits of its
    compute capability, and what it holds of the keys in `derived` (what `roofline device --json`
    prints beside the figures, derived from them), set aside: `device.from_device_file` makes the
    device of the figures and checks those against it.
    Raises UsageError, in
    one line naming the file and the field, for a file that is missing, unreadable, not TOML/JSON,
    lacks a figure, holds one out of range or unknown, or a compute capability the tables do not
    know."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{{gpu}} {path}: cannot read the device file ({exc.strerror or exc})", "gpu") from None
    try:
        doc = json.loads(data) if path.suffix.lower() == ".json" else tomllib.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise UsageError(f"{{gpu}} {path}: not a {kind} device file ({str(exc).splitlines()[0]})", "gpu") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{{gpu}} {path}: a device file is a table of figures (name, sm_count, ...)", "gpu")
    if "schema" in doc and ("kernels" in doc or "entries" in doc):  # the file a run, profile or grade wrote
        raise UsageError(f"{{gpu}} {path}: a roofline results file, not a device file (name, compute_capability, "
                         "sm_count, ... as `roofline device --gpu h200 --json` prints them)", "gpu")
    aside = {k: v for k, v in doc.items() if k in derived and k not in DeviceFile.model_fields}
    doc = {k: v for k, v in doc.items() if k in DeviceFile.model_fields or k not in derived}  # derived: set aside
    doc = {k: v for k, v in doc.items() if v is not None}
    unknown = sorted(set(doc) - set(DeviceFile.model_fields))
    if unknown:  # before what is missing: a misspelt key is the likelier mistake
        close = difflib.get_close_matches(unknown[0], list(DeviceFile.model_fields), n=1)
        hint = f"; did you mean {close[0]}?" if close else f"; known: {', '.join(DeviceFile.model_fields)}"
        raise UsageError(f"{{gpu}} {path}: unknown field {unknown[0]!r}{hint}", "gpu")
    cc = doc.get("compute_capability")
    if isinstance(cc, (int, float)) and not isinstance(cc, bool):  # 9.0 unquoted (true is no capability)
        doc["compute_capability"] = f"{float(cc):.1f}"
    try:
        spec = DeviceFile.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        said = first["msg"].removeprefix("Value error, ")  # pydantic's prefix to a validator's own words
        raise UsageError(f"{{gpu}} {path}: {where}: {said}", "gpu") from None
    try:
        limits = limits_for_cc(spec.compute_capability)
    except UsageError as exc:
        raise UsageError(f"{{gpu}} {path}: compute_capability: {exc}", "gpu") from None
    if spec.tensor_clock_mhz is not None and spec.tensor_clock_mhz > spec.max_sm_clock_mhz:
        raise UsageError(f"{{gpu}} {path}: tensor_clock_mhz: {spec.tensor_clock_mhz:,g} MHz is above max_sm_clock_mhz "
                         f"{spec.max_sm_clock_mhz:,g}: the tensor cores run at the SM clock or below", "gpu")
    if spec.peak_dram_gbps is None and not (spec.max_mem_clock_mhz and spec.memory_bus_width_bits):
        raise UsageError(f"{{gpu}} {path}: give peak_dram_gbps, or max_mem_clock_mhz and memory_bus_width_bits", "gpu")
    return spec, limits, aside


def edited_peak(path: Path, aside: dict, peaks: dict[str, float], l2_gbps: float | None = None,
                arch: str | None = None) -> str | None:
    """Why a device file's own derived figures (as `roofline device --json` writes them beside the
    figures: `arch`, `peak_fp32_gflops`, `peaks_gflops`, `peak_l2_gbps`) cannot stand: one differs by
    more than 0.1 % from what its figures give (`arch`, 'sm_90'; `peaks`, GFLOP/s by precision;
    `l2_gbps`), which only an edit makes (every preset's JSON reads back to its own): an edit of that
    figure, which roofline would not read, or of a figure it comes from (`sm_count`), after which the
    derived ones are stale. The line names the first, how many more there are, and both ways out:
    delete the stale fields, or give a rate as `flops_per_sm_per_clock`. None where all agree or are
    absent."""
    wrong: list[tuple[str, str]] = []  # (field, what is wrong with it)
    if isinstance(aside.get("arch"), str) and arch and aside["arch"].strip() != arch:
        wrong.append(("arch", f"{aside['arch']!r} is not read (compute_capability gives {arch})"))
    given = [(f"peaks_gflops.{key}", key, value) for key, value in
             (aside["peaks_gflops"].items() if isinstance(aside.get("peaks_gflops"), dict) else ())]
    if "peak_fp32_gflops" in aside:
        given.insert(0, ("peak_fp32_gflops", "fp32", aside["peak_fp32_gflops"]))
    if "peak_l2_gbps" in aside:
        given.append(("peak_l2_gbps", "l2", aside["peak_l2_gbps"]))
    for field, key, value in given:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        have = l2_gbps if key == "l2" else peaks.get(key)
        if have is not None and abs(have - value) <= 1e-3 * max(abs(have), 1.0):
            continue
        worked = f"its figures give {have:,.0f}" if have is not None else "its figures give none"
        wrong.append((field, f"{value:,.0f} {'GB/s' if key == 'l2' else 'GFLOP/s'} is not read ({worked})"))
    if not wrong:
        return None
    field, what = wrong[0]
    more = f", nor {len(wrong) - 1} more derived figure{'s' if len(wrong) > 2 else ''}" if len(wrong) > 1 else ""
    stale = sorted(dict.fromkeys(f.split(".")[0] for f, _ in wrong))
    key = field.removeprefix("peaks_gflops.") if field.startswith("peaks_gflops.") else \
        "fp32" if field == "peak_fp32_gflops" else None
    rate = f"; to set a rate, give it as flops_per_sm_per_clock.{key} (FLOP per clock per SM)" if key else ""
    return (f"{{gpu}} {path}: {field}: {what}{more}: roofline works these out of the figures (name, "
            f"compute_capability, sm_count, fp32_cores, clocks); where a figure was changed, delete "
            f"{', '.join(stale)} (printed by `device --json` before){rate}")
