"""The GPU as data: peak FP32 rate, peak DRAM bandwidth, per-SM limits and, once measured, the
ceilings it sustains. Built from a preset (`from_preset`, no GPU needed), from NVML readings
(`measure.nvml.from_nvml`), or read back from a results file (the schema validates it).

Peaks use the maximum clocks, not the current ones (an idle GPU clocks low); the formulas are in
`roofs` (`fp32_gflops`, `dram_gbps`, `smem_gbps`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated

from annotated_types import Ge, Gt, Le

from ..errors import UsageError
from .arch import ArchLimits, limits_for_cc, parse_arch
from .peaks import Peak, compute_peaks, memory_peaks
from .presets import find_preset, preset_names
from .roofs import COMPUTE_LEVEL, Roofs, smem_gbps
from .units import Rate


@dataclass(frozen=True)
class DeviceSpec:
    """One GPU. Bandwidth in GB/s (1e9 B/s), rates in GFLOP/s, clocks in MHz, memory in bytes.

    `measured_*` are the ceilings `measure.ceilings` found (None until measured); `source` says
    where the peaks come from (NVML, or a preset's datasheet). `peaks_gflops` holds the rate of
    every precision the architecture has (`peaks.PRECISIONS` keys), `peak_sources` where each
    per-SM figure comes from, `peak_clock_mhz` the CUDA-core clock they use and `tensor_clock_mhz`
    the tensor cores' (`with_peaks` fills them; `precision_peaks` gives them with their arithmetic).
    `l2_bytes` is the L2's size (CUDA's l2CacheSize; None where unknown)."""

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
        filled them, measured ones when measured. BF16 tensor work is read against the measured
        FP16 tensor ceiling where the two share one theoretical rate (every architecture with
        both): CuPy's cuBLAS reaches FP16, not BF16."""
        smem = smem_gbps(self.sm_count, self.max_sm_clock_mhz) if self.max_sm_clock_mhz else None
        compute = tuple((COMPUTE_LEVEL[k], v) for k, v in (self.peaks_gflops or {}).items()
                        if k != "fp32" and k in COMPUTE_LEVEL)
        found = dict(self.measured_peaks_gflops or {})
        peaks = self.peaks_gflops or {}
        if "fp16_tensor" in found and "bf16_tensor" not in found and peaks.get("bf16_tensor") == peaks.get("fp16_tensor"):
            found["bf16_tensor"] = found["fp16_tensor"]  # one tensor-core rate for both (whitepapers); CuPy has no BF16
        measured = tuple((COMPUTE_LEVEL[k], v) for k, v in found.items() if k in COMPUTE_LEVEL)
        l2 = self.peak_l2_gbps or (self.memory_peaks["L2"].value if "L2" in self.memory_peaks else None)
        return Roofs(self.peak_fp32_gflops, self.peak_dram_gbps, smem, self.measured_fp32_gflops,
                     self.measured_dram_gbps, l2, self.measured_l2_gbps, self.measured_smem_gbps, compute, measured,
                     self.launch_latency_ms)

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
                            self.tensor_clock_mhz, geforce="geforce" in self.name.lower())
        if "fp32" in out:
            out["fp32"] = replace(out["fp32"], value=self.peak_fp32_gflops)
        return out

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

    def fits_in_l2(self, working_set_bytes: int) -> bool:
        """Whether a problem touching `working_set_bytes` (A, B and C together) fits in this GPU's
        L2 (False where its size is unknown): then no DRAM floor of modelled bytes binds
        (`roofs.verdict`'s `fits_in_l2`)."""
        return self.l2_bytes is not None and working_set_bytes <= self.l2_bytes

    def with_ceilings(self, dram_gbps: float, fp32_gflops: float, measured_at: str, method: str) -> "DeviceSpec":
        """This device with measured ceilings attached."""
        return replace(self, measured_dram_gbps=dram_gbps, measured_fp32_gflops=fp32_gflops,
                       measured_at=measured_at, measured_method=method)


def from_preset(name: str) -> DeviceSpec:
    """A `DeviceSpec` from datasheet figures (`presets.PRESETS`). Raises UsageError listing the
    known names for an unknown or empty one."""
    p = find_preset(name) if name.strip() else None
    if p is None:
        raise UsageError(f"unknown GPU {name!r}; known: {', '.join(preset_names())}")
    return DeviceSpec(
        name=p.name,
        compute_capability=p.compute_capability,
        sm_count=p.sm_count,
        peak_fp32_gflops=p.peak_fp32_gflops,
        peak_dram_gbps=p.dram_gbps,
        limits=limits_for_cc(p.compute_capability),
        source=f"preset: {p.source}",
        fp32_cores=p.fp32_cores,
        max_sm_clock_mhz=p.boost_clock_mhz,
        memory_bytes=p.memory_bytes,
        tensor_clock_mhz=p.tensor_clock_mhz,
        l2_bytes=p.l2_bytes,
    ).with_peaks()


def named_limits(gpu: str | None, arch: str | None) -> ArchLimits | None:
    """Per-SM limits for `--gpu NAME` or `--arch sm_XY`; None when neither is given (the caller
    then asks this machine's GPU). Raises UsageError for unknown names or both at once."""
    if gpu is not None and arch is not None:
        raise UsageError("give --gpu or --arch, not both")
    if gpu is not None:
        return from_preset(gpu).arch_limits
    if arch is not None:
        return parse_arch(arch)
    return None
