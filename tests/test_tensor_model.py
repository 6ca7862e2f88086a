"""The tensor-core ladder without a GPU: its problems, traffic model, tolerance, dispatch and
kernel names, each figure worked by hand."""

import pytest

from roofline.errors import UsageError
from roofline.ladder import families
from roofline.ladder.dispatch import choose_wgmma
from roofline.ladder.families import BY_NAME, from_expression
from roofline.model.problem import Problem
from roofline.model.verify import tolerance_for

N = 4096
MNK = N ** 3  # 68,719,476,736 multiply-adds


def test_problems_carry_their_precision():
    p = Problem(N, N, N, "bf16")
    assert (p.element_bytes, p.tensor, p.precision_key) == (2, True, "bf16_tensor")
    assert Problem(N, N, N, "tf32").precision_key == "tf32_tensor" and Problem(N, N, N).precision_key == "fp32"
    # A and B at 2 bytes, C at 4: 2 * 2 * 4096^2 + 4 * 4096^2 = 134,217,728 bytes.
    assert p.working_set_bytes == 134_217_728
    assert p.text() == "4096x4096x4096 bf16"
    with pytest.raises(UsageError, match="K must be a multiple of 8 in BF16"):
        Problem(64, 64, 100, "bf16").validate()  # 200-byte rows
    with pytest.raises(UsageError, match="K must be a multiple of 4 in TF32"):
        Problem(64, 64, 102, "tf32").validate()
    Problem(511, 383, 248, "bf16").validate()
    Problem(64, 64, 100, "tf32").validate()  # 400 bytes: fine in TF32
    with pytest.raises(UsageError, match="^dtype takes"):
        Problem(64, 64, 64, "int8").validate()


@pytest.mark.parametrize("name, dtype, gmem_gb, ai, smem_gb", [
    # mma_sync: 128 x 128 blocks read A and B 4096/128 = 32 times each: 2 * 32 * 4096^2 elements
    # of 2 bytes = 2.147 GB, AI 2 * 4096^3 / 2.147e9 = 64. Warp tiles 64 x 32 read K (1/64 + 1/32)
    # per result, and the tiles are stored once: 2 B * 4096^3 * (1/64 + 1/32 + 2/128) = 8.590 GB.
    ("mma_sync", "bf16", 2.147483648, 64.0, 8.589934592),
    # TF32: the same accesses at 4 bytes, half the intensity.
    ("mma_sync", "tf32", 4.294967296, 32.0, 17.179869184),
    # mma_pipeline: 128 x 256 blocks, 64 x 64 warp tiles: GMEM 2 B * 4096^3 * (1/128 + 1/256) = 1.611 GB
    # (AI 85.3); SMEM 2 B * 4096^3 * (1/64 + 1/64 + 1/128 + 1/256) = 5.906 GB.
    ("mma_pipeline", "bf16", 1.610612736, 85.333, 5.905580032),
    # wgmma_tma: 128 x 256 blocks as two warpgroups of 64 x 256, the tile wgmma_ws has: the same
    # GMEM (1.611 GB, AI 85.3) and SMEM: each warpgroup reads (1/256 + 1/64) per result and the TMA
    # writes the block's tiles once (1/256 + 1/128): 2 B * 4096^3 / 32 = 4.295 GB.
    ("wgmma_tma", "bf16", 1.610612736, 85.333, 4.294967296),
    # wgmma_ws: 128 x 256 blocks, 64 x 256 per consumer: GMEM 1.611 GB, SMEM 4.295 GB.
    ("wgmma_ws", "bf16", 1.610612736, 85.333, 4.294967296),
])
def test_the_tensor_rungs_traffic_by_hand(name, dtype, gmem_gb, ai, smem_gb):
    f = BY_NAME[name].spec(dtype=dtype).figures(Problem(N, N, N, dtype))
    assert f.flops == 2 * MNK
    assert f.gmem_bytes / 1e9 == pytest.approx(gmem_gb)
    assert f.arithmetic_intensity == pytest.approx(ai, rel=1e-4)
    assert f.smem_served_bytes / 1e9 == pytest.approx(smem_gb)


def test_tensor_tolerance_grows_with_the_square_root_of_k():
    # 16 * sqrt(4096) * 2^-24 = 16 * 64 / 16,777,216 = 6.10e-5; four times K, twice the limit.
    assert tolerance_for(4096, "bf16") == pytest.approx(6.1035e-5, rel=1e-4)
    assert tolerance_for(16384, "tf32") == pytest.approx(2 * tolerance_for(4096, "tf32"))
    assert tolerance_for(4096, "fp32") == 1e-4  # the FP32 ladder's gate is unchanged


