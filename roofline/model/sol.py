"""A kernel's speed of light: the least time its declared work and compulsory bytes allow on this
GPU, and how close a measured time comes to it.

    T_SOL = max(FLOPs of each precision / that precision's roof,
                the sum of those times over the tensor precisions,
                compulsory bytes read and written / the DRAM roof,
                the launch floor)

Work in several tensor-core precisions (an FP16 and a BF16 product, an FP8 and an FP4 one) runs on
the one set of tensor cores, one MMA after another, so their times add; each precision's own time
is its term, and the sum binds where it is the largest (`SpeedOfLight.tensor_ms`). Work on
different units (the tensor cores, the FMA pipe, DRAM) may overlap: the largest of those binds.

Roofs are the measured ones where the device was measured (`roofline device --measure`,
`measure.ceilings`: what the GPU sustains), else the theoretical ones, and each term says which
(`Term.measured`). The compulsory bytes are what the workload cannot avoid moving: every input
read once, every output written once (nvbench's "global memory reads/writes" per launch). The
launch floor is an empty kernel's measured time (`Roofs.launch_ms`): no launch ends sooner.

Grade of a measured time T:
    share = T_SOL / T            (1 at the bound; 0.25: four times slower than light)
    score = 1 / (1 + (T - T_SOL) / (T_b - T_SOL))   against a baseline time T_b: 0.5 at the
            baseline, 1 at the bound (SOL-ExecBench's score, NVIDIA 2025)

The bound is a floor only when the inputs come from DRAM: a run flushes L2 before every timed
launch (`measure.timing.l2_flush`), so they do. Written bytes can stay in L2 beyond the launch
when they fit in it; `SpeedOfLight.fits_in_l2` says when that may be so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .peaks import LABELS, PRECISIONS
from .roofs import LAUNCH, Roofs
from .units import ms_at

DRAM = "DRAM"
FASTER_THAN_LIGHT = 1.1  # a share above this: the declared work or bytes, or the timing, is wrong
REFUSED_SHARE = 2.0  # a share at or above this: the declaration is refused as wrong
# A baseline within this share of its time of T_SOL gives no score: the score's scale, T_b - T_SOL, is then
# as small as the timing's noise (a baseline at 99.6 % of the bound moves a score by 0.7 for a 0.5 % change in T)
SCORE_HEADROOM = 0.05


@dataclass(frozen=True)
class Work:
    """What one launch (or one call) must do: `flops` per precision key (`peaks.PRECISIONS`:
    'fp32', 'bf16_tensor', ...), `bytes_read` and `bytes_written` the compulsory DRAM bytes, and
    `source` where the figures come from (a formula's name and reference, or 'declared')."""

    flops: dict[str, float] = field(default_factory=dict)
    bytes_read: float = 0.0
    bytes_written: float = 0.0
    source: str = "declared"

    @property
    def nbytes(self) -> float:
        """Compulsory bytes in all: read plus written."""
        return self.bytes_read + self.bytes_written

    @property
    def total_flops(self) -> float:
        """FLOPs of every precision together."""
        return float(sum(self.flops.values()))

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity over the compulsory bytes, FLOP per byte (None without bytes)."""
        return self.total_flops / self.nbytes if self.nbytes else None

    def check(self) -> "Work":
        """This work, checked: precision keys known, no figure negative, something to do. Raises
        ValueError naming the figure otherwise."""
        for key, v in self.flops.items():
            if key not in PRECISIONS:
                raise ValueError(f"unknown precision {key!r} (valid: {', '.join(PRECISIONS)})")
            if not v >= 0:
                raise ValueError(f"flops {key} is {v:g}; give 0 or more")
        for name, v in (("bytes read", self.bytes_read), ("bytes written", self.bytes_written)):
            if not v >= 0:
                raise ValueError(f"{name} is {v:g}; give 0 or more")
        if not self.total_flops and not self.nbytes:
            raise ValueError("no FLOPs and no bytes: the work is empty")
        return self


def is_tensor(level: str) -> bool:
    """Whether a term's level is a tensor-core precision's ('BF16 tensor', 'FP8 tensor')."""
    return level.endswith(" tensor")


def bound(terms) -> tuple[float, object | None]:
    """T_SOL of `terms` (anything with a `level` and an `ms`: `Term`, a grade file's terms) and the
    term that sets it: the largest term, or the tensor terms' times added where that is larger (they
    share the tensor cores), then set by the largest tensor term; (0.0, None) without terms."""
    top = max(terms, key=lambda t: t.ms, default=None)
    tensor = [t for t in terms if is_tensor(t.level)]
    summed = sum(t.ms for t in tensor)
    if top is not None and summed > top.ms:
        return summed, max(tensor, key=lambda t: t.ms)
    return (top.ms if top is not None else 0.0), top


@dataclass(frozen=True)
class Term:
    """One term of T_SOL: `level` ('FP32', 'BF16 tensor', 'DRAM', 'launch'), the `amount` (FLOPs
    or bytes; 0 for the launch floor), the roof's `value` (GFLOP/s, GB/s, or ms for the launch),
    whether that roof was `measured`, and the time it allows, `ms`."""

    level: str
    amount: float
    roof: float
    measured: bool
    ms: float


@dataclass(frozen=True)
class SpeedOfLight:
    """T_SOL and its terms. `missing`: precision keys with work but no roof on this device (their
    work is not in the bound: the bound is then lower than light, never higher)."""

    terms: tuple[Term, ...]
    missing: tuple[str, ...] = ()
    fits_in_l2: bool = False

    @property
    def tensor_ms(self) -> float:
        """The tensor terms' times added (ms): work of several tensor precisions shares the tensor
        cores (the module docstring); 0.0 without tensor work."""
        return sum(t.ms for t in self.terms if is_tensor(t.level))

    @property
    def ms(self) -> float:
        """T_SOL in ms (0.0 when no term could be computed): the largest term, or the tensor terms'
        sum where that is larger (`bound`)."""
        return bound(self.terms)[0]

    @property
    def binding(self) -> Term | None:
        """The term that sets T_SOL (None without terms); where the tensor terms' sum sets it, the
        largest tensor term (`bound`)."""
        return bound(self.terms)[1]

    @property
    def tensor_shared(self) -> bool:
        """Whether T_SOL is the sum of two or more tensor precisions' times."""
        return sum(1 for t in self.terms if is_tensor(t.level)) > 1 and self.tensor_ms >= self.ms

    def term(self, level: str) -> Term | None:
        """The term of `level`, or None."""
        return next((t for t in self.terms if t.level == level), None)


def speed_of_light(work: Work, roofs: Roofs, l2_bytes: int | None = None) -> SpeedOfLight:
    """T_SOL of `work` on the device of `roofs` (measured roofs where known, else theoretical),
    as the module says. `l2_bytes`, the device's L2 size, tells whether the written bytes fit in it.

    Example, a softmax of 4096 x 4096 FP32 on the H200 (DRAM measured at 4,370 GB/s, FP32 at
    63,800 GFLOP/s): 134 MB at 4,370 GB/s is 0.0307 ms; 84 MFLOP at 63,800 GFLOP/s is 0.0013 ms;
    the DRAM term binds, T_SOL = 0.0307 ms."""
    terms, missing = [], []
    for key, amount in work.flops.items():
        if not amount:
            continue
        roof = roofs.roof(key, True)
        if roof is None:
            missing.append(key)
            continue
        terms.append(Term(roof.level, float(amount), roof.value, roof.measured, ms_at(amount, roof.value)))
    if work.nbytes:
        roof = roofs.roof(DRAM, True)
        terms.append(Term(DRAM, work.nbytes, roof.value, roof.measured, ms_at(work.nbytes, roof.value)))
    if roofs.launch_ms:
        terms.append(Term(LAUNCH, 0.0, roofs.launch_ms, True, roofs.launch_ms))
    fits = bool(l2_bytes) and 0 < work.bytes_written <= l2_bytes
    return SpeedOfLight(tuple(terms), tuple(missing), fits)


# Where a GPU has no roof for a precision, the precision its work runs at there, fastest first: an FP32
# convolution read as TF32 runs at FP32 on a GPU without TF32 tensor cores (a V100, a T4); BF16 or FP8 products
# on one without their tensor cores run as FP16 ones, where it has those, and FP4 ones as FP8 ones (`on_device`).
RUNS_AS = {"tf32_tensor": ("fp32",), "bf16_tensor": ("fp16_tensor", "fp32"), "fp8_tensor": ("fp16_tensor", "fp32"),
           "fp4_tensor": ("fp8_tensor", "fp16_tensor", "fp32"),
           "fp16_tensor": ("fp16", "fp32"), "fp64_tensor": ("fp64",)}


def on_device(work: Work, roofs: Roofs) -> tuple[Work, list[str]]:
    """`work` as it runs on the GPU of `roofs`: the FLOPs of a precision it has no roof for moved to
    the first of `RUNS_AS` it has one for, and a line for each moved ('TF32 tensor work read at
    FP32's roof: this GPU has no TF32 tensor roof'); work with nowhere to go stays (`SpeedOfLight.missing`)."""
    flops, notes = {}, []
    for key, amount in work.flops.items():
        to = key
        if amount and roofs.roof(key, True) is None:
            to = next((k for k in RUNS_AS.get(key, ()) if roofs.roof(k, True) is not None), key)
            if to != key:
                notes.append(f"{LABELS.get(key, key)} work read at {LABELS.get(to, to)}'s roof: this GPU has no "
                             f"{LABELS.get(key, key)} roof")
        flops[to] = flops.get(to, 0.0) + amount
    if not notes:
        return work, []
    return Work(flops, work.bytes_read, work.bytes_written, work.source), notes


# The most a candidate's output may differ from the reference's (relative Frobenius error, every draw) for its
# time to be read against 3xTF32's bound: FP32's accuracy. 3xTF32 errs as FP32 does (about 1e-6 on a GEMM); one
# TF32 or BF16 pass errs about 3e-4 on a plain 4096-deep GEMM, and 2e-5 to 4e-5 where a sigmoid and a sum or a
# relu and a mean follow it, all inside the 1e-4 an FP32 output is checked to.
EMULATED_TOLERANCE = 1e-5
EMULATION_PASSES = 3  # TF32 tensor-core products per FP32 product in 3xTF32 (`fp32_on_tensor_cores`)


def fp32_on_tensor_cores(work: Work, roofs: Roofs) -> Work | None:
    """`work` with its FP32 FLOPs done as 3xTF32 (each FP32 operand split into a TF32 high part and
    the TF32 rest, each product the three TF32 tensor-core products big*big, big*small and
    small*big: FP32's accuracy; CUTLASS's emulated SGEMM, 48 TFLOP/s on an A100 whose FP32 roof is
    19.5), where that is faster on `roofs` than FP32 itself, else None. For FP32 work that is matrix
    products (a problem's, counted by PyTorch's FLOP counter): a kernel that does them so is FP32
    work faster than FP32's roof, honestly."""
    f = work.flops.get("fp32")
    tf32, fp32 = roofs.roof("tf32_tensor", True), roofs.roof("fp32", True)
    if not f or tf32 is None or fp32 is None or tf32.value / EMULATION_PASSES <= fp32.value:
        return None
    flops = {k: v for k, v in work.flops.items() if k != "fp32"}
    flops["tf32_tensor"] = flops.get("tf32_tensor", 0.0) + EMULATION_PASSES * f
    return Work(flops, work.bytes_read, work.bytes_written, work.source)


def share(t_sol_ms: float, time_ms: float) -> float | None:
    """T_SOL / T: 1 at the bound, above 1 faster than light. None without a positive time."""
    return t_sol_ms / time_ms if time_ms and time_ms > 0 and t_sol_ms > 0 else None


def score(time_ms: float | None, t_sol_ms: float, baseline_ms: float | None) -> float | None:
    """SOL-ExecBench's score, 1 / (1 + (T - T_SOL) / (T_b - T_SOL)): 1 at the bound, 0.5 at the
    baseline's time T_b, toward 0 as T grows. A time under T_SOL scores 1, as one at it does (the
    formula's own value would pass 1, and turn negative past T_SOL - (T_b - T_SOL); a time far
    under the bound is flagged faster than light instead). None where a time is missing or the
    baseline leaves the bound less than SCORE_HEADROOM of its time (T_b - T_SOL < 5 % of T_b: a
    baseline at its speed of light leaves the score nothing but noise to read; the speed-up,
    T_b / T, still reads).

    >>> round(score(2.0, 1.0, 3.0), 3)   # halfway between the bound and the baseline
    0.667
    >>> score(0.9, 1.0, 3.0), score(2.0, 1.0, 1.04)   # under the bound; a baseline at 96 % of it
    (1.0, None)"""
    if not (time_ms and baseline_ms and t_sol_ms >= 0) or baseline_ms - t_sol_ms < SCORE_HEADROOM * baseline_ms:
        return None
    return 1.0 / (1.0 + (max(time_ms, t_sol_ms) - t_sol_ms) / (baseline_ms - t_sol_ms))


def level_label(key: str) -> str:
    """A precision key's label ('bf16_tensor' -> 'BF16 tensor'), a level's name as it is."""
    return LABELS.get(key, key)
