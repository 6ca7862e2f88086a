"""What Nsight Compute's metrics mean for a roofline, whatever metric set, section or ncu version
a report holds: the one metric list roofline collects (`COLLECT`, for `roofline profile` and `run
--profile`) and each quantity of one launch read from whichever metrics are present, with how it
was obtained (`read`). Pure: values come in base units (ns, bytes, Hz, instructions), as
the readers of `nsight` give them from any export.

A quantity is *counted* when it comes from counts exactly (a counter, counters added up, a count
times a fixed factor: FLOPs per instruction, 32 bytes per sector), *derived* when it takes a
rate times a time or cycles over a clock (exact to the digits the report prints), *missing* when
nothing in the report gives it; the formula and where a missing one can be had are kept. The
counters and their stand-ins, in order of preference:

    time        gpu__time_duration.sum (or the Pascal-era gpu__time_duration); else the elapsed
                cycles over the clock (gpc__cycles_elapsed.max / gpc__cycles_elapsed.avg.per_second)
    clock       sm__cycles_elapsed.avg.per_second (the SM clock the launch ran at), or the GPC's or
                SMSP's; else elapsed cycles over the time
    fp64, fp32  2 x FMA + ADD + MUL thread instructions (smsp__sass_thread_inst_executed_op_<d|f>
                {fma,add,mul}_pred_on.sum), Nsight Compute's own roofline formula
    fp16        4 x HFMA + 2 x HADD + 2 x HMUL (the instructions work on half2 pairs; the same
                roofline sections' formula)
    tensor      sm__ops_path_tensor_[op_<instr>_]src_<type>[_dst_<type>][_sparsity_<on|off>].sum:
                operations on the tensor cores (two per multiply-add) by input type, in every
                spelling ncu uses; the most aggregated spelling present is taken, the finer ones
                summed where it is absent (never the two together), and never instruction counts
                times a constant
    dram        dram__bytes.sum; dram__bytes_read.sum + dram__bytes_write.sum (or _op_read + _op_write);
                sectors x 32
    dram_read,  the same bytes read and written apart: dram__bytes_read.sum and dram__bytes_write.sum
    dram_write  (or _op_read, _op_write; dram__read_bytes, dram__write_bytes; sectors read or written
                x 32), each only where its own counter is there (never the total less the other)
    l2          lts__t_bytes.sum; lts__t_sectors.sum x 32
    l1          l1tex__t_bytes.sum; l1tex__t_sectors.sum x 32; the global and local load/store/atomic
                sectors of the LSU pipe summed x 32 (what --set full holds)
    smem        smsp__sass_data_bytes_mem_shared.sum (bytes moved by shared-memory instructions)
Any `X.sum` counter may also come in another spelling (`COUNTER_FORMS`, read in this order, each
only after every exact count): its mean over the unit's instances `X.avg` x the instances
(`<unit>__cycles_elapsed.sum` / `<unit>__cycles_elapsed.avg`, or the SM count for `sm__` and
four sub-partitions per SM for `smsp__`, as on every GPU Nsight Compute profiles); a rate, as
--set full and the roofline sections carry them, `X.sum.per_cycle_elapsed` x the unit's elapsed
cycles (`<unit>__cycles_elapsed.avg`, or its clock x the time) or `X.sum.per_second` x the time;
or a share of its peak with the peak beside it, `X.sum.pct_of_peak_sustained_elapsed` / 100 x
`X.sum.peak_sustained` (per cycle) x the unit's elapsed cycles. The `.avg` spellings of the rates
and shares are read the same way, times the instances. Launch figures come from `launch__*` (grid
and block per dimension, else the report's 'Grid Size'/'Block Size' columns, else the 1-D
totals), achieved occupancy from sm__warps_active.avg.pct_of_peak_sustained_active, replay passes
from profiler__replayer_passes.

The details page (`ncu --csv`, the default page) names section metrics by their labels
("Duration", "Registers Per Thread"); `DETAILS_LABELS` maps the ones a roofline needs back to
their metrics (Nsight Compute's section files pair each label with its metric).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..model.peaks import TENSOR_OF

SECTOR_BYTES = 32
TIME = "gpu__time_duration.sum"
ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
# the tensor pipe's busy share (%): the SpeedOfLight section's 'SM: Pipe Tensor Cycles Active' breakdown row,
# and the realtime one of --set full's TriageCompute; a check where no tensor operations are counted, never work
TENSOR_PIPE = ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
               "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed")
TENSOR_PIPE_NOTED = 5.0  # % busy from which a tensor pipe whose operations no counter gives is said to be busy
PASSES = "profiler__replayer_passes"
INSTRUCTION = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
# precision key -> (SASS prefix, FLOPs per FMA, per ADD, per MUL instruction)
CUDA_CORE_OPS = {"fp64": ("d", 2, 1, 1), "fp32": ("f", 2, 1, 1), "fp16": ("h", 4, 2, 2)}
# the input type of a tensor-core metric (`src_<type>`) -> precision key; types without a roof
# here (int1, int4, fp6) are reported, not read. ncu has no FP4 count of its own: B200's counts FP4
# with FP6 and FP8 (`MIXED_TENSOR_TYPES`), read against the FP8 roof
TENSOR_TYPES = {t: k for t, k in TENSOR_OF.items() if t != "fp4"}  # ncu's names are the precisions' ('bf16')
# input types Nsight Compute counts together on some chips, read against one roof when the
# precision has no count of its own: Turing's FP16-with-FP32-accumulate, Blackwell B200's FP8
MIXED_TENSOR_TYPES = {"fp16_bf16_tf32": "fp16_tensor", "fp4_fp6_fp8": "fp8_tensor"}
# Each chip spells these differently (ncu --query-metrics --chip ...): gh100 has src_fp16 and
# src_fp8; ga100 and ad102 src_fp16_dst_fp16/_fp32; gb202 src_fp8_dst_fp16/_fp32; gb100
# src_fp4_fp6_fp8_dst_fp16/_fp32; tu102 src_fp16_bf16_tf32_dst_fp32. ncu ignores names a chip
# lacks at no cost, so all are asked for; each one a chip has costs a replay pass.
TENSOR_COLLECT = tuple(f"sm__ops_path_tensor_src_{t}.sum" for t in (
    "fp16", "fp16_dst_fp16", "fp16_dst_fp32", "fp16_bf16_tf32_dst_fp32", "bf16_dst_fp32", "tf32_dst_fp32", "fp8",
    "fp8_dst_fp16", "fp8_dst_fp32", "fp4_fp6_fp8_dst_fp16", "fp4_fp6_fp8_dst_fp32", "fp64", "int8"))
BYTES = {"dram": "dram__bytes.sum", "l2": "lts__t_bytes.sum", "l1": "l1tex__t_bytes.sum",
         "smem": "smsp__sass_data_bytes_mem_shared.sum"}
# DRAM bytes read and written apart (what one kernel writes and the next reads: the fusion what-if)
DRAM_SPLIT = {"dram_read": "dram__bytes_read.sum", "dram_write": "dram__bytes_write.sum"}
BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
CLOCKS = ("sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second",
          "gpc__cycles_elapsed.avg.per_second", "sm__frequency", "gpc__frequency")
LAUNCH = ("launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z", "launch__block_dim_x",
          "launch__block_dim_y", "launch__block_dim_z", "launch__grid_size", "launch__block_size",
          "launch__registers_per_thread", "launch__shared_mem_per_block_static",
          "launch__shared_mem_per_block_dynamic", "launch__shared_mem_config_size")
SMEM_CONFIG = "launch__shared_mem_config_size"  # the shared memory the driver configured per SM for the launch
SMEM_CONFIG_GRANULE = 1024  # bytes: every carveout is a whole number of KB

# The one list `roofline profile` and `run --profile` ask ncu for: each quantity's first choice.
COLLECT: tuple[str, ...] = (
    TIME, "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
    *(INSTRUCTION.format(f"{p}{op}") for p, *_ in CUDA_CORE_OPS.values() for op in ("fma", "add", "mul")),
    *TENSOR_COLLECT, *BYTES.values(), *DRAM_SPLIT.values(), BANK_CONFLICTS, ACHIEVED, *LAUNCH,
)

# Where each missing quantity can be had (ncu sections and metrics), for the output's notes.
WHERE = {
    "time": "--section SpeedOfLight or --metrics gpu__time_duration.sum",
    "fp32": "--section SpeedOfLight_RooflineChart or --set full, as --page raw or with --print-details all "
            "(FP32 instruction counts)",
    "fp64": "--section SpeedOfLight_RooflineChart or --set full, as --page raw or with --print-details all "
            "(FP64 instruction counts)",
    "fp16": "--section SpeedOfLight_HierarchicalHalfRooflineChart or --set full, as --page raw (HFMA/HADD/HMUL counts)",
    "tensor": "--section SpeedOfLight_HierarchicalTensorRooflineChart or --set full, as --page raw "
              "(sm__ops_path_tensor_* operations)",
    "dram": "--section SpeedOfLight_RooflineChart or --metrics dram__bytes.sum",
    "l2": "--set full as --page raw, or --metrics lts__t_bytes.sum",
    "l1": "--set full as --page raw, or --metrics l1tex__t_bytes.sum",
    "smem": "--metrics smsp__sass_data_bytes_mem_shared.sum",
    "registers": "--section LaunchStats (launch__registers_per_thread)",
    "shared_memory": "--section LaunchStats (launch__shared_mem_per_block_static/_dynamic)",
    "launch_size": "--section LaunchStats (launch__grid_size, launch__block_size)",
    "clock": "--section SpeedOfLight (SM Frequency)",
}
EVERYTHING = "`roofline profile -- COMMAND` collects all of it in one run"
BODIES, RAW = "--print-details all", "--page raw"  # the export options a report shows it was made with
ROOFLINE_SECTION = "--section SpeedOfLight_RooflineChart"  # a section a report shows it was collected with


def unrepeated(hint: str, made_with: set[str] | frozenset[str]) -> str:
    """`hint` (a `WHERE` entry) without the options of `made_with` (`BODIES`, `RAW`,
    `ROOFLINE_SECTION`): a report made with one of them is told what to collect, never to do what
    it did. With the sections' bodies or the raw page, a section's counts come with the section
    itself, so the choice of export goes; with the raw page, 'as --page raw' goes wherever it
    stands; a report that holds the roofline section and still lacks a figure is pointed past it
    (to --set full's raw page or the metric itself: a Turing text prints FFMA rates without the
    cycles to scale them)."""
    if ROOFLINE_SECTION in made_with:
        hint = hint.replace(f"{ROOFLINE_SECTION} or ", "")
    if made_with & {BODIES, RAW}:
        hint = hint.replace(f", as {RAW} or with {BODIES}", "")
    if RAW in made_with:
        hint = hint.replace(f", as {RAW}", "").replace(f" as {RAW}", "")
    if BODIES in made_with:
        hint = hint.replace(f" or with {BODIES}", "").replace(f", with {BODIES}", "")
    return hint

DEVICE_NAMES = "numa__device_names"  # not an ncu metric: the key the details reader keeps that text under

# details-page labels -> metric (Nsight Compute's section files: SpeedOfLight, LaunchStatistics,
# Occupancy, MemoryWorkloadAnalysis, SpeedOfLight_RooflineChart and the hierarchical rooflines).
# 'SM Frequency' is the GPC clock in the SpeedOfLight header and the SM's in the roofline charts;
# 'Memory Throughput' is DRAM bytes per second when it carries a rate unit (a percentage otherwise).
DETAILS_LABELS = {
    "Duration": TIME,
    "Elapsed Cycles": "gpc__cycles_elapsed.max",
    "SM Frequency": "gpc__cycles_elapsed.avg.per_second",
    "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
    "Memory Frequency": "dram__cycles_elapsed.avg.per_second",
    "Memory Throughput": "dram__bytes.sum.per_second",
    "DRAM Bandwidth": "dram__bytes.sum.per_second",
    "Registers Per Thread": "launch__registers_per_thread",
    "Block Size": "launch__block_size",
    "Grid Size": "launch__grid_size",
    "Static Shared Memory Per Block": "launch__shared_mem_per_block_static",
    "Dynamic Shared Memory Per Block": "launch__shared_mem_per_block_dynamic",
    "Shared Memory Configuration Size": SMEM_CONFIG,
    "Achieved Occupancy": ACHIEVED,
    "Theoretical Occupancy": THEORETICAL,
    "# SMs": "launch__sm_count",
    "Threads": "launch__thread_count",
    "Total SMSP Elapsed Cycles": "smsp__cycles_elapsed.sum",
    "Device Names": DEVICE_NAMES,  # the NUMA Affinity section's '1 (NVIDIA H200)': text, no figure
    "SM: Pipe Tensor Cycles Active": TENSOR_PIPE[0],  # the SpeedOfLight section's pipe breakdown
    **{f"Predicated-On {p.upper()}{op.upper()} Thread Instructions Executed Per Cycle":
       INSTRUCTION.format(f"{p}{op}") + ".per_cycle_elapsed" for p in "fd" for op in ("fma", "add", "mul")},
}
ROOFLINE_SECTION_CLOCK = "smsp__cycles_elapsed.avg.per_second"


def details_metric(label: str, section: str, unit: str) -> str | None:
    """The metric a details-page row stands for: the 'Metric Name' itself when it is a metric
    (ncu --metrics lists them so), else the metric its label names in `DETAILS_LABELS`; None for
    labels a roofline does not use, and for a 'Memory Throughput' given as a percentage."""
    label = label.strip()
    if "__" in label and " " not in label:
        return label
    metric = DETAILS_LABELS.get(label)
    if label == "Memory Throughput" and ("/" not in unit or "%" in unit):
        return None
    if label == "SM Frequency" and "roofline" in section.lower():
        return ROOFLINE_SECTION_CLOCK
    return metric


@dataclass(frozen=True)
class Quantity:
    """One figure of a launch in base units: `source` is the metric it was read from (`counted`)
    or the formula over metrics it was derived by."""

    value: float
    source: str
    counted: bool


@dataclass
class Reading:
    """What a report gives for one launch: each quantity found (`peaks.PRECISIONS` keys for
    operations; 'dram', 'l2', 'l1', 'smem' for bytes; 'time' ns, 'clock' Hz, 'bank_conflicts',
    'achieved_occupancy' and 'reported_occupancy' (ncu's theoretical one; 0..1), 'passes',
    'dram_read' and 'dram_write' (DRAM bytes read and written apart, where counted apart),
    'registers', 'static_smem', 'dynamic_smem'), the grid
    and block, and each quantity missing with where to get it (`WHERE`). `notes` are one-line
    remarks (work on tensor inputs without a roof here, structured sparsity)."""

    quantities: dict[str, Quantity] = field(default_factory=dict)
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    launch_source: str = ""
    missing: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def value(self, key: str) -> float | None:
        """The value of quantity `key`, or None when the report does not give it."""
        q = self.quantities.get(key)
        return q.value if q is not None else None


def _finite(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


SMSPS_PER_SM = 4  # SM sub-partitions per SM on every GPU Nsight Compute profiles (Volta and later)
COUNTER_FORMS = (  # the spellings of a `.sum` counter X.sum, best first; `.avg` ones times the unit's instances
    "X.sum", "X.avg", "X.sum.per_cycle_elapsed", "X.avg.per_cycle_elapsed", "X.sum.per_second", "X.avg.per_second",
    "X.sum.pct_of_peak_sustained_elapsed", "X.avg.pct_of_peak_sustained_elapsed")
# COUNTER_FORMS as (statistic, suffix) pairs: ('avg', '.per_second') for 'X.avg.per_second'
_FORMS = tuple((stat, "." + rest if rest else "") for stat, _, rest in (f[2:].partition(".") for f in COUNTER_FORMS))
_COUNTED_FORM = re.compile(r"^(?P<stem>[a-z0-9]+__[a-z0-9_]+)\.(sum|avg)"
                           r"(\.per_cycle_elapsed|\.per_second|\.pct_of_peak_sustained_elapsed)?$")


class _Metrics:
    """A launch's metric values with the counter algebra of the module docstring."""

    def __init__(self, values: dict[str, float]):
        self.v = {k: x for k, v in values.items() if (x := _finite(v)) is not None}
        self.time: Quantity | None = None

    def get(self, name: str) -> float | None:
        return self.v.get(name)

    def cycles(self, unit: str) -> Quantity | None:
        """Elapsed cycles of `unit` ('smsp', 'sm', 'lts', ...), averaged over its instances."""
        family = (unit, "sm", "smsp") if unit in ("sm", "smsp", "l1tex") else (unit,)
        for u in family:
            name = f"{u}__cycles_elapsed.avg"
            if name in self.v:
                return Quantity(self.v[name], name, True)
        if self.time is not None:
            for u in family:
                name = f"{u}__cycles_elapsed.avg.per_second"
                if name in self.v:
                    return Quantity(self.v[name] * self.time.value * 1e-9, f"{name} x {self.time.source}", False)
        return None

    def instances(self, unit: str) -> Quantity | None:
        """How many instances of `unit` a launch's `.avg` figures average over:
        `<unit>__cycles_elapsed.sum` / `<unit>__cycles_elapsed.avg`, else the SM count
        (`device__attribute_multiprocessor_count`, `launch__sm_count`) for `sm`, times
        `SMSPS_PER_SM` for `smsp`; None for another unit without its cycles."""
        total, mean = self.v.get(f"{unit}__cycles_elapsed.sum"), self.v.get(f"{unit}__cycles_elapsed.avg")
        if total and mean:
            n = round(total / mean)
            return Quantity(n, f"{n} instances ({unit}__cycles_elapsed.sum / .avg)", False)
        sms = self.v.get("device__attribute_multiprocessor_count") or self.v.get("launch__sm_count")
        if sms and unit in ("sm", "smsp"):
            n = int(sms) * (SMSPS_PER_SM if unit == "smsp" else 1)
            return Quantity(n, f"{n} {'SM sub-partitions' if unit == 'smsp' else 'SMs'}", True)
        return None

    def _form(self, base: str, form: str, unit: str) -> Quantity | None:
        """Counter spelling `base` ('X.sum' or 'X.avg') in `form` ('', a rate, a share of the peak)."""
        if form == "":
            return Quantity(self.v[base], base, True) if base in self.v else None
        x = self.v.get(base + form)
        if x is None:
            return None
        if form == ".per_second":
            return None if self.time is None else Quantity(x * self.time.value * 1e-9,
                                                           f"{base}.per_second x {self.time.source}", False)
        cycles = self.cycles(unit)
        if cycles is None:
            return None
        if form == ".per_cycle_elapsed":
            return Quantity(x * cycles.value, f"{base}.per_cycle_elapsed x {cycles.source}", False)
        peak = self.v.get(base + ".peak_sustained")
        if peak is None:
            return None
        return Quantity(x / 100 * peak * cycles.value,
                        f"{base}.pct_of_peak_sustained_elapsed / 100 x {base}.peak_sustained x {cycles.source}", False)

    def counter(self, name: str, rates: bool = True) -> Quantity | None:
        """The `.sum` counter `name`, as counted or (with `rates`) from another of its spellings
        (`COUNTER_FORMS`, best first: its `.avg` times the unit's instances, its per-cycle or
        per-second rate, its share of the peak with the peak)."""
        if name in self.v:
            return Quantity(self.v[name], name, True)
        if not rates:
            return None
        unit = name.split("__", 1)[0]
        mean = name[:-len(".sum")] + ".avg" if name.endswith(".sum") else None
        for stat, form in _FORMS[1:]:
            if stat == "sum":
                q = self._form(name, form, unit)
            elif mean is None or (q := self._form(mean, form, unit)) is None:
                continue
            else:
                n = self.instances(unit)
                q = None if n is None else Quantity(q.value * n.value, f"{q.source} x {n.source}", False)
            if q is not None:
                return q
        return None

    def present(self, pattern: re.Pattern) -> list[re.Match]:
        """Matches of `pattern` against the `.sum` counters present as counts or rates."""
        return list(_present(pattern, _counted_names(frozenset(self.v))))


# A report names the same metrics on every launch: what follows from the names is worked out once.
@lru_cache(maxsize=256)
def _counted_names(names: frozenset[str]) -> tuple[str, ...]:
    """The `.sum` counters `names` hold in any of their spellings (`COUNTER_FORMS`), once each, sorted."""
    return tuple(sorted({f"{m['stem']}.sum" if (m := _COUNTED_FORM.match(n)) else n for n in names}))


@lru_cache(maxsize=256)
def _present(pattern: re.Pattern, names: tuple[str, ...]) -> tuple[re.Match, ...]:
    return tuple(m for n in names if (m := pattern.match(n)))


def _sum(parts: list[Quantity], joiner: str = " + ") -> Quantity:
    """Counts added up: counted when every part was."""
    return Quantity(sum(p.value for p in parts), joiner.join(p.source for p in parts), all(p.counted for p in parts))


def _scaled(q: Quantity, factor: float, what: str) -> Quantity:
    """A count times a fixed factor (FLOPs per instruction, bytes per sector): counted if it was."""
    source = f"({q.source})" if " + " in q.source else q.source
    return Quantity(q.value * factor, f"{source} x {what}", q.counted)


def _time(m: _Metrics, notes: list[str]) -> Quantity | None:
    for name in (TIME, "gpu__time_duration"):
        if (t := m.get(name)) is not None:
            if t > 0:
                return Quantity(t, name, True)
            notes.append(f"{name} is {t:g} ns, which is no duration: the time is taken from elapsed cycles, if any")
    for cycles, clock in _elapsed_pairs(m.v):
        c, f = m.get(cycles), m.get(clock)
        if c and f:
            return Quantity(c / f * 1e9, f"{cycles} / {clock}", False)
    return None


CYCLES = re.compile(r"^(?P<unit>[a-z0-9]+)__cycles_elapsed\.(?P<stat>max|avg)$")
TIME_FROM_CYCLES = ("gpc", "sm", "smsp")  # the units whose elapsed cycles span the launch, best first


def _elapsed_pairs(values) -> list[tuple[str, str]]:
    """(elapsed cycles, their clock) pairs that give a launch's duration: the GPC's, the SM's and
    the SM sub-partitions' first (the most elapsed of their instances, else their average), then
    any other unit's present (DRAM, L2), each over its own `.avg.per_second`."""
    units = list(TIME_FROM_CYCLES) + sorted({m["unit"] for n in values if (m := CYCLES.match(n))} - set(TIME_FROM_CYCLES))
    return [(f"{u}__cycles_elapsed.{stat}", f"{u}__cycles_elapsed.avg.per_second") for u in units
            for stat in (("avg", "max") if u in ("sm", "smsp") else ("max", "avg"))]


def _clock(m: _Metrics) -> Quantity | None:
    for name in CLOCKS:
        if (f := m.get(name)) is not None and f > 0:
            return Quantity(f, name, True)
    cycles = m.get("sm__cycles_elapsed.avg") or m.get("gpc__cycles_elapsed.max")
    if cycles and m.time is not None:
        return Quantity(cycles / (m.time.value * 1e-9), f"elapsed cycles / {m.time.source}", False)
    return None


def instruction_spellings(op: str) -> tuple[str, ...]:
    """The counters of thread instructions `op` ('dfma', 'hadd', ...), best first: per SM
    sub-partition and its per-SM roll-up, counting predicated-on threads; then the same without
    `_pred_on`, which count predicated-off threads too (read with a note)."""
    return tuple(f"{unit}__sass_thread_inst_executed_op_{op}{pred}.sum"
                 for pred in ("_pred_on", "") for unit in ("smsp", "sm"))


def _instruction(m: _Metrics, op: str, r: Reading) -> Quantity | None:
    """Thread instructions `op` from its first spelling present (`instruction_spellings`)."""
    for rates in (False, True):  # an exact count in any spelling before any rate
        for name in instruction_spellings(op):
            q = m.counter(name, rates)
            if q is not None:
                if "_pred_on" not in name:
                    r.notes.append(f"{op.upper()} instructions read from {name}, which counts predicated-off "
                                   "threads too: an upper bound")
                return q
    return None


def _cuda_core(m: _Metrics, key: str, r: Reading) -> None:
    p, per_fma, per_add, per_mul = CUDA_CORE_OPS[key]
    parts, absent = [], []
    for op, weight in (("fma", per_fma), ("add", per_add), ("mul", per_mul)):
        q = _instruction(m, p + op, r)
        if q is None:
            absent.append(op.upper())
        else:
            parts.append(_scaled(q, weight, str(weight)) if weight != 1 else q)
    where = "fp16" if key == "fp16" else key
    if not parts:
        r.missing[key] = WHERE[where]
        return
    total = _sum(parts)
    if absent:
        name = key.upper()
        r.missing[f"{key} {'/'.join(absent)}"] = WHERE[where]
        total = Quantity(total.value, f"{total.source} (no {name} {'/'.join(absent)} counts: a lower bound)",
                         total.counted)
    r.quantities[key] = total


TENSOR = re.compile(r"^sm__ops_path_tensor_(?:op_(?P<op>[a-z0-9]+?)_)?src_(?P<src>[a-z]+\d+(?:_[a-z]+\d+)*)"
                    r"(?:_dst_(?P<dst>[a-z]+\d+))?(?:_sparsity_(?P<sparsity>on|off))?\.sum$")


def _pick(entries: list[re.Match], fields: tuple[str, ...]) -> list[re.Match]:
    """The metrics to add up for one input type: at each field (instruction, output type,
    sparsity) the aggregate over it when present, else every value of it summed."""
    if not fields or len(entries) <= 1:
        return entries[:1]
    f, rest = fields[0], fields[1:]
    whole = [e for e in entries if e.group(f) is None]
    if whole:
        return _pick(whole, rest)
    out = []
    for value in sorted({e.group(f) for e in entries}):
        out += _pick([e for e in entries if e.group(f) == value], rest)
    return out


def _tensor(m: _Metrics, r: Reading) -> None:
    found = m.present(TENSOR)
    if not found:
        for key in TENSOR_TYPES.values():
            r.missing[key] = WHERE["tensor"]
        busy = next((x for name in TENSOR_PIPE if (x := m.get(name)) is not None), None)
        if busy is not None and busy >= TENSOR_PIPE_NOTED:
            # a GEMM's tensor work, uncounted, beside an epilogue's FP32 work that is: say which pipe was busy
            r.notes.append(f"its tensor pipe was busy in {busy:.0f} % of its cycles (the SpeedOfLight section), but "
                           "the report counts no tensor-core operations: its tensor roof may bind, not the one read "
                           f"here; they are counted with {WHERE['tensor']}")
        return
    by_src: dict[str, list[re.Match]] = {}
    for e in found:
        by_src.setdefault(e.group("src"), []).append(e)
    for src, entries in sorted(by_src.items(), key=lambda item: item[0] in MIXED_TENSOR_TYPES):
        key = TENSOR_TYPES.get(src)
        chosen = [q for e in _pick(entries, ("op", "dst", "sparsity")) if (q := m.counter(e.string)) is not None]
        total = _sum(chosen) if chosen else None
        if src in MIXED_TENSOR_TYPES:
            key = MIXED_TENSOR_TYPES[src]
            if key in r.quantities:
                continue  # the type has a count of its own
            if total is not None and total.value > 0:
                r.notes.append(f"tensor operations on {src.replace('_', '/')} inputs are counted together: "
                               f"read against the {key.split('_')[0].upper()} tensor roof")
        if key is None:
            if total is not None and total.value > 0:
                r.notes.append(f"{total.value:,.0f} tensor-core operations on {src.replace('_', '/')} inputs: "
                               "no roof for that type here, left out")
            continue
        if total is not None:
            r.quantities[key] = total
        sparse = sum(q.value for e in entries if e.group("sparsity") == "on" and (q := m.counter(e.string)))
        if sparse > 0:
            r.notes.append(f"{sparse:,.0f} of its {key.split('_')[0].upper()} tensor operations are structured-sparse: "
                           "read against the dense roof")
    for key in TENSOR_TYPES.values():
        if key not in r.quantities:
            r.missing[key] = WHERE["tensor"]


BYTE_OPTIONS = {  # per level, the counters that give its bytes, best first: (names added up, bytes per unit)
    "dram": ([BYTES["dram"]], 1), "dram_rw": (["dram__bytes_read.sum", "dram__bytes_write.sum"], 1),
    "dram_op": (["dram__bytes_op_read.sum", "dram__bytes_op_write.sum"], 1),  # as gb202 (sm_120) spells them
    "dram_old": (["dram__read_bytes", "dram__write_bytes"], 1), "dram_sectors": (["dram__sectors.sum"], SECTOR_BYTES),
    "dram_sectors_rw": (["dram__sectors_read.sum", "dram__sectors_write.sum"], SECTOR_BYTES),
    "l2": ([BYTES["l2"]], 1), "l2_sectors": (["lts__t_sectors.sum"], SECTOR_BYTES),
    "l1": ([BYTES["l1"]], 1), "l1_sectors": (["l1tex__t_sectors.sum"], SECTOR_BYTES),
    "smem": ([BYTES["smem"]], 1),
}


SPLIT_OPTIONS = {  # DRAM bytes read, and written, each from its own counter: (name, bytes per unit), best first
    key: [(DRAM_SPLIT[key], 1), (f"dram__bytes_op_{way}.sum", 1), (f"dram__{way}_bytes", 1),
          (f"dram__sectors_{way}.sum", SECTOR_BYTES)]
    for key, way in (("dram_read", "read"), ("dram_write", "write"))}


def _bytes(m: _Metrics, r: Reading) -> None:
    for level in BYTES:
        options = [v for k, v in BYTE_OPTIONS.items() if k.split("_")[0] == level]
        q = None
        for rates in (False, True):  # every exact count before any rate x time
            for names, per_unit in options:
                parts = [m.counter(n, rates) for n in names]
                if all(p is not None for p in parts):
                    q = _sum(parts) if per_unit == 1 else _scaled(_sum(parts), per_unit, f"{per_unit} B")
                    break
            if q is None and level == "l1":
                parts = [p for e in m.present(L1_SECTORS) if (p := m.counter(e.string, rates)) is not None]
                if parts:
                    q = _scaled(_sum(parts), SECTOR_BYTES, f"{SECTOR_BYTES} B")
            if q is not None:
                break
        if q is None:
            r.missing[level] = WHERE[level]
        else:
            r.quantities[level] = q
    for key, options in SPLIT_OPTIONS.items():  # not missing where absent: the roofline does not need them
        found = [(q, per_unit) for rates in (False, True) for name, per_unit in options
                 if (q := m.counter(name, rates)) is not None]  # every exact count before any rate x time
        if found:
            q, per_unit = found[0]
            r.quantities[key] = q if per_unit == 1 else _scaled(q, per_unit, f"{per_unit} B")


L1_SECTORS = re.compile(r"^l1tex__t_sectors_pipe_lsu_mem_(global|local)_op_(ld|st|atom|red)\.sum$")


def _dims(values: dict[str, float], text: dict[str, str], kind: str) -> tuple[tuple[int, int, int] | None, str]:
    per_dim = [_finite(values.get(f"launch__{kind}_dim_{a}")) for a in "xyz"]
    if all(d is not None and d >= 1 and d == int(d) for d in per_dim):
        return tuple(int(d) for d in per_dim), f"launch__{kind}_dim_x/y/z"
    column = f"{kind.capitalize()} Size"
    found = re.findall(r"\d+", str(text.get(column, "")))
    if len(found) == 3 and all(int(d) >= 1 for d in found):
        return tuple(int(d) for d in found), f"'{column}' column"
    total = _finite(values.get(f"launch__{kind}_size"))
    if total is not None and total >= 1 and total == int(total):
        return (int(total), 1, 1), f"launch__{kind}_size (as one dimension)"
    return None, ""


# What no real launch reports: a duration longer than a day (a profiled launch is replayed once per
# pass, so one that long would keep ncu for days), or a rate more than OVER_PEAK_FACTOR times the
# device's theoretical peak (counters count exactly; clocks above the nominal one give a few per cent).
MAX_DURATION_NS = 86_400 * 1e9
OVER_PEAK_FACTOR = 2.0


def implausible(r: Reading, gflops_peaks: dict[str, float] | None = None,
                gbps_peaks: dict[str, float] | None = None) -> str | None:
    """Why launch reading `r` cannot be real, in words naming the metric and its value, or None:
    a duration beyond `MAX_DURATION_NS`, or (given the device's peaks: precision key -> GFLOP/s,
    memory level 'dram'/'l2' -> GB/s) work or bytes over the time at more than `OVER_PEAK_FACTOR`
    times the peak."""
    t = r.quantities.get("time")
    if t is None:
        return None
    if t.value > MAX_DURATION_NS:
        return f"{t.source} gives {t.value * 1e-9:,.6g} s, longer than any real launch (a day)"
    for peaks, unit in ((gflops_peaks or {}, "GFLOP/s"), (gbps_peaks or {}, "GB/s")):
        for key, peak in peaks.items():
            q = r.quantities.get(key)
            if q is None or not peak:
                continue
            rate = q.value / t.value  # per ns: GFLOP/s, GB/s
            if rate > OVER_PEAK_FACTOR * peak:
                what = "operations" if unit == "GFLOP/s" else "bytes"
                return (f"{q.source} = {q.value:,.6g} {what} in {t.value:,.6g} ns is {rate:,.0f} {unit}, "
                        f"{rate / peak:,.3g}x the device's {key} peak of {peak:,.0f} {unit}")
    return None


def _exact_size(x: float, half: float | None, granule: int) -> tuple[float, str]:
    """A size a report printed rounded (`half`: half its display step, bytes) as what it rounds:
    the multiple of the allocation `granule` within the step, else the nearest whole byte; with the
    words that say so ('' for an exact value)."""
    if not half:
        return x, ""
    near = round(x / granule) * granule
    exact = near if abs(near - x) <= half else round(x)
    if exact == x:
        return x, ""
    return float(exact), f" (printed rounded as {x:,.6g}: read as {exact:,} B, " + (
        f"the multiple of the {granule} B allocation granule it rounds)" if exact == near else "the byte it rounds)")


def read(values: dict[str, float], text: dict[str, str] | None = None, rounding: dict[str, float] | None = None,
         smem_granule: int = 128) -> Reading:
    """Every roofline quantity of one launch from its metric values (metric name -> value in base
    units: ns, bytes, Hz, counts) and its text columns ('Grid Size', 'Block Size'), as this
    module's docstring lists them. `rounding` gives, per metric printed with a unit prefix and a
    few digits, half its display step (base units): shared-memory sizes are then read as the
    multiple of `smem_granule` (bytes, the compute capability's allocation unit) they round
    ('8.19 Kbyte' is 8,192 B). Never raises: what the values do not give is `missing`."""
    text = text or {}
    rounding = rounding or {}
    m = _Metrics(values)
    r = Reading()
    m.time = _time(m, r.notes)
    if m.time is None:
        r.missing["time"] = WHERE["time"]
    else:
        r.quantities["time"] = m.time
    clock = _clock(m)
    if clock is None:
        r.missing["clock"] = WHERE["clock"]
    else:
        r.quantities["clock"] = clock
    for key in CUDA_CORE_OPS:
        _cuda_core(m, key, r)
    _tensor(m, r)
    _bytes(m, r)
    conflicts = m.counter(BANK_CONFLICTS)
    if conflicts is None:
        parts = [m.counter(BANK_CONFLICTS.replace(".sum", f"_op_{op}.sum")) for op in ("ld", "st")]
        conflicts = _sum(parts) if all(parts) else None
    if conflicts is not None:
        r.quantities["bank_conflicts"] = conflicts
    if (achieved := m.get(ACHIEVED)) is not None:
        r.quantities["achieved_occupancy"] = Quantity(achieved / 100, ACHIEVED, True)
    if (theirs := m.get(THEORETICAL)) is not None:  # ncu's own calculator: a check on the GPU read against
        r.quantities["reported_occupancy"] = Quantity(theirs / 100, THEORETICAL, True)
    if (passes := m.get(PASSES)) is not None:
        r.quantities["passes"] = Quantity(passes, PASSES, True)
    for key, metric, top in (("registers", "launch__registers_per_thread", 255),
                             ("static_smem", "launch__shared_mem_per_block_static", 1 << 30),
                             ("dynamic_smem", "launch__shared_mem_per_block_dynamic", 1 << 30)):
        if (x := m.get(metric)) is not None:
            x, said = _exact_size(x, rounding.get(metric), smem_granule) if key != "registers" else (x, "")
            if x == int(x) and 0 <= x <= top:
                r.quantities[key] = Quantity(x, metric + said, True)
            else:
                r.notes.append(f"{metric} is {x:g}, which no launch has: left out")
    if (x := m.get(SMEM_CONFIG)) is not None:
        x, said = _exact_size(x, rounding.get(SMEM_CONFIG), SMEM_CONFIG_GRANULE)
        if x == int(x) and 0 < x <= 1 << 30:
            r.quantities["smem_config"] = Quantity(x, SMEM_CONFIG + said, True)
        else:
            r.notes.append(f"{SMEM_CONFIG} is {x:g}, which no launch has: left out")
    if "registers" not in r.quantities:
        r.missing["registers"] = WHERE["registers"]
    if "static_smem" not in r.quantities and "dynamic_smem" not in r.quantities:
        r.missing["shared_memory"] = WHERE["shared_memory"]
    r.grid, grid_source = _dims(m.v, text, "grid")
    r.block, block_source = _dims(m.v, text, "block")
    if r.grid is None or r.block is None:
        r.missing["launch_size"] = WHERE["launch_size"]
    r.launch_source = grid_source if grid_source == block_source else f"{grid_source}, {block_source}".strip(", ")
    return r


# ---------------------------------------------------------------- the metrics `read` reads

_RATES = r"(\.per_cycle_elapsed|\.per_second|\.pct_of_peak_sustained_elapsed|\.peak_sustained)?"
_READ_PATTERNS = tuple(re.compile(p) for p in (
    r"^[a-z0-9]+__cycles_elapsed\.(avg|max|sum)(\.per_second)?$",  # time, clock and the cycles behind rates
    r"^(smsp|sm)__sass_thread_inst_executed_op_[dfh](fma|add|mul)(_pred_on)?\.(sum|avg)" + _RATES + "$",
    TENSOR.pattern.rstrip("$").replace(r"\.sum", r"\.(sum|avg)") + _RATES + "$",
    L1_SECTORS.pattern.rstrip("$").replace(r"\.sum", r"\.(sum|avg)") + _RATES + "$",
))


def _read_names() -> frozenset[str]:
    names = {TIME, "gpu__time_duration", *CLOCKS, ACHIEVED, THEORETICAL, *LAUNCH}
    counters = {n for names_, _ in BYTE_OPTIONS.values() for n in names_}
    counters |= {n for options in SPLIT_OPTIONS.values() for n, _ in options}
    counters |= {BANK_CONFLICTS, *(BANK_CONFLICTS.replace(".sum", f"_op_{op}.sum") for op in ("ld", "st"))}
    for name in counters:  # each `.sum` counter also in the spellings `_Metrics.counter` reads, and the peaks beside
        mean = name[:-len(".sum")] + ".avg" if name.endswith(".sum") else None
        for stat, form in _FORMS:
            base = name if stat == "sum" else mean
            if base is not None:
                names.add(base + form)
                if form == ".pct_of_peak_sustained_elapsed":
                    names.add(base + ".peak_sustained")
    return frozenset(names)


READ_NAMES = _read_names()


def reads(name: str) -> bool:
    """Whether `read` takes a figure from metric `name`, exactly: the names and spellings of this
    module's tables (time, clocks, instruction and tensor counts, bytes per level, bank conflicts,
    occupancy, launch figures) and their rates. A metric that only shares a prefix with one
    (`lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum` beside `lts__t_sectors.sum`) is not
    read, and a damaged value in it harms no figure."""
    return name in READ_NAMES or any(p.match(name) for p in _READ_PATTERNS)
