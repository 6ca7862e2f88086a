"""The registry of document kinds: one entry (`DocumentKind`) per kind of document the tool reads
or prints, saying everything that differs by kind, so that no command and no lower layer tests
what kind a document is.

Two families of entries:

- read kinds (`ReadKind`: 'run', 'profile', 'grade', 'trace'): files on disk. An entry says how its file is
  parsed and migrated (`parse`, through `results.store`), which commands read it (`read_by`, from
  which `reads_table` and every refusal are made), whether several files of it merge (`combine`),
  its kernels as work rows (`work`), its tables (`view`, `shown`), its chart (`chart`: which
  `--kind`, `--measured`, `--highlight` and `.html` it takes, with their refusals), and what
  comparing two of it gives (`compare`, `check`);
- decision documents and descriptions ('compare', 'check', 'grade-changes', 'whatif', 'project',
  'comms', 'kernels', 'occupancy', 'device'): results of a command, not files. An entry says its
  `--json` (`json`, checked against its pydantic `model`, whose `schema` can be printed) and its
  view.

A kind is found for an object by its type (`kind_of`: the only isinstance tests on documents) or
for a file by its `"kind"` field (`file_kind`). The built-in kinds register themselves when their
module is imported; `kinds()` imports every module of this package on first use (the read kinds'
first), so that importing this module loads nothing of the results models and a new kind is one new
module here: its entry, its `--json` model and its view's call (`owners` is one such).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar

from ..errors import UsageError

# The modules of the kinds of file, in the order refusals and tables name them; every other module of
# this package is imported after them, in name order (`_modules`), and its kinds follow.
FIRST = ("run", "profile", "grade", "trace")
PAIRED = ("compare",)  # commands that read two files of one kind (and compare's gate, --max-drop)

_KINDS: dict[str, "DocumentKind"] = {}
_loaded = False


class DocumentKind:
    """One kind of document. `types`: the Python objects of this kind (a read kind's pydantic file
    model; a decision's analysis result). `model`: the pydantic model of its `--json`, whose JSON
    Schema `schema` prints."""

    name: ClassVar[str] = ""
    types: tuple[type, ...] = ()
    model: type | None = None

    def handles(self, obj: Any) -> bool:
        """Whether `obj` is a document of this kind."""
        return isinstance(obj, self.types)

    def json(self, obj: Any) -> Any:
        """`obj`'s `--json` document (plain JSON data, as `json.dumps(..., indent=1)` prints it): by
        default its `to_json()`, checked against this kind's `model`."""
        if self.model is None or not hasattr(obj, "to_json"):
            raise NotImplementedError(f"{self.name}: no JSON document")
        from .models import checked

        return checked(self.model, obj.to_json())

    def view(self, obj: Any, width: int, **context: Any) -> list:
        """`obj`'s tables and lines for a terminal `width` wide (rich renderables and strings;
        `render.lines.Note` and `Plain` lines as they say)."""
        raise NotImplementedError(f"{self.name}: no view")

    def schema(self) -> dict:
        """The JSON Schema of its `--json` document."""
        if self.model is None:
            raise NotImplementedError(f"{self.name}: no schema")
        return self.model.model_json_schema(by_alias=True)


@dataclass(frozen=True)
class ChartRequest:
    """What `plot` asked for: the files read, the chart file, `--kind`, `--measured`,
    `--highlight`, and whether `out` is the HTML report."""

    paths: list[Path]
    out: Path
    kind: str = "roofline"
    measured: bool = False
    highlight: list[str] | None = None
    as_html: bool = False

    @property
    def sources(self) -> str:
        """The files, as a refusal about their data names them."""
        return ", ".join(str(p) for p in self.paths)


class ReadKind(DocumentKind):
    """A kind of file (`results.store`'s 'run', 'profile', 'grade'). `file_kind`: its `"kind"`
    field (None: the field absent, a run's). `title`: what it is, as refusals name it; `short`:
    the noun alone ('a grade file'). `read_by`: the commands that read it, in the order refusals
    list them. `merges`: several files of it are read together (`combine`); a file of a kind
    that does not is read alone and refused among others. `paired_alone`: compared only with a
    file of its own kind (refused up front, with `short`; else left to `compare`)."""

    file_kind: ClassVar[str | None] = None
    title: ClassVar[str] = ""
    short: ClassVar[str] = ""
    pair: ClassVar[str] = ""  # two of it, as the paired commands' refusals say: 'two profiles'
    merges: ClassVar[bool] = False  # several files read as one (`combine`); else each is read alone
    read_by: ClassVar[tuple[str, ...]] = ()
    paired_alone: ClassVar[bool] = False

    def claims(self, data: Any) -> bool:
        """Whether the file whose JSON is `data` is of this kind by its contents rather than its
        `"kind"` field (a file another tool wrote: a PyTorch profiler trace)."""
        return False

    def parse(self, data: Any, source: str, reads: str | None) -> Any:
        """The document from `data` (the file's JSON), checked, an older one migrated. Raises
        UsageError in one line naming `source` (and ending with `reads`, for a file of another kind)."""
        raise NotImplementedError

    def combine(self, paths: list[Path], docs: list, notes: list[str]) -> list:
        """The documents `docs` (read from `paths`, all of this kind, several only where it
        `merges`) as the commands show them: as they are by default."""
        return docs

    def work(self, doc: Any, measured: bool = True):
        """Its kernels as work rows (`analysis.work.Workload`). Raises UsageError where it has none."""
        raise UsageError(f"{self.title} holds no kernels to read as work")

    def shown(self, paths: list[Path], docs: list) -> tuple[Any, Callable[[int], list]]:
        """What `show` prints for `docs` (read from `paths`): the document (`--json`) and the view."""
        raise NotImplementedError

    def shown_by(self, paths: list[Path], docs: list, key: str) -> tuple[Any, Callable[[int], list]]:
        """What `show --by KEY` prints ('kernel': the default view, `shown`; 'op' or 'module': GPU
        time by who launched it). Raises UsageError for a kind that records no owners."""
        if key == "kernel":
            return self.shown(paths, docs)
        raise UsageError(f"{{by}} {key} reads who launched each kernel, which a profile or a PyTorch profiler trace "
                         f"records; {paths[0]} is {self.title}", "by")

    def compare_by(self, docs: tuple, paths: tuple[Path, Path], key: str):
        """`compare --by KEY` ('op' or 'module'): `docs[0]` (before) against `docs[1]` by who launched
        their kernels. Raises UsageError for a kind that records no owners."""
        raise UsageError(f"{{by}} {key} compares two profiles by who launched each kernel; {paths[0]} is "
                         f"{self.title}", "by")

    def chart(self, request: ChartRequest, docs: list, notes: list[str]) -> list[str]:
        """Draw `docs` as `request` asks, into `request.out` (checked up front), refusing what this
        kind cannot draw; returns `notes` with its own."""
        raise UsageError(f"{request.paths[0]} is {self.title}, which is not drawn")

    def compare(self, docs: tuple, paths: tuple[Path, Path], force: bool, chart_out: Path | None):
        """`docs[0]` (before) against `docs[1]` (after), as `compare` reads them."""
        raise UsageError(f"{paths[0]} is {self.title}, which is not compared")

    def check(self, docs: tuple, drop: float):
        """`docs[0]` (new) against `docs[1]` (the baseline) at the gate, `drop` the slowdown allowed."""
        raise UsageError(f"{self.title} is not checked")


def register(kind: DocumentKind) -> DocumentKind:
    """Add `kind` to the registry (replacing one of the same name); returns it."""
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove the kind called `name` (a test's toy kind)."""
    _KINDS.pop(name, None)


def kinds() -> list[DocumentKind]:
    """Every registered kind: the built-in ones first (imported on first use), by their module's place
    in `_modules()`, then any other in the order registered."""
    global _loaded
    modules = _modules()
    if not _loaded:
        _loaded = True
        for module in modules:
            importlib.import_module(f"{__package__}.{module}")
    rank = {f"{__package__}.{module}": i for i, module in enumerate(modules)}
    return sorted(_KINDS.values(), key=lambda kind: rank.get(type(kind).__module__, len(rank)))


@functools.cache
def _modules() -> list[str]:
    """The modules of this package, those of `FIRST` first, the rest in name order."""
    here = importlib.import_module(__package__).__path__
    return [*FIRST, *sorted(m.name for m in pkgutil.iter_modules(here) if m.name not in FIRST)]


def names() -> list[str]:
    """The names of every registered kind, in `kinds()` order."""
    return [kind.name for kind in kinds()]


def get(name: str) -> DocumentKind:
    """The kind called `name`. Raises KeyError for none."""
    kinds()
    return _KINDS[name]


def read_kinds() -> list[ReadKind]:
    """The kinds of file, in the order refusals name them."""
    return [k for k in kinds() if isinstance(k, ReadKind)]


def kind_of(obj: Any) -> DocumentKind:
    """The kind of document `obj` is. Raises TypeError for an object of no registered kind."""
    for kind in kinds():
        if kind.handles(obj):
            return kind
    raise TypeError(f"no document kind handles a {type(obj).__name__}")


def file_kind(data: Any) -> ReadKind:
    """The kind of file whose JSON is `data`, by its contents (`ReadKind.claims`) or its `"kind"`
    field; the run's (whose files have none) for a field no kind claims, for the run's parsing to
    refuse it in its words."""
    given = data.get("kind") if isinstance(data, dict) else None
    found = [k for k in read_kinds() if k.claims(data) or (k.file_kind is not None and k.file_kind == given)]
    return found[0] if found else get("run")


def reads_table() -> dict[str, tuple[str, ...]]:
    """The kinds of file each command that reads files takes, by command (in the order the kinds
    first name them): what `api.READS` held."""
    table: dict[str, list[str]] = {}
    for kind in read_kinds():
        for command in kind.read_by:
            table.setdefault(command, []).append(kind.name)
    return {command: tuple(names) for command, names in table.items()}


def reads(command: str) -> str:
    """What `command` reads, as its refusals say it: 'whatif reads a run's results (roofline run
    or tune) or a profile of a program (roofline profile)'."""
    if command in PAIRED:
        names = [k.pair for k in read_kinds() if command in k.read_by]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        return f"{command} reads two files of one kind: {listed}"
    names = [get(k).title for k in reads_table()[command]]
    shown = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"{command} reads {shown}"
