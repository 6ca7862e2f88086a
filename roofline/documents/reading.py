"""What the commands that read files call: `load` (one file of any kind, refused in one line when
the command does not read its kind), `read_all` (several, merged where their kind merges), `shown`
(what `show` prints), `chart` (what `plot` draws), `compare` and `check` (two files of one kind).
Each asks the file's kind (`registry.kind_of`) what to do; none tests a kind itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..defaults import PLOT_KINDS
from ..errors import UsageError
from ..results import store
from .registry import ChartRequest, ReadKind, file_kind, kind_of, reads, reads_table


def load(path: Path, accepts: str | None = None):
    """The run's results, profile or grade file (or a file of any registered kind) at `path`, read
    and checked; an older file is migrated, with what only the kernel families can work out filled
    in (`ladder.upgrade.fill`), and its `read_notes` say so. `accepts` names the command reading it
    (a `reads_table` key): a file of a kind that command does not read is refused in one line naming
    what it reads. Raises UsageError for a missing, unreadable or invalid file, in one line."""
    said = reads(accepts) if accepts is not None else None
    data = store.read_json(Path(path), said)
    doc = file_kind(data).parse(data, str(path), said)
    kind = kind_of(doc)
    if accepts is not None and accepts not in kind.read_by:
        readers = list(kind.read_by)
        raise UsageError(f"{path}: {kind.title}, which {', '.join(readers[:-1])} and {readers[-1]} read; {said}")
    return doc


def load_kind(path: Path, name: str, reads: str | None = None, why: str = ""):
    """The file at `path`, which must be of the kind called `name` (`grade --baseline`: a grade
    file); a file of another kind is refused in one line naming both, `why` after them. Raises
    UsageError as `load` does, its line ending with `reads` for a file of no kind."""
    from .registry import get

    data = store.read_json(Path(path), reads)
    doc = file_kind(data).parse(data, str(path), reads)
    kind, wanted = kind_of(doc), get(name)
    if kind is not wanted:
        raise UsageError(f"{path}: {kind.title}, not {wanted.short}{why}")
    return doc


def read_all(paths: list[Path], command: str = "show") -> tuple[list, list[str]]:
    """The files at `paths` as `command` reads them (`load`), with the notes on their reading: the
    files of a kind that merges as its `combine` makes them (runs: one document per precision, the
    files of one precision merged); a file of another kind alone, refused among others. Raises
    UsageError for a bad file (its line naming what `command` reads), a file read alone given with
    others, or what `combine` refuses (runs on different devices)."""
    docs = [load(p, command) for p in paths]
    notes = [note for d in docs for note in d.read_notes]
    for path, doc in zip(paths, docs):
        kind = kind_of(doc)
        if not kind.merges and len(docs) > 1:
            raise UsageError(f"{path} is {kind.title}; give it alone")
    return kind_of(docs[0]).combine(paths, docs, notes), notes


def shown(paths: list[Path], docs: list) -> tuple[Any, Callable[[int], list]]:
    """What `show` prints for `docs` (from `read_all(paths)`): its document (`--json`: one, or a
    list for runs in several precisions) and its view (a width -> the tables and lines)."""
    return kind_of(docs[0]).shown(paths, docs)


def shown_by(paths: list[Path], docs: list, key: str) -> tuple[Any, Callable[[int], list]]:
    """What `show --by KEY` prints for `docs` ('op' or 'module'): its kind's `shown_by`."""
    return kind_of(docs[0]).shown_by(paths, docs, key)


def view(doc: Any, width: int, **context: Any) -> list:
    """Any document's tables and lines (its kind's `view`; `context` as the kind takes it)."""
    return kind_of(doc).view(doc, width, **context)


def to_json(doc: Any) -> Any:
    """Any document's `--json` (its kind's `json`)."""
    return kind_of(doc).json(doc)


