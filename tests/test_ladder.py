"""Kernel families, variants, the tile each run uses and where it came from (no GPU needed)."""

import json

import re

from pathlib import Path

import pytest

from roofline.errors import UsageError
from roofline.ladder import families, tiles
from roofline.ladder.families import BY_NAME, from_expression, variant
from roofline.ladder.sources import source
from roofline.model.problem import Problem

LADDER = ["naive", "gmem_coalescing", "smem_tiling", "register_tiling_1d", "register_strip", "register_tiling_2d",
          "vectorized", "bank_conflict_free", "autotuned", "warptiling", "async_copy", "full_tiles", "tile_by_shape",
          "split_k"]


TENSOR_LADDER = ["mma_sync", "mma_ldmatrix", "mma_pipeline", "wgmma_tma", "wgmma_ws", "wgmma_persistent",
                 "wgmma_by_shape"]


def test_ladder_order():
    assert [f.name for f in families.LADDER] == LADDER
    assert [f.name for f in families.TENSOR_LADDER] == TENSOR_LADDER
    assert families.names() == LADDER + TENSOR_LADDER + ["cublas"]


@pytest.mark.parametrize("name, threads, block, grid_4097x1000", [
    # naive: a 32x32 block per 32x32 tile of C, x along the rows.
    ("naive", 1024, (32, 32, 1), (129, 32, 1)),
    ("smem_tiling", 1024, (1024, 1, 1), (129, 32, 1)),
    # 64x64 tiles, a column of 8 results per thread: 64*64/8 threads; x along the columns of C.
    ("register_tiling_1d", 512, (512, 1, 1), (16, 65, 1)),
    ("register_tiling_2d", 256, (256, 1, 1), (8, 33, 1)),
    # 128x128 block of 16x64 warp tiles, 4x8 per thread: 8 x 2 warps.
    ("warptiling", 512, (512, 1, 1), (8, 33, 1)),
    # 128x256 block of 32x128 warp tiles: 4 x 2 warps.
    ("async_copy", 256, (256, 1, 1), (4, 33, 1)),
])
def test_launch_shapes(name, threads, block, grid_4097x1000):
    spec = BY_NAME[name].spec()
    assert spec.threads_per_block == threads and spec.block == block
    assert spec.grid(Problem(4097, 1000, 64)) == grid_4097x1000


def test_pipelined_kernels_need_sm80_and_take_dynamic_shared_memory():
    for name in ("async_copy", "full_tiles"):
        fam = BY_NAME[name]
        assert not fam.runs_on("7.5") and fam.runs_on("8.0") and fam.runs_on("12.0")
        assert fam.unavailable_reason("sm_75") == f"{name} needs sm_80 or newer; not run on sm_75"
    assert BY_NAME["full_tiles"].spec().smem_expression == "full_tiles_smem_bytes<128,256,16,32,128,8,16,3>"
    assert BY_NAME["warptiling"].spec().smem_expression is None and BY_NAME["warptiling"].runs_on("7.0")


def test_every_kernel_source_is_self_contained():
    for fam in families.LADDER:
        text = source(fam.source_file)
        assert '#include "' not in text and "#pragma once" not in text
        assert f"{fam.template_name}(" in text
    # autotuned pulls in bank_conflict_free, which pulls in common.cuh: each exactly once.
    text = source(BY_NAME["autotuned"].source_file)
    assert text.count("void store_result(") == 1 and text.count("void bank_conflict_free_tile(") == 1


def test_variants_and_expressions():
    v = variant("async_copy<128,128,8,32,64,8,8,4>")
    assert v.params == {"BM": 128, "BN": 128, "BK": 8, "WM": 32, "WN": 64, "TM": 8, "TN": 8, "STAGES": 4}
    assert v.name_expression == "async_copy<128,128,8,32,64,8,8,4>" and v.tile_source == "variant"
    assert variant("autotuned<64,128,16,4,8>").threads_per_block == 64 * 128 // 32
    with pytest.raises(UsageError, match=r"warptiling takes 7 positive parameters \(BM, BN, BK, WM, WN, TM, TN\)"):
        variant("warptiling<128,128,8>")
    with pytest.raises(UsageError, match="cannot read 'naive<32>'"):
        variant("naive<32>")  # the first steps offer no other tiles...
    assert from_expression("naive<16>").block == (16, 16, 1)  # ...but every kernel has an expression
    # a negative parameter is read and refused as such, not as an expression that cannot be read
    with pytest.raises(UsageError, match=r"split_k takes 10 positive parameters"):
        from_expression("split_k<128,256,16,32,128,8,16,3,4,-4>")