def test_names_and_tiles_follow_the_precision():
    ws = BY_NAME["wgmma_ws"]
    assert ws.spec(dtype="bf16").name_expression == "wgmma_ws<bf16,256,64,4,8>"
    assert ws.spec(dtype="tf32").name_expression == "wgmma_ws<tf32,256,32,4,8>"  # BK: 128 bytes of K
    assert ws.spec(dtype="bf16").smem_expression == "wgmma_ws_smem_bytes<bf16,256,64,4,8>"
    assert ws.spec(dtype="bf16").tma_boxes() == ((128, 64), (256, 64))
    assert ws.spec(dtype="bf16").grid(Problem(1000, 1000, 1000, "bf16")) == (8 * 4, 1, 1)  # 1-D, grouped
    # The persistent rung: one block per SM (at most one per tile), waves counted in tiles.
    from roofline.model.device import from_preset

    h200, p4096 = from_preset("h200"), Problem(N, N, N, "bf16")
    persistent = BY_NAME["wgmma_persistent"].spec(dtype="bf16").for_problem(p4096, h200)
    assert persistent.name_expression == "wgmma_persistent<bf16,256,64,4,8,132>" and persistent.tile_source == "shape"
    assert persistent.grid(p4096) == (132, 1, 1) and persistent.tile_grid(p4096) == (32 * 16, 1, 1)
    assert persistent.grid(Problem(1000, 1000, 1000, "bf16")) == (32, 1, 1)
    assert (ws.spec().threads_per_block, ws.target("sm_90"), BY_NAME["mma_sync"].target("sm_90")) == (384, "sm_90a", "sm_90")
    assert ws.runs_on("9.0") and not ws.runs_on("10.0") and BY_NAME["mma_sync"].runs_on("12.0")
    assert "sm_90a only" in ws.unavailable_reason("sm_120")
    assert from_expression("wgmma_ws<tf32,256,32,4,8>") == ws.spec(None, "variant", "tf32")
    with pytest.raises(UsageError, match="element type"):
        from_expression("wgmma_ws<256,64,4,8>")
    with pytest.raises(UsageError, match="runs in BF16, FP16, TF32, not FP32"):
        ws.spec(dtype="fp32")
    assert [s.name for s in families.select(None, dtype="tf32")][:2] == ["mma_sync", "mma_ldmatrix"]
    with pytest.raises(UsageError, match="belongs to the tensor ladder"):
        families.select(["wgmma_ws"], dtype="fp32")
    with pytest.raises(UsageError, match="belongs to the FP32 ladder"):
        families.select(["warptiling"], dtype="bf16")


@pytest.mark.parametrize("n, bn, tiles, waves", [
    (1024, 128, 64, 1),   # 32 big tiles fill 32 of 132 SMs; 64 half tiles cost 0.57 of a wave
    (2048, 256, 128, 1),  # one wave of 128 x 256 (1.0) against two of 128 x 128 (1.15)
    (4096, 256, 512, 4),
    (8192, 256, 2048, 16),
])
def test_the_wgmma_dispatch_counts_waves(n, bn, tiles, waves):
    c = choose_wgmma(Problem(n, n, n, "bf16"), 132)
    assert (c.bn, c.tiles, c.waves) == (bn, tiles, waves)
    assert c.params_for("tf32") == {"BN": bn, "BK": 32, "STAGES": 4, "GROUP": 8, "SMS": 132}


def test_the_run_precision_comes_from_the_flags_or_the_users_kernels(tmp_path):
    from roofline.commands.gemm import precision
    from roofline.ladder.user import load

    mine = load(__import__("pathlib").Path("tests/fixtures/kernels/bf16_dot.cu"))
    assert mine.dtype == "bf16" and mine.target("sm_90") == "sm_90a" and mine.target("sm_80") == "sm_80"
    assert precision(None, None, []) == "fp32"
    assert precision("tensor", None, []) == "bf16"
    assert precision(None, "tf32", []) == "tf32"
    assert precision(None, None, [mine]) == "bf16"
    with pytest.raises(UsageError, match="runs in bf16, fp16 or tf32, not fp32"):
        precision("tensor", "fp32", [])
    with pytest.raises(UsageError, match="use ladder_kind tensor$"):  # the parameter a Python caller passed
        precision("fp32", "bf16", [])
    with pytest.raises(UsageError, match="^ladder_kind takes fp32 or tensor"):
        precision("bf17", None, [])
    bad = tmp_path / "k.cu"
    bad.write_text("// roofline entry: k\n// roofline block: 32\n// roofline grid: 1\n// roofline dtype: int4\n__global__ void k() {}\n")
    with pytest.raises(UsageError, match="dtype 'int4' must be one of fp32, bf16, fp16, tf32"):
        load(bad)


