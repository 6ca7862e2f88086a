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
