"""Profiled kernel launches (one `nsight.metrics.Reading` each, whatever report they came
from) as roofline figures, and grouped: launches of the same kernel with the same configuration
become one kernel with a count, total and median time and a share of the profiled GPU time.

Per launch: FLOPs per precision (`peaks.PRECISIONS` keys), bytes at DRAM, L2, L1 and shared
memory, grid, block, registers, shared memory, achieved occupancy, the SM clock it ran at, and
for each figure whether it was counted, derived (and from what) or is missing. A kernel's
precision is the one with the most operations ('none' when every kind of work was counted and it
has no floating-point or tensor work: copies, memsets, integer kernels; 'unknown' when it shows
none of the work that was counted but some kinds were not counted), and `tensor_core` says
whether that work ran on the tensor cores. A kernel doing fewer than one operation per
`MIN_OPS_PER_BYTE`^-1 = 64 bytes it moves (through its busiest level) counts as moving data,
while a float64 elementwise add (one DADD per 24 bytes) stays FP64.

Half precision on the CUDA cores needs more evidence: Nsight Compute's HFMA counter also counts
the `HFMA2.MMA` instructions compilers use to move constants into registers, so a plain copy
kernel shows "FP16 work" (PyTorch's bf16 direct_copy: 0.98 FP16 operations per byte at 4 per
HFMA, no FP32; a bf16 add: 8 FP16 operations per FADD it really does). CUDA-core FP16 is a
kernel's precision only when it has `FP16_OVER_FP32` times the FP32 and FP64 operations and at
least `FP16_OPS_PER_BYTE` per byte; otherwise its FP16 count is kept but not used to classify
the kernel.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..model.peaks import NO_PRECISION, PRECISION_OF, PRECISIONS, UNKNOWN_PRECISION
from ..model.units import plural
from .checks import describe
from .dialect import int_cell
from .metrics import TIME, WHERE, Reading
from .names import label
from .rows import Row
from .run import demangle
from .sampling import Sampled

LEVELS = ("dram", "l2", "l1", "smem")
MIN_OPS_PER_BYTE = 1 / 64
FP16_OVER_FP32 = 8
FP16_OPS_PER_BYTE = 2.0


def precision_key(precision: str, tensor_core: bool) -> str | None:
    """The `peaks.PRECISIONS` key of a kernel's precision name and tensor-core flag ('bf16', True
    -> 'bf16_tensor'; 'fp32', False -> 'fp32'); None for 'none' or a pair no GPU runs."""
    for key, name in PRECISION_OF.items():
        if name == precision and ("tensor" in key) == tensor_core:
            return key
    return None


@dataclass(frozen=True)
class Launch:
    """One profiled launch. Times in ns, bytes in bytes, `flops` per precision key
    (`peaks.PRECISIONS`), `achieved_occupancy` a fraction 0..1, the clock in Hz; None (or absent
    from the dicts) where the report does not give it. `sources` says, per figure, the metric it
    was counted by or the formula it was derived by; `derived` which of them were derived;
    `missing` each figure the report lacks with where to get it (`metrics.WHERE`)."""

    name: str                 # the name a table shows (`names.label`)
    demangled: str            # the full demangled name, as ncu prints it
    grid: tuple[int, int, int] | None
    block: tuple[int, int, int] | None
    registers: int | None
    static_smem_bytes: int | None
    dynamic_smem_bytes: int | None
    time_ns: float
    flops: dict[str, float]
    nbytes: dict[str, float]
    bank_conflicts: float | None = None
    achieved_occupancy: float | None = None
    sm_clock_hz: float | None = None
    process_id: int | None = None
    passes: int | None = None
    reported_occupancy: float | None = None  # Nsight Compute's own theoretical occupancy, 0..1
    order: int | None = None  # 0-based place in the report's launch sequence (launch ID order)
    dram_read_bytes: float | None = None  # DRAM bytes read and written apart, where counted apart
    dram_write_bytes: float | None = None
    smem_config_bytes: int | None = None  # the shared memory per SM the driver configured for it (its carveout)
    nvtx: tuple[str, ...] | None = None  # the NVTX ranges open around it, outermost first (`ncu --nvtx`)
    sampled: Sampled | None = None  # its counters sampled over its run (`ncu --section PmSampling`)
    sources: dict[str, str] = field(default_factory=dict)
    derived: frozenset[str] = frozenset()
    missing: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> tuple:
        """What makes two launches the same kernel: name, grid, block, registers, shared memory."""
        return (self.demangled, self.grid, self.block, self.registers, self.static_smem_bytes, self.dynamic_smem_bytes)

    @property
    def threads_per_block(self) -> int | None:
        """Threads in one block (None where the report gives no block size)."""
        return self.block[0] * self.block[1] * self.block[2] if self.block else None


def from_reading(kernel_name: str, r: Reading, process_id: int | None = None, order: int | None = None,
                 nvtx: list[str] | None = None, sampled: Sampled | None = None) -> Launch:
    """One launch from what its report row gives (`metrics.read`), `order` its 0-based place
    in the report's launch sequence (None: not known), `nvtx` the NVTX ranges around it. Raises ValueError for a launch without a
    kernel name or a time: it cannot be placed."""
    demangled = kernel_name.strip()
    if not demangled:
        raise ValueError("launch without a kernel name (or a row cut short)")
    time_ns = r.value("time")
    if time_ns is None or time_ns <= 0:
        raise ValueError(f"{demangled[:60]}: no duration")
    flops = {k: r.value(k) for k in PRECISIONS if r.value(k) is not None}
    nbytes = {k: r.value(k) for k in LEVELS if r.value(k) is not None}

    def whole(key: str) -> int | None:
        x = r.value(key)
        return int(round(x)) if x is not None else None

    sources = {k: q.source for k, q in r.quantities.items()  # ncu's occupancy: a check, not a figure;
               if k not in ("reported_occupancy", "dram_read", "dram_write")}  # the split: part of 'dram'
    if r.grid is not None:
        sources["launch_size"] = r.launch_source
    return Launch(
        name=label(demangled), demangled=demangled, grid=r.grid, block=r.block, registers=whole("registers"),
        static_smem_bytes=whole("static_smem"), dynamic_smem_bytes=whole("dynamic_smem"), time_ns=float(time_ns),
        flops=flops, nbytes=nbytes, bank_conflicts=r.value("bank_conflicts"),
        achieved_occupancy=r.value("achieved_occupancy"), sm_clock_hz=r.value("clock"), process_id=process_id,
        passes=whole("passes"), reported_occupancy=r.value("reported_occupancy"), order=order,
        dram_read_bytes=r.value("dram_read"), dram_write_bytes=r.value("dram_write"),
        smem_config_bytes=whole("smem_config"), nvtx=tuple(nvtx) if nvtx is not None else None, sampled=sampled,
        sources=sources,
        derived=frozenset(k for k, q in r.quantities.items() if k in sources and not q.counted),
        missing=dict(r.missing),
        notes=tuple(r.notes),
    )


@dataclass(frozen=True)
class KernelGroup:
    """Every profiled launch of one kernel at one configuration."""

    launches: tuple[Launch, ...] = field(repr=False)

    @property
    def first(self) -> Launch:
        """The first launch (they share name, grid, block, registers and shared memory)."""
        return self.launches[0]

    @property
    def count(self) -> int:
        """Number of launches."""
        return len(self.launches)

    @property
    def time_ms(self) -> float:
        """Total GPU time of the launches, ms."""
        return sum(x.time_ns for x in self.launches) / 1e6

    @property
    def median_ms(self) -> float:
        """Median time of one launch, ms."""
        return statistics.median(x.time_ns for x in self.launches) / 1e6

    def total(self, what: str) -> dict[str, float]:
        """Summed `flops` or `nbytes` over the launches, per key."""
        out: dict[str, float] = {}
        for x in self.launches:
            for k, v in getattr(x, what).items():
                out[k] = out.get(k, 0.0) + v
        return out

    @property
    def flops(self) -> dict[str, float]:
        """Operations per precision key, summed over the launches (ordered as `peaks.PRECISIONS`)."""
        t = self.total("flops")
        return {k: t[k] for k in PRECISIONS if t.get(k)}

    @property
    def nbytes(self) -> dict[str, float]:
        """Bytes per level ('dram', 'l2', 'l1', 'smem'), summed over the launches."""
        return self.total("nbytes")

    @property
    def dominant(self) -> str | None:
        """The precision key with the most operations; None without floating-point or tensor work,
        or with less than `MIN_OPS_PER_BYTE` operations per byte of its busiest memory level."""
        f = dict(self.flops)
        busiest = max(self.nbytes.values(), default=0.0)
        half = f.get("fp16", 0.0)
        if half and (half < FP16_OVER_FP32 * (f.get("fp32", 0.0) + f.get("fp64", 0.0))
                     or half < FP16_OPS_PER_BYTE * busiest):
            del f["fp16"]  # register moves (HFMA2.MMA), not half-precision arithmetic
        if not f:
            return None
        key = max(f, key=f.get)
        return key if sum(f.values()) >= MIN_OPS_PER_BYTE * busiest else None

    def uncounted(self, precisions) -> list[str]:
        """The precision keys among `precisions` (those the GPU has) whose operations the report
        does not count, or counts in part (FMAs without adds and multiplies), for these launches."""
        missing = self.missing
        return [k for k in precisions if k in missing or any(m.startswith(k + " ") for m in missing)]

    def precision(self, uncounted: list[str] | tuple[str, ...] = ()) -> str:
        """'fp64', 'fp32', 'fp16', 'bf16', 'tf32', 'fp8', 'fp4', 'int8'; 'none' for no floating-point or
        tensor work, or 'unknown' when none was counted but the precisions in `uncounted` were
        not counted at all."""
        d = self.dominant
        return PRECISION_OF[d] if d else UNKNOWN_PRECISION if uncounted else NO_PRECISION

    def _weighted(self, attr: str) -> float | None:
        pairs = [(v, x.time_ns) for x in self.launches if (v := getattr(x, attr)) is not None]
        total = sum(t for _, t in pairs)
        return sum(v * t for v, t in pairs) / total if pairs and total else None

    @property
    def achieved_occupancy(self) -> float | None:
        """Time-weighted mean achieved occupancy, 0..1 (None where not counted)."""
        return self._weighted("achieved_occupancy")

    @property
    def sm_clock_hz(self) -> float | None:
        """Time-weighted mean SM clock the launches ran at, Hz (None where the report has none)."""
        return self._weighted("sm_clock_hz")

    @property
    def launch_order(self) -> list[int] | None:
        """The launches' 0-based places in the report's launch sequence, ascending; None unless
        every launch has one."""
        found = [x.order for x in self.launches]
        return sorted(found) if all(o is not None for o in found) else None

    def _split(self, attr: str) -> float | None:
        found = [getattr(x, attr) for x in self.launches]
        return sum(found) if all(v is not None for v in found) else None

    @property
    def dram_read_bytes(self) -> float | None:
        """DRAM bytes read, summed over the launches; None unless every launch counted them apart."""
        return self._split("dram_read_bytes")

    @property
    def dram_write_bytes(self) -> float | None:
        """DRAM bytes written, summed over the launches; None unless every launch counted them apart."""
        return self._split("dram_write_bytes")

    @property
    def passes(self) -> int | None:
        """The most replay passes one launch took (None where the report does not say)."""
        found = [x.passes for x in self.launches if x.passes is not None]
        return max(found) if found else None

    @property
    def sources(self) -> dict[str, str]:
        """Per figure, the metric it was counted by or the formula it was derived by."""
        return dict(self.first.sources)

    @property
    def derived(self) -> list[str]:
        """The figures derived from other metrics rather than counted, in any launch."""
        return sorted(set().union(*(x.derived for x in self.launches)))

    @property
    def missing(self) -> dict[str, str]:
        """Each figure the report lacks for any launch, with where to get it."""
        out: dict[str, str] = {}
        for x in self.launches:
            out.update(x.missing)
        return out

    @property
    def notes(self) -> list[str]:
        """The launches' remarks (tensor inputs without a roof, structured sparsity), once each."""
        return list(dict.fromkeys(n for x in self.launches for n in x.notes))


