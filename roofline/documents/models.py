"""The `--json` documents of the decisions and descriptions as pydantic models: what `compare`
(and its gate, `compare --max-drop`: the `check` document; two grade files), `whatif`, `project`, `comms`, `kernels`,
`occupancy` and `device` print, key for key, so that their JSON Schema can be printed
(`Model.model_json_schema()`, `DocumentKind.schema`) and every document is checked against it as
it is printed (`checked`).

A document is made as before (the analysis objects' `to_dict`/`to_json`, `dataclasses.asdict`),
then validated here and dumped from the model: the same keys in the same order, ints kept ints and
floats floats (`Number`), keys a document leaves out left out (`exclude_unset`), infinities and
NaN as `json.dumps` writes them. `tests/test_documents.py` checks the dump against the document,
byte for byte, on every golden case.

The parts that are a dataclass printed whole (`DeviceSpec` and its limits, a comms report's rows,
a kernel's traffic model and waves) are modelled from the dataclass's own fields (`of_dataclass`),
so that a field added there is in the schema too.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

# A JSON number as the document holds it: an int stays an int, a float a float.
Number = Union[int, float]
OptNumber = Optional[Number]
Pair = list[OptNumber]  # [before, after]


class JsonModel(BaseModel):
    """A `--json` document or a part of one: every key described (no other allowed), infinities
    and NaN written as JSON's constants, as `json.dumps` writes them."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants", protected_namespaces=())


def checked(model: type[BaseModel], document: Any) -> Any:
    """`document` validated against `model` and dumped from it (keys the document leaves out left
    out): the same JSON, checked. Raises pydantic's ValidationError for a document the model does
    not describe (a bug: a key added to a document and not to its model)."""
    return model.model_validate(document).model_dump(mode="json", by_alias=True, exclude_unset=True)


# --- models of dataclasses printed whole --------------------------------------------------------

