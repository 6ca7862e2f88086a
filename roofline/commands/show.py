"""`roofline show`: the tables and verdicts of results files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console import present
from ..defaults import DEFAULT_RESULTS, SCHEMA
from ..outcome import Note, Outcome, results_view, grade_view, _dump
from .reading import given_paths, show_all


MOUNT = dict(short_help="Print the tables and verdicts of results files.",
             help="Print the tables and one verdict per kernel of recorded results (no GPU needed): a run's "
                  "(the run table, the counters table), a size sweep's or a tile search's, or a program's "
                  f"profile (roofline profile). Results files of every schema roofline has written (1 to {SCHEMA}) "
                  "are read; several files are merged.")


def command(
    results_paths: Optional[list[Path]] = typer.Option(None, "--results", metavar="PATH",
                                                       help=f"Results or profile file(s) (repeatable; default "
                                                            f"{DEFAULT_RESULTS})."),
    as_json: bool = typer.Option(False, "--json", help=f"Print the (merged, schema {SCHEMA}) document instead."),
):

    paths = given_paths(results_paths)
    docs, notes = show_all(paths)  # one document per precision: an FP32 run and a BF16 one apart
    present(view(paths, docs, notes), as_json)


def view(paths: list[Path], docs: list, notes: list[str]) -> Outcome:
    """Results read (`api.show_all`: one document per precision, or a profile): the notes on the
    merge first; the document (a list of them for several precisions); each document's tables,
    a profile's notes after its table."""
    doc = docs[0]
    if getattr(doc, "kind", None) == "grade":
        return Outcome(_dump(doc), lambda width: grade_view(doc, width), tuple(notes), notes_first=True)
    if getattr(doc, "kind", None) == "profile":
        def view(width: int) -> list:
            from ..render.tables import profile_tables

            return [*profile_tables(doc, width, None), *map(Note, doc.notes)]

        return Outcome(_dump(doc), view, tuple(notes), notes_first=True)
    ahead = ([Note(f"{paths[0]} holds a size sweep: GFLOP/s at every size first, then the tables of the "
                   f"largest, {doc.problem.problem.text()}")] if doc.sweep else [])
    document = _dump(doc) if len(docs) == 1 else [_dump(d) for d in docs]  # several precisions: a list
    return Outcome(document, lambda width: [*ahead, *(x for d in docs for x in results_view(d, width, True))],
                   tuple(notes), notes_first=True)
