"""The one-pass sums a check compares outputs by (`measure.sums`), against PyTorch's float64 on the
same tensors: every element type it reads, mixed types, NaN and infinity, non-contiguous and empty
tensors, and a comparison through `candidate._sums` that must match the chunked path it replaced.
Skipped without a GPU."""

import math

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device for PyTorch", allow_module_level=True)

from roofline.measure import candidate, sums  # noqa: E402


def _want(a, b):
    x, y = a.reshape(-1).to(torch.float64).cpu(), b.reshape(-1).to(torch.float64).cpu()
    fx, fy = torch.isfinite(x), torch.isfinite(y)
    both = fx & fy
    d = (x - y)[both]
    return (float((y[fy] ** 2).sum()), float((x[fx] ** 2).sum()), float((d ** 2).sum()),
            int((~fy).sum()), int((~fx).sum()))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64])
def test_each_type_sums_as_float64_does(dtype):
    g = torch.Generator(device="cuda").manual_seed(1)
    n = 3 * 256 * 2048 + 17  # more than one grid's stride, and a ragged end
    if dtype.is_floating_point:
        a = torch.randn(n, device="cuda", generator=g).to(dtype)
        b = (a.to(torch.float32) + 1e-3 * torch.randn(n, device="cuda", generator=g)).to(dtype)
    else:
        a = torch.randint(-1000, 1000, (n,), device="cuda", generator=g, dtype=dtype)
        b = a + torch.randint(-2, 3, (n,), device="cuda", generator=g, dtype=dtype)
    got, want = sums.sums(a, b), _want(a, b)
    for x, y in zip(got[:3], want[:3]):
        assert math.isclose(x, y, rel_tol=1e-12), (dtype, got, want)
    assert got[3:] == want[3:] == (0, 0)


def test_half_and_bfloat16_bits_are_widened_exactly():
    # every 16-bit pattern: subnormals, the largest finite, infinities and NaNs included
    bits = torch.arange(-32768, 32768, dtype=torch.int32, device="cuda").to(torch.int16)
    for dtype in (torch.float16, torch.bfloat16):
        x = bits.view(dtype)
        zero = torch.zeros_like(x)
        got, want = sums.sums(x, zero), _want(x, zero)
        assert math.isclose(got[1], want[1], rel_tol=1e-12) and got[4] == want[4] > 0, (dtype, got, want)


def test_non_finite_elements_are_counted_and_left_out_of_the_sums():
    a = torch.tensor([1.0, float("nan"), 3.0, float("inf"), 2.0], device="cuda")
    b = torch.tensor([1.0, 2.0, float("-inf"), 4.0, 2.5], device="cuda")
    assert sums.sums(a, b) == _want(a, b) == (1 + 4 + 16 + 6.25, 1 + 9 + 4, 0.25, 1, 2)


def test_mixed_types_non_contiguous_and_empty():
    a = torch.randn(300, 500, device="cuda")[:, ::3]  # a strided view
    b = a.to(torch.bfloat16).t().contiguous().t()  # another layout and type, the same values' order
    got, want = sums.sums(a, b), _want(a, b)
    assert all(math.isclose(x, y, rel_tol=1e-12) for x, y in zip(got[:3], want[:3])) and got[3:] == (0, 0)
    e = torch.empty(0, device="cuda")
    assert sums.sums(e, e) == (0.0, 0.0, 0.0, 0, 0)
    with pytest.raises(ValueError):
        sums.sums(torch.ones(3, device="cuda"), torch.ones(4, device="cuda"))


def test_supported_only_on_one_cuda_device_and_known_types():
    c = torch.ones(4, device="cuda")
    assert sums.supported(c, c)
    assert not sums.supported(c.cpu(), c.cpu())
    assert not sums.supported(c.to(torch.bool), c)
    assert not sums.supported(c.to(torch.complex64), c)


def test_the_check_reads_the_same_error_as_the_chunked_path():
    g = torch.Generator(device="cuda").manual_seed(2)
    want = torch.randn(1 << 22, device="cuda", generator=g)
    got = want + 3e-5 * torch.randn(1 << 22, device="cuda", generator=g)
    fast = candidate._sums(got, want)
    slow = candidate._sums(got.cpu(), want.cpu())  # the chunked PyTorch path
    assert fast[:2] == slow[:2] == (0, 0) and fast[4] == slow[4] == 1.0
    assert math.isclose(fast[2], slow[2], rel_tol=1e-12) and math.isclose(fast[3], slow[3], rel_tol=1e-12)
    result, _ = candidate._compare("output 0", got, want)
    assert result.passed and math.isclose(result.rel_error, 3e-5, rel_tol=0.01)
    # a reference of zeros: the difference itself, on both paths (FP32 squares neither overflow nor vanish
    # in float64, so the one pass stands); float64 values whose squares vanish are scaled on the chunked path
    zeros = torch.zeros(1000, device="cuda")
    for z in (zeros, zeros.double()):
        result, _ = candidate._compare("output 0", z + 1e-3, z)
        assert not result.passed and math.isclose(result.rel_error, 1e-3 * 1000 ** 0.5, rel_tol=1e-6)
    tiny = torch.full((1000,), 1e-170, dtype=torch.float64, device="cuda")
    result, _ = candidate._compare("output 0", tiny * (1 + 1e-6), tiny)
    assert result.passed and math.isclose(result.rel_error, 1e-6, rel_tol=1e-3)
