"""The integrity flags of a graded kernel: each one a reason its time or its answer cannot be
taken at face value, with the figures that raised it.

    code                 raised when                                             evidence
    faster_than_light    T_SOL / T > FASTER_THAN_LIGHT (1.1): the declared work   T, T_SOL, the binding term
                         or bytes, or the timing, is wrong
    nan_or_unwritten     an output holds NaN after the checked launch (outputs    elements, of how many
                         are filled with NaN before it: unwritten ones stay so)
    inputs_modified      an input (role `in`) differs, bit for bit, after the     elements changed
                         launch from before it
    cached_answer        the outputs of a launch on new inputs (the same buffers, which outputs, the
                         refilled) equal those of the first launch bit for bit    references' difference
                         while the reference's differ
    no_gpu_work          T within NO_WORK_FLOORS (1.5) launch floors while T_SOL  T, the launch floor, T_SOL,
                         is above T (or, profiled, no kernel or no DRAM byte      counted bytes
                         counted)
    tensor_work_missing  tensor-core FLOPs declared, none counted by Nsight       declared, counted
                         Compute (`--profile`)
    async_return         the wall clock from the call to an idle device exceeds   events, wall clock
                         the events' time by more than ASYNC_SLACK_MS (0.2 ms)
                         and ASYNC_SHARE (a quarter) of it: work left running
                         off the timed stream
    aliased_output       a problem's candidate returns an output sharing storage   -
                         with an input: a view handed back (`measure.candidate`)
    not_a_tensor         a candidate's output is a subclass of torch.Tensor, or    its type
                         no tensor where the reference returns one: a lazy result
    lower_precision      a candidate's output is in a narrower float dtype than    the two widths
                         the reference's, or it turned a precision switch (TF32   (switches turned)
                         for FP32 products) that the reference would follow
    patched_harness      a candidate replaced a timer, event or statistic a        what it replaced
                         harness measures with (put back)
    patched_reference    a candidate replaced an op or method the reference        what it replaced
                         computes with, so that the reference computes what the
                         candidate does (put back)
    l2_persisting        it marked lines persisting in the L2 while it was timed   the bytes marked
                         (a set-aside for them, an access policy window on its
                         stream): L2 state the harness resets before every call

Thresholds are margins over measurement noise, not tunings: a share of 1.1 allows a kernel 10 %
above a sustained ceiling measured by a simpler kernel; the wall clock of an honest launch exceeds
its events by the synchronisation's tens of microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .sol import FASTER_THAN_LIGHT, SpeedOfLight

NO_WORK_FLOORS = 1.5
ASYNC_SLACK_MS = 0.2
ASYNC_SHARE = 0.25
CODES = ("faster_than_light", "nan_or_unwritten", "inputs_modified", "cached_answer", "no_gpu_work",
         "tensor_work_missing", "async_return", "aliased_output", "not_a_tensor", "lower_precision",
         "patched_harness", "patched_reference", "l2_persisting")


@dataclass(frozen=True)
class Flag:
    """One integrity flag: `code` (CODES), `evidence` (one sentence with the figures), `figures`
    (the same figures by name, for a program to read)."""

    code: str
    evidence: str
    figures: dict[str, float] = field(default_factory=dict)


def _ms(x: float) -> str:
    return f"{x:.4g} ms"


def faster_than_light(time_ms: float, sol: SpeedOfLight, emulated: SpeedOfLight | None = None) -> Flag | None:
    """The flag for a time under its speed of light by more than the margin, else None; also None
    where it is within the margin of `emulated`, the bound of the same work with its FP32 matrix
    products done as 3xTF32 on the tensor cores (`sol.fp32_on_tensor_cores`: FP32-accurate, so no
    cheat)."""
    b = sol.binding
    if b is None or not time_ms or sol.ms / time_ms <= FASTER_THAN_LIGHT:
        return None
    if emulated is not None and emulated.ms / time_ms <= FASTER_THAN_LIGHT:
        return None
    how = "measured" if b.measured else "theoretical"
    return Flag("faster_than_light",
                f"{_ms(time_ms)} is {sol.ms / time_ms:.2f}x faster than its speed of light {_ms(sol.ms)} "
                f"({b.level} at the {how} roof): the declared work or bytes, or the timing, is wrong",
                {"time_ms": time_ms, "t_sol_ms": sol.ms, "share": sol.ms / time_ms})


def no_gpu_work(time_ms: float, sol: SpeedOfLight, launch_ms: float | None,
                counted_kernels: int | None = None, counted_dram_bytes: float | None = None) -> Flag | None:
    """The flag for work that never reached the GPU: profiled, no kernel (or no DRAM byte while
    bytes are compulsory) counted; else a time within NO_WORK_FLOORS launch floors that is under
    T_SOL. None otherwise."""
    if counted_kernels == 0:
        return Flag("no_gpu_work", "Nsight Compute counted no kernel in the profiled call", {"kernels": 0})
    if counted_dram_bytes == 0 and sol.term("DRAM") is not None and sol.term("DRAM").amount > 0:
        return Flag("no_gpu_work", f"Nsight Compute counted 0 DRAM bytes against {sol.term('DRAM').amount:,.0f} "
                                   "compulsory ones", {"dram_bytes": 0.0})
    if launch_ms and time_ms and time_ms <= NO_WORK_FLOORS * launch_ms and sol.ms > time_ms:
        where = "below" if time_ms < launch_ms else "at"
        return Flag("no_gpu_work", f"{_ms(time_ms)} is {where} the launch floor ({_ms(launch_ms)}, an empty kernel) "
                                   f"while its speed of light is {_ms(sol.ms)}: the work never ran on the GPU "
                                   "while it was timed",
                    {"time_ms": time_ms, "launch_ms": launch_ms, "t_sol_ms": sol.ms})
    return None


def nan_or_unwritten(output: str, nans: int, size: int) -> Flag | None:
    """The flag for an output holding `nans` NaN of `size` elements after the checked launch."""
    if not nans:
        return None
    return Flag("nan_or_unwritten", f"{output}: {nans:,} of {size:,} elements NaN or never written "
                                    "(outputs are filled with NaN before the launch)",
                {"elements": float(nans), "size": float(size)})


def inputs_modified(name: str, changed: int, size: int, declared: bool = True) -> Flag | None:
    """The flag for input `name` with `changed` of `size` elements different after the launch:
    `declared` for an argument a spec declares `in` (which may be declared `inout`), else one of
    a problem's inputs, which its reference leaves as they were."""
    if not changed:
        return None
    by = "the launch (declared `in`; declare it `inout` if the kernel writes it)" if declared else \
        "the candidate's call (the reference leaves its inputs as they were)"
    return Flag("inputs_modified", f"{name}: {changed:,} of {size:,} elements changed by {by}",
                {"elements": float(changed), "size": float(size)})


