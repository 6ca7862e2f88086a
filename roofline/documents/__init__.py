"""Documents: every kind of document the tool reads or prints, each one entry of a registry
(`registry`), so that commands and the layers below never test what kind a document is.

Above `analysis` and `render` (which it calls), below the commands (which call it). The kinds of
file: `run`, `profile`, `grade`, `trace` (a PyTorch profiler trace); `owners` (a profile by op or
module); the decision documents: `compare` (with the gate's `check` and two
grade files' changes), `whatif`, `project`, `comms`; the descriptions: `kernels`, `occupancy`,
`device` (`listings`). What the commands call:

    load(path, accepts=COMMAND)                 one file of any kind, refused if COMMAND does not read it
    load_kind(path, name, reads, why)           one file that must be of one kind (grade --baseline)
    read_all(paths, command) -> (docs, notes)   several, merged where their kind merges
    shown(paths, docs) -> (document, view)      what `show` prints
    shown_by(paths, docs, key)                  what `show --by op|module` prints
    chart(paths, out, kind, measured, highlight) -> notes    what `plot` draws
    compare(before, after, force, chart_out)    two files of one kind, compared
    compare_by(before, after, key)              two profiles by op or module
    check(new, baseline, max_drop)              two files of one kind, gated (the result has `passed`)
    to_json(doc), view(doc, width, **context)   any document's --json and view
    schema_of(name)                             the JSON Schema of a kind's document
    reads(command), reads_table()               what a command reads (api.reads, api.READS)

Its modules: `registry` (the kinds and what each command reads), `reading` (the functions above),
`run`, `profile`, `grade`, `trace` (a PyTorch profiler trace, by its contents: its GPU time by op),
`owners` (`show --by op|module --json` of a profile), `problems` (`kernels problem.py`: a kernel
benchmark's problems and their speed of light),
`work_kind` (what a run and a profile share), `changes` (compare,
check, two grade files' changes), `whatif`, `project`, `comms`, `listings` (kernels, occupancy,
device), `models` (the pydantic model of each --json).

Importing this package loads nothing: each name is loaded on first use (the `occupancy` command
stays free of the results models), and the built-in kinds register when the registry is first
asked (`registry.kinds`, which imports every module here: a new kind is a new module and nothing else
here changes).
"""

from __future__ import annotations

import importlib

_PUBLIC = {
    "load": "reading", "load_kind": "reading", "read_all": "reading", "shown": "reading", "shown_by": "reading", "chart": "reading", "compare": "reading", "compare_by": "reading",
    "check": "reading", "to_json": "reading", "view": "reading", "schema_of": "reading",
    "reads": "registry", "reads_table": "registry", "kind_of": "registry", "register": "registry",
    "unregister": "registry", "kinds": "registry", "names": "registry", "get": "registry", "file_kind": "registry",
    "DocumentKind": "registry", "ReadKind": "registry", "ChartRequest": "registry", "PAIRED": "registry",
    "occupancy_json": "listings", "device_json": "listings",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
