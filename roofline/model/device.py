"""The GPU as data: peak FP32 rate, peak DRAM bandwidth, per-SM limits and, once measured, the
ceilings it sustains. Built from a preset (`from_preset`, no GPU needed), from NVML readings
(`measure.nvml.from_nvml`), or read back from a results file (the schema validates it).

Peaks use the maximum clocks, not the current ones (an idle GPU clocks low); the formulas are in
`roofs` (`fp32_gflops`, `dram_gbps`, `smem_gbps`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Annotated

from annotated_types import Ge, Gt, Le

from ..errors import UsageError
from .arch import NEWEST_CC, ArchLimits, cc_key, limits_for_cc, parse_arch
from .dram import usable_l2_bytes
from .energy import EnergyCeilings
from .peaks import NO_TENSOR_CORES, PRECISIONS, TENSOR, Peak, compute_peaks, memory_peaks
from .presets import find_preset, is_device_file, preset_names
from .roofs import COMPUTE_LEVEL, OVER_PEAK, Roofs, dram_gbps, fp32_gflops, smem_gbps
from .units import Rate, figure

# Relative difference allowed between a device figure a file records and the one its other
# figures give: files written by roofline agree to the last digit; this leaves room for a figure
# rounded by hand (a datasheet's 66.9 TFLOP/s for 66,908 GFLOP/s) and catches an edited one.
ROUNDING = 0.01


@dataclass(frozen=True)
class DeviceSpec:
    """One GPU. Bandwidth in GB/s (1e9 B/s), rates in GFLOP/s, clocks in MHz, memory in bytes.

    `measured_*` are the ceilings `measure.ceilings` found (None until measured); `source` says
    where the peaks come from (NVML, or a preset's datasheet). `peaks_gflops` holds the rate of
    every precision the architecture has (`peaks.PRECISIONS` keys), `peak_sources` where each
    per-SM figure comes from, `peak_clock_mhz` the CUDA-core clock they use and `tensor_clock_mhz`
    the tensor cores' (`with_peaks` fills them; `precision_peaks` gives them with their arithmetic).
    `l2_bytes` is the L2's size (CUDA's l2CacheSize; None where unknown). `measured_energy` is
    what `device --measure` fitted of the board's power (`model.energy.EnergyCeilings`)."""

    name: str
    compute_capability: str
    sm_count: Annotated[int, Ge(1), Le(10**6)]
    peak_fp32_gflops: Annotated[float, Gt(0), Le(1e7)]
    peak_dram_gbps: Annotated[float, Ge(1e-3), Le(1e7)]
    limits: ArchLimits | None = None
    source: str = ""
    fp32_cores: int | None = None
    max_sm_clock_mhz: Annotated[float, Gt(0), Le(1e6)] | None = None
    max_mem_clock_mhz: float | None = None
    memory_bus_width_bits: int | None = None
    memory_bytes: int | None = None
    pci_bus_id: str | None = None
    measured_dram_gbps: Rate | None = None
    measured_fp32_gflops: Rate | None = None
    measured_at: str | None = None
    measured_method: str | None = None
    tensor_clock_mhz: Annotated[float, Gt(0), Le(1e6)] | None = None
    peak_clock_mhz: Annotated[float, Gt(0), Le(1e6)] | None = None
    peaks_gflops: dict[str, Rate] | None = None
    peak_sources: dict[str, str] | None = None
    peak_l2_gbps: Rate | None = None
    measured_l2_gbps: Rate | None = None
    measured_smem_gbps: Rate | None = None
    measured_peaks_gflops: dict[str, Rate] | None = None
    launch_latency_ms: Annotated[float, Gt(0), Le(1e3)] | None = None
    l2_bytes: Annotated[int, Gt(0)] | None = None
    measured_energy: EnergyCeilings | None = None  # `device --measure`: idle power and energy per FLOP and byte

    @classmethod
    def build(cls, *, name: str, compute_capability: str, sm_count: int, fp32_cores: int, sm_clock_mhz: float,
              source: str, mem_clock_mhz: float | None = None, bus_width_bits: int | None = None,
              datasheet_dram_gbps: float | None = None, limits: ArchLimits | None = None,
              tensor_clock_mhz: float | None = None, memory_bytes: int | None = None, pci_bus_id: str | None = None,
              l2_bytes: int | None = None) -> "DeviceSpec":
        """The one way a device is made from its figures (NVML readings, a report's device
        attributes, a preset's datasheet): peak FP32 = `fp32_cores` x 2 FLOP x `sm_clock_mhz`
        (the maximum SM clock, `roofs.fp32_gflops`); peak DRAM = 2 x `mem_clock_mhz` x
        `bus_width_bits` / 8 (`roofs.dram_gbps`), or `datasheet_dram_gbps` where the bus is not
        known; per-SM `limits` default to the table's for the compute capability; every
        precision's peak and the L2's filled in (`with_peaks`). Clocks in MHz. Raises UsageError
        for a compute capability the table lacks (without `limits`) or no DRAM figure at all."""
        if datasheet_dram_gbps is None and not (mem_clock_mhz and bus_width_bits):
            raise UsageError(f"{name}: no DRAM bandwidth: neither a memory clock and bus width nor a datasheet figure")
        return cls(
            name=name, compute_capability=compute_capability, sm_count=sm_count,
            peak_fp32_gflops=fp32_gflops(fp32_cores, sm_clock_mhz),
            peak_dram_gbps=dram_gbps(mem_clock_mhz, bus_width_bits) if mem_clock_mhz and bus_width_bits
            else datasheet_dram_gbps,
            limits=limits or limits_for_cc(compute_capability), source=source, fp32_cores=fp32_cores,
            max_sm_clock_mhz=sm_clock_mhz, max_mem_clock_mhz=mem_clock_mhz, memory_bus_width_bits=bus_width_bits,
            memory_bytes=memory_bytes, pci_bus_id=pci_bus_id, tensor_clock_mhz=tensor_clock_mhz, l2_bytes=l2_bytes,
        ).with_peaks()

    def disagreements(self) -> list[tuple[str, str]]:
        """Figures this device record holds that its other figures contradict, as (field, why)
        pairs; empty for a consistent record. Each check uses only what the record holds, and
        only where it holds what the check needs (`ROUNDING` apart, relative):

        - `peak_fp32_gflops` = `fp32_cores` x 2 x `max_sm_clock_mhz`, and `peaks_gflops.fp32` the same;
        - `peak_dram_gbps` = 2 x `max_mem_clock_mhz` x `memory_bus_width_bits` / 8;
        - every other `peaks_gflops` entry = its per-SM figure x SMs x the recorded clock, where the
          file names (`peak_sources`) the same source the table (`peaks.compute_peaks`) holds;
        - `limits.compute_capability` = `compute_capability`;
        - no measured ceiling above `roofs.OVER_PEAK` times its theoretical peak (FP32, DRAM, L2,
          shared memory, each precision's), and no key outside `peaks.PRECISIONS`."""
        out: list[tuple[str, str]] = []

        def agree(key: str, stored: float, derived: float, how: str) -> None:
            if abs(stored - derived) > ROUNDING * abs(derived):
                out.append((key, f"{figure(stored)}, but {how} give {figure(derived)}"))

        if self.limits is not None and self.limits.compute_capability != self.compute_capability:
            out.append(("limits.compute_capability", f"{self.limits.compute_capability!r}, but the device's is "
                                                     f"{self.compute_capability!r}"))
        if self.fp32_cores and self.max_sm_clock_mhz:
            agree("peak_fp32_gflops", self.peak_fp32_gflops, fp32_gflops(self.fp32_cores, self.max_sm_clock_mhz),
                  f"its fp32_cores {self.fp32_cores:,} x 2 FLOP x max_sm_clock_mhz {self.max_sm_clock_mhz:g}")
        if self.max_mem_clock_mhz and self.memory_bus_width_bits:
            agree("peak_dram_gbps", self.peak_dram_gbps, dram_gbps(self.max_mem_clock_mhz, self.memory_bus_width_bits),
                  f"2 x its max_mem_clock_mhz {self.max_mem_clock_mhz:g} x memory_bus_width_bits "
                  f"{self.memory_bus_width_bits} / 8")
        peaks = self.peaks_gflops or {}
        for name, table in (("peaks_gflops", peaks), ("measured_peaks_gflops", self.measured_peaks_gflops or {})):
            for key in table:
                if key not in PRECISIONS:
                    out.append((f"{name}.{key}", f"{key!r} is not a precision ({', '.join(PRECISIONS)})"))
        if "fp32" in peaks:
            agree("peaks_gflops.fp32", peaks["fp32"], self.peak_fp32_gflops, "its peak_fp32_gflops")
        clock = self.peak_clock_mhz or self.max_sm_clock_mhz
        if clock:
            table = compute_peaks(self.compute_capability, self.sm_count, None, clock, self.tensor_clock_mhz,
                                  geforce="geforce" in self.name.lower())
            for key, value in peaks.items():
                p = table.get(key)
                if p is not None and (self.peak_sources or {}).get(key) == p.source:
                    agree(f"peaks_gflops.{key}", value, p.value,
                          f"{p.per_sm_per_clock:g} per SM per clock x its {self.sm_count} SMs x {p.clock_mhz:g} MHz")
        smem = smem_gbps(self.sm_count, self.max_sm_clock_mhz) if self.max_sm_clock_mhz else None
        ceilings = [("measured_fp32_gflops", self.measured_fp32_gflops, self.peak_fp32_gflops, "peak_fp32_gflops"),
                    ("measured_dram_gbps", self.measured_dram_gbps, self.peak_dram_gbps, "peak_dram_gbps"),
                    ("measured_l2_gbps", self.measured_l2_gbps, self.peak_l2_gbps, "peak_l2_gbps"),
                    ("measured_smem_gbps", self.measured_smem_gbps, smem, "shared-memory peak (SMs x 128 B x clock)")]
        ceilings += [(f"measured_peaks_gflops.{k}", v, peaks.get(k), f"peaks_gflops.{k}")
                     for k, v in (self.measured_peaks_gflops or {}).items()]
        for key, found, peak, what in ceilings:
            if found is not None and peak and found > OVER_PEAK * peak:
                out.append((key, f"{figure(found)} is {found / peak:.3g}x its {what} of {figure(peak)}, more than "
                                 "anything sustains"))
        return out

    @property
    def arch_limits(self) -> ArchLimits:
        """The per-SM limits: as read from the GPU, else the table's for the compute capability."""
        return self.limits or limits_for_cc(self.compute_capability)

    @property
    def arch(self) -> str:
        """The target name, e.g. 'sm_90'."""
        return self.arch_limits.arch

    @property
    def roofs(self) -> Roofs:
        """The device's ceilings (`roofs.Roofs`): SMEM when the SM clock is known, L2 where its
        per-clock figure is known (`peaks.memory_peaks`), the other precisions when `with_peaks`
        filled them, measured ones when measured. Where BF16 was not measured (ceilings measured
        before each tensor precision was, from FP16 alone), BF16 tensor work is read against the
        measured FP16 tensor ceiling where the two share one theoretical rate (every architecture
        with both)."""
        smem = smem_gbps(self.sm_count, self.max_sm_clock_mhz) if self.max_sm_clock_mhz else None
        compute = tuple((COMPUTE_LEVEL[k], v) for k, v in (self.peaks_gflops or {}).items()
                        if k != "fp32" and k in COMPUTE_LEVEL)
        found = dict(self.measured_peaks_gflops or {})
        peaks = self.peaks_gflops or {}
        borrowed = ()
        if "fp16_tensor" in found and "bf16_tensor" not in found and peaks.get("bf16_tensor") == peaks.get("fp16_tensor"):
            found["bf16_tensor"] = found["fp16_tensor"]  # one tensor-core rate for both (whitepapers)
            borrowed = (COMPUTE_LEVEL["bf16_tensor"],)
        measured = tuple((COMPUTE_LEVEL[k], v) for k, v in found.items() if k in COMPUTE_LEVEL)
        l2 = self.peak_l2_gbps or (self.memory_peaks["L2"].value if "L2" in self.memory_peaks else None)
        return Roofs(self.peak_fp32_gflops, self.peak_dram_gbps, smem, self.measured_fp32_gflops,
                     self.measured_dram_gbps, l2, self.measured_l2_gbps, self.measured_smem_gbps, compute, measured,
                     self.launch_latency_ms, fp16_for=borrowed)

    def roofs_at(self, clock_mhz: float | None) -> Roofs:
        """The ceilings of a kernel that ran at `clock_mhz` (the SM clock Nsight Compute recorded
        for it): every compute roof, tensor cores' included, and the L1/shared-memory roof at that
        clock (per SM per clock x SMs x clock, `peaks`), measured ceilings capped at them; DRAM and
        L2 as they are (their clocks are not the SM's). Without a clock, or for a device without
        per-clock figures, `roofs`. An A100 report locked to its 765 MHz base clock is read
        against FP32 roofs 54 % of the 1410 MHz ones."""
        if not clock_mhz or not self.max_sm_clock_mhz:
            return self.roofs
        nominal = self.peak_clock_mhz or self.max_sm_clock_mhz
        at = replace(self, max_sm_clock_mhz=clock_mhz, tensor_clock_mhz=clock_mhz,
                     peak_fp32_gflops=self.peak_fp32_gflops * clock_mhz / nominal).with_peaks()
        return replace(at, peak_l2_gbps=self.roofs.l2_gbps).roofs.capped()

    @property
    def precision_peaks(self) -> dict[str, Peak]:
        """Every precision's theoretical peak with its per-SM figure, clock and source
        (`peaks.compute_peaks`; a GeForce board, by its name, at the GeForce tensor rates); FP32 is
        this device's own `peak_fp32_gflops`."""
        if not self.max_sm_clock_mhz:
            return {}
        out = compute_peaks(self.compute_capability, self.sm_count, self.fp32_cores, self.max_sm_clock_mhz,
                            self.tensor_clock_mhz, geforce="geforce" in self.name.lower(),
                            tensor_cores=not NO_TENSOR_CORES.search(self.name))
        if "fp32" in out:
            out["fp32"] = replace(out["fp32"], value=self.peak_fp32_gflops)
        for key, source in (self.peak_sources or {}).items():  # a device file's own rates, at this clock
            rate = file_rate(source)
            if rate is not None:
                out[key] = self.rate_peak(key, rate, source)
        return out

    def rate_peak(self, key: str, rate: float, source: str) -> Peak:
        """The peak of `rate` FLOP per clock per SM in precision `key` on this device: at the tensor
        clock for a tensor-core precision (the SM clock where none is given), else the SM clock;
        FLOP/clk/SM x SMs x MHz x 1e-3 = GFLOP/s."""
        clock = (self.tensor_clock_mhz or self.max_sm_clock_mhz) if key in TENSOR else self.max_sm_clock_mhz
        return Peak(key, rate * self.sm_count * clock * 1e-3, rate, self.sm_count, clock, source)

    @property
    def memory_peaks(self) -> dict[str, Peak]:
        """Theoretical L1/SMEM and (where known) L2 bandwidth with their sources (`peaks.memory_peaks`)."""
        return memory_peaks(self.compute_capability, self.sm_count, self.max_sm_clock_mhz) if self.max_sm_clock_mhz \
            else {}

    def with_peaks(self) -> "DeviceSpec":
        """This device with `peaks_gflops`, `peak_sources`, `peak_clock_mhz` and `peak_l2_gbps` filled in."""
        peaks = self.precision_peaks
        l2 = self.memory_peaks.get("L2")
        return replace(self, peaks_gflops={k: p.value for k, p in peaks.items()} or None,
                       peak_sources={k: p.source for k, p in peaks.items()} or None,
                       peak_clock_mhz=self.max_sm_clock_mhz, tensor_clock_mhz=self.tensor_clock_mhz
                       or self.max_sm_clock_mhz, peak_l2_gbps=l2.value if l2 else None)

    @property
    def ridge_point(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the DRAM roof meets the FP32 roof."""
        return self.roofs.ridge_point

    @property
    def usable_l2_bytes(self) -> int | None:
        """The L2 capacity the DRAM model reads a grid's panels against (`dram.usable_l2_bytes`:
        half the L2 from compute capability 8.0 on); None where the L2's size is unknown."""
        return usable_l2_bytes(self.l2_bytes, self.compute_capability) if self.l2_bytes else None

    def fits_in_l2(self, working_set_bytes: int) -> bool:
        """Whether a problem touching `working_set_bytes` (A, B and C together) fits in this GPU's
        L2 (False where its size is unknown): then no DRAM floor of modelled bytes binds
        (`roofs.verdict`'s `fits_in_l2`)."""
        return self.l2_bytes is not None and working_set_bytes <= self.l2_bytes

    @property
    def has_measured_ceilings(self) -> bool:
        """Whether ceilings measured on this GPU are recorded (`with_ceilings`, `device --measure`), which
        verdicts read where measured; else its theoretical peaks alone (a preset, a report made elsewhere)."""
        return self.measured_at is not None or self.measured_dram_gbps is not None

    def with_ceilings(self, dram_gbps: float, fp32_gflops: float, measured_at: str, method: str) -> "DeviceSpec":
        """This device with measured ceilings attached."""
        return replace(self, measured_dram_gbps=dram_gbps, measured_fp32_gflops=fp32_gflops,
                       measured_at=measured_at, measured_method=method)


