"""The correctness gate: a kernel's output C against the reference C_ref (cuBLAS).

Before the checked launch C is filled with NaN (and beta = 0, so C is not read): an element the
kernel never writes stays NaN. The gate fails on any non-finite element of C (NaN: unwritten or
computed; inf: overflow), on a non-finite reference, and on a relative Frobenius error
||C - C_ref|| / ||C_ref|| above the tolerance. An all-zero reference has no relative error; the
absolute error ||C - C_ref|| is used instead (and said so). NaN never passes.

Works on NumPy arrays (tests, CI) and CuPy arrays (the GPU run): pass the array module as `xp`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy

TOLERANCE = 1e-4  # relative Frobenius error a kernel may have against cuBLAS (FP32, K up to ~1e5)
# Unit roundoff u of each input format (2^-p for p bits of significand, the implicit one included).
UNIT_ROUNDOFF = {"fp32": 2.0**-24, "tf32": 2.0**-11, "fp16": 2.0**-11, "bf16": 2.0**-8}
ACCUMULATION_FACTOR = 16  # headroom over the sqrt(K) growth of FP32 rounding errors


def tolerance_for(k: int, dtype: str) -> float:
    """The relative Frobenius error a kernel may have against cuBLAS on a problem with inner size
    `k` in input precision `dtype` (`model.precision.DTYPES`).

    FP32: TOLERANCE. Tensor-core precisions: the inputs are drawn exactly representable in the
    format (each element rounded to it, so the format's own unit roundoff, UNIT_ROUNDOFF, 2^-8 in
    BF16 and 2^-11 in FP16 and TF32, is spent before either side multiplies), and the product of
    two such elements is exact in FP32 (at most 2 x 11 significand bits). What two correct
    kernels still differ in is how the K products are summed in FP32: the order, the grouping
    inside the tensor core, truncating rather than rounding adders. Each of K additions rounds by
    at most u = 2^-24 of the partial sum, and for inputs of random sign those errors add like a
    random walk, so the relative error grows as sqrt(K) u; the limit is ACCUMULATION_FACTOR
    sqrt(K) u: 1.5e-5 at K = 248, 6.1e-5 at K = 4096, 8.6e-5 at K = 8192. An FP16 accumulator
    (u = 2^-11) misses it by two orders of magnitude, a skipped K tile or one wrong element of C
    by more."""
    if dtype == "fp32":
        return TOLERANCE
    return ACCUMULATION_FACTOR * k ** 0.5 * UNIT_ROUNDOFF["fp32"]


@dataclass(frozen=True)
class Verification:
    """The gate's findings. `rel_error` is None when C holds non-finite values (no error can be
    computed); `nan_or_unwritten_elements` counts NaN in C (the poison left where nothing was
    written, or a NaN computed), `inf_elements` infinities, `unwritten_rows` rows of C that are
    NaN from end to end. `reason` says why it failed (None when `passed`)."""

    passed: bool
    rel_error: float | None
    nan_or_unwritten_elements: int
    inf_elements: int = 0
    unwritten_rows: int = 0
    absolute: bool = False  # the reference was all zeros: `rel_error` is the absolute error
    reason: str | None = None


def verify(c, c_ref, xp=numpy, tolerance: float = TOLERANCE) -> Verification:
    """Check output `c` (M x N) against reference `c_ref` (same shape) with array module `xp`
    (numpy or cupy). Raises ValueError when the shapes differ."""
    if c.shape != c_ref.shape:
        raise ValueError(f"output shape {c.shape} differs from the reference's {c_ref.shape}")
    nan = xp.isnan(c)
    nans = int(xp.count_nonzero(nan))
    infs = int(xp.count_nonzero(xp.isinf(c)))
    rows = int(xp.count_nonzero(xp.all(nan, axis=1))) if c.ndim == 2 and c.size else 0
    if not bool(xp.all(xp.isfinite(c_ref))):
        return Verification(False, None, nans, infs, rows, reason="the reference holds non-finite values")
    if nans or infs:
        parts = [f"{nans:,} elements NaN or unwritten" if nans else "", f"{infs:,} infinite" if infs else "",
                 f"{rows:,} rows never written" if rows else ""]
        return Verification(False, None, nans, infs, rows, reason=", ".join(p for p in parts if p))
    diff = float(xp.linalg.norm((c - c_ref).ravel()))
    ref = float(xp.linalg.norm(c_ref.ravel()))
    absolute = ref == 0.0
    err = diff if absolute else diff / ref
    passed = err <= tolerance
    kind = "absolute error (the reference is all zeros)" if absolute else "relative error"
    return Verification(passed, err, 0, 0, 0, absolute,
                        None if passed else f"{kind} {err:.3g} above the limit {tolerance:g}")
