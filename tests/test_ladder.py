"""The ladder's registry, variants and tile search (no GPU needed)."""

import json

import pytest

from roofline import registry, tuning
from roofline.errors import UsageError


def test_ladder_order_and_launch_shapes():
    names = [k.name for k in registry.LADDER]
    assert names[:6] == ["naive", "gmem_coalescing", "smem_tiling", "register_tiling_1d", "register_strip",
                         "register_tiling_2d"]
    assert names[6:] == ["vectorized", "bank_conflict_free", "autotuned", "warptiling", "async_copy"]
    wt = registry.BY_NAME["warptiling"]
    assert wt.threads_per_block == (128 // 16) * (128 // 64) * 32 == 512
    assert wt.grid(4097, 1000) == (8, 33, 1)
    ac = registry.BY_NAME["async_copy"]
    assert ac.dynamic_smem_bytes == 3 * 8 * (128 + 4 + 256) * 4 == 37_248
    assert ac.threads_per_block == (128 // 32) * (256 // 128) * 32 == 256


def test_every_kernel_source_is_self_contained():
    for spec in registry.LADDER:
        text = registry.source(spec)
        assert '#include "' not in text and "#pragma once" not in text
        assert f"{spec.template or spec.name}(" in text
    # autotuned pulls in bank_conflict_free, which pulls in common.cuh: each exactly once.
    text = registry.source(registry.BY_NAME["autotuned"])
    assert text.count("void store_result(") == 1 and text.count("void bank_conflict_free_tile(") == 1


def test_variants():
    v = registry.variant("async_copy<128,128,8,32,64,8,8,4>")
    assert v.params["STAGES"] == 4 and v.dynamic_smem_bytes == 4 * 8 * 260 * 4
    assert v.name_expression == "async_copy<128,128,8,32,64,8,8,4>"
    assert registry.variant("autotuned<64,128,16,4,8>").threads_per_block == 256
    with pytest.raises(UsageError, match="takes 7 positive parameters"):
        registry.variant("warptiling<128,128,8>")
    with pytest.raises(UsageError, match="cannot read 'naive<32>'"):
        registry.variant("naive<32>")


def test_tile_candidates_are_valid():
    cands = tuning.candidates()
    assert tuning.DEFAULT in cands and len(cands) > 20
    for p in cands:
        threads = p["BM"] * p["BN"] // (p["TM"] * p["TN"])
        assert 64 <= threads <= 1024
        assert (p["BM"] * p["BK"] // 4) % threads == 0 and (p["BK"] * p["BN"] // 4) % threads == 0
        assert (p["BK"] * (p["BM"] + 4) + p["BK"] * p["BN"]) * 4 <= 48 * 1024
    assert any(p["BM"] != p["BN"] for p in cands)  # rectangles are searched too


def test_tuned_params_come_from_the_cache_then_builtin_then_default(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tuning.tuned_params("Some GPU") == tuning.DEFAULT
    winner = {"BM": 128, "BN": 64, "BK": 16, "TM": 8, "TN": 4}
    assert winner in tuning.candidates()
    path = tuning.remember("Some GPU", winner, 30_000.0, 4096)
    assert json.loads(path.read_text())["Some GPU"]["params"] == winner
    assert tuning.tuned_params("Some GPU") == winner
    assert registry.select(["autotuned"], "Some GPU")[0].params == winner
    assert registry.select(["autotuned"], "Other GPU")[0].params == tuning.BUILTIN.get("Other GPU", tuning.DEFAULT)
    # A cache entry that is not a valid tile is ignored, never compiled.
    path.write_text(json.dumps({"Some GPU": {"params": {"BM": 3}}}))
    assert tuning.tuned_params("Some GPU") == tuning.DEFAULT
    path.write_text("not json")
    assert tuning.tuned_params("Some GPU") == tuning.DEFAULT
