"""Results documents from what the measuring side returned: a run (`measure.runner`), a size
sweep, a tile search (`measure.tuning`). This sits above both `measure` and `results`, so that
`results` (and everything that shows a file) never loads the measuring code.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import replace

from . import provenance
from .ladder.user import UserKernel
from .measure.runner import KernelRun, RunOutput
from .measure.tuning import TuneOutcome
from .model.device import DeviceSpec
from .model.problem import Problem
from .model.timing import Timing, paired
from .model.units import gflops
from .model.dram import blocks_in_step
from .model.waves import waves_of
from .model.precision import PRECISIONS
from .results.schema import (
    KernelRecord,
    ProblemRecord,
    RaggedRecord,
    Reference,
    Results,
    RoundsRecord,
    Skipped,
    SweepKernel,
    SweepPoint,
    SweepReference,
    TuneSummary,
)


def kernel_record(r: KernelRun, reference: Timing, problem: Problem, device: DeviceSpec,
                  by_template: bool = False) -> KernelRecord:
    """One kernel's record: its compiled, verified and timed parts (null where it stopped short),
    named by the ladder name or, `by_template`, by its template expression; a user kernel's with
    its launch description and its check at the ragged shape; the waves its grid takes on
    `device`'s SMs at its occupancy (`model.waves`), and the DRAM bytes its model gives for those
    waves (the blocks that walk K together: `model.dram.blocks_in_step`) and the device's L2; its
    percentage of the `reference` from the rounds they were timed in together
    (`model.timing.paired`), else from the two medians."""
    c, v, t = r.compiled, r.verification, r.timing
    problem_flops = problem.flops
    waves = waves_of(r.spec.tile_grid(problem), device.sm_count, c.occupancy.active_blocks_per_sm) if c else None
    figures, traffic = r.figures, r.spec.model
    if figures is not None and traffic is not None and waves is not None and device.usable_l2_bytes:
        in_step = blocks_in_step(waves.block_slots, waves.sms, c.occupancy.active_warps_per_sm, waves.blocks)
        figures = traffic.with_dram(figures, problem, in_step, device.usable_l2_bytes)
    user = isinstance(r.spec, UserKernel)
    if user and figures is not None and c is not None and not c.static_smem_bytes and not c.dynamic_smem_bytes:
        figures = figures.without_smem()  # declared tiles, but no shared memory in the compiled kernel
    ragged = None
    if r.ragged is not None:
        rv = r.ragged.verification
        ragged = RaggedRecord(problem=problem_record(r.ragged.problem),
                              passed=rv.passed, rel_error=_finite(rv.rel_error),
                              nan_or_unwritten_elements=rv.nan_or_unwritten_elements, reason=rv.reason)
    return KernelRecord(
        name=r.spec.name_expression if by_template else r.spec.name,
        summary=r.spec.summary, template=r.spec.name_expression,
        params=dict(r.spec.params), tile_source=r.spec.tile_source,
        threads_per_block=r.spec.threads_per_block,
        dynamic_smem_bytes=c.dynamic_smem_bytes if c else 0,
        registers=c.registers if c else None, static_smem_bytes=c.static_smem_bytes if c else None,
        local_bytes=c.local_bytes if c else None, compiler=c.compiler if c else None,
        occupancy=c.occupancy if c else None,
        driver_active_blocks_per_sm=c.driver_blocks_per_sm if c else None,
        verified=r.correct,
        rel_error=_finite(v.rel_error) if v else None,
        nan_or_unwritten_elements=v.nan_or_unwritten_elements if v else None,
        error=r.error,
        gflops=gflops(problem_flops, t.median_ms) if t else None, time_ms=t.median_ms if t else None,
        pct_of_reference=_pct(t, reference) if t else None, timing=t,
        sm_clock_mhz_before_after=list(r.sm_clock_mhz), energy=r.energy, model=figures,
        source=r.spec.describe() if user else None, ragged=ragged, waves=waves,
    )


def problem_record(p: Problem) -> ProblemRecord:
    """The results file's record of problem `p`: its sizes, precision ('float32' for FP32) and layout
    ('TN' in the tensor-core precisions: B stored N x K), as the schema names them."""
    precision = PRECISIONS[p.dtype]
    return ProblemRecord(m=p.m, n=p.n, k=p.k, dtype=precision.file_dtype, layout=precision.layout)


def _pct(t: Timing, reference: Timing) -> float:
    pairs = paired(t, reference)
    return pairs.pct if pairs else 100 * reference.median_ms / t.median_ms


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def from_run(out: RunOutput, device: DeviceSpec | None = None, skipped: list[Skipped] | None = None,
             by_template: bool = False) -> Results:
    """The results document of one run. `device` replaces `out.device` (e.g. with measured
    ceilings attached); `skipped` lists kernels left out and why; `by_template` names each kernel
    by its template expression ('autotuned<128,128,16,4,8>'), for runs of one family at many tiles."""
    p = out.problem
    ref_ms = out.reference.median_ms
    rounds = out.rounds
    return Results(
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        tool=provenance.tool(),
        device=device or out.device,
        problem=problem_record(p),
        reference=Reference(gflops=gflops(p.flops, ref_ms), time_ms=ref_ms, timing=out.reference,
                            via=PRECISIONS[p.dtype].reference, tf32=p.dtype == "tf32",
                            sm_clock_mhz_before_after=list(out.reference_clock_mhz), energy=out.reference_energy),
        kernels=[kernel_record(r, out.reference, p, device or out.device, by_template)
                 for r in out.kernels],
        skipped=skipped or [],
        l2=out.l2,
        timed_in_rounds=RoundsRecord(rounds=rounds.rounds, burst=rounds.burst, top_clock_mhz=rounds.top_clock_mhz,
                                     full_clock_share=out.reference.full_clock_share, seconds=round(rounds.seconds, 3),
                                     clock_read_per="launch")
        if rounds is not None and rounds.rounds else None,
    )


def from_sweep(outputs: list[RunOutput], device: DeviceSpec | None = None,
               skipped: list[Skipped] | None = None) -> Results:
    """The results document of a size sweep (`outputs` smallest problem first): the largest
    problem's document plus `sweep`, each size's reference and kernels, each kernel with its
    model and waves at that size (so the file's reading needs no kernel family: schema 4)."""
    docs = [from_run(o, device, skipped) for o in outputs]
    sweep = [SweepPoint(problem=d.problem,
                        reference=SweepReference(gflops=d.reference.gflops, time_ms=d.reference.time_ms),
                        kernels=[SweepKernel(name=k.name, gflops=k.gflops, time_ms=k.time_ms, verified=k.verified,
                                             pct_of_reference=k.pct_of_reference,
                                             params=k.params if k.tile_source == "shape" else {},
                                             waves=k.waves, model=k.model)
                                 for k in d.kernels])
             for d in docs]
    return docs[-1].model_copy(update={"sweep": sweep})


def from_tune(outcome: TuneOutcome) -> Results:
    """The results document of a tile search: every candidate that compiled as a kernel named by
    its template expression (a tile that does not compile is no kernel), and `tune` with the
    winner and the counts."""
    doc = from_run(replace(outcome.output, kernels=[r for r in outcome.output.kernels if r.compiled]),
                   by_template=True)
    w = outcome.winner
    summary = TuneSummary(kernel=w.spec.name, candidates=len(outcome.output.kernels), valid=outcome.valid,
                          verified=outcome.verified, winner=dict(w.spec.params), expression=w.spec.name_expression,
                          winner_gflops=gflops(w.figures.flops, w.timing.median_ms))
    return doc.model_copy(update={"tune": summary})