def group(launches: list[Launch]) -> list[KernelGroup]:
    """Launches grouped by `Launch.key`, the groups ordered by total time, longest first."""
    by_key: dict[tuple, list[Launch]] = {}
    for x in launches:
        by_key.setdefault(x.key, []).append(x)
    return sorted((KernelGroup(tuple(v)) for v in by_key.values()), key=lambda g: -g.time_ms)


def launch_order(rows: list[Row]) -> list[int]:
    """Each row's 0-based place in the report's launch sequence: by launch ID where every row has
    a distinct one, else as the report lists them (ncu lists launches in the order they ran).
    Rows left out later keep their places, so a gap shows where a launch is missing."""
    ids = [int_cell(r.text.get("ID", "")) for r in rows]
    if all(i is not None for i in ids) and len(set(ids)) == len(ids):
        rank = {i: n for n, i in enumerate(sorted(ids))}
        return [rank[i] for i in ids]
    return list(range(len(rows)))


def from_rows(rows: list[Row]) -> tuple[list[Launch], list[str]]:
    """The launches of report rows that can be placed on a roofline (`nsight.metrics.read`,
    `nsight.launches.from_reading`), and one-line notes on the rows left out: cut short, or
    without a name or a duration."""
    demangled = demangle([r.kernel for r in rows])
    order = launch_order(rows)
    out, cut, timeless, bad = [], [], 0, []
    for i, row in enumerate(rows):
        if row.left_out:  # a damaged figure: said where it was found
            continue
        if row.incomplete:
            cut.append(describe(row, i))
            continue
        try:
            sampled = Sampled.from_json(row.sampled) if row.sampled and "t_ns" in row.sampled else None
            out.append(from_reading(demangled.get(row.kernel, row.kernel), row.reading, row.process_id,
                                    order[i], row.nvtx, sampled))
        except ValueError:
            given = row.text.get(TIME, row.values.get(TIME))
            if given is None or not row.kernel:
                timeless += 1
            else:  # a duration is there, but no duration: zero (`check_rows` left the damaged ones out)
                bad.append(f"{describe(row, i)} has {TIME} {given!r}")
    notes = []
    unread = [r.sampled["unreadable"] for r in rows if r.sampled and "unreadable" in r.sampled]
    if unread:
        verb = "holds" if len(unread) == 1 else "hold"
        notes.append(f"{plural(len(unread), 'launch', 'launches')} {verb} PM sampling (a kernel's counters over its "
                     f"run), which the ncu_report module here ({unread[0]}) cannot read: it needs 2025.4 or newer "
                     "(pip install -U ncu-report)")
    if cut:
        notes.append(f"{plural(len(cut), 'report row')} left out: cut short (a truncated file?): {'; '.join(cut[:3])}")
    if timeless:
        notes.append(f"{plural(timeless, 'launch', 'launches')} left out: no kernel name or no duration "
                     f"({WHERE['time']} has it)")
    if bad:
        notes.append(f"{plural(len(bad), 'launch', 'launches')} left out for a duration that is none: " + "; ".join(bad[:3]))
    return out, notes
