"""Causal masks written out: a reference's attention scores (`q @ k.transpose(-2, -1)`) filled with
-inf where a triangular mask says (`masked_fill`, `where`), as minGPT and KernelBench's causal
attentions write it, instead of `scaled_dot_product_attention(..., is_causal=True)`.

The scores a mask fills need never be computed, and the zeros softmax turns them into need never
be multiplied: a candidate that skips them (FlashAttention's causal blocks) does the kept share of
both products. Counted in full, the reference's work would put the speed of light above what such a
candidate needs, and an honest one would read faster than light (a causal attention of long
sequences nearly halves its products). `MaskTracker` follows, op by op on the meta device (no
values), which tensors are triangular masks and which are products' scores:

- a mask: the result of `tril` or `triu` of ones (or of another number, not 0), in the
  constructor or the forward (of anything else it is not read: what it holds inside the triangle
  is not known), and a band, the `tril` or `triu` of such a mask (a sliding window), through views
  that keep its last two dimensions (a slice of them moves its diagonals; a transpose or permute
  of them turns it), `== 0` / `!= 0` (`== 1` of ones), `~`, and a cast (`.bool()`); and `&` or `|`
  of two such masks where the result is one triangle or band (`tril() & ~tril(-W)`, a window);
- a product's scores: the result of a matrix product (`problem.MATMUL_OPS`), through views that
  keep its last two dimensions and a scaling by a number;
- filled: `masked_fill(scores, mask, v)` or `where(mask, v, scores)` with v at most `FILL_AT_MOST`
  (-inf, -1e9, a half type's lowest), over scores of the mask's last two dimensions. The share of
  the scores kept is counted from the triangle's geometry; the product that made the scores keeps
  that share of its FLOPs (unless another op reads those scores whole: a sum of them, an output),
  and so does the next product that takes the filled scores (through softmax, relu or exp, all
  zero where -inf was filled, dropout and scaling) as its left operand, its contraction over the
  keys.

An *additive* mask, -inf (or at most `FILL_AT_MOST`) inside a triangle and finite outside, added to
the scores, fills them as `masked_fill` does. It is read as the `tril` or `triu` of a `full` of such
a value (`nn.Transformer.generate_square_subsequent_mask`'s form), a `masked_fill` of another tensor
with such a value through a triangular mask, or `where(mask, -inf, 0)`, through the same views, and
a sum of two such masks (-inf where either is); then `scores + mask` (either order) or
`baddbmm(mask, q, k)` fills the scores. A finite `masked_fill` of it over the triangle's other side
(the PyTorch tutorial's second fill, of 0.0) keeps it one. `scaled_dot_product_attention` given such
a mask, or a boolean triangular one, as its `attn_mask` reads it too (`attention_share`; its
products are `problem._attention_read`'s to count).

A mask no triangle or band describes, made of numbers alone (`arange(T)[:, None] >= arange(T)`, a
causal mask with a prefix written in, a window compared from positions), is read from its values
(`shadows`): the share of the scores it fills, broadcast over them. The scores are followed through
an in-place scaling, element-for-element ops before the fill (a soft cap), a multiplication by a
known tensor (`s * b - 1e4 * (1 - b)`, subtracting a large number where masked), an integer index
fill, and a bias not known added to a known additive mask (`lowered`); a second fill keeps the
places both keep (`kept_where`, updating the product that made the scores, `origin`); and a tensor
multiplied by a known 0/1 mask (probabilities after the softmax) is kept where the mask is not 0. A
mask given as an input, drawn at random, or written from an input's values is not known: its
products are counted in full, and said, as they are for scores added to or multiplied by what is
made of a boolean or integer input (`given`: BERT's `(1 - mask) * -10000`). A mask made in part of a
given one and in part of a known one (`bound`: Hugging Face's causal mask and padding mask) counts at
the share its known part keeps, where that part bounds what is kept: a bound above the work, said.
"""

from __future__ import annotations

from dataclasses import dataclass

from .regions import storage_key
from .shadows import Shadows

FILL_AT_MOST = -1e4  # a fill value this low or lower: softmax makes the filled scores zeros

VIEWS = ("view", "_unsafe_view", "reshape", "expand", "unsqueeze", "squeeze", "alias", "detach", "clone",
         "contiguous", "_to_copy", "to", "lift_fresh", "slice", "transpose", "t", "permute")
ONES = ("ones", "ones_like", "new_ones")
FULLS = ("full", "full_like", "new_full")  # of a number other than 0: as ones, for a mask
SCALINGS = ("mul", "div")  # by a number (or a tensor of one element): the scores' pattern kept
ZEROING = ("_softmax", "softmax", "_safe_softmax", "relu", "exp")  # -inf in, 0 out
ELEMENTWISE = ("tanh", "sigmoid", "gelu", "relu", "silu", "exp", "log", "neg", "abs", "sqrt", "rsqrt", "pow", "square",
               "sin", "cos", "erf", "clamp", "clamp_min", "clamp_max", "hardtanh", "softplus", "mul", "div", "add", "sub",
               "_to_copy", "to")  # each element of the result from its own alone (a soft cap, `tanh(s / 50) * 50`)
CARRIED = ("_to_copy", "to", "expand", "unsqueeze", "contiguous", "clone", "alias", "detach", "view", "reshape",
           "_unsafe_view")  # a bias plus a mask, moved or cast: its low places kept
LOW_BOUNDS = ("clamp", "clamp_min", "maximum")  # bounded below by a number: a fill at most FILL_AT_MOST stays one
MAX_PLACES = 1 << 24  # a fill's kept places held for a second fill at most (beyond: the lesser share, an upper bound)
BOTH = ("bitwise_and", "logical_and", "mul")  # of two masks (mul of booleans alone): true where both are
EITHER = ("bitwise_or", "logical_or")  # true where either is
AFTER_FILL = ("_softmax", "softmax", "_safe_softmax", "relu", "exp", "native_dropout", "dropout", "_to_copy", "clone",
              "contiguous", "mul", "div", "view", "_unsafe_view", "reshape", "expand", "alias", "detach")


