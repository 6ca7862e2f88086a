"""The tile search of `roofline run --tune`: the autotuned kernel's tile searched on this GPU, the
winner kept for `run`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..outcome import Outcome

if TYPE_CHECKING:
    from ..progress import Progress
    from ..results.schema import Results


@dataclass(frozen=True)
class TuneReport:
    """A finished tile search: every candidate's results (written to the results file) and the
    cache file the winner was stored in."""

    results: Results
    cache: Path


def tune(size: int, out: Path, progress: Progress | None = None) -> TuneReport:
    """Search the autotuned kernel's tile on this GPU at size^3, write every candidate's results
    to `out` and keep the winner for this GPU in the user's cache. Raises UsageError for bad input,
    RunError when there is no GPU or no candidate verifies."""
    from ..model.problem import Problem
    from .. import files
    from ..results import store
    from ..ladder import tiles
    from .. import collect
    from ..measure import runner, tuning
    problem = Problem(size, size, size).validate()
    files.check_results_out(out, profile=False)
    device = runner.preflight(problem)
    outcome = tuning.search(problem, device, progress)
    doc = collect.from_tune(outcome)
    store.save(doc, out)
    cache = tiles.remember(device.name, doc.tune.winner, doc.tune.winner_gflops, size)
    return TuneReport(doc, cache)


def view(report: TuneReport, out: Path) -> Outcome:
    """A tile search: every candidate's results; the ten fastest, then the winner and where it is kept."""
    doc, t = report.results, report.results.tune

    def view(width: int) -> list:
        from ..render.tables import run_tables

        top = sorted((k for k in doc.kernels if k.timed), key=lambda k: -k.gflops)[:10]
        return [*run_tables(doc.model_copy(update={"kernels": top}), width),
                f"winner {t.expression}: {t.winner_gflops:,.0f} GFLOP/s; {t.valid} of {t.candidates} tiles "
                f"compiled, {t.verified} verified; kept in {report.cache}; all candidates in {out}"]

    from .. import documents

    return Outcome(documents.to_json(doc), view)
