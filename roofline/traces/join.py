"""A PyTorch profiler trace of a program joined to a profile of the same program (`profile --import
REPORT --trace TRACE`): each profiled launch takes the owner (op, phase, module; `traces.ops`) of the
trace's kernel it lines up with.

Both list the program's kernels in the order they ran: the report by launch ID, the trace by start
time on the GPU. The two sequences, each kernel reduced to the name people know it by
(`nsight.names.label`, so that the two tools' spellings of one kernel agree), are aligned as
`difflib.SequenceMatcher` aligns two texts: the longest runs of the same names in the same order are
matched, and a launch in no run of at least `MIN_RUN` (a kernel of a step only one of them recorded,
a window of launches the other did not cover; a run of two or three common elementwise kernels that
two different programs share by chance) has no owner. Between two such runs, a gap of the same
number of launches on both sides (at most `GAP_MAX`: a library that chose another kernel for one
call in the other process, or a kernel whose name one tool could not demangle, as cuDNN's CUTLASS
kernels in a trace) is paired place for place: the same calls of the same step. The share of the
profiled time matched is reported; joining a report and a trace of different steps of the same loop
matches kernel for kernel, since a training step launches the same kernels every time.

Each matched launch also takes the trace kernel's duration: its GPU time in the program as it ran
without Nsight Compute (no replay, no cache flush), from which `show --by op` gives each op's time
in the program, the time PyTorch's profiler gives it.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from ..errors import UsageError
from ..nsight.names import label
from .ops import Launch, Owner, OpsTrace, attribute

MIN_RUN = 4  # launches in a row, the same names in both, for a match to count
SAME_PROGRAM = 0.5  # below this share of both the report's launches and the trace's kernels lined up: two programs
GAP_MAX = 8  # launches: a gap this long or shorter, alike on both sides between two runs, is paired place for place


def line_up(names: list[str], orders: list[int], trace: OpsTrace,
            unmatched: str = "they have no owner") -> tuple[list[Launch | None], list[str]]:
    """The trace's kernel (with its owner and duration) each profiled launch lines up with, as the
    module says, for the launches with demangled `names` and places `orders` in their launch sequence
    (in any order; the matches come back in the same order; None: no match), from `trace`'s kernels
    (in their order on the GPU, all devices and streams together), and one-line notes (`unmatched`:
    what a launch without a match lacks)."""
    theirs = sorted(trace.launches, key=lambda x: (x.kernel.ts_us, x.kernel.stream or 0))
    ours = sorted(range(len(names)), key=lambda i: orders[i])
    a = [label(names[i]) for i in ours]
    b = [label(x.kernel.name) for x in theirs]
    runs = [m for m in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
            if m.size >= min(MIN_RUN, len(a)) and m.size]
    found: list[Launch | None] = [None] * len(names)
    for run in runs:
        for k in range(run.size):
            found[ours[run.a + k]] = theirs[run.b + k]
    placed = 0
    for before, after in zip(runs, runs[1:]):  # a gap alike on both sides between two runs: the same calls
        gap_a, gap_b = after.a - (before.a + before.size), after.b - (before.b + before.size)
        if 0 < gap_a == gap_b <= GAP_MAX:
            for k in range(gap_a):
                found[ours[before.a + before.size + k]] = theirs[before.b + before.size + k]
            placed += gap_a
    matched = sum(x is not None for x in found)
    notes = []
    if placed:
        notes.append(f"{placed:,} of the {len(names):,} profiled launches were placed by their position alone: between "
                     f"two runs of launches that line up, the profile and the trace each have {'them' if placed > 1 else 'it'} "
                     "under another kernel name (another kernel chosen in the other process, or a name one tool could "
                     "not demangle)")
    if matched < len(names):
        notes.append(f"{len(names) - matched:,} of the {len(names):,} profiled launches line up with no kernel of the "
                     f"trace's {len(b):,} (a match needs {MIN_RUN} or more launches in a row with the trace's names, "
                     f"in its order): {unmatched}; record the trace and the profile over the same step of the "
                     "same program")
    return found, notes


def join(names: list[str], orders: list[int], trace: OpsTrace) -> tuple[list[Owner | None], list[str]]:
    """Owners for the profiled launches (`line_up`'s arguments), in the same order (None: no owner),
    and one-line notes."""
    found, notes = line_up(names, orders, trace)
    return [x.owner if x is not None else None for x in found], notes


def read_trace(path: Path) -> OpsTrace:
    """The trace at `path` (`--trace`), its kernels owned (`traces.ops.attribute`). Raises
    UsageError for a folder, a missing file, or a file that is no such trace."""
    if not path.is_file():
        raise UsageError(f"{{trace}} {path}: " + ("is a folder, not a trace" if path.is_dir() else "no such file"),
                         "trace")
    return attribute(path)


@dataclass(frozen=True)
class Joined:
    """A report's launches lined up with a trace (`joined_to`): where that was read from, each
    launch's owner and its duration in the traced run (µs; None: no kernel of the trace matched it),
    and one-line notes."""

    source: str
    owners: list[Owner | None]
    program_us: list[float | None]
    notes: list[str]

    @property
    def attribution(self) -> tuple[str, list[Owner | None], list[str]]:
        """The owners as `results.convert.from_profile` takes them: (source, owners, notes)."""
        return self.source, self.owners, self.notes


def joined_to(launches: list, trace: OpsTrace, path: Path, owned_already: bool = False) -> Joined:
    """A report's `launches` (`nsight.launches.Launch`) lined up with `trace` (read from `path`).
    `owned_already`: the report's own NVTX ranges give the owners, the trace only the time in the
    program (the notes say so). Raises UsageError when no launch lines up, or fewer than
    `SAME_PROGRAM` of the report's launches and of the trace's kernels do: the trace is of another
    program. (A report of several steps and a trace of one, or the other way round, lines up all of
    the shorter one.)"""
    found, notes = line_up([x.demangled for x in launches],
                           [x.order if x.order is not None else i for i, x in enumerate(launches)], trace,
                           unmatched="they have no time in the program" if owned_already else "they have no owner")
    if not any(x is not None for x in found):
        raise UsageError(f"{{trace}} {path}: none of the report's {len(found):,} launches lines up with the trace's "
                         f"{len(trace.launches):,} kernels; give a trace of the same step of the same program", "trace")
    matched = sum(x is not None for x in found)
    if matched < SAME_PROGRAM * len(found) and matched < SAME_PROGRAM * len(trace.launches):
        raise UsageError(f"{{trace}} {path}: only {matched:,} of the report's {len(found):,} launches and of the "
                         f"trace's {len(trace.launches):,} kernels line up (runs of common kernels two programs share): "
                         "they look like two different programs; give a trace of the same step of the same program",
                         "trace")
    return Joined(f"the PyTorch profiler trace {path.name}, its kernels lined up with the report's launches",
                  [x.owner if x is not None else None for x in found],
                  [x.kernel.dur_us if x is not None else None for x in found],
                  notes + ([] if owned_already else list(trace.notes)))
