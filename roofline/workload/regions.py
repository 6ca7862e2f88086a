"""The bytes of one tensor that a forward's ops read, through any views of it: the union of the
regions they read, each byte once (`workload.problem.work`'s compulsory bytes).

A view is a geometry over its source's storage: an offset, sizes and strides, in elements of its
own type. Its elements lie in runs of consecutive addresses: the dimensions of least stride
merged while each one's stride is the run so far (a contiguous tensor, or a transposed one, is
one run; `x[:, :64]` of a 4096-wide `x` is a run of 64 per row; a broadcast dimension, stride 0,
repeats addresses and adds none). Each view read adds its runs, as byte intervals; the bytes read
are their union, in whole 32-byte sectors (`SECTOR`: what the L2 fetches from DRAM at the least;
a tensor's storage starts on a sector). So `x[0] + x[1]` reads two halves of a two-row `x` (both
rows, where the most any one op read was one), `chunk`, `split` and `unbind` pieces add up, a
region read twice (an RNN's weights at every step) counts once, and a column of an FP32 matrix
reads a sector of every row, 32 bytes for each 4 it uses.

A view of more than MAX_RUNS runs (a column of a tall matrix, one element a run) is not split
into runs: it counts as the fewest bytes it surely covers (`least_bytes`), and the union is then
at least that (`floor`). Every figure is a lower bound on the bytes read, never above what a
kernel must move.
"""

from __future__ import annotations

import math

import numpy as np

SECTOR = 32  # bytes: the least a DRAM access moves (an L2 sector)
MAX_RUNS = 1 << 20  # runs one view may add (beyond: its size alone, as a floor)
MAX_TOTAL = 1 << 23  # runs kept for one source (beyond: the union so far, as a floor)


def memory_order(t) -> list[int] | None:
    """The dimensions of tensor `t` in the order its elements lie in memory, outermost first, where
    `t` is a permutation of a contiguous tensor (`t.permute(order)` is contiguous: a transposed
    matrix, GPU MODE's `(l, m, k).permute(1, 2, 0)`), else None (a slice with gaps, a broadcast).
    A timed call's fresh inputs keep that layout (`measure.problem_grade.rolled`), as a kernel
    that reads raw pointers with the task's strides needs, and the work reads the same layout."""
    order = sorted(range(t.dim()), key=lambda d: (-t.stride(d), -t.shape[d]))
    return order if t.permute(order).is_contiguous() else None


def storage_of(t) -> tuple[int, int] | None:
    """The identity and size (bytes) of tensor `t`'s storage, which its views share (on the meta
    device too); None for a tensor without one (a subclass that has none)."""
    try:
        storage = t.untyped_storage()
        return storage._cdata, int(storage.nbytes())
    except Exception:  # noqa: BLE001 - no storage to read: the tensor is its own source
        return None


def storage_key(t) -> int | None:
    """The identity of tensor `t`'s storage (`storage_of`), or None: what tells two views of one apart
    from two tensors."""
    found = storage_of(t)
    return found[0] if found is not None else None


def runs(offset: int, shape: tuple[int, ...], stride: tuple[int, ...], itemsize: int,
         limit: int = MAX_RUNS) -> tuple[np.ndarray, int] | None:
    """The runs of consecutive addresses a view covers: (their starts, in bytes from the storage's
    first element, as an int64 array; each run's length in bytes); None where there are more than
    `limit` runs. `offset`, `stride` in elements of `itemsize` bytes. An empty view has no run."""
    if any(n == 0 for n in shape):
        return np.zeros(0, dtype=np.int64), 0
    dims = sorted((s, n) for n, s in zip(shape, stride) if n > 1 and s != 0)  # by stride, least first
    run = 1
    while dims and dims[0][0] == run:  # the next dimension continues the run
        run *= dims.pop(0)[1]
    if math.prod(n for _, n in dims) > limit:
        return None
    starts = np.array([offset], dtype=np.int64)
    for s, n in dims:
        starts = (starts[:, None] + s * np.arange(n, dtype=np.int64)[None, :]).reshape(-1)
    return starts * itemsize, run * itemsize


def least_bytes(offset: int, shape: tuple[int, ...], stride: tuple[int, ...], itemsize: int) -> int:
    """The fewest bytes a view covers, found without splitting it into runs: where its dimensions
    nest (each one's stride at least the extent of those of smaller stride: no two of its elements
    at one address) its elements, a broadcast dimension's repeats left out; else (windows that
    overlap, `unfold`, `as_strided`) the elements of its longest dimension alone, which are
    distinct whatever the others do."""
    if any(n == 0 for n in shape):
        return 0
    dims = sorted((s, n) for n, s in zip(shape, stride) if n > 1 and s != 0)
    reach = 1  # elements spanned by the dimensions of smaller stride
    for s, n in dims:
        if s < reach:
            return max(n for _, n in dims) * itemsize
        reach = s * (n - 1) + reach
    return math.prod(n for _, n in dims) * itemsize


def union_bytes(starts: np.ndarray, ends: np.ndarray) -> int:
    """The length of the union of the intervals [starts[i], ends[i]) (int64 arrays, one length)."""
    if starts.size == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    before = np.concatenate((s[:1], reach[:-1]))  # how far the intervals before each one reach
    return int(np.maximum(0, e - np.maximum(s, before)).sum())


class Regions:
    """What the ops of a forward read of one source of `size` bytes (module docstring): `read`
    each view an op reads (its geometry), `floor` a figure it read at least (a gather's rows);
    `bytes()` the union, at most `size`."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.whole = False
        self.least = 0
        self._starts: list[np.ndarray] = []
        self._ends: list[np.ndarray] = []
        self._runs = 0
        self._seen: set[tuple] = set()

    def read(self, offset: int, shape: tuple[int, ...], stride: tuple[int, ...], itemsize: int) -> None:
        """A view read whole: offset, sizes and strides in elements of `itemsize` bytes."""
        key = (offset, tuple(shape), tuple(stride), itemsize)
        if self.whole or key in self._seen:
            return
        self._seen.add(key)
        got = runs(offset, shape, stride, itemsize, min(MAX_RUNS, MAX_TOTAL - self._runs))
        if got is None:
            self.floor(least_bytes(offset, shape, stride, itemsize))
            return
        starts, length = got
        if starts.size == 1 and length >= self.size:
            self.whole = True
            return
        self._starts.append(starts // SECTOR * SECTOR)  # whole sectors
        self._ends.append(-(-(starts + length) // SECTOR) * SECTOR)
        self._runs += starts.size

    def floor(self, amount: float) -> None:
        """At least `amount` bytes of it are read (a lower bound from elsewhere)."""
        self.least = max(self.least, amount)

    def bytes(self) -> float:
        """The bytes read: the union of the runs, or the floor where that is more; at most `size`."""
        if self.whole:
            return float(self.size)
        union = union_bytes(np.concatenate(self._starts), np.concatenate(self._ends)) if self._starts else 0
        return float(min(self.size, max(union, self.least)))
