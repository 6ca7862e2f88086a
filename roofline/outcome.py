"""What a command returns, for the terminal to show: its JSON document, its view (the tables and
lines a person reads), its notes, warnings and failures. One `Outcome` per command, made by
the command's room (`roofline.commands`: which tables, which lines, what is a failure); the console
presents every outcome alike (`console.present`): the document alone on stdout under --json,
else the view; notes on stderr as 'roofline: note: ...', warnings as 'roofline: warning: ...',
failures as 'roofline: error: ...' and exit code 1.

The rendering modules load when a view is drawn, not before: `occupancy` and `kernels` import
neither CuPy nor matplotlib.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from .render.lines import Note, Plain  # noqa: F401 (a view's lines for stderr, and lines never wrapped)


@dataclass(frozen=True)
class Outcome:
    """What a command returns. `document`: its JSON (None: it has none). `view`: the tables and
    lines for a terminal of a width (rich renderables and strings; `Note` and `Plain` lines as
    they say), drawn in place of the document. `notes` and `warnings` go to stderr under either
    form, after what stdout shows, or before it with `notes_first` (notes on the reading itself:
    a merge, a fallback). `asides`: plain lines on stderr beside the document under --json (what
    the view says on stdout about files written). `failures`: one error line each on stderr, then
    exit code 1; `failed`: exit code 1 with nothing more to say (the view said it)."""

    document: Any = None
    view: Callable[[int], Iterable[Any]] | None = None
    notes: tuple[str, ...] = ()
    notes_first: bool = False
    warnings: tuple[str, ...] = ()
    asides: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    failed: bool = False
    usage: bool = False  # the failures are the input's (a spec's reference that fails): exit code 2

    def to_json(self) -> str:
        """The document as the command prints it."""
        return json.dumps(self.document, indent=1)

    @property
    def exit_code(self) -> int:
        """2 for failures of the input (`usage`), 1 for other failures (or `failed`), else 0."""
        return (2 if self.usage else 1) if self.failures or self.failed else 0
