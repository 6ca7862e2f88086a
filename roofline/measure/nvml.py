"""The GPU in this machine: peaks through NVML (package nvidia-ml-py, module pynvml), per-SM
limits from the CUDA device attributes (through CuPy).

Peaks use the maximum clocks, not the current ones (an idle GPU clocks low): NVML's max SM and
memory clocks, bus width and FP32 core count go into `DeviceSpec.build` (`model.roofs.fp32_gflops`
and `dram_gbps`); the other precisions come from `model.peaks` at that clock, tensor cores at the
clock a known GPU's datasheet implies.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import RunError, UsageError
from ..extras import install_hint
from ..model.arch import ArchLimits, limits_for_cc
from ..model.device import DeviceSpec, from_preset
from ..model.presets import preset_names, tensor_clock_mhz

# How to add CuPy and the CUDA wheels to this installation (whichever way roofline was installed).
INSTALL_HINT = f"{install_hint('cuda12')}, or its cuda13 extra's packages on a CUDA 13 driver"
NO_GPU = "no CUDA GPU with a working driver found"  # how every command that needs one says so (exit 1)


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


WITHOUT_GPU = ("without one, `roofline show`, `plot`, `compare`, `whatif`, `project`, `comms`, `profile --import`, "
               "`occupancy --arch sm_XY`, `kernels --model-only` (and `kernels --arch sm_XY` with the cuda12 extra's "
               "NVRTC, or nvcc for your own files) and `device --gpu NAME` still work")


def driver_present() -> bool:
    """Whether an NVIDIA driver answers here (NVML starts): a machine without one has no GPU to
    install CuPy for."""
    try:
        import pynvml

        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        return True
    except Exception:  # NVMLError_LibraryNotFound and its kin: no driver
        return False


def require_gpu(without: str = WITHOUT_GPU) -> None:
    """Raise RunError with a one-line reason when there is no usable GPU: CuPy missing (how to
    install it, where a driver says there is a GPU), no GPU, or both; `without` says what can be
    done without one (default: the commands that need none)."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        if driver_present():
            raise RunError(f"CuPy is not installed: {INSTALL_HINT}") from None
        raise RunError(f"{NO_GPU} (and CuPy is not installed: on a machine with one, {INSTALL_HINT}); "
                       f"{without}") from None
    if not gpu_available():
        raise RunError(f"{NO_GPU}; {without}")


def _current(device_index: int | None) -> int:
    import cupy

    return cupy.cuda.runtime.getDevice() if device_index is None else device_index


def select_gpu(which: str) -> str:
    """Make the GPU `which` names CuPy's current device and return its PCI bus id. `which` is an
    index as `nvidia-smi` numbers the GPUs (NVML's order, by PCI bus id, which need not be CUDA's)
    or a PCI bus id ('0000:19:00.0'). Raises UsageError for a GPU that does not exist or that
    CUDA_VISIBLE_DEVICES hides (naming the parameter `device`, `run --device` on the command
    line), before anything else for a value that is neither (no GPU needed to say so), RunError
    when there is no GPU."""
    import re

    text = str(which).strip()
    if not text.isdigit() and not re.fullmatch(r"([0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", text):
        raise UsageError(f"{{device}} {text!r}: give a GPU index (0, 1, ...) or a PCI bus id like 0000:19:00.0",
                         "device")
    require_gpu()
    import cupy
    import pynvml

    bus_id = text
    if text.isdigit():
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            raise RunError(f"NVML could not start ({exc}); is the NVIDIA driver installed?") from None
        try:
            count = pynvml.nvmlDeviceGetCount()
            if int(text) >= count:
                raise UsageError(f"{{device}} {text}: this machine has {count} GPU{'s' if count != 1 else ''} "
                                 f"(0 to {count - 1}, as nvidia-smi numbers them)", "device")
            bus_id = pynvml.nvmlDeviceGetPciInfo(pynvml.nvmlDeviceGetHandleByIndex(int(text))).busId
            bus_id = bus_id.decode() if isinstance(bus_id, bytes) else bus_id
        finally:
            pynvml.nvmlShutdown()
    try:
        index = cupy.cuda.runtime.deviceGetByPCIBusId(bus_id)
    except Exception:
        raise UsageError(f"{{device}} {text}: CUDA sees no GPU at PCI bus id {bus_id} "
                         "(is it hidden by CUDA_VISIBLE_DEVICES?)", "device") from None
    cupy.cuda.Device(index).use()
    return cupy.cuda.runtime.deviceGetPCIBusId(index)


def from_nvml(device_index: int | None = None) -> DeviceSpec:
    """The GPU CuPy calls `device_index` (None: the current device, `select_gpu`'s), read through
    NVML and the CUDA device attributes.

    NVML gives the name, max SM and memory clocks, bus width and FP32 core count; CUDA gives the
    compute capability, the per-SM limits and the L2's size. The two are matched by PCI bus id, so
    CUDA_VISIBLE_DEVICES cannot pair one GPU's clocks with another's limits.
    Raises RunError when there is no GPU or NVML cannot be read.
    """
    require_gpu()
    import cupy
    import pynvml

    runtime = cupy.cuda.runtime
    device_index = _current(device_index)
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
    return DeviceSpec.build(
        name=name, compute_capability=cc, sm_count=props["multiProcessorCount"], fp32_cores=cores,
        sm_clock_mhz=sm_mhz, mem_clock_mhz=mem_mhz, bus_width_bits=bus_bits, limits=limits,
        source="NVML (max clocks, bus width, cores) and CUDA device attributes",
        memory_bytes=memory_bytes, pci_bus_id=bus_id,
        tensor_clock_mhz=tensor_clock_mhz(name), l2_bytes=props["l2CacheSize"] or None,
    )


