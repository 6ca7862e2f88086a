"""Which files each reading command takes, and reading them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..defaults import DEFAULT_RESULTS
from ..errors import UsageError

if TYPE_CHECKING:
    from ..results.grades import GradeResults
    from ..results.profile import ProfileResults
    from ..results.schema import Results


# The kinds of file (`results.store.kind_of`) each command that reads results files takes; a
# file of another kind is refused in one line that names these (`reads`).
READS = {
    "show": ("run", "profile", "grade"),
    "plot": ("run", "profile", "grade"),
    "compare": ("run", "profile", "grade"),
    "check": ("run", "profile", "grade"),
    "whatif": ("run", "profile"),
    "project": ("run", "profile"),
}


PAIRED = ("compare", "check")  # commands that read two files of one kind


def reads(command: str) -> str:
    """What `command` reads, as its refusals say it: 'whatif reads a run's results (roofline run
    or tune) or a profile of a program (roofline profile)'."""
    from ..results import store
    if command in PAIRED:
        return f"{command} reads two files of one kind: two runs' results, two profiles or two grade files"
    names = [store.KIND_NAMES[k] for k in READS[command]]
    shown = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"{command} reads {shown}"


def read(path: Path, command: str | None = None) -> Results | ProfileResults | GradeResults:
    """The results, profile or grade file at `path`, read and checked (`results.store.load`); a
    file of an older schema is migrated with what only the kernel families can work out filled in
    (`ladder.upgrade.fill`), and its `read_notes` say so. For `command` (a `READS` key), a file of
    a kind it does not read is refused in one line naming what it reads. Raises UsageError as
    `store.load` does."""
    from ..results import store
    from ..ladder import upgrade
    said = reads(command) if command is not None else None
    doc = store.load(path, profile=True, upgrade=upgrade.fill, reads=said)
    kind = store.kind_of(doc)
    if command is not None and kind not in READS[command]:
        readers = [c for c, kinds in READS.items() if kind in kinds]
        raise UsageError(f"{path}: {store.KIND_NAMES[kind]}, which {', '.join(readers[:-1])} and {readers[-1]} "
                         f"read; {said}")
    return doc


def _one_kind(command: str, paths: tuple[Path, Path], docs: tuple) -> None:
    """Refuses, for `command` (compare or check), two files of different kinds where one is a grade
    file (a run against a profile is refused by `compare_work`, with why)."""
    from ..results import store
    kinds = [store.kind_of(d) for d in docs]
    if kinds[0] != kinds[1] and "grade" in kinds:
        other = 0 if kinds[1] == "grade" else 1
        raise UsageError(f"{paths[other]} is not a grade file but {store.KIND_NAMES[kinds[other]]}, and "
                         f"{paths[1 - other]} is one; {reads(command)}")


def show_all(paths: list[Path], command: str = "show") -> tuple[list[Results | ProfileResults], list[str]]:
    """The results in `paths` as one document per precision (`store.by_precision`: the files of
    one precision merged, an FP32 run and a BF16 one kept apart), with notes on the merge; a
    profile is read alone. Raises UsageError as `show` does for a bad file (its line naming what
    `command` reads) or a profile given with others, or for runs on different devices."""
    from ..results import store
    notes: list[str] = []
    docs = [read(p, command) for p in paths]
    notes += [note for d in docs for note in d.read_notes]
    profiles = [(p, d) for p, d in zip(paths, docs) if store.kind_of(d) != "run"]
    if profiles and len(docs) > 1:
        path, doc = profiles[0]
        raise UsageError(f"{path} is {store.KIND_NAMES[store.kind_of(doc)]}; give it alone to {{results}}", "results")
    if profiles:
        return docs, notes
    return store.by_precision(docs, [str(p) for p in paths], notes), notes


def given_paths(paths: list[Path] | None) -> list[Path]:
    """The files a reading command was given, else the default results file."""
    return paths or [DEFAULT_RESULTS]


def show(paths: list[Path]) -> tuple[Results | ProfileResults, list[str]]:
    """The results in `paths` (merged when several: `store.merge`) and notes on the merge; a
    profile (`roofline profile`) is read alone. Raises UsageError for a file that is missing,
    unreadable or invalid, a profile given with other files, or files of several precisions
    (`show_all` reads those)."""
    docs, notes = show_all(paths, "show")
    if len(docs) > 1:
        raise UsageError(f"{', '.join(str(p) for p in paths)}: runs in {len(docs)} precisions "
                         f"({', '.join(d.problem.dtype for d in docs)}), each read against its own roof; "
                         "give the files of one precision")
    return docs[0], notes
