"""The `kernels` listing: every ladder kernel with its traffic model at a problem size and, for a
named target, its real resources (compiled offline through NVRTC), occupancy and roofline floors.
"""

from __future__ import annotations

from . import registry
from .arch import ArchLimits
from .device import DeviceSpec
from .model import floors
from .occupancy import calculate


def ladder(m: int, n: int, k: int, limits: ArchLimits | None = None,
           device: DeviceSpec | None = None) -> list[dict]:
    """One JSON-ready row per ladder kernel.

    Always: name, summary, template, threads_per_block, model (flops, gmem/smem accesses per result, gmem_bytes, arithmetic_intensity) for an
    M x N x K problem. With `limits`: the kernel compiled for `limits.arch` through NVRTC and its
    registers, spill_bytes, stack_frame_bytes, static_smem_bytes and occupancy (the occupancy
    JSON). With `device`: floors in ms against its peaks.
    A kernel the target cannot run (cp.async before sm_80) gets `unavailable` with the reason; one
    that fails to compile gets `error` (the listing goes on). With a preset `device`, `autotuned`
    is at that GPU's tuned tile. Raises RunError when NVRTC itself is missing or cannot target
    `limits.arch`.
    """
    from .errors import RunError
    from .resources import check_target, compile_for

    if limits is not None:
        check_target(limits.arch)
    rows = []
    specs = registry.select(None, device.name) if device is not None else list(registry.LADDER)
    for spec in specs:
        fig = spec.model.figures(m, n, k)
        row = {"name": spec.name, "summary": spec.summary, "template": spec.name_expression,
               "threads_per_block": spec.threads_per_block, "dynamic_smem_bytes": spec.dynamic_smem_bytes}
        if limits is not None and not spec.runs_on(limits.compute_capability):
            row["unavailable"] = spec.unavailable_reason(limits.arch)
        elif limits is not None:
            try:
                res = compile_for(spec, limits.arch)
            except RunError as exc:
                row["error"] = str(exc)
            else:
                occ = calculate(limits, res.registers, spec.threads_per_block, res.static_smem_bytes,
                                spec.dynamic_smem_bytes)
                row.update(registers=res.registers, spill_bytes=res.spill_bytes,
                           stack_frame_bytes=res.stack_frame_bytes, static_smem_bytes=res.static_smem_bytes,
                           occupancy=occ.to_dict())
        row["model"] = fig.to_dict()
        if device is not None:
            row["floors"] = floors(fig, device.peak_fp32_gflops, device.peak_dram_gbps).to_dict()
        rows.append(row)
    return rows
