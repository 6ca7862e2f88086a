"""The GPU a report was recorded on, and the one it is read against: the report's device
attributes (name, SMs, clocks, bus, limits), else the one GPU its NUMA section names, else the
preset or device file `--gpu` gives (checked against the compute capability the report records).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..errors import UsageError
from ..model.arch import limits_for_cc
from ..model.device import DeviceSpec, from_preset
from ..model.peaks import fp32_cores_per_sm
from ..model.presets import PRESETS, find_preset, name_key, tensor_clock_mhz
from .metrics import DEVICE_NAMES
from .rows import Row

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


def presets_of(cc: str | None, sm_count: int | None = None) -> str:
    """The preset names of compute capability `cc` (all of them when it is unknown) and, where
    given, `sm_count` SMs, for a message."""
    names = [p.short_name for p in _shaped(cc, sm_count)]
    return ", ".join(names) if names else "none"


def _shaped(cc: str | None, sm_count: int | None) -> list:
    """The presets of compute capability `cc` and `sm_count` SMs (either None: any)."""
    return [p for p in PRESETS if (cc is None or p.compute_capability == cc)
            and (sm_count is None or p.sm_count == sm_count)]


def _preset_by_shape(cc: str | None, sm: float | None) -> DeviceSpec | None:
    """The one preset whose compute capability and SM count are a report's (the text and the
    details page print both: the launch line's 'CC 9.0', Launch Statistics' '# SMs'), or None
    where none or several are (H100 SXM and H200 are both 9.0 with 132 SMs)."""
    if cc is None or not sm:
        return None
    found = _shaped(cc, int(sm))
    if len(found) != 1:
        return None
    device = from_preset(found[0].short_name)
    return replace(device, source=f"{device.source}; the report does not name its GPU, and {found[0].name} is "
                                  f"the one GPU known of compute capability {cc} with {int(sm)} SMs")


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


def _gpu_of(row: Row) -> dict[str, str]:
    """What a row says of the GPU its launch ran on: 'cc' ('7.5'), 'sms' ('40'), 'name' ('Tesla
    T4'), each where the row gives it (device attributes, the launch line's CC, Launch
    Statistics' # SMs, the NUMA section's one device name, a Device column that is a name)."""
    out = {}
    if cc := report_cc([row]):
        out["cc"] = cc
    sm = _attr(row, "multiprocessor_count") or row.values.get("launch__sm_count")
    if sm:
        out["sms"] = str(int(sm))
    name = str(row.text.get("device__attribute_display_name") or row.text.get("device__attribute_device_name")
               or "").strip()
    if not name and (found := re.fullmatch(r"\s*1\s*\((?P<name>[^,()]+)\)\s*", row.text.get(DEVICE_NAMES, ""))):
        name = found["name"].strip()
    if not name and not re.fullmatch(r"\d*", row.text.get("Device", "").strip()):
        name = row.text["Device"].strip()
    if name:
        out["name"] = name_key(name)
        out["shown"] = name
    return out


def _worded(gpu: dict[str, str]) -> str:
    """'Tesla T4 (compute capability 7.5, 40 SMs)', or the presets of that shape where no name is given."""
    shape = ", ".join(x for x in (f"compute capability {gpu['cc']}" if "cc" in gpu else "",
                                  f"{gpu['sms']} SMs" if "sms" in gpu else "") if x)
    if "shown" in gpu:
        return f"{gpu['shown']} ({shape})" if shape else gpu["shown"]
    named = [p.name for p in _shaped(gpu.get("cc"), int(gpu["sms"]) if "sms" in gpu else None)] if shape else []
    guess = f": {named[0]}?" if len(named) == 1 else ""
    return f"a GPU of {shape}{guess}" if shape else "a GPU the report does not describe"


def one_gpu(rows: list[Row], source: str) -> None:
    """Raise UsageError (one line naming both GPUs and a launch of each) when a report's launches
    ran on GPUs of more than one kind: outputs of two machines joined, or a program on two kinds
    of GPU. A profile is read against one GPU's roofs and limits, so such a report is read one
    GPU at a time. Launches are of one kind unless they disagree on something both say:
    compute capability, SM count or name (launches on Device 0 and Device 1 of one model are)."""
    seen: list[tuple[int, dict[str, str]]] = []
    for i, row in enumerate(rows):
        gpu = _gpu_of(row)
        if not seen:
            seen.append((i, gpu))
            continue
        first_i, first = seen[0]
        clash = [k for k in ("cc", "sms", "name") if k in gpu and k in first and gpu[k] != first[k]]
        if clash:
            a, b = (f"launch {r.text.get('ID') or j} ({(r.kernel or 'no name')[:40]})"
                    for j, r in ((first_i, rows[first_i]), (i, row)))
            raise UsageError(f"{source}: holds launches of two GPUs, {_worded(first)} ({a}) and {_worded(gpu)} ({b}): "
                             "a profile is read against one GPU's roofs, so import each GPU's report on its own "
                             "(split the file where the other GPU's output begins)")
        for k, v in gpu.items():  # what the first launch left unsaid, a later one of the same GPU may say
            first.setdefault(k, v)


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
        named = _named_preset(rows, cc, sm) or _preset_by_shape(cc, sm)
        if named is not None:
            return named
        shape = int(sm) if sm and cc and _shaped(cc, int(sm)) else None  # a narrower list where the SM count tells
        had = (f"it gives compute capability {cc}" + (f" and {shape} SMs" if shape else "") + ", not" if cc
               else "it gives neither the compute capability nor")
        raise UsageError(f"{source}: the report does not say which GPU it ran on ({had} the device's name, clocks "
                         "and memory bus, which its peaks come from); "
                         f"name it with {{gpu}} if it is one of the GPUs known of that kind ({presets_of(cc, shape)}); "
                         "if it is another, describe it in a device file, {gpu} mygpu.toml, with the fields "
                         "`roofline device --gpu h200 --json` prints", mentions=["gpu"])
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
    device = DeviceSpec.build(
        name=name, compute_capability=cc, sm_count=int(sm), fp32_cores=cores, sm_clock_mhz=sm_mhz,
        mem_clock_mhz=mem_mhz, bus_width_bits=int(bus), limits=limits,
        source=f"device attributes in the Nsight Compute report ({source}); FP32 cores {fp32_cores_per_sm(cc)} per SM",
        memory_bytes=int(_attr(row, "total_memory") or 0) or None, tensor_clock_mhz=tensor_clock_mhz(name),
        l2_bytes=int(l2) if l2 else None,
    )
    return _with_fp64_ratio(device, _attr(row, "single_to_double_precision_perf_ratio"))


def _with_fp64_ratio(device: DeviceSpec, ratio: float | None) -> DeviceSpec:
    """`device` with its FP64 peak the report's own: FP32's over
    `device__attribute_single_to_double_precision_perf_ratio` where that differs from the
    architecture's table (an H800 or H20 reports 64 where the H100's sm_90 has 2: 1 TFLOP/s, not
    33), and its FP64 tensor peak no higher than that on such a GPU (their datasheets give both
    as 1 TFLOP/s)."""
    peaks = dict(device.peaks_gflops or {})
    if not ratio or "fp64" not in peaks or "fp32" not in peaks:
        return device
    fp64 = peaks["fp32"] / ratio
    if abs(fp64 - peaks["fp64"]) <= 0.01 * peaks["fp64"]:
        return device
    sources = dict(device.peak_sources or {})
    said = f"FP32 / {ratio:g}, the report's single_to_double_precision_perf_ratio"
    peaks["fp64"], sources["fp64"] = fp64, said
    if "fp64_tensor" in peaks and peaks["fp64_tensor"] > fp64:
        peaks["fp64_tensor"], sources["fp64_tensor"] = fp64, f"at most FP64's, {said}"
    return replace(device, peaks_gflops=peaks, peak_sources=sources)


def choose(rows: list[Row], preset: DeviceSpec | None, source: str, notes: list[str]) -> tuple[DeviceSpec, str]:
    """The GPU a report is read against and where it came from: its own (`device_from_rows`:
    'report'), or the `--gpu` preset or device file `preset` when that has the report's compute
    capability ('gpu' where the report names no GPU, 'gpu over report' where it names another of
    as many SMs; its per-SM limits and roofs are then the right kind; a note in `notes` says when
    the names differ). Raises UsageError for a preset of another architecture or, where the report
    names its GPU, of another SM count (its launches ran on the report's SMs), and for a report
    without device attributes and no preset (naming the presets of its compute capability)."""
    if preset is None:
        return device_from_rows(rows, source), "report"
    cc = report_cc(rows)
    try:
        own = device_from_rows(rows, source)
    except UsageError:
        if cc is not None and cc != preset.compute_capability:
            raise UsageError(f"{source} was recorded on a GPU of compute capability {cc}; {{gpu}} {preset.name} is "
                             f"{preset.compute_capability}, whose limits and roofs do not apply to these kernels",
                             "gpu") from None
        sm = rows[0].values.get("launch__sm_count")
        if sm and int(sm) != preset.sm_count:
            notes.append(f"the report's launches ran on {int(sm)} SMs; --gpu {preset.name} has {preset.sm_count}: its "
                         "roofs are those of the whole of that GPU (describe yours in a device file, --gpu mygpu.toml, "
                         "if it is another)")
        return preset, "gpu"  # the report names no GPU: the preset is all there is
    if own.compute_capability != preset.compute_capability:
        raise UsageError(f"{source} was recorded on {own.name} (compute capability {own.compute_capability}); "
                         f"{{gpu}} {preset.name} is {preset.compute_capability}, whose limits and roofs do not apply "
                         "to these kernels", "gpu")
    if own.sm_count != preset.sm_count:  # its launches' waves and FLOP/s are of the SMs they had
        raise UsageError(f"{source} was recorded on {own.name} ({own.sm_count} SMs); {{gpu}} {preset.name} has "
                         f"{preset.sm_count}, whose roofs do not fit launches that ran on {own.sm_count} (read it against the "
                         "GPU it names, and see it on another GPU with roofline project)", "gpu")
    if name_key(own.name) != name_key(preset.name):
        notes.append(f"recorded on {own.name}; read against {preset.name}'s roofs as --gpu asks")
        return preset, "gpu over report"
    return preset, "report"
