"""The grade table and its lines: per entry T, T_SOL, the term that binds, share, score,
occupancy and flags, in a benchmark's layout; then each entry's evidence (errors, flags, what
Nsight Compute counted) and what the roofs were."""

from __future__ import annotations

from rich.table import Table

from ..model.integrity import CODES
from ..model.peaks import LABELS
from ..model.sol import FASTER_THAN_LIGHT, REFUSED_SHARE, SCORE_HEADROOM
from ..results.grades import GradeEntry, GradeResults
from .tables import WRAP, _fit
from .text import display_names, limiters, percent

SHORT_FLAG = {"faster_than_light": "FTL", "nan_or_unwritten": "NaN", "inputs_modified": "inputs",
              "cached_answer": "cached", "no_gpu_work": "no-work", "tensor_work_missing": "no-tensor",
              "async_return": "async", "aliased_output": "alias", "not_a_tensor": "lazy",
              "lower_precision": "precision", "patched_harness": "patched", "patched_reference": "ref-patched",
              "l2_persisting": "L2 kept"}
assert set(SHORT_FLAG) == set(CODES)


def _ms(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4f}" if x < 1 else f"{x:.3f}" if x < 100 else f"{x:,.1f}"


def bound_text(e: GradeEntry) -> str:
    """The term that binds: its level, '(theory)' after it where that roof was not measured."""
    t = next((t for t in e.terms if t.level == e.binding), None)
    return "-" if t is None else t.level if t.measured else f"{t.level} (theory)"


def share_text(share: float | None) -> str:
    """A share of the speed of light as a percentage to one decimal ('84.2%'), '-' for none."""
    return "-" if share is None else f"{100 * share:.1f}%"


def times(x: float | None) -> str:
    """A speed-up as the table shows it: '1.29x', two significant digits under 0.1 ('0.0048x')."""
    return "-" if x is None else f"{x:.2f}x" if x >= 0.1 else f"{x:.2g}x"


def speedup(e: GradeEntry) -> float | None:
    """The baseline's time over the entry's, T_b / T (KernelBench's speed-up: above 1 is faster
    than the baseline); None without both."""
    return e.baseline_ms / e.time_ms if e.graded and e.baseline_ms and e.time_ms else None


def not_graded(e: GradeEntry) -> str:
    """Why an entry has no grade, in a word: 'refused' (its declared work), 'wrong' (a check failed),
    'error' (it raised, or its process gave no grade), else 'not graded' (not timed)."""
    if e.refused:
        return "refused"
    if any(not c.passed for c in e.checks):
        return "wrong"
    return "error" if e.error else "not graded"


def grade_tables(doc: GradeResults, width: int = 200) -> list[Table]:
    """One row per entry: kernel, kind, T ms (median), T_SOL ms, bound, share (T_SOL / T), score
    (against the baseline), speed-up (over the baseline, where any entry has one), occupancy, flags
    (short codes), and the error of an entry not graded."""
    based = any(speedup(e) is not None for e in doc.entries)
    columns = [("kind", "left"), ("T ms", "right"), ("T_SOL ms", "right"), ("bound", "left"),
               ("share", "right"), ("score", "right"), *([("speed-up", "right")] if based else []),
               ("occupancy", "left"), ("flags", "left", WRAP)]
    rows = []
    for e, name in zip(doc.entries, display_names([e.name for e in doc.entries], 40)):
        occ = "-" if e.occupancy is None else f"{percent(e.occupancy.occupancy)}% {limiters(e.occupancy, short=True)}"
        flags = " ".join(SHORT_FLAG[f.code] for f in e.flags) or ("-" if e.graded else "")
        if not e.graded:
            flags = (flags + " " if flags else "") + not_graded(e)
        up = speedup(e)
        rows.append([name, e.kind, _ms(e.time_ms), _ms(e.t_sol_ms), bound_text(e),
                     share_text(e.share), f"{e.score:.3f}" if e.score is not None else "-",
                     *([times(up)] if based else []), occ, flags])
    graded = sum(1 for e in doc.entries if e.graded)
    title = f"{doc.device.name}: {len(doc.entries)} entries, {graded} graded against their speed of light (L2 {doc.l2})"
    if graded == len(doc.entries):
        title = f"{doc.device.name}: {graded} graded against their speed of light (L2 {doc.l2})"
    return _fit(title, ("kernel", "left"), columns, rows, width)


