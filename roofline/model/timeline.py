"""A kernel's roofline over time: its sampled counters (`nsight.sampling`) as intervals, each with
the share of every unit's peak it ran at, the SMs busy, the clock, and its FLOPs and bytes; the
phases of its run (fill, steady, drain, tail wave) and what each would take at the roof.

Per interval i of length dt_i (Nsight Compute's PM sampling, ~1.5 µs on the H200):

- the *share of a unit's peak*: Nsight Compute's `pct_of_peak_sustained_elapsed` of the unit's
  sampled throughput (the tensor pipe's active cycles, the FMA pipe's issue rate, FP64, DRAM, L2
  and L1 throughput), as a fraction. It is of the unit's peak at the clock it ran at, not of the
  measured ceilings the whole-kernel verdict reads;
- the *SMs busy*: the issue rate per elapsed cycle over the issue rate per active cycle (a warp
  instruction per cycle per SM sub-partition, `ISSUE_PER_SM_CYCLE`, is the peak the first is a
  percentage of), which is the share of the SMs' cycles with a warp on them: 0.50 sampled in the
  H200 tail wave of 68 blocks on 132 SMs (0.515 of the SMs hold one). The *clock* is then the
  SMs' active cycles over the busy
  share and the interval's length: it is not constant (1.97 GHz as a BF16 GEMM starts, 1.55 GHz
  once the power limit takes it down);
- its *FLOPs* of each precision: the kernel's counted FLOPs split over the intervals in proportion
  to the pipe that runs them (the tensor pipe's MMA cycles for tensor work, the FMA pipe's issue for
  FP32 and FP16, FP64's pipe for FP64), so they add up to the count; its *bytes* at each level
  likewise in proportion to the level's throughput times dt. DRAM's sampled throughput is also read
  on its own, against the datasheet bandwidth, as a check (`closure`): on the H200's ladders it
  adds up to the counted DRAM bytes within 2.5 %.

The *phases* (`phases`), from the share of the busiest unit (d_i) and the SMs busy (b_i): the
steady level S is the median d_i over the intervals with every SM busy; *fill* is the leading run
of intervals below `FILL_LEVEL` x S (the pipeline filling, the first blocks starting), the *tail
wave* the trailing run with fewer than `TAIL_BUSY` of the SMs busy, *drain* the run just before it
(or at the end) below `FILL_LEVEL` x S with the SMs still busy (epilogues writing C), *steady* the
rest. A launch whose intervals never reach `TAIL_BUSY` of the SMs (a grid of fewer blocks than
SMs) is one steady phase: its run is its one partial wave, with no fill or tail of it. A phase's time at the roof is
sum(dt_i x d_i): its work with the busiest unit at its peak.
A launch sampled in fewer than `MIN_PHASE_INTERVALS` intervals has no phases: each interval would
be a twentieth of its run or more, and its first and last (part-filled) ones alone would read as a
fill and a tail wave.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

ISSUE_PER_SM_CYCLE = 4  # warp instructions an SM issues per cycle at most: one per sub-partition (Volta on)
FILL_LEVEL = 0.8  # a leading or trailing interval below this share of the steady level is fill or drain
TAIL_BUSY = 0.9  # a trailing interval with fewer of the SMs busy is the tail wave
MIN_GHZ, MAX_GHZ = 0.1, 5.0  # a clock worked out outside these is a sample's noise (a few cycles busy): not kept
# The fewest intervals phases are found in: below it an interval is over 5 % of the run, and a launch of 3 to 8
# intervals (a 5 to 12 us elementwise kernel at the H100's 1.5 us a sample) reads its part-filled first and last
# ones as a fill and a tail wave of a third of its time each (the new-user trial of 2026-12-07).
MIN_PHASE_INTERVALS = 20
# Intervals are the time between one sample and the next: one starting later than this many typical interval
# lengths after the one before it ends leaves part of the run out (the file was cut, not sampled so).
MAX_GAP_INTERVALS = 1.0
MAX_SHARE = 1.5  # a sampled share of a peak is kept up to this (a sample may pass 100 % by a little)
# Samples whose busy intervals span less of the launch's duration than this cover only its start: Nsight
# Compute stopped sampling before the launch ended (its sample buffer full: an H100's ran out after 1,296
# samples of 96 us, 45 % of a 274 ms naive SGEMM). Their phases are of that part; its counts are not split
# over them; its tail wave is not seen.
COVERED = 0.9
# ... and more intervals than this short of its end: a launch of a few intervals loses part of one at each end
ROUNDING = 3
# The samples a whole launch is given where its interval is chosen (`run --timeline` for a long launch; the
# interval a timeline sampled in part advises for ncu, `results.timeline.Timeline.cut_note`): fewer than the
# 1,296 that the buffer held of a 274 ms launch on an H100 at Nsight Compute's own choice.
WHOLE_RUN_SAMPLES = 1000
# The device buffer PM sampling writes a whole long launch's samples into (`--pm-sampling-buffer-size`, bytes):
# at Nsight Compute's own size a 275.6 ms launch on an H100 (ncu 2025.3.1, run --profile's metrics, one sample
# every 276 us) kept 337 samples, the first 34 % of it; with 1 GiB it kept 999, the whole run (2026-12-06).
WHOLE_RUN_BUFFER_BYTES = 1 << 30


def interval_ns(time_ms: float) -> int:
    """The PM sampling interval (ns) that gives a launch of `time_ms` WHOLE_RUN_SAMPLES samples: its
    duration over them, rounded up to a microsecond (so never fewer than 1,000 ns)."""
    return max(1, -(-int(time_ms * 1e6 / WHOLE_RUN_SAMPLES) // 1000)) * 1000


# Roof key -> the sampled series (`nsight.sampling.SAMPLED`) whose percentage is that unit's share of its peak.
SHARE_OF = {
    "tensor": "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "fma": "sm__inst_executed_pipe_fma_realtime.avg.pct_of_peak_sustained_elapsed",
    "fp64": "sm__pipe_fp64_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "dram": "dramc__throughput.avg.pct_of_peak_sustained_elapsed",
    "l2": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1": "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
}
# Named as Nsight Compute's units, not as the verdict's roofs: a share is the unit's busiest part's
# throughput over its peak (`lts__throughput`, `l1tex__throughput`), not bytes over a bandwidth.
ROOF_NAMES = {"tensor": "tensor pipe", "fma": "FMA pipe", "fp64": "FP64 pipe", "dram": "DRAM", "l2": "L2 unit",
              "l1": "L1tex unit"}
ACTIVE = "sm__cycles_active.avg"
ISSUED_ELAPSED = "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed"
ISSUED_ACTIVE = "sm__inst_executed_realtime.avg.per_cycle_active"
CTAS = "gr__ctas_launched_realtime.sum"
MMA_CYCLES = {"hmma": "sm__pipe_tensor_op_hmma_cycles_active_realtime.avg",
              "imma": "sm__pipe_tensor_op_imma_cycles_active_realtime.avg",
              "dmma": "smsp__pipe_tensor_op_dmma_cycles_active.avg"}
# Precision key (`peaks.PRECISIONS`) -> the series its FLOPs are split by (the first the launch holds).
SPLIT_BY = {"fp16_tensor": (MMA_CYCLES["hmma"], SHARE_OF["tensor"]),
            "bf16_tensor": (MMA_CYCLES["hmma"], SHARE_OF["tensor"]),
            "tf32_tensor": (MMA_CYCLES["hmma"], SHARE_OF["tensor"]),
            "fp8_tensor": (MMA_CYCLES["hmma"], SHARE_OF["tensor"]),
            "fp4_tensor": (MMA_CYCLES["hmma"], SHARE_OF["tensor"]),
            "int8_tensor": (MMA_CYCLES["imma"], SHARE_OF["tensor"]),
            "fp64_tensor": (MMA_CYCLES["dmma"], SHARE_OF["tensor"]),
            "fp32": (SHARE_OF["fma"],), "fp16": (SHARE_OF["fma"],), "fp64": (SHARE_OF["fp64"],)}
BYTES_BY = {"dram": SHARE_OF["dram"], "l2": SHARE_OF["l2"], "l1": SHARE_OF["l1"], "smem": SHARE_OF["l1"]}
PER_DT = set(SHARE_OF.values())  # rates: weighed by the interval's length; the others are counts


@dataclass(frozen=True)
class Intervals:
    """A launch's run as intervals (µs from its first busy one): their starts and lengths, the
    share of the SMs busy (0..1), the SM clock (GHz; None where no SM was busy), each unit's share
    of its peak (`SHARE_OF` keys, 0..1), FLOPs per precision key and bytes per level."""

    t_us: list[float]
    dt_us: list[float]
    busy: list[float]
    clock_ghz: list[float | None]
    shares: dict[str, list[float]]
    flops: dict[str, list[float]]
    nbytes: dict[str, list[float]]

    def __len__(self) -> int:
        return len(self.t_us)

    @property
    def time_us(self) -> float:
        return sum(self.dt_us)

    def busiest(self, i: int) -> tuple[str, float]:
        """The unit nearest its peak in interval `i` and its share; ('-', 0.0) without any."""
        found = [(k, v[i]) for k, v in self.shares.items()]
        return max(found, key=lambda kv: kv[1]) if found else ("-", 0.0)


def intervals(t_ns: list[float], values: dict[str, list[float]], flops: dict[str, float],
              nbytes: dict[str, float]) -> Intervals | None:
    """The launch's intervals from its sampled series (`nsight.sampling.Sampled`: interval starts in
    ns, values per metric) and its counted FLOPs (precision key -> FLOPs) and bytes (level -> bytes),
    trimmed to the intervals where an SM was busy. None where the series lack the SMs' active
    cycles or no SM was busy."""
    active = values.get(ACTIVE)
    if not active or len(t_ns) < 2:
        return None
    span = [i for i, v in enumerate(active) if v > 0]
    if not span:
        return None
    first, last = span[0], span[-1]
    steps = [b - a for a, b in zip(t_ns, t_ns[1:])]
    typical = statistics.median(steps)
    if typical <= 0:
        return None
    dt_ns = [steps[i] if i < len(steps) and steps[i] > 0 else typical for i in range(len(t_ns))][first:last + 1]
    keep = {k: list(v[first:last + 1]) for k, v in values.items() if len(v) == len(t_ns)}
    if ACTIVE not in keep:
        return None
    n = len(dt_ns)
    busy, clock = [], []
    for i in range(n):
        elapsed, per_active = keep.get(ISSUED_ELAPSED, [None] * n)[i], keep.get(ISSUED_ACTIVE, [None] * n)[i]
        share = (elapsed / 100 * ISSUE_PER_SM_CYCLE / per_active) if elapsed and per_active else None
        share = min(1.0, max(0.0, share)) if share is not None else None
        cycles = keep[ACTIVE][i]
        ghz = cycles / (dt_ns[i] * share) if share else None
        if ghz is not None and MIN_GHZ < ghz < MAX_GHZ:
            busy.append(share)
            clock.append(ghz)
        else:  # no instruction issued: busy counted from the active cycles at the launch's typical clock
            busy.append(None)
            clock.append(None)
    known = [c for c in clock if c]
    typical_ghz = statistics.median(known) if known else None
    for i in range(n):
        if busy[i] is None:
            busy[i] = min(1.0, keep[ACTIVE][i] / (dt_ns[i] * typical_ghz)) if typical_ghz else 0.0
    shares = {k: [min(max(0.0, x), 100 * MAX_SHARE) / 100 for x in keep[m]] for k, m in SHARE_OF.items() if m in keep}

    def split(total: float, series: str) -> list[float]:
        weights = [max(0.0, x) * (dt_ns[i] if series in PER_DT else 1.0) for i, x in enumerate(keep[series])]
        whole = sum(weights)
        return [total * w / whole for w in weights] if whole else [total / n] * n

    work = {}
    for key, total in flops.items():
        by = next((m for m in SPLIT_BY.get(key, ()) if m in keep and any(keep[m])), None)
        if total and by is not None:
            work[key] = split(total, by)
    moved = {level: split(total, BYTES_BY[level]) for level, total in nbytes.items()
             if total and BYTES_BY.get(level) in keep}
    t0 = t_ns[first]
    return Intervals([(t_ns[first + i] - t0) / 1e3 for i in range(n)], [d / 1e3 for d in dt_ns], busy, clock, shares,
                     work, moved)


def in_part(covered: float | None, dt_us: list[float]) -> bool:
    """Whether intervals `dt_us` (µs) whose busy span is `covered` of their launch's duration cover
    only its start: less than COVERED of it, and more than ROUNDING intervals short of its end (a
    launch of a few intervals falls short of its duration by part of an interval at each end, not
    by samples missing)."""
    if covered is None or not 0 < covered < COVERED or not dt_us:
        return False
    span = sum(dt_us)
    return span / covered - span > ROUNDING * sorted(dt_us)[len(dt_us) // 2]


def closure(iv: Intervals | None, t_ns: list[float], values: dict[str, list[float]], time_ns: float,
            dram_bytes: float | None, dram_peak_gbps: float | None, blocks: int | None) -> dict[str, float]:
    """What the samples (`t_ns`, `values`; `iv` their busy intervals) add up to against the launch's
    own whole-kernel figures, as ratios (1.0: the same): 'time' (the busy intervals' length over the
    launch's duration), 'dram' (the sampled DRAM throughput times the datasheet bandwidth
    `dram_peak_gbps`, over the counted bytes) and 'blocks' (blocks launched over the grid's); each
    only where both sides are known."""
    out: dict[str, float] = {}
    if iv is not None and time_ns:
        out["time"] = iv.time_us * 1e3 / time_ns
    series = values.get(SHARE_OF["dram"])
    if series and dram_bytes and dram_peak_gbps and len(series) == len(t_ns):
        steps = [b - a for a, b in zip(t_ns, t_ns[1:])]
        steps.append(statistics.median(steps) if steps else 0.0)
        out["dram"] = sum(x / 100 * dram_peak_gbps * dt for x, dt in zip(series, steps)) / dram_bytes
    launched = values.get(CTAS)
    if launched and blocks:
        out["blocks"] = sum(launched) / blocks
    return out


@dataclass(frozen=True)
class Phase:
    """One phase of a run: 'fill', 'steady', 'drain' or 'tail', its intervals [first, last], its
    time (µs) and share of the run, the SMs busy (time-weighted, 0..1), the time at the roof (µs):
    the intervals' work with their busiest unit at its peak, and every unit's mean share of its peak
    over the phase (`shares`, `SHARE_OF` keys, time-weighted, 0..1), of which the largest is its
    `roof`."""

    name: str
    first: int
    last: int
    time_us: float
    share: float
    busy: float
    at_roof_us: float
    shares: dict[str, float] = field(default_factory=dict)

    @property
    def roof(self) -> str:
        """The unit nearest its peak over the phase (`SHARE_OF` key); '-' without any sampled."""
        return max(self.shares, key=self.shares.get) if self.shares else "-"

    @property
    def roof_share(self) -> float:
        """That unit's mean share of its peak over the phase (0..1)."""
        return self.shares.get(self.roof, 0.0)

    @property
    def level(self) -> float:
        """The share of their peak its intervals' busiest units ran at, time-weighted (0..1): its time
        at the roof over its time."""
        return self.at_roof_us / self.time_us if self.time_us else 0.0

    @property
    def lost_us(self) -> float:
        """Time beyond the roof: what the phase would save with its busiest unit at its peak."""
        return self.time_us - self.at_roof_us

    def at_rate_us(self, unit: str, share: float) -> float:
        """The time (µs) the phase's work on `unit` (a `SHARE_OF` key) takes with the unit at `share`
        of its peak (0..1; the steady phase's, for what a fill or tail wave would take at the steady
        rate); its own time where the unit is not sampled or `share` is not positive."""
        if unit not in self.shares or share <= 0:
            return self.time_us
        return self.shares[unit] * self.time_us / share


def phases(iv: Intervals) -> list[Phase]:
    """The phases of `iv`, in order (those with no interval left out), as the module says; none for
    fewer than `MIN_PHASE_INTERVALS` intervals."""
    n = len(iv)
    if n < MIN_PHASE_INTERVALS:
        return []
    top = [iv.busiest(i)[1] for i in range(n)]
    full = [top[i] for i in range(n) if iv.busy[i] >= 0.95]
    level = statistics.median(full) if full else max(top)
    low = FILL_LEVEL * level
    if one_partial_wave(iv.busy):  # a grid that never fills the SMs: its run is its one partial wave, no tail of it
        fill_to, drain_from, tail_from = 0, n, n
    else:
        tail_from = n
        while tail_from > 0 and iv.busy[tail_from - 1] < TAIL_BUSY:
            tail_from -= 1
        fill_to = 0
        while fill_to < tail_from and top[fill_to] < low:
            fill_to += 1
        drain_from = tail_from
        while drain_from > fill_to and top[drain_from - 1] < low:
            drain_from -= 1
    spans = [("fill", 0, fill_to), ("steady", fill_to, drain_from), ("drain", drain_from, tail_from),
             ("tail", tail_from, n)]
    total = iv.time_us or 1.0
    out = []
    for name, a, b in spans:
        if b <= a:
            continue
        time = sum(iv.dt_us[a:b])
        out.append(Phase(name, a, b - 1, time, time / total,
                         sum(iv.busy[i] * iv.dt_us[i] for i in range(a, b)) / time if time else 0.0,
                         sum(top[i] * iv.dt_us[i] for i in range(a, b)),
                         {k: sum(v[i] * iv.dt_us[i] for i in range(a, b)) / time for k, v in iv.shares.items()}
                         if time else {}))
    return out


def one_partial_wave(busy: list[float]) -> bool:
    """Whether a run whose intervals kept `busy` of the SMs busy (0..1 each) never filled them
    (`TAIL_BUSY`): its whole run is its one partial wave, read as one steady phase."""
    return max(busy) < TAIL_BUSY


def predicted_tail(blocks: int, block_slots: int, sms: int) -> tuple[float, float] | None:
    """The tail the waves model predicts (`model.waves`, its SMs kept busy): (its share of the time,
    the share of the SMs busy in it) for `blocks` over `block_slots` on `sms` SMs, every block taking
    the same time. An SM holds `block_slots / sms` blocks at once and, as `model.waves` assumes,
    runs near its full rate with fewer, so its part of the last wave takes time in proportion to
    its blocks there: the scheduler spreads the last wave's L blocks one per SM first, q = L // sms
    on every SM and one more on r = L % sms of them, and those r run alone for the time of one
    block, 1 / (blocks per SM) of a wave, out of (full waves + (q + 1) / (blocks per SM)) waves.
    None where no SM idles before the end (r = 0: every SM holds as many) or the grid holds no more
    blocks than SMs (its whole run is its one partial wave; and a persistent kernel, one block per
    SM, schedules its own work: the grid says nothing of its tail). One partial wave of more blocks
    than SMs has a tail all the same: some SMs hold one block more than the others.
    512 blocks of one per SM on 132 SMs: 3 full waves and 116 blocks, (25 %, 88 %); 1,024 blocks of
    two per SM: 3 full waves of 264 and 232 = 132 + 100 blocks, (12.5 %, 76 %); 244 blocks of three
    per SM, one partial wave of 132 + 112: (50 %, 85 %) (a cuDNN convolution in a ResNet-18 step on
    an H100 sampled 42.5 % on 79 %)."""
    waves = -(-blocks // block_slots)
    if blocks <= sms:
        return None
    per_sm = block_slots / sms
    last = blocks - (waves - 1) * block_slots
    q, r = divmod(last, sms)
    if r == 0:
        return None
    return (1 / per_sm) / ((waves - 1) + (q + 1) / per_sm), r / sms