def from_preset(name: str) -> DeviceSpec:
    """A `DeviceSpec` from datasheet figures (`presets.PRESETS`), or from the device file a name
    ending in .toml or .json gives (`device_file`). Raises UsageError listing the known names for
    an unknown or empty one, or saying what is wrong with the file (a file of another kind: that it
    is none)."""
    if is_device_file(name):
        return from_device_file(Path(name))
    p = find_preset(name) if name.strip() else None
    if p is None and Path(name).is_file():  # a file, but not a device file
        raise UsageError(f"{name}: not a device file (a .toml or .json file with the fields `roofline device --gpu h200 "
                         "--json` prints), nor a GPU's name", "gpu")
    if p is None:
        raise UsageError(f"unknown GPU {name!r}; known: {', '.join(preset_names())}; or describe it in a device "
                         "file, {gpu} mygpu.toml, with the fields `roofline device --gpu h200 --json` prints", "gpu")
    return DeviceSpec.build(name=p.name, compute_capability=p.compute_capability, sm_count=p.sm_count,
                            fp32_cores=p.fp32_cores, sm_clock_mhz=p.boost_clock_mhz, source=f"preset: {p.source}",
                            datasheet_dram_gbps=p.dram_gbps, memory_bytes=p.memory_bytes,
                            tensor_clock_mhz=p.tensor_clock_mhz, l2_bytes=p.l2_bytes)


