"""The CPU values of what a forward makes from numbers alone, kept beside the meta device
(`workload.shadows`): followed through views and in-place writes, and taken away where not known."""

import pytest

try:
    import torch
except ImportError:  # the tests below need PyTorch; CI's CPU install has none
    torch = None

pytestmark = pytest.mark.skipif(torch is None, reason="needs PyTorch")


def _run(body):
    """Run `body(meta)` under a dispatch mode feeding a `Shadows`; return it and what body returned."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from roofline.workload.shadows import Shadows

    shadows = Shadows()

    class Seen(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            shadows.note(func, args, kwargs or {}, out)
            return out

    with Seen():
        got = body(torch.device("meta"))
    return shadows, got


def test_values_follow_views_and_writes_through_them():
    def body(meta):
        m = torch.ones(4, 4, dtype=torch.bool, device=meta).tril()
        rows = m[1:]  # a view, taken before the write: it sees it
        m[:, :2] = True  # a prefix written in through a view
        i = torch.arange(4, device=meta)
        return m, rows, i[:, None] >= i[None, :]

    shadows, (m, rows, compared) = _run(body)
    want = torch.tensor([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(shadows.get(m), want) and torch.equal(shadows.get(rows), want[1:])
    assert torch.equal(shadows.get(compared), torch.ones(4, 4, dtype=torch.bool).tril())


def test_what_an_unknown_value_touches_is_not_known():
    def body(meta):
        x = torch.randn(4, 4, device=meta)  # drawn: no values
        m = torch.ones(4, 4, device=meta)
        view = m[:2]
        m.add_(x)  # written from what is not known: m and every view of it lose their values
        kept = torch.zeros(4, 4, device=meta)
        return x, m, view, kept, kept + x

    shadows, (x, m, view, kept, mixed) = _run(body)
    assert [shadows.get(t) is None for t in (x, m, view, mixed)] == [True] * 4
    assert torch.equal(shadows.get(kept), torch.zeros(4, 4))


def test_a_cpu_tensor_is_its_own_and_is_not_written_twice():
    def body(meta):
        c = torch.zeros(3)
        c.add_(1)
        return c, torch.full((2, 2), -1e4, device=meta).masked_fill(torch.eye(2, dtype=torch.bool, device=meta), 0.0)

    shadows, (c, filled) = _run(body)
    assert torch.equal(c, torch.ones(3)) and shadows.get(c) is c
    assert torch.equal(shadows.get(filled), torch.tensor([[0.0, -1e4], [-1e4, 0.0]]))


def test_no_shadow_past_the_size_limits(monkeypatch):
    from roofline.workload import shadows as module

    monkeypatch.setattr(module, "MAX_ELEMENTS", 15)
    shadows, (small, big) = _run(lambda meta: (torch.ones(3, 5, device=meta), torch.ones(4, 4, device=meta)))
    assert shadows.get(small) is not None and shadows.get(big) is None


def test_no_shadow_for_a_product_too_costly_for_the_cpu(monkeypatch):
    from roofline.workload import shadows as module

    monkeypatch.setattr(module, "MAX_PRODUCT", 8 * 8 * 8 - 1)
    shadows, (small, big) = _run(lambda meta: (torch.ones(4, 4, device=meta) @ torch.ones(4, 4, device=meta),
                                               torch.ones(8, 8, device=meta) @ torch.ones(8, 8, device=meta)))
    assert torch.equal(shadows.get(small), torch.full((4, 4), 4.0)) and shadows.get(big) is None
