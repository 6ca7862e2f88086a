"""The correctness gate with NumPy (the GPU run passes CuPy arrays to the same function)."""

import numpy as np
import pytest

from roofline.model.verify import TOLERANCE, verify

RNG = np.random.default_rng(7)
REF = RNG.standard_normal((300, 200)).astype(np.float32)


def test_the_reference_itself_passes_with_zero_error():
    v = verify(REF.copy(), REF)
    assert v.passed and v.rel_error == 0 and v.reason is None


def test_a_small_relative_error_passes_and_a_larger_one_fails():
    assert verify(REF * np.float32(1 + 1e-5), REF).passed
    v = verify(REF * np.float32(1 + 1e-3), REF)
    assert not v.passed and v.rel_error == pytest.approx(1e-3, rel=1e-2) and v.rel_error > TOLERANCE
    assert v.reason == f"relative error {v.rel_error:.3g} above the limit 0.0001"


def test_one_nan_fails_and_is_counted():
    c = REF.copy()
    c[7, 9] = np.nan
    v = verify(c, REF)
    assert not v.passed and v.rel_error is None
    assert (v.nan_or_unwritten_elements, v.unwritten_rows) == (1, 0)
    assert v.reason == "1 elements NaN or unwritten"


def test_rows_left_at_the_nan_poison_are_unwritten():
    c = np.full_like(REF, np.nan)
    c[:100] = REF[:100]
    v = verify(c, REF)
    assert (v.nan_or_unwritten_elements, v.unwritten_rows) == (200 * 200, 200)
    assert v.reason == "40,000 elements NaN or unwritten, 200 rows never written"


def test_infinity_fails():
    c = REF.copy()
    c[0, 0] = np.inf
    v = verify(c, REF)
    assert not v.passed and v.inf_elements == 1 and v.reason == "1 infinite"


def test_an_all_zero_reference_uses_the_absolute_error():
    zero = np.zeros((4, 5), np.float32)
    assert verify(zero.copy(), zero).passed
    off = zero.copy()
    off[1, 1] = 0.5
    v = verify(off, zero)
    assert not v.passed and v.absolute and v.rel_error == 0.5
    assert v.reason == "absolute error (the reference is all zeros) 0.5 above the limit 0.0001"


def test_a_non_finite_reference_never_passes():
    ref = REF.copy()
    ref[3, 3] = np.nan
    v = verify(REF.copy(), ref)
    assert not v.passed and v.reason == "the reference holds non-finite values"


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="differs"):
        verify(REF[:10], REF)