def current_sm_clock_mhz(device_index: int | None = None) -> int | None:
    """The SM clock NVML reads right now, in MHz, of CUDA device `device_index` (None: the
    current one); None where NVML cannot say."""
    try:
        import cupy
        import pynvml

        pynvml.nvmlInit()
        try:
            bus_id = cupy.cuda.runtime.deviceGetPCIBusId(_current(device_index))
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


def this_gpu_limits() -> ArchLimits:
    """The per-SM limits of this machine's GPU, through NVML only (no CuPy import). Raises
    RunError when there is no GPU (like every command that needs one), naming the flags that work
    without."""
    cc = nvml_compute_capability()
    if cc is None:
        raise RunError(f"{NO_GPU}; without one, name a target with --arch sm_XY (e.g. sm_90) or --gpu NAME "
                       "(e.g. h200)")
    return limits_for_cc(cc)


def describe(gpu: str | None = None) -> DeviceSpec:
    """`--gpu NAME` as a preset, else the GPU in this machine. Raises UsageError for an unknown or
    empty name, RunError when no name is given and there is no GPU (naming the presets)."""
    if gpu is not None:
        return from_preset(gpu)
    if not gpu_available():
        raise RunError(f"{NO_GPU}; without one, describe a GPU with --gpu NAME (known: {', '.join(preset_names())})")
    return from_nvml()


# Clock event reasons that lower the SM clock (nvml.h, nvmlClocksEventReason*), by the names a
# results file records; idle, application clocks and sync boost are not throttling.
THROTTLE_REASONS = {0x4: "power_cap", 0x8: "hw_slowdown", 0x20: "thermal", 0x40: "thermal", 0x80: "power_brake"}


@dataclass(frozen=True)
class Reading:
    """What NVML says at one moment: the SM clock (MHz), the clock event reasons as a bit mask,
    the board power (mW), the total energy since the driver loaded (mJ), and the cumulative time
    (ns) the clock was held down by the power policy and the thermal one (`nvmlDeviceGetViolationStatus`).
    Each None where this GPU or driver does not say."""

    clock_mhz: int | None
    reasons: int | None
    power_mw: int | None
    energy_mj: int | None
    power_violation_ns: int | None
    thermal_violation_ns: int | None


class Sampler:
    """NVML readings of CUDA device `device_index` (None: the current one), taken around and while
    each burst of timed launches runs (`measure.rounds`). Opened once (NVML started and the handle
    found), closed with `close`. A query this GPU does not support reads as None from then on, never an error;
    `unsupported` names them, for the run's note."""

    def __init__(self, device_index: int | None = None):
        self.unsupported: list[str] = []
        self._handle = None
        try:
            import cupy
            import pynvml

            pynvml.nvmlInit()
            bus_id = cupy.cuda.runtime.deviceGetPCIBusId(_current(device_index))
            self._handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
            self._nvml = pynvml
        except Exception:
            self.unsupported.append("NVML")
        self._queries = {
            "the SM clock": lambda n, h: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM),
            "clock event reasons": lambda n, h: (n.nvmlDeviceGetCurrentClocksEventReasons(h)
                                                 if hasattr(n, "nvmlDeviceGetCurrentClocksEventReasons")
                                                 else n.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
            "power": lambda n, h: n.nvmlDeviceGetPowerUsage(h),
            "energy": lambda n, h: n.nvmlDeviceGetTotalEnergyConsumption(h),
            "power-cap time": lambda n, h: n.nvmlDeviceGetViolationStatus(h, n.NVML_PERF_POLICY_POWER).violationTime,
            "thermal time": lambda n, h: n.nvmlDeviceGetViolationStatus(h, n.NVML_PERF_POLICY_THERMAL).violationTime,
        }

    def _ask(self, what: str) -> int | None:
        if self._handle is None or what in self.unsupported:
            return None
        try:
            return int(self._queries[what](self._nvml, self._handle))
        except Exception:
            self.unsupported.append(what)
            return None

    def read(self, energy: bool = False) -> Reading:
        """One reading; the energy counter only with `energy` (it updates slowly: `measure.energy`)."""
        return Reading(self._ask("the SM clock"), self._ask("clock event reasons"), self._ask("power"),
                       self._ask("energy") if energy else None, self._ask("power-cap time"),
                       self._ask("thermal time"))

    def close(self) -> None:
        if self._handle is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception:
                pass
            self._handle = None


def reasons_between(before: Reading, after: Reading) -> str:
    """The throttling clock event reasons seen from `before` to `after`: those set in either
    reading's mask (`THROTTLE_REASONS`), and 'power_cap' or 'thermal' where the policy's violation
    time grew between them. '' for none; names joined by '+'."""
    seen: list[str] = []
    for mask in (before.reasons, after.reasons):
        for bit, name in THROTTLE_REASONS.items():
            if mask is not None and mask & bit and name not in seen:
                seen.append(name)
    for name, a, b in (("power_cap", before.power_violation_ns, after.power_violation_ns),
                       ("thermal", before.thermal_violation_ns, after.thermal_violation_ns)):
        if a is not None and b is not None and b > a and name not in seen:
            seen.append(name)
    return "+".join(seen)
