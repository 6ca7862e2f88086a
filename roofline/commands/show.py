"""`roofline show`: the tables and verdicts of any file roofline writes (a run's results, a
program's profile, a grade file), as its kind shows them (`roofline.documents`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console import present
from ..defaults import DEFAULT_RESULTS, SCHEMA, default_reads
from ..outcome import Outcome

MOUNT = dict(short_help="Print the tables and verdicts of results files.",
             help="Print the tables and one verdict per kernel of recorded results (no GPU needed): a run's "
                  "(the run table, the counters table), a size sweep's or a tile search's, a program's "
                  f"profile (roofline profile) or a grade file; a PyTorch profiler trace's GPU time by op, forward, "
                  f"backward or optimizer. Results files of every schema roofline has written "
                  f"(1 to {SCHEMA}) are read; several results files of one session (one problem, one set of measured "
                  "ceilings) are merged; other files are set side by side with roofline compare.")
RENAMED = {"--results": "give the files as arguments: roofline show FILE [FILE ...]"}


def command(
    paths: Optional[list[Path]] = typer.Argument(None, metavar="RESULTS...",
                                                 help=f"Results, profile or grade file(s) (default {DEFAULT_RESULTS}, else the profile or grade file that alone is here), or a "
                                                      "PyTorch profiler trace."),
    as_json: bool = typer.Option(False, "--json", help=f"Print the document instead (results files merged, as schema "
                                                       f"{SCHEMA}; a profile or grade file in its own schema). "
                                                       "Results of different problems (an FP32 run and a BF16 one) "
                                                       "stay apart: a JSON array of one such document each."),
    by: Optional[str] = typer.Option(None, "--by", metavar="kernel|op|module",
                           help="A profile's GPU time by kernel (the default view), by the op that launched it (a "
                                "PyTorch op or a jax op; forward, backward, optimizer) or by module (nn.Module or "
                                "named_scope, its submodules included); a PyTorch "
                                "profiler trace's by op or by module alone (each module's own kernels; its default "
                                "view shows both)."),
):
    from .. import documents
    from ..errors import UsageError

    if by is not None and by not in BY:
        raise UsageError(f"{{by}} takes {', '.join(BY)}, got {by!r}", "by")
    paths = list(paths or [default_reads()])
    docs, notes = documents.read_all(paths, "show")  # one document per precision: an FP32 run and a BF16 one apart
    present(view(paths, docs, notes, by), as_json)


BY = ("kernel", "op", "module")


def view(paths: list[Path], docs: list, notes: list[str], by: str | None = None) -> Outcome:
    """Files read (`documents.read_all`): the notes on their reading first, then what their kind
    shows (`documents.shown`: its document, its tables and lines; by op or module, `shown_by`)."""
    from .. import documents

    document, lines = documents.shown(paths, docs) if by is None else documents.shown_by(paths, docs, by)
    return Outcome(document, lines, tuple(notes), notes_first=True)