def _executed(e: GradeEntry) -> str:
    """'; executed 1,117 GFLOP BF16 tensor against the 1,100 declared (+1.6 %: padding of partial
    tiles)' per tensor-core precision the entry declares work in and Nsight Compute counted (two
    per multiply-add, as declared; CUDA-core counts follow the instructions, a formula's its
    convention, and are not set side by side); T_SOL and the share read the declared (useful) work."""
    parts = []
    for key, declared in e.work.flops.items():
        executed = e.counted.flops.get(key) if e.counted is not None else None
        if not declared or not executed or not key.endswith("_tensor"):
            continue
        over = executed / declared - 1
        why = ": padding of partial tiles, or work done twice" if over > 0.001 else \
            ": less than declared, so check the declaration" if over < -0.001 else ""
        parts.append(f"executed {executed / 1e9:,.4g} GFLOP {LABELS.get(key, key)} against the {declared / 1e9:,.4g} "
                     f"declared ({100 * over:+.1f} %{why})")
    return "".join(f"; {p}" for p in parts)


def grade_lines(doc: GradeResults) -> list[str]:
    """Under the table: per entry what it computes, why it is not graded, each flag's evidence,
    what Nsight Compute counted; then how T, T_SOL and the score were had."""
    out, said = [], None
    for e in doc.entries:
        work = f"{e.workload}; work from {e.work.source}"
        head = f"{e.name}: " + (work if work != said else f"the same work as {said_by}")
        if work != said:
            said, said_by = work, e.name
        if e.graded:
            up = speedup(e)
            head += f"; {share_text(e.share)} of its speed of light"
            if e.score is not None:
                head += f", score {e.score:.3f} against {e.baseline} ({_ms(e.baseline_ms)} ms)"
            elif up is not None:
                head += (f"; no score against {e.baseline} ({_ms(e.baseline_ms)} ms), which runs at "
                         f"{share_text(e.t_sol_ms / e.baseline_ms)} of this speed of light: a score needs the "
                         f"baseline {SCORE_HEADROOM:.0%} or more above it")
            elif e.baseline is None and any(x.baseline for x in doc.entries):
                head += "; no score: no baseline of its workload was graded (--baseline NAME, one per workload)"
            if up is not None and e.name != e.baseline:
                head += f"; {times(up)} the speed of {e.baseline}"
        out.append(head)
        if e.error:
            out.append(f"  {e.error}")
        for f in e.flags:
            out.append(f"  flag {f.code}: {f.evidence}")
        if e.counted is not None:
            c = e.counted
            dram = f"{c.dram_bytes / 1e6:,.1f} MB DRAM" if c.dram_bytes is not None else "no DRAM count"
            excess = f" ({c.excess:.2f}x the compulsory bytes" if c.excess is not None else ""
            if excess:
                excess += ("; written bytes still in L2 when the kernel ends are not counted)" if c.excess < 1
                           else ")")
            out.append(f"  counted over one call: {c.kernels} kernel launch(es), {dram}{excess}"
                       + (f"; with the counted bytes {c.binding} binds" if c.binding else "") + _executed(e))
        if e.missing_roofs:
            out.append(f"  no roof for {', '.join(e.missing_roofs)} on this device: that work is not in T_SOL")
    measured = {t.level for e in doc.entries for t in e.terms if t.measured}
    theory = {t.level for e in doc.entries for t in e.terms if not t.measured}
    roofs = []
    if measured:
        roofs.append(f"measured roofs: {', '.join(sorted(measured))}")
    if theory:
        roofs.append(f"theoretical roofs (not measured on this GPU): {', '.join(sorted(theory))}")
    out.append("T is the median of launches timed with CUDA events, the L2 flushed before each; T_SOL = max(FLOPs / "
               "roof (the tensor precisions' times added), compulsory bytes / DRAM, launch floor); " + "; ".join(roofs)
               + f"; a share above {FASTER_THAN_LIGHT:.0%} is flagged faster than light, at {REFUSED_SHARE:.0%} the "
               "declaration is refused")
    return out
