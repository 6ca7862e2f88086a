"""The ladder's registry, variants and tile search (no GPU needed)."""

import json

import pytest

from roofline import registry, tuning
from roofline.errors import UsageError


def test_ladder_order_and_launch_shapes():
    names = [k.name for k in registry.LADDER]
    assert names[:6] == ["naive", "gmem_coalescing", "smem_tiling", "register_tiling_1d", "register_strip",
                         "register_tiling_2d"]
    assert names[6:] == ["vectorized", "bank_conflict_free", "autotuned", "warptiling", "async_copy", "full_tiles"]
    wt = registry.BY_NAME["warptiling"]
    assert wt.threads_per_block == (128 // 16) * (128 // 64) * 32 == 512
    assert wt.grid(4097, 1000) == (8, 33, 1)
    ac = registry.BY_NAME["async_copy"]
    assert ac.dynamic_smem_bytes == 3 * 16 * (128 + 4 + 256) * 4 == 74_496
    assert ac.threads_per_block == (128 // 32) * (256 // 128) * 32 == 256
    ft = registry.BY_NAME["full_tiles"]
    assert ft.params == ac.params and ft.min_cc == ac.min_cc == (8, 0)
    assert ft.model == ac.model  # the same tiles, the same traffic


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
    ft = registry.variant("full_tiles<128,128,16,32,64,8,8,2>")
    assert ft.dynamic_smem_bytes == 2 * 16 * 260 * 4 and ft.min_cc == (8, 0)
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


def fake_output(specs, times_ms):
    """A runner.RunOutput-shaped object for CPU tests of what consumes runs."""
    from roofline.device import from_preset
    from roofline.model import floors
    from roofline.runner import KernelResult, Problem, RunOutput
    from roofline.timing import Timing

    problem = Problem(256, 256, 256)
    dev = from_preset("h200")
    kernels = []
    for spec, t in zip(specs, times_ms):
        fig = spec.model.figures(256, 256, 256)
        kernels.append(KernelResult(spec=spec, model=fig, floors=floors(fig, 66_908.0, 4800.0),
                                    verified=t is not None, rel_error=0.0 if t else None, unwritten=0,
                                    registers=64, static_smem_bytes=8192, local_bytes=0, occupancy=None,
                                    driver_blocks_per_sm=None, timing=Timing((t,) * 20, 3) if t else None,
                                    sm_clock_mhz=(1980, 1980), error=None if t else "failed verification"))
    return RunOutput(device=dev, problem=problem, reference=Timing((0.01,) * 20, 3),
                     reference_clock_mhz=(1980, 1980), kernels=kernels)


def test_tune_search_picks_the_fastest_verified_tile(monkeypatch):
    from roofline import runner

    cands = tuning.candidates()
    times = [None] + [0.02 + 0.001 * i for i in range(len(cands) - 1)]  # the first fails, the second wins
    monkeypatch.setattr(runner, "run", lambda specs, problem, device, progress: fake_output(specs, times))
    doc = tuning.search(runner.Problem(256, 256, 256), None)
    assert doc["tune"]["winner"] == cands[1] and doc["tune"]["verified"] == len(cands) - 1
    assert doc["tune"]["expression"] == registry.autotuned_spec(cands[1]).name_expression
    assert doc["kernels"][1]["name"] == doc["tune"]["expression"]
    monkeypatch.setattr(runner, "run", lambda specs, problem, device, progress: fake_output(specs, [None] * len(specs)))
    with pytest.raises(Exception, match="no candidate tile compiled and verified"):
        tuning.search(runner.Problem(256, 256, 256), None)


def test_profile_attach_fills_measured_and_stops_cleanly(monkeypatch):
    from roofline import profile, results

    specs = [registry.BY_NAME["smem_tiling"], registry.BY_NAME["register_tiling_2d"]]
    out = fake_output(specs, [1.0, None])
    doc = results.build(out)
    monkeypatch.setattr(profile, "profile", lambda spec, m, n, k: {"dram_bytes": 1000, "l2_bytes": 2000})
    assert profile.attach(doc, out) == []
    assert doc["kernels"][0]["measured"] == {"dram_bytes": 1000, "l2_bytes": 2000}
    assert "measured" not in doc["kernels"][1]  # failed kernels are not profiled

    def unavailable(spec, m, n, k):
        raise profile.ProfileUnavailable("ncu is not on PATH")

    monkeypatch.setattr(profile, "profile", unavailable)
    notes = profile.attach(results.build(out), out)
    assert notes == ["no hardware counters: ncu is not on PATH; the rest of the run is kept"]


def test_kernels_know_their_minimum_architecture():
    for name in registry.PIPELINED:
        assert not registry.BY_NAME[name].runs_on("7.5")
    ac = registry.BY_NAME["async_copy"]
    assert not ac.runs_on("7.5") and ac.runs_on("8.0") and ac.runs_on("12.0")
    assert registry.BY_NAME["warptiling"].runs_on("7.0")
    assert tuning.tuned_params("H200") == tuning.BUILTIN["NVIDIA H200"]  # preset and NVML names agree