def test_the_profiled_launch_carries_the_tile_it_was_given(tmp_path):
    import sys
    from pathlib import Path

    from roofline.measure.counters import launch_command

    spec = variant("warptiling<64,64,8,32,32,4,8>")
    cmd = launch_command(spec, Problem(1024, 512, 256), tmp_path)
    assert cmd[:3] == [sys.executable, "-m", "roofline.measure.counters"] and cmd[3] == "--request"
    request = json.loads(Path(cmd[4]).read_text())
    assert (request["kernel"], request["problem"], request["pci_bus_id"]) == (
        "warptiling<64,64,8,32,32,4,8>", [1024, 512, 256, "fp32"], None)
    assert from_expression(request["kernel"]).params == spec.params != BY_NAME["warptiling"].ladder
    tensor = BY_NAME["wgmma_ws"].spec(dtype="tf32")
    cmd = launch_command(tensor, Problem(1024, 512, 256, "tf32"), tmp_path, "0000:01:00.0")
    request = json.loads(Path(cmd[4]).read_text())
    assert (request["kernel"], request["problem"], request["pci_bus_id"]) == (
        "wgmma_ws<tf32,256,32,4,8>", [1024, 512, 256, "tf32"], "0000:01:00.0")
    assert from_expression(request["kernel"]) == tensor.family.spec(tensor.params, "variant", "tf32")


def test_tile_resolution_order(private_cache):
    h200 = {"BM": 128, "BN": 128, "BK": 16, "TM": 4, "TN": 8}
    assert tiles.resolve("Some GPU").params == BY_NAME["autotuned"].ladder
    assert tiles.resolve("Some GPU").tile_source == "default"
    assert tiles.resolve(None).tile_source == "default"
    # The built-in winner, matched as --gpu names are: NVML's 'NVIDIA H200' and the preset's 'H200'.
    for name in ("NVIDIA H200", "H200", "h200"):
        spec = tiles.resolve(name)
        assert (spec.params, spec.tile_source) == (h200, "built-in")
    # A tuned winner beats the built-in one, whatever spelling stored it.
    winner = {"BM": 128, "BN": 64, "BK": 16, "TM": 8, "TN": 4}
    path = tiles.remember("NVIDIA H200", winner, 30_000.0, 4096)
    assert path.parent == private_cache / "roofline"
    assert json.loads(path.read_text())["NVIDIA H200"]["params"] == winner
    assert (tiles.resolve("H200").params, tiles.resolve("H200").tile_source) == (winner, "tuned")
    # A flag beats both.
    flag = tiles.resolve("H200", "64x64x16x4x4")
    assert (flag.params, flag.tile_source) == ({"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4}, "flag")
    # A cache entry that is not a tile is ignored.
    path.write_text(json.dumps({"NVIDIA H200": {"params": {"BM": 3}}}))
    assert tiles.resolve("H200").tile_source == "built-in"
    path.write_text("not json")
    assert tiles.resolve("H200").tile_source == "built-in"


@pytest.mark.parametrize("text", ["128,128", "a,b,c,d,e", "128,128,16,4,0", ""])
def test_bad_tile_flags(text):
    with pytest.raises(UsageError, match="^autotuned_tile takes 5 positive integers BM,BN,BK,TM,TN"):
        tiles.parse_tile(text)


@pytest.mark.parametrize("text, rule", [
    ("48,48,8,3,3", "tiles must be whole float4s (TM, TN and BK multiples of 4)"),
    ("1024,1024,64,8,8", "a block holds 32 to 1024 threads, and BM*BN/(TM*TN) is 16,384"),
    # 64 x 64 / (4 x 4) = 256 threads; A's tile is 64 x 8 = 128 float4s: half the threads would load none
    ("64,64,8,4,4", "every thread loads whole float4s of A: BM*BK/4 = 128 is not a multiple of the 256 threads"),
    ("128,128,64,4,4", "its shared tiles, 4*BK*(BM+4+BN) = 66,560 bytes, are over the 49,152 a block may hold statically"),
])
def test_a_flag_tile_the_kernel_cannot_build_is_refused_with_its_rule(text, rule):
    with pytest.raises(UsageError, match=re.escape(f"autotuned_tile {text}: {rule}")):
        tiles.resolve(None, text)


def test_the_kernels_rules_leave_as_many_tiles_of_the_search_as_compiled_on_the_h200():
    # plots/tune-h200.json: 46 of the 108 candidates compiled (NVRTC, sm_90); the rules refuse the other 62
    committed = json.loads((Path(__file__).resolve().parent.parent / "plots" / "tune-h200.json").read_text())["tune"]
    kept = [c for c in tiles.candidates() if tiles._broken_rule(c) is None]
    assert (len(tiles.candidates()), len(kept)) == (committed["candidates"], committed["valid"]) == (108, 46)
    assert committed["winner"] in kept


def test_select_puts_the_resolved_autotuned_in_its_place():
    tuned = tiles.resolve(None, "64,64,16,4,4")
    chosen = families.select(["full_tiles", "autotuned", "cublas"], tuned)
    assert [s.name for s in chosen] == ["autotuned", "full_tiles"]
    assert chosen[0] is tuned
    with pytest.raises(UsageError, match="unknown kernel 'foo'; valid: naive, gmem_coalescing"):
        families.select(["foo"])


def test_the_search_grid():
    cands = tiles.candidates()
    assert len(cands) == 3 * 3 * 3 * 2 * 2 == 108
    assert cands[0] == {"BM": 64, "BN": 64, "BK": 8, "TM": 4, "TN": 4}  # square block tiles first
    assert BY_NAME["autotuned"].ladder in cands
