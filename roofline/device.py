"""The GPU as data: peak FP32 rate, peak DRAM bandwidth and per-SM limits.

Three ways to build a `DeviceSpec`:
  `from_nvml()`        the GPU in this machine: NVML (package nvidia-ml-py) for clocks, bus width
                       and cores, CUDA device attributes (through CuPy) for the per-SM limits;
  `from_preset(name)`  datasheet figures (`presets.PRESETS`), no GPU needed;
  `from_dict(d)`       the `device` object of a results file.

Peaks use the maximum clocks, not the current ones (an idle GPU clocks low):
  peak DRAM GB/s   = 2 (double data rate) x max memory clock x bus width / 8 bits
  peak FP32 GFLOP/s = FP32 cores x 2 (one FMA is two FLOPs) x max SM clock
The bus width is read, never assumed from the memory type (the H200 reports 6016 bits, not 6144).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .arch import ArchLimits, limits_for_cc
from .errors import RunError, UsageError
from .presets import find_preset, preset_names


@dataclass(frozen=True)
class DeviceSpec:
    """One GPU. Bandwidth in GB/s (1e9 B/s), rates in GFLOP/s, clocks in MHz, memory in bytes."""

    name: str
    compute_capability: str
    sm_count: int
    peak_fp32_gflops: float
    peak_dram_gbps: float
    limits: ArchLimits
    source: str
    fp32_cores: int | None = None
    max_sm_clock_mhz: float | None = None
    max_mem_clock_mhz: float | None = None
    memory_bus_width_bits: int | None = None
    memory_bytes: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def ridge_point(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the memory roof meets the FP32 roof."""
        return self.peak_fp32_gflops / self.peak_dram_gbps

    def to_dict(self) -> dict:
        """The results file's `device` object (schema 1 keys plus the per-SM limits)."""
        d = {
            "name": self.name,
            "compute_capability": self.compute_capability,
            "arch": self.limits.arch,
            "sm_count": self.sm_count,
            "peak_fp32_gflops": round(self.peak_fp32_gflops, 1),
            "peak_dram_gbps": round(self.peak_dram_gbps, 1),
            "ridge_point_flop_per_byte": round(self.ridge_point, 2),
            "fp32_cores": self.fp32_cores,
            "max_sm_clock_mhz": self.max_sm_clock_mhz,
            "max_mem_clock_mhz": self.max_mem_clock_mhz,
            "memory_bus_width_bits": self.memory_bus_width_bits,
            "memory_bytes": self.memory_bytes,
            "source": self.source,
            "limits": self.limits.to_dict(),
        }
        d.update(self.extra)
        return d


def dram_gbps(mem_clock_mhz: float, bus_width_bits: int) -> float:
    """Peak DRAM bandwidth in GB/s: 2 transfers per clock x clock (MHz) x bus width (bits) / 8.

    H200: 2 x 3201 MHz x 6016 bit / 8 = 4814 GB/s."""
    return 2 * mem_clock_mhz * 1e6 * bus_width_bits / 8 / 1e9


def fp32_gflops(cores: int, sm_clock_mhz: float) -> float:
    """Peak FP32 rate in GFLOP/s: cores x 2 FLOP per FMA x SM clock (MHz).

    H200: 16896 x 2 x 1980 MHz = 66,908 GFLOP/s."""
    return cores * 2 * sm_clock_mhz / 1e3


def from_preset(name: str) -> DeviceSpec:
    """A `DeviceSpec` from datasheet figures. Raises UsageError listing the known names."""
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
    )


def from_dict(d: dict) -> DeviceSpec:
    """A `DeviceSpec` from a results file's `device` object (only the schema-1 keys are needed).

    Raises KeyError/ValueError on a malformed object; `results.load` turns those into UsageError.
    """
    cc = str(d["compute_capability"])
    return DeviceSpec(
        name=str(d["name"]),
        compute_capability=cc,
        sm_count=int(d["sm_count"]),
        peak_fp32_gflops=float(d["peak_fp32_gflops"]),
        peak_dram_gbps=float(d["peak_dram_gbps"]),
        limits=limits_for_cc(cc),
        source=str(d.get("source", "results file")),
    )


def gpu_available() -> bool:
    """True when CuPy is installed and sees a CUDA device with a working driver."""
    try:
        import cupy
    except ImportError:
        return False
    try:
        return bool(cupy.cuda.is_available())
    except Exception:  # a broken driver install is "no usable GPU" here
        return False


