"""`roofline occupancy`'s work (`roofline.api.occupancy`, which is this function): the model alone.
It lives apart from `roofline.api` so that the command loads `roofline.model` and nothing heavier:
no pydantic, numpy, matplotlib or CuPy unless a device file, this machine's GPU (NVML) or a chart
is asked for, each imported where it is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .model.arch import ArchLimits
from .model.device import named_limits
from .model.occupancy import Occupancy, calculate, max_registers_for_blocks


@dataclass(frozen=True)
class OccupancyReport:
    """The occupancy of one configuration, and for `--target-blocks` the most registers per
    thread that keep that many blocks resident (None when another resource caps it) with why."""

    limits: ArchLimits
    occupancy: Occupancy
    target_blocks: int | None = None
    target_registers: int | None = None
    target_text: str | None = None

    def to_json(self) -> dict:
        """The occupancy JSON, with `target` when a target was asked for."""
        d = self.occupancy.to_dict()
        if self.target_blocks is not None:
            d["target"] = {"target_blocks": self.target_blocks, "max_registers_per_thread": self.target_registers,
                           "explanation": self.target_text}
        return d


def occupancy(registers: int, threads: int, static_smem: int = 0, dynamic_smem: int = 0,
              gpu: str | None = None, arch: str | None = None, target_blocks: int | None = None,
              chart: Path | None = None) -> OccupancyReport:
    """Theoretical occupancy on `--gpu`'s or `--arch`'s SM, else this machine's GPU (NVML only);
    with `chart`, the what-if chart drawn there. Raises UsageError for bad input, RunError when
    neither a target is named nor a GPU found."""
    limits = named_limits(gpu, arch)
    if limits is None:  # neither named: this machine's GPU
        from .measure import nvml

        limits = nvml.this_gpu_limits()
    occ = calculate(limits, registers, threads, static_smem, dynamic_smem)
    report = OccupancyReport(limits, occ)
    if target_blocks is not None:
        best, why = max_registers_for_blocks(limits, threads, target_blocks, static_smem, dynamic_smem)
        report = OccupancyReport(limits, occ, target_blocks, best, why)
    if chart is not None:
        from .render import occupancy_chart  # matplotlib: only for the chart

        occupancy_chart.draw(limits, occ, chart)
    return report