def cached_answer(outputs: list[str], reference_change: float) -> Flag | None:
    """The flag for outputs `outputs` identical on new inputs while the reference moved by
    `reference_change` (relative): None when no output repeats or the reference did not move."""
    if not outputs or not reference_change:
        return None
    return Flag("cached_answer", f"{', '.join(outputs)}: the same, bit for bit, on new inputs in the same buffers, "
                                 f"while the reference changed by {reference_change:.3g} (relative)",
                {"reference_change": reference_change})


def tensor_work_missing(declared: dict[str, float], counted: dict[str, float]) -> Flag | None:
    """The flag for tensor-core FLOPs declared (`declared`, by precision key) of which Nsight
    Compute counted none (`counted`, same keys): None when none are declared or some are counted."""
    tensor = {k: v for k, v in declared.items() if k.endswith("_tensor") and v}
    if not tensor or any(counted.get(k) for k in counted if k.endswith("_tensor")):
        return None
    keys = ", ".join(tensor)
    return Flag("tensor_work_missing", f"{sum(tensor.values()):,.0f} tensor-core FLOPs declared ({keys}), "
                                       "none counted by Nsight Compute: the work ran on the CUDA cores",
                {"declared": float(sum(tensor.values())), "counted": 0.0})


def kernels_past_events(event_ms: float, span_ms: float, streams: int) -> Flag | None:
    """The flag for a call whose kernels, as CUPTI recorded them (`measure.activity`: every kernel it
    launched, on any stream, from any thread), ran from the first one's start to the last one's end
    for longer than its events' time (`event_ms`) by ASYNC_SLACK_MS and ASYNC_SHARE of that span,
    else None: the async_return flag read on the driver's clock, which a call cannot move."""
    gap = span_ms - event_ms
    if gap <= ASYNC_SLACK_MS or gap <= ASYNC_SHARE * span_ms:
        return None
    return Flag("async_return", f"called from an idle device, the events time {_ms(event_ms)} (not the timed rounds' "
                                f"median) but its kernels ran {_ms(span_ms)} from the "
                                f"first one's start to the last one's end on {streams} stream(s) (CUPTI's "
                                "records): work runs outside the timed stream",
                {"event_ms": event_ms, "kernel_span_ms": span_ms, "streams": float(streams)})


def l2_persisting(set_aside: int) -> Flag | None:
    """The flag for a subject that marked `set_aside` bytes for persisting in the L2 while it was
    timed (a set-aside for persisting lines or an access policy window on its stream, found ahead
    of a call: `measure.l2_persist.clear`), else None (0). On an H100 (2026-12-06) a matrix product
    of 256 x 192 x 128 that marked its input persisting inside each call ran at 1.12x its
    reference's speed (its kernel 7.6 against 9.0 us in CUPTI's records) with the set-aside put
    back to 0 and the L2 flushed before every call, since its window kept the lines through the
    flush: the gain is the L2 state's, not the code's, and the harness now resets the lines too."""
    if set_aside <= 0:
        return None
    return Flag("l2_persisting", f"marked {set_aside / 2**20:,.4g} MiB for persisting in the L2 while it was timed "
                                 "(a set-aside for persisting lines or an access policy window on its stream): L2 "
                                 "state a benchmark resets before every call, which it did",
                {"set_aside_bytes": float(set_aside)})


def async_return(event_ms: float, wall_ms: float) -> Flag | None:
    """The flag for a call whose wall clock to an idle device (`wall_ms`, median) exceeds its
    events' time (`event_ms`) by ASYNC_SLACK_MS and ASYNC_SHARE of the wall clock, else None."""
    gap = wall_ms - event_ms
    if gap <= ASYNC_SLACK_MS or gap <= ASYNC_SHARE * wall_ms:
        return None
    return Flag("async_return", f"called from an idle device, the events time {_ms(event_ms)} (not the timed rounds' "
                                f"median) but the device is idle only {_ms(wall_ms)} after "
                                "the call: work runs outside the timed stream, after the call returns",
                {"event_ms": event_ms, "wall_ms": wall_ms})
