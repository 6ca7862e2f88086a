"""A PyTorch profiler trace of a program joined to a profile of the same program (`profile --import
REPORT --trace TRACE`): each profiled launch takes the owner (op, phase, module; `traces.ops`) of the
trace's kernel it lines up with.

Both list the program's kernels in the order they ran: the report by launch ID, the trace by start
time on the GPU. The two sequences, each kernel reduced to the name people know it by
(`nsight.names.label`, so that the two tools' spellings of one kernel agree), are aligned as
`difflib.SequenceMatcher` aligns two texts: the longest runs of the same names in the same order are
matched, and a launch in no run of at least `MIN_RUN` (a kernel of a step only one of them recorded,
a window of launches the other did not cover; a run of two or three common elementwise kernels that
two different programs share by chance) has no owner. The share of the profiled time matched is reported; joining a
report and a trace of different steps of the same loop matches kernel for kernel, since a training
step launches the same kernels every time.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from pathlib import Path

from ..errors import UsageError
from ..nsight.names import label
from .ops import Owner, OpsTrace, attribute

MIN_RUN = 4  # launches in a row, the same names in both, for a match to count


def join(names: list[str], orders: list[int], trace: OpsTrace) -> tuple[list[Owner | None], list[str]]:
    """Owners for the profiled launches with demangled `names` and places `orders` in their launch
    sequence (in any order; the owners come back in the same order), from `trace`'s kernels (in their
    order on the GPU, all devices and streams together), and one-line notes."""
    theirs = sorted(trace.launches, key=lambda x: (x.kernel.ts_us, x.kernel.stream or 0))
    ours = sorted(range(len(names)), key=lambda i: orders[i])
    a = [label(names[i]) for i in ours]
    b = [label(x.kernel.name) for x in theirs]
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    owners: list[Owner | None] = [None] * len(names)
    matched = 0
    for block in matcher.get_matching_blocks():
        if block.size < min(MIN_RUN, len(a)):
            continue
        for k in range(block.size):
            owners[ours[block.a + k]] = theirs[block.b + k].owner
            matched += 1
    notes = []
    if matched < len(names):
        notes.append(f"{len(names) - matched:,} of the {len(names):,} profiled launches line up with no kernel of the "
                     f"trace's {len(b):,} (a match needs {MIN_RUN} or more launches in a row with the trace's names, "
                     "in its order): they have no owner; record the trace and the profile over the same step of the "
                     "same program")
    return owners, notes


def read_trace(path: Path) -> OpsTrace:
    """The trace at `path` (`--trace`), its kernels owned (`traces.ops.attribute`). Raises
    UsageError for a folder, a missing file, or a file that is no such trace."""
    if not path.is_file():
        raise UsageError(f"{{trace}} {path}: " + ("is a folder, not a trace" if path.is_dir() else "no such file"),
                         "trace")
    return attribute(path)


def owners_from(launches: list, trace: OpsTrace, path: Path) -> tuple[str, list[Owner | None], list[str]]:
    """The owners of a report's `launches` (`nsight.launches.Launch`) from `trace` (read from `path`),
    as `results.convert.from_profile` takes them: (source, one owner or None per launch, notes).
    Raises UsageError when no launch lines up: the trace is of another program."""
    found, notes = join([x.demangled for x in launches],
                        [x.order if x.order is not None else i for i, x in enumerate(launches)], trace)
    if not any(o is not None for o in found):
        raise UsageError(f"{{trace}} {path}: none of the report's {len(found):,} launches lines up with the trace's "
                         f"{len(trace.launches):,} kernels; give a trace of the same step of the same program", "trace")
    return (f"the PyTorch profiler trace {path.name}, its kernels lined up with the report's launches", found,
            notes + list(trace.notes))
