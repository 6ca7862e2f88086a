"""A launch's performance counters sampled over its run: Nsight Compute's PM sampling (`ncu
--section PmSampling`), read from a binary report through `ncu_report`'s timelines.

Nsight Compute samples a set of counters every interval (it picks the interval so that the samples
fit its buffer: 1.5 µs for a 1.4 ms GEMM on the H200, 6 µs for a 15 ms one) over the whole launch,
in a group per unit named after the chip's counter domains ('TPC.TriageCompute.sm__cycles_active.avg'
on the H100 and H200). `ncu_report` (2025.4 and newer: `IAction.timelines`) aligns each series to
the launch's start. What is kept, by the metric's name after its group (`SAMPLED`): each unit's
share of its peak (the tensor pipe, the FMA pipe, FP64, DRAM, L2, L1), the SMs' active cycles and
instruction issue rates (per elapsed and per active cycle, which give the share of SMs busy and the
clock), the tensor pipes' active cycles and the blocks launched, one value per interval. The warp-state samples
(`pmsampling:smsp__warps_issue_stalled_*`) come from other replay passes, each with its own clock,
and are not kept.

`model.timeline` turns the series into a kernel's roofline over time.
"""

from __future__ import annotations

from dataclasses import dataclass

# metric name after its counter group -> what it is (model.timeline reads them by these names)
SAMPLED = (
    "sm__cycles_active.avg",  # cycles each SM was active in the interval, averaged over the SMs
    "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",  # issue rate per elapsed cycle, % of peak
    "sm__inst_executed_realtime.avg.per_cycle_active",  # the same per active cycle: the two give the SMs busy
    "gr__ctas_launched_realtime.sum",  # blocks launched in the interval
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_hmma_cycles_active_realtime.avg",  # 16-bit, TF32 and FP8 MMA: cycles per SM
    "sm__pipe_tensor_op_imma_cycles_active_realtime.avg",  # integer MMA
    "smsp__pipe_tensor_op_dmma_cycles_active.avg",  # FP64 MMA, per SM sub-partition
    "sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fp64_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "dramc__throughput.avg.pct_of_peak_sustained_elapsed",
    "dramc__read_throughput.avg.pct_of_peak_sustained_elapsed",
    "dramc__write_throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
)
GROUP_MARK = ".TriageCompute."  # PmSampling's counter groups: '<domain>.TriageCompute.<metric>'


@dataclass(frozen=True)
class Sampled:
    """One launch's sampled series: the start of each interval (ns from the first sample) and,
    per `SAMPLED` metric the report holds, one value per interval (in the metric's unit: percent,
    cycles or blocks)."""

    t_ns: tuple[float, ...]
    values: dict[str, tuple[float, ...]]

    @staticmethod
    def from_json(data: dict) -> "Sampled":
        """From what `read_action` answers: {"t_ns": [...], "values": {metric: [...]}}."""
        return Sampled(tuple(data["t_ns"]), {k: tuple(v) for k, v in data["values"].items()})


def holds_samples(metric_names) -> bool:
    """Whether a launch's metric names include PM-sampling series."""
    return any(GROUP_MARK in n for n in metric_names)


def read_action(action, metric_names: list[str]) -> dict | None:
    """The `SAMPLED` series of one `ncu_report` action as plain data (`Sampled.from_json` reads it); None
    where the launch holds no PM sampling. Raises AttributeError where the module has no
    timelines (an `ncu_report` older than 2025.4)."""
    kept = {}
    for name in metric_names:
        if GROUP_MARK in name:
            short = name.split(GROUP_MARK, 1)[1]
            if short in SAMPLED and short not in kept:
                kept[short] = name
    if not kept:
        return None
    timelines = action.timelines()
    t_ns: list[float] | None = None
    values: dict[str, list[float]] = {}
    for short, name in kept.items():
        metric = timelines.aligned_metric(action.metric_by_name(name)) if timelines is not None else None
        if metric is None:
            continue
        ids = metric.correlation_ids()
        times = [float(ids.as_uint64(i)) for i in range(ids.num_instances())]
        series = [metric.as_double(i) for i in range(metric.num_instances())]
        if len(times) != len(series) or not series:
            continue
        if t_ns is None:
            t_ns = times
        if times != t_ns:  # sampled on another clock: not one interval for one interval
            continue
        values[short] = series
    if t_ns is None or not values:
        return None
    start = t_ns[0]
    return {"t_ns": [t - start for t in t_ns], "values": values}