@dataclass(frozen=True)
class Triangle:
    """A triangular pattern over a tensor's last two dimensions (rows i, columns j): `lower`, the
    triangle j <= i + diagonal (`tril`), else j >= i + diagonal (`triu`); `band`, where not None,
    the other side's bound too (j >= i + band for a lower one, j <= i + band for an upper one: a
    band, a sliding window, the `triu` of a `tril`); `inside`, whether the tensor is true (non-zero)
    inside it and false outside (else the reverse)."""

    lower: bool
    diagonal: int
    inside: bool = True
    band: int | None = None

    @staticmethod
    def between(lo: int | None, hi: int | None, inside: bool = True) -> "Triangle":
        """The pattern lo <= j - i <= hi (either bound None: none on that side)."""
        return Triangle(True, hi, inside, lo) if hi is not None else Triangle(False, lo, inside)

    def bounds(self) -> tuple[int | None, int | None]:
        """(lo, hi): the pattern is lo <= j - i <= hi, None where unbounded."""
        return (self.band, self.diagonal) if self.lower else (self.diagonal, self.band)

    def shifted(self, by: int) -> "Triangle":
        """The same pattern with j - i moved by `by` (rows sliced from -by, or columns from by)."""
        lo, hi = self.bounds()
        return Triangle.between(None if lo is None else lo + by, None if hi is None else hi + by, self.inside)

    def turned(self) -> "Triangle":
        """The pattern of the transpose: rows and columns swapped."""
        lo, hi = self.bounds()
        return Triangle.between(None if hi is None else -hi, None if lo is None else -lo, self.inside)

    def flipped(self) -> "Triangle":
        """The complement: true where this is false."""
        return Triangle(self.lower, self.diagonal, not self.inside, self.band)

    def as_inside(self) -> "Triangle | None":
        """The same pattern written true inside it: the complement of a one-sided triangle is the triangle
        on the other side of its diagonal; None for the complement of a band (two triangles)."""
        if self.inside:
            return self
        lo, hi = self.bounds()
        if lo is None:
            return Triangle.between(hi + 1, None)
        return Triangle.between(None, lo - 1) if hi is None else None

    @staticmethod
    def both(a: "Triangle", b: "Triangle") -> "Triangle | None":
        """The pattern true where `a` and `b` both are (`a & b`): two triangles or bands meet in a band;
        two complements leave the complement of their union, where that union is one band. None where the
        result is not one pattern (a band less a narrower one)."""
        x, y = a.as_inside(), b.as_inside()
        if x is not None and y is not None:
            (lx, hx), (ly, hy) = x.bounds(), y.bounds()
            lo = lx if ly is None else ly if lx is None else max(lx, ly)
            hi = hx if hy is None else hy if hx is None else min(hx, hy)
            return Triangle.between(lo, hi)
        if a.inside or b.inside:
            return None
        (lx, hx), (ly, hy) = a.bounds(), b.bounds()
        big = 1 << 62  # an unbounded side, for the overlap test alone
        if max(-big if lx is None else lx, -big if ly is None else ly) > \
                min(big if hx is None else hx, big if hy is None else hy) + 1:
            return None  # two bands apart: their union is not one band
        lo = None if lx is None or ly is None else min(lx, ly)
        hi = None if hx is None or hy is None else max(hx, hy)
        return None if lo is None and hi is None else Triangle.between(lo, hi, inside=False)

    @staticmethod
    def either(a: "Triangle", b: "Triangle") -> "Triangle | None":
        """The pattern true where `a` or `b` is (`a | b`): the complement of where neither is."""
        neither = Triangle.both(a.flipped(), b.flipped())
        return None if neither is None else neither.flipped()

    def within(self, rows: int, cols: int) -> int:
        """How many of rows x cols places lie inside the triangle (or band)."""
        lo, hi = self.bounds()
        total = 0
        for i in range(rows):  # at most a sequence's length of rows
            first = 0 if lo is None else max(i + lo, 0)
            last = cols - 1 if hi is None else min(i + hi, cols - 1)
            total += max(last - first + 1, 0)
        return total

    def places(self, rows: int, cols: int):
        """Where the tensor is true over rows x cols, as a CPU boolean tensor (for patterns combined
        place by place: a second fill, a mask made in part of an input)."""
        import torch

        lo, hi = self.bounds()
        d = torch.arange(cols)[None, :] - torch.arange(rows)[:, None]
        inside = torch.ones(rows, cols, dtype=torch.bool)
        if lo is not None:
            inside &= d >= lo
        if hi is not None:
            inside &= d <= hi
        return inside if self.inside else ~inside

    def true_share(self, rows: int, cols: int) -> float:
        """The share of rows x cols places where the tensor is true."""
        inside = self.within(rows, cols) / (rows * cols) if rows and cols else 0.0
        return inside if self.inside else 1.0 - inside


@dataclass
class Scores:
    """A product's result (or a view or scaling of it): the precision key and op name it was counted
    under, its FLOPs, the FLOPs a fill spares it (None: not filled), and whether its scores are also
    read whole by another op (a sum, a second product, an output), which then needs every one."""

    key: str
    op: str
    flops: float
    spared: float | None = None
    whole: bool = False
    said: str = ""  # what the fill was, for the work's source


