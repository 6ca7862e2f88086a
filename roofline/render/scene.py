"""A chart as data: which points a roofline draws, where (arithmetic intensity, GFLOP/s), with
which marker, colour and label, faded or not, read against which precision's roof; and which roof
lines (level, value, colour, style) under which title. Built once from results documents
(`run_scene`, drawn by `roofline_chart` and the HTML report `html_report`) or from a profile
(`profile_scene`, drawn by `profile_chart` and the report's profile part), so that a kernel's
point is worked out in one place. Markers and roof
colours come from `style`; nothing here draws.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import groupby

from ..model.precision import PRECISIONS
from ..model.roofs import COMPUTE_LEVEL, at_least_seen, intensities
from ..model.units import figure, plural
from ..results.profile import ProfileResults
from ..results.schema import Results
from .chart import kernel_style, run_color
from .style import (MEMORY_COLORS, OTHER_TILE, PROFILE_MARKERS, RUN_MARKERS, SEARCH_COLORS, USER_COLORS, compute_color,
                    profile_colors)
from .text import l2_note


@dataclass(frozen=True)
class Point:
    """One kernel at one level: `x` its arithmetic intensity there (None: a kernel with neither a
    model nor counters, drawn as a line at its rate `y`), `y` its GFLOP/s. `index` is its place in
    its document's kernels (the report's table row), `run` its document's place in the scene,
    `rank` its place by rate among the timed kernels of its document. `named`: its label is
    written on the chart (a tile search names only its notable tiles); `faded`: another kernel was
    highlighted; `shown`: drawn from the start (a counted level of a kernel that the model places
    waits for --measured); `roof`: the compute level it is read against; `share`: a profiled
    kernel's share of the GPU time (its marker's area: `style.profile_marker_area`)."""

    kernel: str
    index: int
    run: int
    rank: int
    level: str | None
    x: float | None
    y: float
    marker: str | None  # matplotlib's name
    symbol: str | None  # Plotly's name
    color: object
    label: str
    user: bool
    named: bool
    highlighted: bool
    faded: bool
    shown: bool
    roof: str
    share: float | None = None


@dataclass(frozen=True)
class RoofLine:
    """A roof: a memory level's diagonal (GB/s) or a compute level's horizontal (GFLOP/s),
    theoretical (style '-') or measured ('--'); or a profiled kernel's own compute roof at the
    clock it ran at (style ':', in the kernel's colour; `kernel` its index). `borrowed`: where a
    measured roof came from when not from its own measurement ('FP16 cuBLAS'; 'best seen': raised
    to the best rate its run saw)."""

    level: str  # 'DRAM', 'L2', 'SMEM', or a compute level: 'FP32', 'BF16 tensor', ...
    value: float
    measured: bool
    memory: bool
    color: str
    style: str
    label: str  # as a chart's legend names it: 'DRAM measured 4,282 GB/s', 'FP32 peak 66,908 GFLOP/s'
    kernel: int | None = None
    borrowed: str | None = None


@dataclass(frozen=True)
class Scene:
    """A roofline chart as data: its title, its points (kernel by kernel, in the documents'
    order) and roofs (memory ones, then compute ones highest first), whether it is a tile
    search (`roofline run --tune`), and (a profile) the kernels' own roofs at the clocks they ran at."""

    title: str
    points: tuple[Point, ...]
    roofs: tuple[RoofLine, ...]
    search: bool = False
    kernel_roofs: tuple[RoofLine, ...] = ()

    def kernels(self, run: int | None = None) -> list[tuple[Point, ...]]:
        """The points kernel by kernel (of document `run` alone, if given), in order."""
        return [tuple(g) for _, g in groupby((p for p in self.points if run is None or p.run == run),
                                               key=lambda p: (p.run, p.index))]

    def memory(self) -> list[RoofLine]:
        return [r for r in self.roofs if r.memory]

    def compute(self) -> list[RoofLine]:
        return [r for r in self.roofs if not r.memory]


def run_scene(docs: list[Results], measured: bool = False, highlight: set[str] = frozenset(),
              most: int | None = None) -> Scene:
    """The scene of one run, or of several runs of one device in different precisions (each
    kernel against its own precision's roof). `most`: each document's fastest `most` kernels
    (None: every timed kernel). Colours, the same on every view: a ladder step in the hue of its
    technique (`chart.kernel_style`), several runs each in a colour family of its own, the user's
    kernels in theirs, a tile search's notable tiles named and the rest grey; worked out over
    the document's timed kernels, so that `most` changes no kernel's colour."""
    many = len(docs) > 1
    search = docs[0].tune is not None and not many
    points = []
    for j, d in enumerate(docs):
        timed = [k for k in d.kernels if k.timed]
        ranked = sorted(timed, key=lambda k: -k.gflops)
        rank = {k.name: i + 1 for i, k in enumerate(ranked)}
        kept = {k.name for k in ranked[:most]} if most is not None else {k.name for k in timed}
        mine = [k for k in timed if k.name in kept]  # the file's order kept
        notable = _notable(ranked, mine, highlight) if search else {}
        colors = _colors(j, timed, notable, many, search)
        flops = d.problem.problem.flops
        index = {id(k): i for i, k in enumerate(d.kernels)}
        for k in mine:
            named = not search or k.name in notable
            common = dict(kernel=k.name, index=index[id(k)], run=j, rank=rank[k.name], y=k.gflops,
                          color=colors[k.name], label=f"#{rank[k.name]} {k.name}" if search else k.name,
                          user=k.user, named=named, highlighted=k.name in highlight,
                          faded=bool(highlight) and k.name not in highlight, roof=d.compute_level)
            levels = intensities(k.model, k.counted, flops)
            if not levels:
                points.append(Point(level=None, x=None, marker=None, symbol=None, shown=True, **common))
            for level, ai in levels.items():
                marker, symbol = RUN_MARKERS[level]
                shown = "counted" not in level or measured or k.model is None
                points.append(Point(level=level, x=ai, marker=marker, symbol=symbol, shown=shown, **common))
    return Scene(title=_run_title(docs, search), points=tuple(points), roofs=tuple(_run_roofs(docs)), search=search)


def _colors(run: int, timed: list, notable: dict, many: bool, search: bool) -> dict:
    """Each of the `timed` kernels' colour (matplotlib's: a name or an RGBA tuple)."""
    ladder = [k for k in timed if not k.user]
    users = [k for k in timed if k.user]
    out = {}
    for k in timed:
        if search:
            out[k.name] = notable.get(k.name, OTHER_TILE)
        elif k.user:
            out[k.name] = USER_COLORS[users.index(k) % len(USER_COLORS)]
        elif many:
            out[k.name] = run_color(run, ladder.index(k), len(ladder))
        else:
            out[k.name] = kernel_style(k.name, ladder.index(k), len(ladder))["color"]
    return out


def _notable(ranked: list, good: list, highlight: set[str]) -> dict:
    """The kernels a tile search names on its chart, with their colours: the fastest, the
    slowest, the user's and the highlighted ones."""
    drawn = [k for k in ranked if k in good]
    colors = {drawn[0].name: SEARCH_COLORS["fastest"]}
    if len(drawn) > 1:
        colors[drawn[-1].name] = SEARCH_COLORS["slowest"]
    others = [k.name for k in drawn if (k.user or k.name in highlight) and k.name not in colors]
    for i, name in enumerate(others):
        colors[name] = USER_COLORS[i % len(USER_COLORS)]
    return colors


MEASURED_MEMORY = {"measured_dram_gbps": "DRAM", "measured_l2_gbps": "L2", "measured_smem_gbps": "SMEM"}


def _run_roofs(docs: list[Results]) -> list[RoofLine]:
    """Each memory level's roofs, then the compute roofs highest first: one run's precision's
    alone; several runs', FP32's and each run's. The roofs the verdicts read (`Results.roofs`: a
    measured ceiling at least what the file saw), each precision's from its own run."""
    roofs = docs[0].roofs
    for d in docs[1:]:  # a measured memory ceiling one run raised (`Results.roofs`) holds for all: the highest
        higher = {field: getattr(d.roofs, field) for field, level in MEASURED_MEMORY.items()
                  if getattr(roofs, field) and (getattr(d.roofs, field) or 0) > getattr(roofs, field)}
        roofs = replace(roofs, raised=roofs.raised + tuple(MEASURED_MEMORY[f] for f in higher
                                                           if MEASURED_MEMORY[f] in d.roofs.raised), **higher)
    own = {d.precision: d.roofs for d in docs}
    keys = dict.fromkeys([d.precision for d in docs] + (["fp32"] if len(docs) > 1 else []))
    levels = sorted(((key, roofs.roof(key, measured=False)) for key in keys), key=lambda r: -r[1].value)
    return memory_roofs(roofs, ("DRAM", "L2", "SMEM")) + [
        line for key, roof in levels for line in compute_roofs(own.get(key, roofs), [roof.level])]


def memory_roofs(roofs, levels) -> list[RoofLine]:
    """The roofs of memory `levels` ('DRAM', 'L2', 'SMEM') that `roofs` records, each level's
    theoretical one, then its measured one (at least the best rate its file saw: `Roof.seen`)."""
    out = []
    for level in levels:
        for measured in (False, True):
            r = roofs.roof(level, measured)
            if r is not None and r.measured == measured:
                out.append(RoofLine(level, r.value, measured, True, MEMORY_COLORS[level], "--" if measured else "-",
                                    f"{level}{' measured' if measured else ''} {r.value:,.0f} GB/s"
                                    + (" (best seen)" if r.seen else ""), borrowed="best seen" if r.seen else None))
    return out


def compute_roofs(roofs, levels) -> list[RoofLine]:
    """The roofs of compute `levels` ('FP32', 'BF16 tensor', ...) that `roofs` records, in that
    order, each level's theoretical one, then its measured one; a measured one raised to the best
    rate its run saw (`Roof.seen`: `roofs.at_least_seen`), or that is cuBLAS's FP16 rate read as BF16's
    (`Roof.borrowed`), says so."""
    out = []
    for level in levels:
        for measured in (False, True):
            r = roofs.roof(level, measured)
            if r is not None and r.measured == measured:
                borrowed = "best seen" if r.seen else r.borrowed
                out.append(RoofLine(r.level, r.value, measured, False, compute_color(r.level), "--" if measured else "-",
                                    f"{r.level} {'measured' if measured else 'peak'} {r.value:,.0f} GFLOP/s"
                                    + (f" ({borrowed})" if borrowed else ""), borrowed=borrowed))
    return out


def profile_scene(doc: ProfileResults, top: int | None = None, highlight: set[str] = frozenset()) -> Scene:
    """The scene of profile `doc`'s `top` kernels by GPU time (None: all of them), each against
    the roof of its own precision: a point per memory level Nsight Compute counted bytes at (DRAM,
    L2, L1/shared), in the kernel's colour (`style.profile_colors`, by rank), labelled with its
    rank, weighted by its time share; a kernel with no floating-point work or no bytes has none.
    Roofs: the memory roofs of the levels some kernel was counted at, then the compute roofs of
    the kernels' precisions (FP32 too where FP32 work was counted), highest first, each measured
    one as the verdicts read it (at least the best rate the profile counted: `at_least_seen`). A kernel that
    ran more than 3 % off the clock its roof assumes has its roof at the clock it ran at
    (Nsight Compute's sm__cycles_elapsed.avg.per_second) in `kernel_roofs`."""
    kernels = doc.kernels[:top]
    colors = profile_colors(len(kernels))
    points, clocks = [], []
    for i, (k, color) in enumerate(zip(kernels, colors)):
        if k.dominant is None or not k.gflops:
            continue
        at = [(label, marker, symbol, k.intensity(key)) for key, label, marker, symbol in PROFILE_MARKERS
              if k.intensity(key) and not (key == "l1" and l1_undercounted(k.bytes))]
        for label, marker, symbol, ai in at:
            points.append(Point(kernel=k.name, index=i, run=0, rank=i + 1, level=label, x=ai, y=k.gflops, marker=marker,
                                symbol=symbol, color=color, label=str(i + 1), user=False, named=True,
                                highlighted=k.name in highlight, faded=bool(highlight) and k.name not in highlight,
                                shown=True, roof=COMPUTE_LEVEL[k.dominant], share=k.time_share))
        own = doc.roofs(k).roof(k.dominant, measured=False)
        nominal = doc.nominal_clock_mhz(own.level) if own else None
        if at and own and k.clock_mhz and nominal and abs(k.clock_mhz / nominal - 1) > 0.03:
            clocks.append(RoofLine(own.level, own.value, False, False, color, ":",
                                   f"{own.level} at {k.clock_mhz:,.0f} MHz {own.value:,.0f} GFLOP/s", kernel=i))
    fp32 = {"fp32"} if any("fp32" in k.flops for k in kernels) else set()
    roofs = profile_roofs(doc, {k.dominant for k in kernels if k.dominant} | fp32, [k.bytes for k in kernels])
    command = " ".join(doc.command) if doc.command else (doc.report or "")
    shown = f"top {len(kernels)} of {len(doc.kernels)} kernels" if len(kernels) < len(doc.kernels) else \
        plural(len(kernels), "kernel")
    title = f"{doc.device.name}: {shown} by GPU time ({figure(doc.total_time_ms)} ms profiled)\n{command[:110]}"
    return Scene(title=title, points=tuple(points), roofs=roofs, kernel_roofs=tuple(clocks))


def profile_roofs(doc: ProfileResults, precisions: set[str], traffic: list[dict[str, float]]) -> tuple[RoofLine, ...]:
    """The roofs a chart of profile `doc` draws for work in `precisions` (keys: 'bf16_tensor',
    'fp32', ...) and bytes `traffic` (each a ProfiledKernel.bytes-like dict): the memory roofs of
    the levels some of `traffic` counted, then the compute roofs of `precisions`, highest first,
    each measured one as the verdicts read it (at least the best rate the profile counted:
    `at_least_seen`); a measured BF16 roof that is cuBLAS's FP16 says so."""
    roofs = at_least_seen(doc.device.roofs, doc.seen_rates())[0]  # the ceilings the verdicts read (`beaten`)
    peaks = {lv: roofs.roof(lv, measured=False) for lv in {COMPUTE_LEVEL[p] for p in precisions if p in COMPUTE_LEVEL}}
    levels = sorted(peaks, key=lambda lv: (-(peaks[lv].value if peaks[lv] else 0), lv))
    counted = [level for level, keys in (("DRAM", ("dram",)), ("L2", ("l2",)), ("SMEM", ("l1", "smem")))
               if any(b.get(key) for b in traffic for key in keys)]
    return tuple(memory_roofs(roofs, counted) + compute_roofs(roofs, levels))


def l1_undercounted(nbytes: dict[str, float]) -> bool:
    """Whether `nbytes` (bytes by level key: 'l1', 'smem', 'dram', ...) counts fewer L1 and shared-
    memory bytes than DRAM bytes. A byte an SM loads from or stores to DRAM passes its L1TEX unit,
    where Nsight Compute counts it, unless the TMA copied it into shared memory (and wgmma read it
    from there), which those counters do not see (docs/tensor.md); and a launch's DRAM bytes may hold
    the L2's write-back of lines earlier kernels wrote (a few-kilobyte fusion of a JAX step counts
    2,560 DRAM bytes against 64 at L1). Either way such a kernel's L1/shared intensity is not where
    its traffic is, and charts leave that point out."""
    l1 = (nbytes.get("l1") or 0) + (nbytes.get("smem") or 0)
    return 0 < l1 < (nbytes.get("dram") or 0)


L1_LEFT_OUT = ("fewer bytes counted there than in DRAM: the counters there missed some of its traffic (the TMA's "
               "copies into shared memory and wgmma's reads of them), or its DRAM bytes hold the L2's write-back of "
               "earlier kernels' lines")  # why a chart has no L1/shared point for a kernel (`l1_undercounted`)


def l1_left_out(kernels) -> list[str]:
    """The ranks ('1', '2', ...) of `kernels` (ProfiledKernel, in rank order) placed on a chart
    whose L1/shared point is left out (`l1_undercounted`)."""
    return [str(i + 1) for i, k in enumerate(kernels)
            if k.dominant and k.gflops and k.intensity("l1") and l1_undercounted(k.bytes)]


def one_line_per_value(lines: list[RoofLine]) -> list[list[RoofLine]]:
    """Compute roofs `lines` of one value (within 1 %) and kind as one line, all their levels
    named on it (on an H200 the FP32 roof and the FP64 tensor one are both 66.9 TFLOP/s): the
    theoretical lines, then the measured ones, each in the order of its first roof."""
    out: list[list[RoofLine]] = []
    for measured in (False, True):
        for r in lines:
            if r.measured != measured:
                continue
            same = next((g for g in out if g[0].measured == measured and abs(g[0].value / r.value - 1) < 0.01), None)
            if same is not None:
                same.append(r)
            else:
                out.append([r])
    return out


def problem_title(doc: Results) -> str:
    """'SGEMM 4096x4096x4096 FP32' or 'GEMM 4096x4096x4096 BF16' (TN, FP32 accumulate: `model.problem`)."""
    p = doc.problem.problem
    return f"{'GEMM' if p.tensor else 'SGEMM'} {p.m}x{p.n}x{p.k} {PRECISIONS[p.dtype].title}"


def roofs_source(doc: Results) -> str:
    """'NVML' or 'datasheet': where the device's roofs came from."""
    return "NVML" if "NVML" in (doc.device.source or "NVML") else "datasheet"


def roofs_phrase(doc: Results) -> str:
    """Where a chart's theoretical roofs come from, for its title: NVML's clocks and counts (FP32 cores,
    memory clock and bus) with the per-SM rates of each precision and level (`model.peaks`: the
    whitepapers' tensor-core rates at their clock, Nsight Compute's L2 bytes per clock), or a
    datasheet's figures."""
    return "peaks from NVML clocks and per-SM rates" if roofs_source(doc) == "NVML" else "peaks from the datasheet"


def _run_title(docs: list[Results], search: bool) -> str:
    doc = docs[0]
    source = f"{roofs_phrase(doc)}{l2_note(doc)}"
    if len(docs) > 1:
        runs = ", ".join(f"{PRECISIONS[d.problem.problem.dtype].title} {d.problem.problem.m}x{d.problem.problem.n}"
                         f"x{d.problem.problem.k}" for d in docs)
        return f"{doc.device.name}: GEMM ladders, {runs}\neach kernel against the roof of its precision ({source})"
    if search:  # the list of tiles beside it narrows the axes: the title in two lines, whole
        return f"{doc.device.name}: {problem_title(doc)}, tile search of {doc.tune.kernel}\nhierarchical roofline ({source})"
    return f"{doc.device.name}: {problem_title(doc)}, hierarchical roofline ({source})"