def require_gpu() -> None:
    """Raise RunError with a one-line reason when there is no usable GPU."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        raise RunError("CuPy is not installed: in the roofline folder run pip install '.[cuda12]' (or '.[cuda13]')") from None
    if not gpu_available():
        raise RunError("no CUDA GPU with a working driver found; without one, `roofline plot`, "
                       "`occupancy --arch sm_XY`, `kernels --arch sm_XY` and `device --gpu NAME` still work")


def from_nvml(device_index: int = 0) -> DeviceSpec:
    """The GPU CuPy calls `device_index`, read through NVML and the CUDA device attributes.

    NVML gives the name, max SM and memory clocks, bus width and FP32 core count; CUDA gives the
    compute capability and the per-SM limits. The two are matched by PCI bus id, so
    CUDA_VISIBLE_DEVICES cannot pair one GPU's clocks with another's limits.
    Raises RunError when there is no GPU or NVML cannot be read.
    """
    require_gpu()
    import cupy
    import pynvml

    runtime = cupy.cuda.runtime
    props = runtime.getDeviceProperties(device_index)
    cc = f"{props['major']}.{props['minor']}"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise RunError(f"NVML could not start ({exc}); is the NVIDIA driver installed?") from None
    bus_id = runtime.deviceGetPCIBusId(device_index)
    try:
        handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
        name = pynvml.nvmlDeviceGetName(handle)
        name = name.decode() if isinstance(name, bytes) else name
        sm_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)
        mem_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
        cores = pynvml.nvmlDeviceGetNumGpuCores(handle)
        memory_bytes = pynvml.nvmlDeviceGetMemoryInfo(handle).total
    except pynvml.NVMLError as exc:
        raise RunError(f"NVML could not read the GPU's clocks or cores: {exc}") from None
    finally:
        pynvml.nvmlShutdown()
    limits = limits_for_cc(
        cc,
        max_warps_per_sm=props["maxThreadsPerMultiProcessor"] // props["warpSize"],
        max_blocks_per_sm=props["maxBlocksPerMultiProcessor"],
        registers_per_sm=props["regsPerMultiprocessor"],
        max_registers_per_block=props["regsPerBlock"],
        smem_per_sm_bytes=props["sharedMemPerMultiprocessor"],
        max_smem_per_block_optin_bytes=props["sharedMemPerBlockOptin"],
        reserved_smem_per_block_bytes=props["reservedSharedMemPerBlock"],
        max_threads_per_block=props["maxThreadsPerBlock"],
        warp_size=props["warpSize"],
    )
    return DeviceSpec(
        name=name,
        compute_capability=cc,
        sm_count=props["multiProcessorCount"],
        peak_fp32_gflops=fp32_gflops(cores, sm_mhz),
        peak_dram_gbps=dram_gbps(mem_mhz, bus_bits),
        limits=limits,
        source="NVML (max clocks, bus width, cores) and CUDA device attributes",
        fp32_cores=cores,
        max_sm_clock_mhz=sm_mhz,
        max_mem_clock_mhz=mem_mhz,
        memory_bus_width_bits=bus_bits,
        memory_bytes=memory_bytes,
        extra={"pci_bus_id": bus_id},
    )


def current_sm_clock_mhz(device_index: int = 0) -> int | None:
    """The SM clock NVML reads right now, in MHz; None where NVML cannot say."""
    try:
        import cupy
        import pynvml

        pynvml.nvmlInit()
        try:
            bus_id = cupy.cuda.runtime.deviceGetPCIBusId(device_index)
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
            return int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return None


def nvml_compute_capability(device_index: int = 0) -> str | None:
    """The compute capability ("9.0") of NVML's GPU `device_index`, read without CuPy (so that
    `occupancy` starts fast); None when there is no driver or GPU."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
        return f"{major}.{minor}"
    except Exception:
        return None
    finally:
        pynvml.nvmlShutdown()


def resolve(gpu: str | None = None) -> DeviceSpec:
    """`--gpu NAME` as a preset, else the GPU in this machine.

    Raises UsageError for an unknown or empty name, and when no name is given and there is no GPU."""
    if gpu is not None:
        return from_preset(gpu)
    if not gpu_available():
        raise UsageError("no CUDA GPU found; describe one with --gpu NAME (known: "
                         f"{', '.join(preset_names())})")
    return from_nvml()


def resolve_limits(gpu: str | None = None, arch: str | None = None) -> ArchLimits:
    """Per-SM limits for `--gpu NAME`, else `--arch sm_XY`, else this machine's GPU (through NVML
    only: no CuPy import). Raises UsageError for unknown names, for both options at once, and when
    neither is given on a machine with no GPU."""
    from .arch import parse_arch

    if gpu is not None and arch is not None:
        raise UsageError("give --gpu or --arch, not both")
    if gpu is not None:
        return from_preset(gpu).limits
    if arch is not None:
        return parse_arch(arch)
    cc = nvml_compute_capability()
    if cc is None:
        raise UsageError("no GPU found here; name a target with --arch sm_XY (e.g. sm_90) "
                         "or --gpu NAME (e.g. h200)")
    return limits_for_cc(cc)