def test_the_tensor_ladder_is_listed_against_its_tensor_roof():
    import json

    from typer.testing import CliRunner

    from roofline.cli import app

    r = CliRunner().invoke(app, ["kernels", "--ladder", "tensor", "--gpu", "h200", "--model-only", "--json"])
    assert r.exit_code == 0, r.output
    rows = {k["name"]: k for k in json.loads(r.stdout)["kernels"]}
    assert list(rows) == ["mma_sync", "mma_ldmatrix", "mma_pipeline", "wgmma_tma", "wgmma_ws", "wgmma_persistent",
                          "wgmma_by_shape"]
    ws = rows["wgmma_ws"]["floors"]
    # The preset's datasheet figures: the 4.29 GB the banks serve take 0.1284 ms at 33,454 GB/s, the
    # 1.611 GB of GMEM requests 0.1049 ms at the L2's 15,354 GB/s; 137.4 GFLOP at the BF16 tensor
    # roof, 132 SMs x 4,096 FLOP/clock x 1,830 MHz = 989,430 GFLOP/s: 0.1389 ms, which binds.
    assert ws["memory_floor_ms"] == pytest.approx(4.294967296e9 / 33_454.08e9 * 1e3, rel=1e-9)
    assert ws["memory_level"] == "SMEM"
    assert ws["levels_ms"]["L2"] == pytest.approx(1.610612736e9 / 15_354.336e9 * 1e3, rel=1e-9)
    assert ws["compute_floor_ms"] == pytest.approx(2 * MNK / 989_429.76e9 * 1e3, rel=1e-6)
    assert ws["binding"] == "compute" and ws["binding_level"] == "BF16 tensor"
    r = CliRunner().invoke(app, ["kernels", "--dtype", "tf32", "--gpu", "h200", "--model-only"])
    assert r.exit_code == 0 and "TF32 tensor ms" in r.stdout and "tensor-core ladder, TF32" in r.stdout


def test_run_profile_counts_the_tensor_core_operations_of_the_problems_precision():
    from roofline.measure.counters import counted_from
    from roofline.nsight.rows import Row

    # 2 x 4096^3 = 137,438,953,472 operations on BF16 inputs (FP32 accumulate), as ncu sums them.
    row = Row("wgmma_ws", values={"sm__ops_path_tensor_src_bf16_dst_fp32.sum": 137_438_953_472.0,
                                  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 0.0,
                                  "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 0.0,
                                  "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0})
    counted = counted_from(row, "bf16_tensor")
    assert counted.tensor_flops == 2 * MNK and counted.fp32_flops == 0
    assert counted_from(row).tensor_flops is None  # an FP32 run reads FP32 operations only


def test_a_users_declared_tensor_precision_is_not_overridden():
    """bf16_dot.cu reads __nv_bfloat16 operands: a run in another precision would feed it other words."""
    from pathlib import Path

    from roofline.commands.gemm import precision
    from roofline.ladder.user import load

    mine = load(Path("tests/fixtures/kernels/bf16_dot.cu"))
    for flag in ("tf32", "fp16", "fp32"):
        with pytest.raises(UsageError, match=f"bf16_dot.cu declares dtype bf16 .* but this run is in {flag}"):
            precision(None, flag, [mine])
    assert precision(None, "bf16", [mine]) == "bf16" and precision("tensor", None, [mine]) == "bf16"
    from dataclasses import replace

    fp32_operands = load(Path("tests/fixtures/kernels/tiled_f4.cu"))  # float A and B: a TF32 kernel may take them
    assert precision("tensor", None, [replace(fp32_operands, dtype="tf32")]) == "tf32"  # not the ladder's default BF16
    with pytest.raises(UsageError, match="bf16_dot takes __nv_bfloat16 A and B .its signature., not tf32"):
        precision("tensor", None, [replace(mine, dtype="tf32")])  # a declaration its signature contradicts
    with pytest.raises(UsageError, match="the FP32 ladder runs in fp32"):
        precision("fp32", None, [mine])


def test_the_listing_names_every_tensor_rung_that_picks_its_tile_on_a_gpu():
    from typer.testing import CliRunner

    from roofline.cli import app

    r = CliRunner().invoke(app, ["kernels", "--ladder", "tensor", "--model-only"])
    assert r.exit_code == 0, r.output
    assert "roofline: note: wgmma_persistent and wgmma_by_shape at their own tile (--gpu picks theirs)" in r.stderr
    r = CliRunner().invoke(app, ["kernels", "--ladder", "tensor", "--model-only", "--gpu", "h200"])
    assert "wgmma_persistent picks 128x256 on H200" in r.stderr and "wgmma_by_shape picks 128x256 on H200" in r.stderr