class MaskTracker:
    """Follows triangular masks and products' scores through a forward's ops (module docstring).
    `note` is called for every op, `product` for every matrix product counted, with its FLOPs, and
    `finish` with the forward's outputs: the FLOPs to take back, by (precision key, op name); `seen`
    says what was found, for the work's source, and `warnings` what was filled through a mask it
    could not read (or where the reading stopped), for the user."""

    def __init__(self) -> None:
        self.masks: dict[int, Triangle] = {}
        self.scores: dict[int, Scores] = {}
        self.kept: dict[int, float] = {}  # filled scores and what follows them: the share of their entries not zero
        self.at_inf: dict[int, bool] = {}  # of those, whether the rest are still -inf (before softmax or exp)
        self.nonzero: dict[int, float] = {}  # tensors of ones (or of another number, not 0): what a mask is made of
        self.low: dict[int, float] = {}  # tensors full of one value at most FILL_AT_MOST: an additive mask's makings
        self.additive: dict[int, Triangle] = {}  # -inf (or as low) where the triangle is true, finite elsewhere
        self.shadows = Shadows()  # the values of what is made from numbers alone (`workload.shadows`)
        self.kept_where: dict[int, object] = {}  # filled scores: where kept (a CPU boolean tensor), where known
        self.origin: dict[int, Scores] = {}  # filled scores: the product that made them, for a second fill
        self._kept_cache: dict[tuple, object] = {}  # `_kept_places` by mask and shape
        self.bound: dict[int, tuple] = {}  # a mask made in part of a given one: (what its known part says, how it bounds)
        self.given: set[int] = set()  # inputs of boolean or integer type (an attention mask given), and what is made of them
        self.lowered: dict[int, object] = {}  # a bias not known plus a known additive mask: -inf where it fills, else 0
        self.removed: dict[tuple[str, str], float] = {}  # products of filled scores: the share they need not do
        self.seen: list[str] = []
        self.warnings: list[str] = []  # fills over scores through a mask not read
        self.failed: str | None = None  # the op the reading tripped on
        self._alive: list = []  # every tensor tracked, kept so that no id is reused while the forward runs
        self._storages: dict[int, int | None] = {}  # a mask's (or its makings') storage, for `_written`
        self._made: list[Scores] = []  # every product's scores, in order

    def _keep(self, table: dict, t, value) -> None:
        table[id(t)] = value
        self._alive.append(t)
        if any(table is x for x in (self.masks, self.additive, self.nonzero, self.low)):
            self._storages[id(t)] = storage_key(t)

    def _written(self, t) -> None:
        """Tensor `t` written in place (`mask[:, :256] = True`, `mask.tril_()`): every mask, and every
        tensor a mask is made of, whose storage it shares is no longer known."""
        key = storage_key(t)
        if key is None:
            return
        for i in [i for i, k in self._storages.items() if k == key]:
            for table in (self.masks, self.additive, self.nonzero, self.low):
                table.pop(i, None)
            del self._storages[i]

    def _warn(self, line: str) -> None:
        if line not in self.warnings:  # once, however many layers meet it
            self.warnings.append(line)

    def inputs(self, tensors: list) -> None:
        """The forward's inputs: those of boolean or integer type are masks given (`attention_mask`), whose
        values are the benchmark's to draw (never read for a share); scores added to or multiplied by what is
        made of them alone are said to count whole (`bound`: where a known mask is made with them)."""
        import torch

        for t in tensors:
            if isinstance(t, torch.Tensor) and (t.dtype == torch.bool or not t.dtype.is_floating_point):
                self.given.add(id(t))
                self._alive.append(t)

    def note(self, func, args: tuple, kwargs: dict, out) -> None:
        """One op's arguments and result (`func`: its `OpOverload`), before its FLOPs count. An op this
        reading trips on ends it: every product is then counted whole, and a warning says so."""
        self.shadows.note(func, args, kwargs, out)
        if self.failed is not None:
            return
        name = func._overloadpacket.__name__
        try:
            self._note(name, args, kwargs, out)
        except Exception as exc:  # noqa: BLE001 - a reading that fails counts every product whole, said
            self.failed = f"{name}: {type(exc).__name__}"  # `finish` then takes nothing back
            self._warn(f"reading its causal masks stopped at {self.failed}: every product counted whole")

    def _note(self, name: str, args: tuple, kwargs: dict, out) -> None:
        import torch

        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if any(id(t) in self.given or id(t) in self.bound for t in tensors) and isinstance(out, torch.Tensor):
            scored = [t for t in tensors if id(t) in self.scores or id(t) in self.kept]
            bounded = None if scored else self._bounded(name, args, tensors, out)
            if bounded is not None:
                self._keep(self.bound, out, bounded)
            elif id(out) in self.bound:  # written in place by what is not read: what bounded it no longer does
                del self.bound[id(out)]
            if scored and name in ("add", "sub", "mul", "add_", "sub_", "mul_", "baddbmm") \
                    and not any(id(t) in self.bound for t in tensors):
                self._warn(f"scores {'multiplied by' if name.startswith('mul') else 'added to'} a mask given as an "
                           "input (whatever get_inputs draws, its values are not read): their products counted whole")
            elif all(id(t) in self.given or self.shadows.get(t) is not None for t in tensors):
                self.given.add(id(out))  # a mask's arithmetic (`(1 - mask) * -10000`), not an embedding of token ids
                self._alive.append(out)
        combined = self._combined(name[:-1] if name.endswith("_") else name, tensors, out)  # before an in-place write
        if name.endswith("_") and tensors and tensors[0] is args[0]:
            t = args[0]
            made = name in ("tril_", "triu_") and id(t) not in self.masks and id(t) not in self.additive
            if not made and id(t) not in self.scores and id(t) not in self.kept:  # a mask's values changed
                self._written(t)
        if name.endswith("_") and not name.startswith("_") and tensors and out is args[0]:
            name = name[:-1]  # `att.masked_fill_(mask, -inf)`, `ones.tril_()`, `s.mul_(c)`: the result is the tensor itself
        if combined is not None:
            table, pattern = combined
            self._keep(table, out, pattern)
            if table is self.masks and out.dtype == torch.bool:
                self._keep(self.nonzero, out, 1.0)
            return
        if not isinstance(out, torch.Tensor):
            return
        first = tensors[0] if tensors else None
        value = args[-1] if name in FULLS and len(args) > 1 else None  # full(size, v), full_like(t, v), new_full(t, size, v)
        if name in ONES or (isinstance(value, (int, float)) and value != 0):
            self._keep(self.nonzero, out, 1.0 if name in ONES else float(value))
            if isinstance(value, (int, float)) and value <= FILL_AT_MOST:
                self._keep(self.low, out, float(value))
            return
        if first is not None and id(first) in self.nonzero and name in VIEWS and id(first) not in self.masks:  # ones cast
            self._keep(self.nonzero, out, 1.0 if out.dtype == torch.bool else self.nonzero[id(first)])
            if id(first) in self.low and out.dtype != torch.bool:
                self._keep(self.low, out, self.low[id(first)])
            return
        if name in ("tril", "triu") and first is not None and first.dim() >= 2 and (
                id(first) in self.masks or id(first) in self.additive or id(first) in self.nonzero):
            diagonal = int(args[1]) if len(args) > 1 else int(kwargs.get("diagonal", 0))
            if id(first) in self.masks or id(first) in self.additive:  # a triangle of a triangle: a band
                for table in (self.masks, self.additive):
                    had = table.get(id(first))
                    if had is not None and had.inside:  # of a complement: no band; not read
                        lo, hi = had.bounds()
                        if name == "tril":
                            hi = diagonal if hi is None else min(hi, diagonal)
                        else:
                            lo = diagonal if lo is None else max(lo, diagonal)
                        self._keep(table, out, Triangle.between(lo, hi))
            else:  # of ones (or of a number): a triangle; of a low number, an additive one too
                self._keep(self.masks, out, Triangle(name == "tril", diagonal))
                if id(first) in self.low:  # the low value kept inside the triangle, zeros outside
                    self._keep(self.additive, out, Triangle(name == "tril", diagonal))
            if id(out) in self.masks and self.nonzero.get(id(first)) == 1.0:
                self._keep(self.nonzero, out, 1.0)  # its values 0 and 1, for `== 1`
            return
        if name in ("masked_fill", "where"):
            self._filled(name, args, out)
            return
        if name == "index_put" and len(args) >= 3 and isinstance(args[1], (list, tuple)) and args[1]:
            index = list(args[1])  # `att[:, :, mask] = -inf`: a boolean mask over the last dimensions
            m = index[-1]
            if isinstance(m, torch.Tensor) and m.dtype == torch.bool and all(i is None for i in index[:-1]) \
                    and len(index) - 1 + m.dim() == args[0].dim():
                self._filled("masked_fill", (args[0], m, args[2]), out)
                return
            places = self._indexed(args[0], index)  # `s[:, :, rows, cols] = -inf` (`triu_indices`): places known
            if places is not None:
                self._filled("masked_fill", (args[0], places, args[2]), out)
                return
        if name == "add" and len(tensors) == 2 and kwargs.get("alpha", 1) == 1:  # scores + an additive mask
            a, b = tensors
            if id(b) in self.additive and (id(a) in self.scores or id(a) in self.kept):
                self._fill(name, a, self.additive[id(b)], True, b, out)
                return
            if id(a) in self.additive and (id(b) in self.scores or id(b) in self.kept):
                self._fill(name, b, self.additive[id(a)], True, a, out)
                return
            for s, m in ((a, b), (b, a)):  # an additive mask known by its values (`arange` compared, a prefix)
                if (id(s) in self.scores or id(s) in self.kept) and self._low_held(m):
                    self._fill(name, s, None, True, m, out, additive=True)
                    return
            if not any(id(t) in self.scores or id(t) in self.kept for t in tensors):
                for x, m in ((a, b), (b, a)):  # a bias not known plus a mask that is (T5's `position_bias + mask`):
                    if self._low_held(m) and self._values(x) is None and id(x) not in self.given \
                            and id(x) not in self.bound:  # low where the mask is (a given one may be lower: `bound`)
                        self._keep(self.lowered, out, self._values(m).masked_fill(self._values(m) > FILL_AT_MOST, 0.0))
                        return
        if name == "sub" and len(tensors) == 2 and (id(tensors[0]) in self.scores or id(tensors[0]) in self.kept):
            held = self._values(tensors[1])  # scores less a large number where masked (`w * b - 1e10 * (1 - b)`)
            if held is not None and held.dtype.is_floating_point and held.dim() >= 1:
                if self._low_held(-held):
                    self._fill(name, tensors[0], None, True, -held, out, additive=True)
                    return
        if id(tensors[0] if tensors else None) in self.lowered and name in CARRIED and out.dim() >= 2 \
                and tuple(out.shape[-2:]) == tuple(tensors[0].shape[-2:]):
            self._keep(self.lowered, out, self.lowered[id(tensors[0])])
        if first is None:
            return
        if name == "mul" and len(tensors) == 2 and out.dim() >= 2:  # probabilities times a 0/1 mask
            self._zeroed(tensors, out)
        if id(first) in self.masks or id(first) in self.additive:
            for table in (self.masks, self.additive):
                if id(first) in table:
                    mask = self._mask_through(name, args, first, out, table[id(first)], table is self.additive)
                    if mask is not None:
                        self._keep(table, out, mask)
            if id(out) in self.masks and out.dtype == torch.bool:  # a comparison, or a cast: true is 1
                self._keep(self.nonzero, out, 1.0)
            elif id(out) in self.masks and id(first) in self.nonzero and name in VIEWS:
                self._keep(self.nonzero, out, self.nonzero[id(first)])
            return
        if name in ("add", "sub") and len(tensors) == 2 and id(tensors[1]) in self.scores and id(first) not in self.scores:
            first = tensors[1]  # bias + scores: as scores + bias
            tensors = [tensors[1], tensors[0]]
        same_last = out.dim() >= 2 and first.dim() >= 2 and tuple(out.shape[-2:]) == tuple(first.shape[-2:])
        by_number = name in SCALINGS and (len(tensors) == 1 or all(t.numel() == 1 for t in tensors[1:]))
        same = tuple(out.shape) == tuple(first.shape)
        by_bias = name in ("add", "sub", "mul", "div") and len(tensors) == 2 and id(first) in self.scores and same \
            and not any(id(tensors[1]) in table for table in (self.scores, self.kept, self.additive))  # ALiBi, s * b
        by_element = name in ELEMENTWISE and len(tensors) == 1 and same  # a soft cap: tanh(s / c) * c
        passes = same_last and (name in VIEWS and name not in ("slice", "transpose", "t", "permute") or by_number
                                or by_bias or by_element)
        # its elements the same, arranged anew (einsum's views and permutes around its bmm): a fill of the result
        # spares the same share of the product, which takes its elements one for one
        passes = passes or (name in VIEWS and name not in ("slice", "expand") and out.numel() == first.numel())
        if id(first) in self.scores and passes:
            self._keep(self.scores, out, self.scores[id(first)])
        for t in tensors[1:] if passes else tensors:  # scores read by anything but a view, a scaling or a fill
            if id(t) in self.scores:
                self.scores[id(t)].whole = True
        if id(first) in self.kept and name in VIEWS and name not in ("slice", "expand") \
                and out.numel() == first.numel():  # the filled scores arranged anew: the same share kept
            self._keep(self.kept, out, self.kept[id(first)])
            self._keep(self.at_inf, out, self.at_inf.get(id(first), False))
            self._carry(first, out)
        elif id(first) in self.kept and same_last:
            by_row = len(tensors) > 1 and all(t.numel() == 1 or (t.dim() >= 1 and int(t.shape[-1]) == 1)
                                              for t in tensors[1:])  # a number per row: a softmax written out
            at_inf = self.at_inf.get(id(first), False)
            bound = args[1] if len(args) > 1 else kwargs.get("min")
            low = name in LOW_BOUNDS and at_inf and (self._number(bound) or 0.0) <= FILL_AT_MOST and bound is not None
            if (name in AFTER_FILL and (name not in SCALINGS or by_number or by_row)) or \
                    (name == "sub" and at_inf and by_row) or low:  # x - max(x), max(x, finfo.min): -inf stays low
                self._keep(self.kept, out, self.kept[id(first)])
                self._keep(self.at_inf, out, at_inf and name not in ZEROING)
                self._carry(first, out)

    def _bound_filled(self, mask, shape: tuple, additive: bool, filled_where_true: bool) -> float | None:
        """Of scores of `shape` filled through `mask`, made in part of a given mask (`bound`), the share
        its known part surely fills (the work then counted is a bound above the work: the given part may
        fill more); None where the known part bounds nothing (`known & given` filled where true). Said."""
        import torch

        kind, known = self.bound[id(mask)]
        if additive:
            surely = known if kind == "low" else None
        elif filled_where_true:
            surely = known if kind == "around" else None
        else:
            surely = ~known if kind == "within" else None
        try:
            if surely is None or torch.broadcast_shapes(tuple(surely.shape), shape) != shape:
                return None
        except RuntimeError:
            return None
        share = float(surely.double().mean())
        self._warn("scores filled through a mask made in part of one given as an input (a padding mask): counted at "
                   "the share its known part keeps, a bound above the work (the input's part may keep less)")
        return share

    def _places(self, t, low: bool = False):
        """The places where mask `t` is true (non-zero), or, `low`, at most FILL_AT_MOST, as a CPU boolean
        tensor of its shape: of a triangle (materialised) or of values made of numbers alone; or None."""
        table = self.additive if low else self.masks
        if id(t) in table and t.dim() >= 2 and int(t.shape[-2]) * int(t.shape[-1]) <= MAX_PLACES:
            return table[id(t)].places(int(t.shape[-2]), int(t.shape[-1]))
        held = self._values(t)
        if held is None:
            return None
        return _filling(held, low)

    def _bounded(self, name: str, args: tuple, tensors: list, out):
        """A mask made in part of a given one (an attention mask input, `self.given`) and in part of a known
        one: what the known part says of it, and how (`bound`): ("within", K) where it is true only where K
        is (`known & given`), ("around", K) where it is true wherever K is (`known | given`), ("low", K) where
        it is at most FILL_AT_MOST wherever K is (an additive mask plus a given one); else None."""
        import torch

        base = name[:-1] if name.endswith("_") and not name.startswith("_") else name
        flip = {"within": "around", "around": "within"}
        first = tensors[0] if tensors else None
        if base in BOTH + EITHER and len(tensors) == 2 and (base != "mul" or out.dtype == torch.bool):
            for k, u in (tensors, tensors[::-1]):
                known = self._places(k)
                if known is not None and id(u) not in self.bound:
                    return ("within" if base in BOTH else "around", known)
                had = self.bound.get(id(u))
                if known is not None and had is not None and had[0] == ("within" if base in BOTH else "around"):
                    return (had[0], known & had[1] if base in BOTH else known | had[1])
            return None
        if first is None or id(first) not in self.bound:
            if base == "add" and len(tensors) == 2:  # an additive known mask plus a given one: low wherever it is
                for k, u in (tensors, tensors[::-1]):
                    low = self._places(k, low=True)
                    if low is not None and (id(u) in self.given or self.bound.get(id(u), ("",))[0] == "low"):
                        return ("low", low | self.bound[id(u)][1] if id(u) in self.bound else low)
            if base == "masked_fill" and len(args) > 2 and id(args[1]) in self.bound:
                kind, known = self.bound[id(args[1])]
                value = self._number(args[2])
                if kind == "around" and value is not None and value <= FILL_AT_MOST:
                    return ("low", known)
            return None
        kind, known = self.bound[id(first)]
        if base in ("bitwise_not", "logical_not") and kind in flip:
            return (flip[kind], ~known)
        if base in ("eq", "ne") and len(args) > 1 and args[1] in (0, False) and kind in flip:
            return (flip[kind], ~known) if base == "eq" else (kind, known)
        if base in CARRIED and out.dim() >= 2 and tuple(out.shape[-2:]) == tuple(first.shape[-2:]):
            return (kind, known)
        if base == "where" and len(args) > 2 and kind in flip:
            a, b = self._number(args[1]), self._number(args[2])
            if a == 0 and b is not None and b <= FILL_AT_MOST and kind == "within":  # low where the mask is not
                return ("low", ~known)
            if b == 0 and a is not None and a <= FILL_AT_MOST and kind == "around":
                return ("low", known)
        return None

    def _zeroed(self, tensors: list, out) -> None:
        """`x * m` with `m` known to hold zeros (a 0/1 mask over probabilities, `softmax(s) * tril`): `out`
        is zero where `m` is, and the next product that takes it as its left operand need not multiply
        those places. Their share kept (of `x`'s kept share, where `x` was filled, at most)."""
        import torch

        for x, m in (tensors, tensors[::-1]):
            held = self.shadows.get(m)
            if held is None or held.dim() < 2 or id(x) in self.scores or self._values(x) is not None:
                continue  # of two known tensors (a bias made of positions), the product is known, not kept
            try:
                if torch.broadcast_shapes(tuple(held.shape), tuple(out.shape)) != tuple(out.shape):
                    continue
            except RuntimeError:
                continue
            kept = float((held != 0).double().mean())
            if kept < 1.0:
                self._keep(self.kept, out, min(kept, self.kept.get(id(x), 1.0)))
                self._keep(self.at_inf, out, False)
                return

    def _indexed(self, t, index: list):
        """The places of `t`'s last two dimensions an integer index over them names (`t[..., rows, cols]`,
        each index's values known), as a CPU boolean mask of them; None otherwise."""
        import torch

        if t.dim() < 2 or len(index) != t.dim() or any(i is not None for i in index[:-2]):
            return None
        held = [self.shadows.get(i) for i in index[-2:]]
        if any(h is None or h.dtype not in (torch.int64, torch.int32) for h in held):
            return None
        places = torch.zeros(tuple(t.shape[-2:]), dtype=torch.bool)
        places[held[0], held[1]] = True
        return places

    def _combined(self, name: str, tensors: list, out) -> tuple[dict, Triangle] | None:
        """Two masks of the same last two dimensions as `out` made one by op `name`: `&` (or `*` of
        booleans) and `|` of two masks, a sum of two additive ones (-inf where either is); the table
        `out` goes in and its pattern, or None (not such an op, or not one pattern)."""
        import torch

        if len(tensors) != 2 or not isinstance(out, torch.Tensor) or out.dim() < 2 \
                or any(t.dim() < 2 or tuple(t.shape[-2:]) != tuple(out.shape[-2:]) for t in tensors):
            return None
        a, b = (id(t) for t in tensors)
        if a in self.masks and b in self.masks and (name in EITHER or name in BOTH and (
                name != "mul" or out.dtype == torch.bool)):
            pattern = (Triangle.either if name in EITHER else Triangle.both)(self.masks[a], self.masks[b])
            return None if pattern is None else (self.masks, pattern)
        if name == "add" and a in self.additive and b in self.additive:
            pattern = Triangle.either(self.additive[a], self.additive[b])
            return None if pattern is None else (self.additive, pattern)
        return None

    def _mask_through(self, name: str, args: tuple, t, out, mask: Triangle, additive: bool) -> Triangle | None:
        """The triangle of `out`, made by op `name` from `t`, a mask (or an additive one) of triangle
        `mask`; None where it is no longer one."""
        compared = len(args) > 1 and isinstance(args[1], (int, float)) and name in ("eq", "ne")
        if compared and not additive and args[1] == 0:
            return mask if name == "ne" else mask.flipped()
        if compared and not additive and args[1] == 1 and self.nonzero.get(id(t)) == 1.0:  # of ones: true where 1
            return mask if name == "eq" else mask.flipped()
        if name in ("logical_not", "bitwise_not") and not additive:
            return mask.flipped()
        if name in ("eq", "ne", "logical_not", "bitwise_not"):
            return None
        if out.dim() < 2 or t.dim() < 2:
            return None
        if name == "slice":
            dim = int(args[1]) if len(args) > 1 else 0
            dim = dim % t.dim()
            start = int(args[2]) if len(args) > 2 and args[2] is not None else 0
            step = int(args[4]) if len(args) > 4 else 1
            if start < 0:  # from the end
                start = max(start + int(t.shape[dim]), 0)
            if step != 1:
                return None
            if dim == t.dim() - 2:  # rows from `start`: row i is the source's i + start
                return mask.shifted(start)
            if dim == t.dim() - 1:  # columns from `start`
                return mask.shifted(-start)
            return mask
        if name in ("transpose", "t"):
            dims = sorted(int(a) % t.dim() for a in args[1:3]) if name == "transpose" and len(args) > 2 else [0, 1]
            if dims == [t.dim() - 2, t.dim() - 1]:
                return mask.turned()
            return mask if t.dim() - 2 not in dims and t.dim() - 1 not in dims else None
        if name == "permute":
            last = [int(d) % t.dim() for d in args[1]][-2:] if len(args) > 1 else []
            if last == [t.dim() - 2, t.dim() - 1]:
                return mask
            return mask.turned() if last == [t.dim() - 1, t.dim() - 2] else None
        if name in VIEWS and tuple(out.shape[-2:]) == tuple(t.shape[-2:]):
            return mask
        return None

    def _filled(self, name: str, args: tuple, out) -> None:
        """`masked_fill(scores, mask, value)` or `where(mask, a, b)`: the scores a triangular mask fills
        with a value softmax makes zero; or, of a tensor that is no scores, an additive mask made."""
        import torch

        if name == "masked_fill":
            if len(args) < 3:
                return
            scores, mask, value = args[0], args[1], args[2]
            value = self._number(value)
            filled_where_true = True
        else:  # where(condition, a, b): a where the condition holds
            if len(args) < 3 or not isinstance(args[0], torch.Tensor):
                return
            mask, a, b = args
            low = [self._number(x) for x in (a, b)]
            if low[0] is not None and low[0] <= FILL_AT_MOST and low[1] == 0 and mask.dim() >= 2 \
                    and id(mask) in self.masks:  # where(mask, -inf, 0): an additive mask
                self._keep(self.additive, out, self.masks[id(mask)])
                return
            if low[1] is not None and low[1] <= FILL_AT_MOST and low[0] == 0 and mask.dim() >= 2 \
                    and id(mask) in self.masks:  # where(mask, 0, -inf)
                m = self.masks[id(mask)]
                self._keep(self.additive, out, m.flipped())
                return
            if low[0] is not None and low[0] <= FILL_AT_MOST and isinstance(b, torch.Tensor):
                scores, value, filled_where_true = b, low[0], True
            elif low[1] is not None and low[1] <= FILL_AT_MOST and isinstance(a, torch.Tensor):
                scores, value, filled_where_true = a, low[1], False
            else:
                self._unknown_value(name, mask, (a, b))
                return
        if not isinstance(scores, torch.Tensor) or not isinstance(mask, torch.Tensor) or scores.dim() < 2:
            return
        triangle = self.masks.get(id(mask))
        if value is None and name == "masked_fill":
            self._unknown_value(name, mask, (scores, args[2]))
        if id(scores) not in self.scores and id(scores) not in self.kept:  # a mask's makings, not scores
            if name == "masked_fill":
                self._additive_fill(scores, triangle, value, out)
            if id(out) not in self.additive and value is not None and value <= FILL_AT_MOST \
                    and self._values(scores) is None and mask.dim() >= 2:  # a bias low where masked (T5's, for SDPA)
                kept = self._kept_places(mask, triangle, mask, False, filled_where_true)
                if kept is not None:
                    self._keep(self.lowered, out, torch.zeros(kept.shape).masked_fill(~kept, float("-inf")))
            return
        self._fill(name, scores, triangle, filled_where_true, mask, out, value)

    def _unknown_value(self, name: str, mask, operands) -> None:
        """A fill of scores through a triangular mask with a one-element tensor whose value the meta
        device does not hold (one given as an input, or computed from values): said, its products counted
        whole."""
        import torch

        scores = [t for t in operands if isinstance(t, torch.Tensor) and (id(t) in self.scores or id(t) in self.kept)]
        values = [t for t in operands if isinstance(t, torch.Tensor) and t.numel() == 1 and self._number(t) is None]
        if (id(mask) in self.masks or self.shadows.get(mask) is not None) and scores and values:
            self._warn(f"scores filled by {name} through a causal mask with a value the meta device does not "
                                 "hold (a one-element tensor given as an input, or computed): their products counted whole "
                                 "(a Python number, torch.full or torch.finfo(dtype).min is read)")

    def _additive_fill(self, t, triangle: Triangle | None, value, out) -> None:
        """`masked_fill(t, mask, value)` of a tensor `t` that holds no scores: an additive mask made
        (a value at most FILL_AT_MOST through a triangular mask), or kept (a finite value over the
        other side of its triangle: the PyTorch tutorial's second fill, of 0.0); else none."""
        if triangle is None or value is None or t.dim() < 2:
            return
        if value <= FILL_AT_MOST:
            self._keep(self.additive, out, triangle)
            return
        had = self.additive.get(id(t))
        if had is not None and had == triangle.flipped():
            self._keep(self.additive, out, had)

    def _fill(self, name: str, scores, triangle: Triangle | None, filled_where_true: bool, mask, out,
              value: float | None = FILL_AT_MOST, additive: bool = False) -> None:
        """Scores (a product's, or filled scores) filled with `value` where `triangle` (of tensor `mask`;
        None: its values, where known) is true (or false, `filled_where_true` False), by op `name` into
        `out`: the share they keep. An `additive` mask fills where it is at most FILL_AT_MOST."""
        made, before = self.scores.get(id(scores)), self.kept.get(id(scores))
        rows, cols = (int(scores.shape[-2]), int(scores.shape[-1])) if scores.dim() >= 2 else (0, 0)
        aligned = mask.dim() >= 2 and tuple(mask.shape[-2:]) == tuple(scores.shape[-2:])
        true = triangle.true_share(rows, cols) if triangle is not None and aligned else \
            self._held_share(mask, tuple(scores.shape), additive) if triangle is None else None
        if true is None and triangle is None and id(mask) in self.bound:  # made in part of a given mask
            filled = self._bound_filled(mask, tuple(scores.shape), additive, filled_where_true)
            if filled is not None:
                true = filled if filled_where_true else 1.0 - filled
        if true is None and made is not None and value is not None and value <= FILL_AT_MOST:
            self._warn(f"scores filled with {_said(value)} by {name} through a mask not read (an input, "
                                 "drawn at random, or computed from either): their products counted whole (a causal "
                                 "mask is read as such from tril or triu, from values made of numbers alone, or from "
                                 "scaled_dot_product_attention's is_causal)")
        if true is None or (made is None and before is None) or value is None or value > FILL_AT_MOST:
            if before is not None:  # filled again by what is not read here: what was filled stays filled
                self._keep(self.kept, out, before)
                self._keep(self.at_inf, out, self.at_inf.get(id(scores), False))
            return
        kept = 1.0 - true if filled_where_true else true
        places = self._kept_places(mask, triangle, scores, additive, filled_where_true)
        if before is not None:  # scores filled twice: kept where both keep them (else at most the lesser share)
            both = _both(self.kept_where.get(id(scores)), places)
            kept = float(both.double().mean()) if both is not None else min(kept, before)
            places = both
        origin = made if made is not None else self.origin.get(id(scores))  # the product that made the scores
        if origin is not None and (origin.spared is None or before is not None):
            origin.spared = origin.flops * (1.0 - kept)
            how = ("a triangular mask" if triangle is not None else "a mask made of numbers alone, read from its values")
            how = f"an additive {how[2:]}" if additive or name in ("add", "baddbmm") else how
            again = ", after an earlier fill" if before is not None else ""
            origin.said = (f"an attention mask written out ({name} with {how} over {rows:,} x {cols:,} scores{again}): "
                           f"{kept:.3f} of its products counted")
        if made is not None and out is scores:  # filled in place: what reads it now reads filled scores
            del self.scores[id(scores)]
        self._keep(self.kept, out, kept)
        self._keep(self.at_inf, out, True)
        if origin is not None:
            self._keep(self.origin, out, origin)
        if places is not None:
            self._keep(self.kept_where, out, places)
        elif id(out) in self.kept_where:  # filled in place through what is not known
            del self.kept_where[id(out)]

    def _kept_places(self, mask, triangle: Triangle | None, scores, additive: bool, filled_where_true: bool):
        """Where a fill through `mask` (of `triangle`, or known by its values) keeps `scores`: a CPU boolean
        tensor broadcastable to them, for a second fill (`_both`); None where not known, or too large."""
        rows, cols = int(scores.shape[-2]), int(scores.shape[-1])
        key = (triangle, rows, cols) if triangle is not None else (id(mask), additive)
        key += (filled_where_true,)
        if key in self._kept_cache:  # each layer's fill through the same mask: one tensor, not one a layer
            return self._kept_cache[key]
        if triangle is not None:
            if rows * cols > MAX_PLACES:
                return None
            true = triangle.places(rows, cols)
        else:
            held = self._values(mask)
            if held is None or held.numel() > MAX_PLACES:
                return None
            true = _filling(held, additive)
            self._alive.append(mask)  # its id stays its own while the pattern is kept under it
        self._kept_cache[key] = ~true if filled_where_true else true
        return self._kept_cache[key]

    def _carry(self, first, out) -> None:
        """`out`, the filled scores `first` moved or transformed element for element, keeps where they were
        kept and the product that made them."""
        if tuple(out.shape) == tuple(first.shape):
            for table in (self.kept_where, self.origin):
                if id(first) in table:
                    self._keep(table, out, table[id(first)])

    def _held_share(self, mask, shape: tuple, additive: bool) -> float | None:
        """The share of the places of scores of `shape` that `mask`, broadcast over them, fills: where true (non-zero),
        or, `additive`, at most FILL_AT_MOST; from its values (`shadows`), None where not known."""
        import torch

        held = self._values(mask)
        if held is None or held.dim() < 1:
            return None
        try:
            if torch.broadcast_shapes(tuple(held.shape), shape) != shape:
                return None
        except RuntimeError:
            return None
        filled = _filling(held, additive)
        return float(filled.double().mean())  # each place of the mask stands for as many of the scores

    def _low_held(self, t) -> bool:
        """Whether tensor `t`'s values are known and some are at most FILL_AT_MOST (an additive mask)."""
        if self.bound.get(id(t), ("",))[0] == "low":  # a known additive mask plus a given one
            return bool(self.bound[id(t)][1].any())
        held = self._values(t)
        return held is not None and held.dtype.is_floating_point and held.dim() >= 1 \
            and bool((held <= FILL_AT_MOST).any())

    def _values(self, t):
        """What is known of tensor `t`'s values (a CPU tensor, broadcastable to it): its shadow, or, for a
        bias not known plus a mask, -inf where it fills; None where nothing is."""
        held = self.shadows.get(t)
        return held if held is not None else self.lowered.get(id(t))

    def _number(self, x) -> float | None:
        import torch

        if isinstance(x, (int, float)):
            return float(x)
        if not isinstance(x, torch.Tensor):
            return None
        held = self.shadows.get(x)  # `torch.full([], finfo.min)`, `torch.tensor(-1e4)` (a buffer), moved or cast
        if held is None or held.numel() != 1 or held.dtype == torch.bool:
            return None
        return float(held.item())

    def _remove(self, key: str, op: str, flops: float) -> None:
        self.removed[(key, op)] = self.removed.get((key, op), 0.0) + flops

    def finish(self, outputs) -> dict[tuple[str, str], float]:
        """The FLOPs to take back, by (precision key, op name), once the forward returned `outputs`
        (scores returned are needed whole): what fills spare the products whose scores nothing else
        reads whole, and the products of filled scores (`removed`)."""
        for t in outputs:
            if id(t) in self.scores:
                self.scores[id(t)].whole = True
        if self.failed is not None:
            return {}
        total = dict(self.removed)
        for made in self._made:
            if made.spared is not None and not made.whole:
                total[(made.key, made.op)] = total.get((made.key, made.op), 0.0) + made.spared
                self.seen.append(made.said)
            elif made.spared is not None:
                self.seen.append(f"{made.said}, but for the product that made the scores: they are also read whole "
                                 "by another op, which needs every one")
        return total

    def product(self, name: str, args: tuple, out, key: str, flops: float) -> float:
        """A matrix product `name` counted at `flops` under precision `key`: its result recorded as
        scores, and, where its left operand is filled scores, the share they do not keep entered in
        `removed`. Returns `flops`, to count as they are."""
        import torch

        if self.failed is not None:
            return flops

        left = next((a for a in args if isinstance(a, torch.Tensor) and a.dim() >= 2), None)
        if name in ("addmm", "baddbmm") and len(args) > 1 and isinstance(args[1], torch.Tensor):
            left = args[1]
        needed = flops * self.kept[id(left)] if left is not None and id(left) in self.kept else flops
        self._remove(key, name, flops - needed)  # taken back at the end, with the fills' (all undone if the reading fails)
        if isinstance(out, torch.Tensor) and out.dim() >= 2:
            self._made.append(Scores(key, name, needed))
            self._keep(self.scores, out, self._made[-1])
            added = args[0] if name == "baddbmm" and args and isinstance(args[0], torch.Tensor) else None
            if added is not None and id(added) in self.additive:  # baddbmm(mask, q, k^T): the scores made filled
                self._fill(name, out, self.additive[id(added)], True, added, out)
            elif added is not None and self._low_held(added):
                self._fill(name, out, None, True, added, out, additive=True)
        return flops

    def attention_share(self, mask, rows: int, cols: int) -> float | None:
        """The share of `rows` x `cols` scores that `scaled_dot_product_attention`'s `attn_mask` `mask`
        lets take part: a boolean mask (true: attends) or an additive one (-inf: does not), triangular
        or known by its values; None for a mask not read here (its products then count whole)."""
        import torch

        if self.failed is not None or not isinstance(mask, torch.Tensor) or mask.dim() < 2:
            return None
        if tuple(mask.shape[-2:]) == (rows, cols):
            if mask.dtype == torch.bool and id(mask) in self.masks:
                return self.masks[id(mask)].true_share(rows, cols)
            if mask.dtype != torch.bool and id(mask) in self.additive:
                return 1.0 - self.additive[id(mask)].true_share(rows, cols)
        shape = tuple(mask.shape[:-2]) + (rows, cols)
        filled = self._held_share(mask, shape, mask.dtype != torch.bool)
        if filled is None and id(mask) in self.bound:  # a bool mask true where it attends: filled where false
            filled = self._bound_filled(mask, shape, mask.dtype != torch.bool, False)
            if filled is not None:
                return 1.0 - filled
        if filled is None and id(mask) in self.given:
            self._warn("scaled_dot_product_attention's attn_mask made of a mask given as an input (whatever "
                       "get_inputs draws, its values are not read): its products counted whole")
        return None if filled is None else (1.0 - filled if mask.dtype != torch.bool else filled)


def _filling(held, additive: bool):
    """Where a mask of values `held` (a CPU tensor) fills the scores: where it is at most FILL_AT_MOST,
    `additive` (a boolean mask, additive or not: where true), else where it is not 0."""
    import torch

    return held <= FILL_AT_MOST if additive and held.dtype != torch.bool else held != 0


def _both(a, b):
    """Where two fills both keep scores (`a & b`, broadcast), or None where either is not known or the
    result is larger than MAX_PLACES."""
    import torch

    if a is None or b is None:
        return None
    try:
        shape = torch.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except RuntimeError:
        return None
    n = 1
    for d in shape:
        n *= d
    return a & b if n <= MAX_PLACES else None


def _said(value: float) -> str:
    """A fill value as a reader knows it: `torch.finfo(torch.bfloat16).min` rather than -3.38953e+38."""
    import torch

    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        if value == float(torch.finfo(dtype).min):  # -max too: the range is symmetric
            return f"torch.finfo({dtype}).min"
    return f"{value:g}"