def named_limits(gpu: str | None, arch: str | None) -> ArchLimits | None:
    """Per-SM limits for `--gpu NAME` or `--arch sm_XY`; None when neither is given (the caller
    then asks this machine's GPU). Raises UsageError for unknown names or both at once."""
    if gpu is not None and arch is not None:
        raise UsageError("give {gpu} or {arch}, not both", "gpu", ["arch"])
    if gpu is not None:
        return from_preset(gpu).arch_limits
    if arch is not None:
        return parse_arch(arch)
    return None


_FILE_RATE = re.compile(r"^device file .*: (?P<rate>[0-9.e+]+) FLOP/clk/SM$")


def file_rate_source(name: str, rate: float) -> str:
    """The source of a rate a device file gives ('device file b300.toml: 8192 FLOP/clk/SM'), which
    `file_rate` reads back: the rate is kept with the device, and taken at whatever clock it is read."""
    return f"device file {name}: {rate:g} FLOP/clk/SM"


def file_rate(source: str) -> float | None:
    """The FLOP per SM per clock a device file gave for a precision, from its source
    (`file_rate_source`); None for a rate of any other source."""
    m = _FILE_RATE.match(source)
    return float(m["rate"]) if m else None


def from_device_file(path: Path) -> DeviceSpec:
    """The device a user's device file describes (`device_file`): built as a preset is, its
    `flops_per_sm_per_clock` replacing the table's rates of those precisions. Raises UsageError
    as `device_file.read` does."""
    # here: reading one needs pydantic, a preset does not
    from .device_file import edited_peak, read as read_device_file

    printed = frozenset({f.name for f in fields(DeviceSpec)} | {"arch", "ridge_point_flop_per_byte"})
    spec, limits, aside = read_device_file(path, printed)
    beyond = ""
    if cc_key(spec.compute_capability) > cc_key(NEWEST_CC):
        def keys(cc: str) -> set[str]:
            return set(compute_peaks(cc, spec.sm_count, spec.fp32_cores, spec.max_sm_clock_mhz or 1.0, None))
        given = set(spec.flops_per_sm_per_clock or {})
        unknown = [k for k in PRECISIONS if k in keys(NEWEST_CC) - keys(spec.compute_capability) - given]
        beyond = (f"; compute capability {spec.compute_capability} is newer than any roofline models, so its per-SM "
                  f"limits are taken as {NEWEST_CC}'s" + (f", and it has no roof of {', '.join(unknown)} unless the file "
                                                       "gives their flops_per_sm_per_clock" if unknown else ""))
    own = aside.get("limits") if isinstance(aside.get("limits"), dict) else {}
    table = limits.to_dict()
    differ = sorted(k for k, v in own.items() if k in table and v != table[k])
    if differ:  # the file's own per-SM limits (a GPU's driver may report others than the table): not read
        beyond += (f"; its per-SM limits are compute capability {spec.compute_capability}'s table's, not the "
                   f"file's own (which differ in {', '.join(differ[:3])}{' and more' if len(differ) > 3 else ''})")
    device = DeviceSpec.build(
        name=spec.name or path.stem, compute_capability=spec.compute_capability, sm_count=spec.sm_count,
        fp32_cores=spec.fp32_cores, sm_clock_mhz=spec.max_sm_clock_mhz, limits=limits,
        source=f"device file {path.name}" + (f": {spec.source}" if spec.source else "") + beyond,
        mem_clock_mhz=spec.max_mem_clock_mhz, bus_width_bits=spec.memory_bus_width_bits,
        datasheet_dram_gbps=spec.peak_dram_gbps, memory_bytes=spec.memory_bytes, l2_bytes=spec.l2_bytes,
        tensor_clock_mhz=spec.tensor_clock_mhz)
    if spec.flops_per_sm_per_clock:
        peaks, sources = dict(device.peaks_gflops or {}), dict(device.peak_sources or {})
        for key, rate in spec.flops_per_sm_per_clock.items():
            sources[key] = file_rate_source(path.name, rate)
            peaks[key] = device.rate_peak(key, rate, sources[key]).value
        device = replace(device, peaks_gflops=peaks, peak_sources=sources,
                         peak_fp32_gflops=peaks.get("fp32", device.peak_fp32_gflops))
    why = edited_peak(path, aside, {**(device.peaks_gflops or {}), "fp32": device.peak_fp32_gflops},
                      device.peak_l2_gbps, device.arch)
    if why:
        raise UsageError(why, "gpu")
    return device