def _jsonable(tp: Any) -> Any:
    """The type a field of type `tp` has in the JSON model: floats as `Number`, dataclasses as
    their models, containers and unions of those; anything else as it is."""
    if tp is float:
        return Number
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return of_dataclass(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return Union[tuple(_jsonable(a) for a in args)]
    if origin in (list, tuple, set, frozenset):
        inner = [a for a in args if a is not Ellipsis]
        if origin is tuple and len(inner) > 1 and Ellipsis not in args:
            return tuple[tuple(_jsonable(a) for a in inner)]
        return list[_jsonable(inner[0])] if inner else list
    if origin is dict:
        return dict[_jsonable(args[0]), _jsonable(args[1])] if args else dict
    if origin is Literal or tp in (int, str, bool, type(None)):
        return tp
    return Any


@functools.cache
def of_dataclass(cls: type, extra: tuple[tuple[str, Any], ...] = ()) -> type[JsonModel]:
    """A JSON model of dataclass `cls` as `dataclasses.asdict` prints it (every field, in order),
    with the keys `extra` ((name, type) pairs) after them."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: (_jsonable(hints[f.name]), ...) for f in dataclasses.fields(cls)}
    fields.update({name: (tp, ...) for name, tp in extra})
    return create_model(f"{cls.__name__}Json", __base__=JsonModel, __doc__=(cls.__doc__ or "").strip() or None,
                        **fields)


# --- compare and check ----------------------------------------------------------------------------

class LevelChangeJson(JsonModel):
    """The bytes at one memory level before and after; `counted` False where both are the model's."""

    before: Number
    after: Number
    change: OptNumber
    change_per_flop: OptNumber = Field(None, description="runs of two problem sizes (--across-sizes): the change "
                                                         "of the bytes per FLOP, which the reading's cause reads")
    counted: bool


class DeltaJson(JsonModel):
    """One matched kernel (or a profile's step): before and after, the changes, the reading."""

    kernel: str
    launch: Optional[str]
    configuration_changed: Optional[str]
    time_ms: Pair
    time_change: Number
    gflops: Pair
    gflops_change: OptNumber
    bytes: dict[str, LevelChangeJson]
    occupancy: Pair
    fraction_of_roof: Pair
    fraction_change: OptNumber
    slowdown: OptNumber
    per_flop: bool = Field(False, description="runs of two problem sizes (--across-sizes): the cause's bytes are "
                                              "per FLOP, and on one GPU model slowdown is the change of the time of "
                                              "a FLOP, the inverse of FLOP/s (across models it stays the fraction "
                                              "of the binding roof's)")
    noise: Number
    noise_from: str
    reading: str
    cause: Optional[str]
    binding: list[Optional[str]] = Field(description="the level whose roof binds before and after ('L2', 'BF16 "
                                                     "tensor'; null where none does): fraction_of_roof is of these")
    binding_tied: bool = Field(False, description="the two binding levels differ but one reading names the other's "
                                                  "roof as near, within 5 %: a tie, not a move")
    joules: Optional[list[Number]] = Field(None, description="joules per launch before and after (both with --energy)")
    pct_of_reference: Optional[Pair] = Field(None, description="runs timed in rounds: each file's paired % of its "
                                                                 "reference")
    pct_ci95: Optional[list[Optional[list[Number]]]] = None
    pct_move: Optional[str] = None


class PhaseChangeJson(JsonModel):
    """One kernel with a timeline in both files: time, each phase's share, the tail's SMs busy and the
    steady part's busiest unit and its share of its peak, before and after."""

    kernel: str
    before_ms: Number
    after_ms: Number
    before_shares: dict[str, Number]
    after_shares: dict[str, Number]
    before_tail_busy: OptNumber
    after_tail_busy: OptNumber
    before_steady: OptNumber
    after_steady: OptNumber
    before_unit: Optional[str] = None
    after_unit: Optional[str] = None


class CompareJson(JsonModel):
    """`roofline compare --json` of two runs or two profiles (docs/compare.md)."""

    kind: str
    before_device: str
    after_device: str
    same_device: bool
    noise_fixed: Number
    cause_threshold: Number
    step: Optional[DeltaJson]
    kernels: list[DeltaJson]
    gone: list[str]
    new: list[str]
    reference_speedup: OptNumber
    phases: Optional[list[PhaseChangeJson]] = Field(None, description="two profiles: the kernels with a timeline "
                                                                      "in both, their phases before and after")
    notes: list[str]


class GatedJson(JsonModel):
    """One matched kernel (or the step) at the gate."""

    kernel: str
    launch: str | None = None  # a profiled kernel's grid x block; None for a run's kernel and the step
    slowdown: OptNumber
    noise: Number
    noise_from: str
    failed: bool
    time_ms: Pair
    fraction_of_roof: Pair


class CheckJson(JsonModel):
    """`roofline compare --max-drop --json` of two runs or two profiles (docs/check.md)."""

    passed: bool
    max_drop: Number
    measure: str
    before_device: str
    after_device: str
    failed: list[str]
    not_timed_now: list[str] = Field(default_factory=list, description="runs: kernels the baseline verified and "
                                     "timed that the new file did not (each fails the gate, and is in failed)")
    kernels: list[GatedJson]
    step: Optional[GatedJson]
    matched_share: Optional[Pair] = Field(None, description="profiles: the share of each file's GPU time (0..1) "
                                          "the matched kernels hold, [baseline, new]; null for runs")
    not_measured: list[str]
    gone: list[str]
    new: list[str]
    notes: list[str]


class GradeChangeJson(JsonModel):
    """One entry in both grade files."""

    name: str
    workload: str
    before_ms: OptNumber
    after_ms: OptNumber
    before_share: OptNumber
    after_share: OptNumber
    change: OptNumber
    move: str
    new_flags: list[str]
    failure: Optional[str]


class GradeChangesJson(JsonModel):
    """`roofline compare --json` of two grade files, and of its gate `--max-drop` (`max_drop` None for
    the comparison)."""

    passed: bool
    max_drop: OptNumber
    only_before: list[str]
    only_after: list[str]
    gpus: list[str] = Field(description="the GPU each file was graded on, before then after")
    basis: str = Field(description="'time' (one GPU model) or 'share' (two: each entry read by its time over its "
                                   "T_SOL on its own GPU, so `change` is that ratio's change)")
    entries: list[GradeChangeJson]


# --- whatif ---------------------------------------------------------------------------------------

class KernelWhatIfJson(JsonModel):
    """One kernel at the target."""

    name: str
    label: str
    roof: Optional[str]
    roof_measured: Optional[bool]
    roof_seen: bool
    roof_borrowed: Optional[str] = Field(None, description="where the measured ceiling came from when not its own "
                                                           "measurement ('FP16 cuBLAS': a BF16 ceiling that is "
                                                           "cuBLAS FP16's)")
    time_ms: Number
    floor_ms: OptNumber
    target_ms: OptNumber
    saved_ms: OptNumber
    time_share: OptNumber
    step_ms_after: OptNumber
    speedup: OptNumber
    cumulative_step_ms: OptNumber
    cumulative_speedup: OptNumber
    not_counted: Optional[list[str]]
    joules: OptNumber = Field(None, description="a run's kernel measured with --energy: joules per launch")


class FusionWhatIfJson(JsonModel):
    """One kernel followed at once by another: the DRAM bytes passing and the ms fusing them saves."""

    first: str
    second: str
    first_roof: str
    second_roof: str
    occurrences: int
    passing_bytes: Number
    saved_ms: Number
    roof_gbps: Number
    roof_measured: bool
    step_ms_after: Number
    speedup: Number


class OpWhatIfJson(JsonModel):
    """One op in one phase at the target (a profile that records who launched its kernels)."""

    op: str
    phase: str
    time_ms: Number
    floor_ms: OptNumber
    target_ms: Number
    saved_ms: Number
    binding: Optional[str]
    launches: int
    step_ms_after: Number
    speedup: Number


class OpFusionWhatIfJson(JsonModel):
    """A launch of one op followed at once by one of another: the DRAM bytes passing, the ms saved."""

    first: str
    second: str
    occurrences: int
    passing_bytes: Number
    saved_ms: Number
    roof_gbps: Number
    roof_measured: bool
    step_ms_after: Number
    speedup: Number


class PhaseWhatIfJson(JsonModel):
    """One kernel with a timeline: its fill, drain and tail wave (ms, over all its launches), what each
    saves at the steady phase's rate (its busiest unit, `steady_unit`, at `steady_share` of its
    peak), and the step without its tail wave or its fill."""

    kernel: str
    time_ms: Number
    steady_share: Number
    fill_ms: Number
    fill_saved_ms: Number
    drain_ms: Number
    drain_saved_ms: Number
    tail_ms: Number
    tail_saved_ms: Number
    tail_busy: OptNumber
    of: str = Field(description="'step': the two times below are the step's; 'kernel': programs profiled apart, "
                                "so they are this kernel's")
    ms_without_tail: Number
    ms_without_fill: Number
    steady_unit: str = "-"


class WhatIfJson(JsonModel):
    """`roofline whatif --json` (docs/whatif.md)."""

    kind: str
    device: str
    target: Number
    problem: Optional[str]
    step_ms: OptNumber
    step_ms_after_all: OptNumber
    saved_ms_all: OptNumber
    kernels: list[KernelWhatIfJson]
    fusion: list[FusionWhatIfJson]
    ops: Optional[list[OpWhatIfJson]] = Field(None, description="a profile that records who launched its kernels: "
                                                                "every op at the target, by saving")
    op_fusion: Optional[list[OpFusionWhatIfJson]] = Field(None, description="its top pairs of ops whose launches "
                                                                            "run one right after the other")
    phases: Optional[list[PhaseWhatIfJson]] = Field(None, description="a profile's kernels with a timeline: their "
                                                                      "fill, drain and tail wave at the steady rate")
    notes: list[str]


# --- project --------------------------------------------------------------------------------------

class ProjectedKernelJson(JsonModel):
    """One kernel on one target GPU."""

    kernel: str
    time_here_ms: Number
    binding_here: Optional[str]
    floor_here_ms: OptNumber
    fraction_of_roof: OptNumber
    floors_ms: dict[str, Number]
    binding: Optional[str]
    floor_ms: OptNumber
    estimated_ms: OptNumber
    estimated_gflops: OptNumber
    utilization_here: OptNumber
    utilization: OptNumber
    binding_changed: bool
    flags: list[str]
    left_out: Optional[str]
    not_compared: list[str]


class ProjectedStepJson(JsonModel):
    """A profile's step on one target (None figures for a run)."""

    lower_bound_ms: OptNumber
    estimated_ms: OptNumber
    here_ms: OptNumber
    left_out: int
    left_out_here_ms: Number


class TargetJson(JsonModel):
    """One target GPU."""

    gpu: str
    source: Optional[str]
    step: ProjectedStepJson
    kernels: list[ProjectedKernelJson]
    notes: list[str]


class ProjectJson(JsonModel):
    """`roofline project --json` (docs/project.md)."""

    kind: str
    measured_on: str
    problem: Optional[str]
    step_ms: OptNumber
    roofs: str
    notes: list[str]
    targets: list[TargetJson]


# --- comms ----------------------------------------------------------------------------------------

def comms_model() -> type[JsonModel]:
    """`roofline comms --json`: the link, the notes, nccl-tests' figures, every rank's step (with
    its span overlapped), the collectives and compute kernels across ranks."""
    from ..analysis.comms import AcrossRanks, RankSummary
    from ..model.links import Link
    from ..traces.nccl_tests import NcclTests

    return _comms_model(of_dataclass(Link), of_dataclass(NcclTests),
                        of_dataclass(RankSummary, (("overlapped_span_us", Number),)), of_dataclass(AcrossRanks))


@functools.cache
def _comms_model(link, reference, rank, across) -> type[JsonModel]:
    return create_model("CommsJson", __base__=JsonModel, __doc__=comms_model.__doc__,
                        link=(Optional[link], ...), notes=(list[str], ...), nccl_tests=(Optional[reference], ...),
                        ranks=(list[rank], ...), collectives=(list[across], ...), kernels=(list[across], ...))


# --- kernels, occupancy, device -----------------------------------------------------------------

class TargetBlocksJson(JsonModel):
    """`--target-blocks`: the most registers per thread that keep that many blocks resident."""

    target_blocks: int
    max_registers_per_thread: Optional[int]
    explanation: Optional[str]


class OccupancyJson(JsonModel):
    """`roofline occupancy --json`, and a kernel's occupancy in results files and `kernels --json`
    (the keys every reader relies on first, then the allocation details)."""

    arch: str
    registers_per_thread: int
    threads_per_block: int
    static_smem_bytes: int
    dynamic_smem_bytes: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    occupancy: Number
    limiters: list[str]
    block_limits: dict[str, Optional[int]]  # None: the resource sets no limit (no shared memory used)
    registers_per_block: int
    smem_per_block_bytes: int
    smem_opt_in: bool
    reserved_smem_bytes: int
    reason: Optional[str]
    target: Optional[TargetBlocksJson] = None


class FloorsJson(JsonModel):
    """A listed kernel's floors against a preset's theoretical peaks (ms): the highest memory
    floor that can bind and its level, the compute floor, every level's floor, the levels set
    aside and why ('L1': the L1 serves the GMEM requests; `model.roofs.Floor.aside`), and which binds."""

    memory_floor_ms: OptNumber
    memory_level: Optional[str]
    compute_floor_ms: OptNumber
    levels_ms: dict[str, float]
    set_aside: dict[str, str]
    binding: Literal["memory", "compute", "launch"]
    binding_level: str


class DeclaredJson(JsonModel):
    """A listed kernel's own declared work at its sizes: FLOPs per precision, compulsory bytes, FLOP
    per byte (None without bytes), and on a device its speed of light in ms and the roof that binds
    it (None without a device or a roof)."""

    workload: str
    sizes: dict[str, int]
    flops: dict[str, float]
    bytes: Number
    flop_per_byte: OptNumber
    t_sol_ms: OptNumber
    binding_level: Optional[str]


def kernels_model() -> type[JsonModel]:
    """`roofline kernels --json`: the listing's size, target, preset, kernels and notes."""
    from ..model.traffic import ModelFigures
    from ..model.waves import Waves

    return _kernels_model(of_dataclass(ModelFigures), of_dataclass(Waves))


@functools.cache
def _kernels_model(figures, waves) -> type[JsonModel]:
    row = create_model(
        "KernelRowJson", __base__=JsonModel, __doc__="One kernel of the listing; a target adds its resources.",
        name=(str, ...), summary=(str, ...), template=(str, ...), tile_source=(str, ...), threads_per_block=(int, ...),
        source=(Optional[dict[str, str]], None), registers=(Optional[int], None), local_bytes=(Optional[int], None),
        static_smem_bytes=(Optional[int], None), dynamic_smem_bytes=(Optional[int], None),
        compiler=(Optional[str], None), target=(Optional[str], None), occupancy=(Optional[OccupancyJson], None),
        unavailable=(Optional[str], None), error=(Optional[str], None),
        waves=(Optional[waves], None), model=(Optional[figures], ...), floors=(Optional[FloorsJson], None),
        declared=(Optional[DeclaredJson], None))
    return create_model("KernelsJson", __base__=JsonModel, __doc__=kernels_model.__doc__, size=(int, ...),
                        arch=(Optional[str], ...), device=(Optional[str], ...), kernels=(list[row], ...),
                        notes=(list[str], ...))


def device_model() -> type[JsonModel]:
    """`roofline device --json`: every field of the GPU's description (`model.device.DeviceSpec`),
    then its target, its ridge point in FLOP per byte and the FLOP per SM per clock a device file
    gave (empty for a preset or NVML's GPU)."""
    from ..model.device import DeviceSpec

    return of_dataclass(DeviceSpec, (("arch", str), ("ridge_point_flop_per_byte", Number),
                                     ("flops_per_sm_per_clock", dict[str, Number])))


class TraceKernelJson(JsonModel):
    """One kernel name under an op: its GPU time over the op's launches of it."""

    name: str
    time_ms: Number


class TraceRowJson(JsonModel):
    """One op (or module) in one phase ('forward', 'backward', 'optimizer'; '-' for the kernels
    without an owner): GPU time, launches, share of the trace's GPU time, kernels by time."""

    name: str
    phase: str
    time_ms: Number
    launches: int
    share: Number
    kernels: list[TraceKernelJson]


class TraceJson(JsonModel):
    """`roofline show TRACE --json`: a PyTorch profiler trace's GPU time by op (and by module where
    the trace names modules; null where it does not), the share owned by an op, and notes."""

    kind: Literal["trace"]
    source: str
    gpu: Optional[str]
    kernels: int
    time_ms: Number
    owned_share: Number
    ops: list[TraceRowJson]
    modules: Optional[list[TraceRowJson]]
    notes: list[str]


def trace_model() -> type[JsonModel]:
    """`roofline show TRACE --json` (`documents.trace`)."""
    return TraceJson