def chart(paths: list[Path], out: Path, kind: str = "roofline", measured: bool = False,
          highlight: list[str] | None = None) -> list[str]:
    """Draw the files at `paths` into `out`, atomically, as their kind draws them: a run's roofline
    (or with `kind` 'sweep' its size sweep, 'energy' its energy roofline), a profile's chart, a grade
    file's roofline; an `out` ending in .html is the interactive report. The kernels named in
    `highlight` drawn bold, the rest faded. Returns one-line notes. Raises UsageError for bad input,
    what the file's kind cannot draw, or an output path that cannot be written; RunError for the
    HTML report without Plotly."""
    from ..render import chart as charts
    from ..render import html_report

    if kind not in PLOT_KINDS:
        raise UsageError(f"{{kind}} takes {', '.join(PLOT_KINDS)}, got {kind!r}", "kind")
    if kind != "roofline" and measured:
        what = {"energy": "n energy chart", "sweep": " sweep"}.get(kind, f" chart by {kind}")
        raise UsageError(f"{{measured}} applies to {{kind}} roofline; a{what} has no model bytes to set them beside",
                         "measured", ["kind"])
    as_html = html_report.is_report(out)
    if as_html:
        html_report.check_output(out, paths)
    else:
        charts.check_output(out, paths, html=True)
    docs, notes = read_all(paths, "plot")
    request = ChartRequest(list(paths), Path(out), kind, measured, highlight, as_html)
    return kind_of(docs[0]).chart(request, docs, notes)


def _pair(command: str, paths: tuple[Path, Path]) -> tuple[tuple, ReadKind]:
    """The two files of `command` (compare, check) read, and the kind that reads them. Two files
    of different kinds where one is compared only with its own kind (a grade file) are refused
    here; a run against a profile by the comparison, which says why."""
    docs = load(paths[0], command), load(paths[1], command)
    kinds = [kind_of(d) for d in docs]
    if kinds[0] is not kinds[1]:
        for i in (0, 1):
            if kinds[i].paired_alone:
                other = 1 - i
                raise UsageError(f"{paths[other]} is not {kinds[i].short} but {kinds[other].title}, and "
                                 f"{paths[i]} is one; {reads(command)}")
    return docs, kinds[0]


def compare(before: Path, after: Path, force: bool = False, chart_out: Path | None = None):
    """`before` against `after`, two files of one kind, as their kind compares them (two runs or
    two profiles kernel by kernel: `analysis.compare.WorkComparison`; two grade files entry by
    entry: `analysis.grade_changes.GradeChanges`); with `chart_out`, the moves drawn there. Raises
    UsageError for an unreadable file, files of kinds that do not compare, runs of different
    problems (unless `force`), no kernel in common, or a bad chart path."""
    if chart_out is not None:
        from ..render import chart as charts
        charts.check_output(chart_out, [before, after], param="chart_out")
    docs, kind = _pair("compare", (before, after))
    return kind.compare(docs, (Path(before), Path(after)), force, chart_out)


def compare_by(before: Path, after: Path, key: str):
    """`before` against `after` by who launched their kernels (`key` 'op' or 'module': two profiles
    that record it, `analysis.owners.compare_owners`). Raises UsageError for an unreadable file, files
    of kinds that do not compare, or a kind or file that records no owners."""
    docs, kind = _pair("compare", (before, after))
    return kind.compare_by(docs, (Path(before), Path(after)), key)


def check(new: Path, baseline: Path, max_drop: str | float = "5%"):
    """`new` against `baseline` as a regression gate, as their kind gates them (`analysis.check.Check`
    or `analysis.grade_changes.GradeChanges`; each has `passed`). `max_drop` as '5%' or 0.05.
    Raises UsageError for a bad `max_drop` (named before any file is read), an unreadable file,
    files of kinds that do not compare, runs of different problems or no kernel in common."""
    from ..analysis.check import parse_max_drop

    drop = parse_max_drop(str(max_drop))
    (older, newer), kind = _pair("compare", (baseline, new))  # read as compare reads them, the baseline first
    return kind.check((newer, older), drop)


def schema_of(name: str) -> dict:
    """The JSON Schema of the document kind called `name` (a file's, or a decision's `--json`)."""
    from .registry import get

    return get(name).schema()


__all__ = ["load", "load_kind", "read_all", "shown", "view", "to_json", "chart", "compare", "compare_by", "check", "schema_of", "reads",
           "reads_table"]
