"""The DRAM bytes of a grid's waves (`model.dram`): figures worked by hand, and the model against
the bytes Nsight Compute counted on the H200 (the committed plots/results-h200.json,
plots/counters-h200-*.json, docs/model.md's table)."""

from dataclasses import replace
from pathlib import Path

import pytest

from roofline import api
from roofline.ladder.families import BY_NAME
from roofline.ladder.families import from_expression
from roofline.model.dram import agrees_with_count, blocks_in_step, dram_bytes, launch_order, usable_l2_bytes
from roofline.model.problem import Problem
from roofline.model.roofs import verdict
from roofline.render.text import counters_phrase

PLOTS = Path(__file__).resolve().parent.parent / "plots"
MIB = 2**20
H200_USABLE = 30 * MIB  # half the H200's 60 MiB: two partitions


def test_the_usable_l2_is_half_on_partitioned_gpus():
    assert usable_l2_bytes(60 * MIB, "9.0") == H200_USABLE
    assert usable_l2_bytes(40 * MIB, "8.0") == 20 * MIB
    assert usable_l2_bytes(6 * MIB, "7.5") == 6 * MIB and usable_l2_bytes(6 * MIB, None) == 6 * MIB


def test_launch_orders():
    assert launch_order(2, 3) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert launch_order(2, 3, "rows") == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
    # hopper.cuh's grouped_tile with GROUP 2 over 3 x 2 tiles: rows 0-1 column by column, then row 2
    assert launch_order(3, 2, "grouped", 2) == [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    with pytest.raises(ValueError, match="unknown launch order 'diagonal'"):
        launch_order(2, 2, "diagonal")


def test_register_tiling_2d_at_4096_by_hand():
    # 32 x 32 tiles of 128 x 128, 264 at once: a wave is 8.25 tile rows, 9 A panels and all 32 B panels
    # of 2 MiB (82 MiB) against 30 MiB: nothing carries over. 4 waves fetch B again (128 panels), each
    # row's A once and the 3 rows two waves share again (35 panels); C is 64 MiB, less the last wave's
    # 232 tiles of 64 KiB (14.5 MiB, under half the usable 30 MiB), still in the L2 when the kernel ends.
    p = Problem(4096, 4096, 4096)
    c_to_dram = 64 * MIB - 232 * 64 * 2**10
    assert dram_bytes(p, (128, 128), 264, H200_USABLE) == (128 + 35) * 2 * MIB + c_to_dram == 393_740_288


def test_wgmma_ws_at_8192_fetches_every_waves_panels():
    # 64 x 32 tiles of 128 x 256 in groups of 8 rows, 132 at once: each wave reads 84 MiB of panels or
    # more, so none carries over to the next wave: the sum of each wave's own A (2 MiB) and B (4 MiB)
    # panels, and C (256 MiB) less the last wave's 68 tiles of 128 KiB still in the L2 at the end,
    # worked out here without the model's bookkeeping.
    p = Problem(8192, 8192, 8192, "bf16")
    tiles = launch_order(64, 32, "grouped", 8)
    waves = [tiles[i:i + 132] for i in range(0, len(tiles), 132)]
    own = sum(len({r for r, _ in w}) * 2 * MIB + len({c for _, c in w}) * 4 * MIB for w in waves)
    c_to_dram = 256 * MIB - 68 * 128 * 2**10
    assert len(waves) == 16 and dram_bytes(p, (128, 256), 132, H200_USABLE, "grouped", 8) == own + c_to_dram
    assert own + c_to_dram == pytest.approx(1.7527e9, rel=1e-4)


def test_what_fits_in_the_l2_is_fetched_once():
    p = Problem(1024, 1024, 1024)
    # A and B once (8 MiB); C's 4 MiB, one wave's, is still in the L2 when the kernel ends
    assert dram_bytes(p, (128, 128), 264, H200_USABLE) == p.working_set_bytes - 4 * MIB
    # a split K reads panels of K / 2, each slice its own half of A and B: still everything once, and
    # its 2 x 512^2 floats of partial sums and C stay in the L2 (counted on the H200: split_k at 512^3,
    # 2.1 MB, A and B)
    small = Problem(512, 512, 512)
    assert dram_bytes(small, (128, 256), 132, H200_USABLE, splits=2) == small.working_set_bytes - 512**2 * 4


def test_a_splits_partial_sums_that_overflow_the_l2_go_to_dram_and_back_and_leave_c_no_room():
    # 2048^3 in 4 slices: 4 x 16 MiB of partial sums, more than the 30 MiB usable: written and read
    # back once (128 MiB), A and B once (32 MiB), all of C (16 MiB): 176 MiB, however little the
    # panels fill (the C the L2 keeps is what the panels and the partials leave, here nothing)
    p = Problem(2048, 2048, 2048)
    assert dram_bytes(p, (128, 256), 132, H200_USABLE, splits=4) == (2 * 4 * 16 + 32 + 16) * MIB
    # in 2 slices the 32 MiB of partials overflow too (just): the same shape of answer
    assert dram_bytes(p, (128, 256), 132, H200_USABLE, splits=2) == (2 * 2 * 16 + 32 + 16) * MIB
    # K of 256: A and B are 4 MiB, room enough for C were it not for the 64 MiB of partial sums streaming
    # through: C is written in full all the same (64 x 2 + 4 + 16 MiB)
    short = Problem(2048, 2048, 256)
    assert dram_bytes(short, (128, 256), 132, H200_USABLE, splits=4) == (2 * 4 * 16 + 4 + 16) * MIB


def test_a_grid_of_one_wave_keeps_step_whatever_its_warps():
    assert blocks_in_step(396, 132, 48, blocks=256) == 396  # all resident at once: one step
    assert blocks_in_step(396, 132, 48, blocks=400) == 132  # a second wave follows: one block per SM
    assert blocks_in_step(396, 132, 48) == 132  # blocks not known: as before


def test_blocks_share_a_step_while_an_sm_holds_at_most_16_warps():
    assert blocks_in_step(264, 132, 16) == 264  # two blocks of 8 warps per SM: the whole wave
    assert blocks_in_step(264, 132, 32) == 132  # two of 16: one block per SM keeps step
    assert blocks_in_step(528, 132, 64) == 132 and blocks_in_step(100, 132, 64) == 100


def test_the_model_against_the_dram_bytes_counted_on_the_h200():
    # an older file whose kernels lack the DRAM bytes: worked out when read, from its tile, waves,
    # occupancy and L2, by today's model; every FP32 rung within 11 % of Nsight Compute's count
    doc = api.read(PLOTS / "results-h200.json")
    ratios = {k.name: k.model.dram_bytes / k.counted.dram_bytes for k in doc.kernels}
    assert len(ratios) == 14 and {n: r for n, r in ratios.items() if not 0.97 <= r <= 1.12} == {}
    assert ratios["naive"] == pytest.approx(1.00, abs=0.005) and ratios["autotuned"] == pytest.approx(1.09, abs=0.005)


def _counted_files():
    return sorted(p.name for p in PLOTS.glob("*.json") if p.name.startswith(("counters-", "results-h200.json")))


def _remodelled(doc, k):
    """Kernel `k`'s DRAM bytes by today's model at the tile, waves, occupancy and L2 its run recorded."""
    spec = from_expression(k.template)
    in_step = blocks_in_step(k.waves.block_slots, k.waves.sms, k.occupancy.active_warps_per_sm, k.waves.blocks)
    return spec.model.dram(doc.problem.problem, in_step, doc.device.usable_l2_bytes)


# Where the wave model misses by more than DRAM_TOLERANCE, quoted in docs/model.md ("Where it
# misses"): model / counted, each pinned so that a change of the model meets this table again.
MISSES = {
    ("counters-h200-fp32-1024x1024x16384.json", "gmem_coalescing"): 1.37,
    **{("counters-h200-fp32-3000.json", n): r for n, r in
       [("naive", 4.37), ("gmem_coalescing", 4.21), ("smem_tiling", 3.70), ("register_tiling_1d", 1.80),
        ("register_strip", 1.66), ("autotuned", 1.39), ("warptiling", 1.37)]},
    **{("counters-h200-fp32-8192.json", n): r for n, r in
       [("async_copy", 0.43), ("full_tiles", 0.37), ("tile_by_shape", 0.37), ("split_k", 0.40)]},
}


@pytest.mark.parametrize("name", _counted_files())
def test_todays_model_against_every_committed_count(name):
    # docs/model.md's table: every rung Nsight Compute counted (the H200: FP32 at the nine sizes and
    # 8192^3, BF16 at 4096^3 and 8192^3, TF32 at 8192^3; the H100's files), today's model within its
    # 25 % tolerance but for MISSES; and the verdict without counters names the roof the counted one names
    doc = api.read(PLOTS / name)
    counted = [k for k in doc.kernels if k.counted is not None and k.counted.dram_bytes and k.waves is not None]
    assert counted, name
    differ = []
    for k in counted:
        modelled = _remodelled(doc, k)
        ratio = modelled / k.counted.dram_bytes
        if (name, k.name) in MISSES:
            assert ratio == pytest.approx(MISSES[name, k.name], abs=0.005)
        else:
            assert agrees_with_count(modelled, k.counted.dram_bytes), (name, k.name, modelled, k.counted.dram_bytes)
        figures = replace(k.model, dram_bytes=modelled)
        plain = verdict(figures, doc.roofs, k.time_ms, None, flops=doc.problem.problem.flops, waves=k.waves,
                        precision=doc.precision)
        read = doc.verdict(k)
        if not read.agrees(plain):  # then the verdict says so, and which it reads
            said = counters_phrase(read, plain, figures, k.counted)
            assert f"the model alone names {plain.binding.level}" in said and "reads the counted bytes" in said
            differ.append((name, k.name))
    # with every measured ceiling at least the best rate the file counted, even the weakest case names
    # the roof from the model that it names from the counts (docs/model.md)
    assert differ == []


def test_a_file_is_read_with_todays_dram_model_and_says_so_where_it_recorded_an_older_ones():
    # sweep-h100.json recorded the model of its day, which kept C out of the L2 where everything fit
    # and read a grid of one wave in steps of one block per SM; read today, the figures that moved are
    # today's model at the blocks per SM each size's tile held there (tile_by_shape: three 64 x 64 at
    # 1024^3, one 128 x 256 at 8192^3) and a note names each figure that moved with its size, the
    # largest moves first, and which of the two the tables read
    import json

    raw = json.loads((PLOTS / "sweep-h100.json").read_text())
    doc = api.read(PLOTS / "sweep-h100.json")
    note = next(n for n in doc._read_notes if "today's model gives 4 DRAM figure(s)" in n)
    assert "(tile_by_shape at 1024x1024x16384 0.208 -> 0.134 GB, " in note and "and 1 more: recorded -> today's" in note
    moved = {}
    for point, recorded in zip(doc.sweep, raw["sweep"]):
        for k, r in zip(point.kernels, recorded["kernels"]):
            if k.model.dram_bytes != r["model"]["dram_bytes"]:
                moved[point.problem.problem.text(), k.name] = k.model.dram_bytes / 1e9
    # split_k at 1024^3 on the H100 (25 MiB usable): A and B once (8 MiB), its 4 x 4 MiB of partial sums
    # in the L2, and the 1 MiB they leave of C's 4 MiB kept: 11 MiB; the one wave of 64 x 64 tiles at
    # 1024x1024x16384 in step (0.134 GB: A and B once, Nsight Compute counted 0.137 for register_strip's)
    assert moved[("1024x1024x1024", "split_k")] == pytest.approx(11 * MIB / 1e9, abs=1e-6)
    assert moved[("1024x1024x16384", "tile_by_shape")] == pytest.approx(0.134, abs=0.001)
    assert len(moved) == 4 and ("3000x3000x3000", "split_k") not in moved  # its partials overflow: as recorded
    # a file that recorded today's figures reads without the note
    for name in ("counters-h200-bf16-8192.json", "counters-h200-fp32-4096.json"):
        assert not any("today's model" in n for n in api.read(PLOTS / name)._read_notes), name


@pytest.mark.parametrize("name", ["results-h200.json", "counters-h200-bf16.json"])
def test_the_roof_named_without_counters_is_the_one_named_with_them(name):
    doc = api.read(PLOTS / name)
    for k in doc.kernels:
        counted = doc.verdict(k)
        modelled = verdict(k.model, doc.roofs, k.time_ms, None, flops=doc.problem.problem.flops, waves=k.waves,
                           precision=doc.precision)
        # the same roof named, or each within 5 % of the other's (`Verdict.agrees`: the verdict names both)
        assert modelled.agrees(counted), k.name
        if modelled.binding.level == counted.binding.level:
            assert modelled.times_floor == pytest.approx(counted.times_floor, rel=0.07), k.name


def test_a_run_records_the_dram_bytes_of_its_waves():
    from test_results import fake_run

    from roofline import collect

    doc = collect.from_run(fake_run())  # 256^3 on the H200 preset: A and B once, C still in the L2
    k = next(k for k in doc.kernels if k.model is not None)
    assert k.model.dram_bytes == Problem(256, 256, 256).working_set_bytes - 256**2 * 4
    spec = BY_NAME[k.name].spec(k.params)
    assert spec.model.with_dram(spec.figures(Problem(256, 256, 256)), Problem(256, 256, 256), k.waves.block_slots,
                                H200_USABLE).dram_bytes == k.model.dram_bytes


def test_a_run_a_listing_and_an_older_file_read_model_the_same_dram_bytes():
    # naive's model counts no GMEM reuse (1 x 1), but its blocks own 32 x 32 tiles of C: the waves and
    # their panels are counted in those, 8.53 GB at 4096^3 in steps of one block per SM (two blocks of
    # 32 warps each per SM; the last step's 16 tiles of C still in the L2), not the 275 GB of 1 x 1
    # tiles, wherever the DRAM bytes are worked out
    from roofline.ladder import upgrade

    p = Problem(4096, 4096, 4096)
    naive = BY_NAME["naive"].spec()
    assert naive.model.block_tile == (1, 1) and naive.model.c_tile == (32, 32)
    assert naive.model.dram(p, 132, H200_USABLE) == dram_bytes(p, (32, 32), 132, H200_USABLE, "rows") == 8_527_478_784
    doc = {"schema": 4, "problem": {"m": 4096, "n": 4096, "k": 4096, "dtype": "float32"},
           "device": {"sm_count": 132, "l2_bytes": 60 * MIB, "compute_capability": "9.0"},
           "kernels": [{"name": "naive", "params": {"BS": 32}, "model": {"gmem_bytes": 1.0},
                        "waves": {"block_slots": 264, "sm_count": 132},
                        "occupancy": {"active_blocks_per_sm": 2, "active_warps_per_sm": 64}}]}
    upgrade.fill(doc)
    assert doc["kernels"][0]["model"]["dram_bytes"] == 8_527_478_784


@pytest.mark.nvrtc
def test_the_listing_models_the_dram_bytes_of_the_waves_it_compiled():
    import json

    from typer.testing import CliRunner

    from roofline.cli import app

    r = CliRunner().invoke(app, ["kernels", "--gpu", "h200", "--json"])  # compiled for sm_90: the occupancy known
    assert r.exit_code == 0, r.output
    rows = {k["name"]: k for k in json.loads(r.stdout)["kernels"]}
    assert rows["naive"]["model"]["dram_bytes"] == 8_527_478_784 and rows["naive"]["waves"]["block_slots"] == 264
    assert rows["register_tiling_2d"]["model"]["dram_bytes"] == 393_740_288
    assert rows["naive"]["floors"]["binding_level"] == "L1" and rows["register_tiling_2d"]["floors"]["binding_level"] == "FP32"


def test_a_grid_too_large_to_walk_is_not_modelled():
    # a 1 x 1 tile over 4096^2 is 16 Mi tiles: no DRAM bytes (None), not minutes of walking
    assert dram_bytes(Problem(4096, 4096, 64), (1, 1), 264, H200_USABLE) is None
    assert dram_bytes(Problem(1024, 1024, 64), (1, 1), 264, H200_USABLE) is not None  # 1 Mi tiles: walked


def test_a_verdict_says_which_bytes_it_reads_where_the_model_alone_names_another_roof():
    from roofline.render.tables import verdict_lines

    doc = api.read(PLOTS / "counters-h200-bf16-8192.json")
    # every committed rung names the same roof from its counts as from the model (or both within 5 %)
    assert not any("model alone" in line for line in verdict_lines(doc))
    # wgmma_tma as if its blocks had fetched 7.4 times the DRAM bytes they did: 13 GB at the measured
    # 4,282 GB/s is 3.04 ms, DRAM binds from the counts, where the model's 1.75 GB leave the BF16 tensor roof binding
    k = next(k for k in doc.kernels if k.name == "wgmma_tma")
    found = replace(k.counted, dram_bytes=13e9)
    read = verdict(k.model, doc.roofs, k.time_ms, found, flops=doc.problem.problem.flops, waves=k.waves,
                   precision=doc.precision)
    plain = verdict(k.model, doc.roofs, k.time_ms, None, flops=doc.problem.problem.flops, waves=k.waves,
                    precision=doc.precision)
    assert read.binding.level == "DRAM" and plain.binding.level == "BF16 tensor" and not read.agrees(plain)
    said = counters_phrase(read, plain, k.model, found)
    assert said.startswith("; the model alone names BF16 tensor (") and ("it counts 1.75 GB of DRAM bytes against "
                                                                         "13.00 GB counted (0.13x: its blocks kept less "
                                                                         "of A and B in the L2 than the waves model "
                                                                         "assumes)") in said
    assert counters_phrase(read, read, k.model, found) == ""


def test_the_counters_table_says_why_a_ratio_is_far_from_one():
    # wgmma's operand reads and the TMA's writes are not SASS shared-memory instructions: counted 0
    # where the model counts 34 to 43 GB; naive's GMEM requests are its L1's (23x the L2's count)
    from roofline.render.tables import counters_notes

    tensor = counters_notes(api.read(PLOTS / "counters-h100-bf16-8192.json"))
    assert tensor == ["wgmma_tma, wgmma_ws, wgmma_persistent, wgmma_by_shape: SMEM counted 0: wgmma reads its "
                      "operands from shared memory through descriptors and the TMA writes them, neither counted by "
                      "smsp__sass_data_bytes_mem_shared; the verdict reads the model's SMEM bytes"]
    fp32 = counters_notes(api.read(PLOTS / "counters-h100-fp32-4096.json"))
    assert len(fp32) == 1 and fp32[0].startswith("naive, gmem_coalescing: model GMEM is the requests")


def test_a_memory_bound_verdict_gives_its_flop_per_byte_against_the_ridge():
    # mma_pipeline on the H100 at 8192^3 in BF16: 2 x 8192^3 FLOP over the 47.22 GB of SMEM bytes Nsight
    # Compute counted is 23.3 FLOP per byte; the tensor roof needs its rate over the SMEM ceiling, both
    # on the SMs its grid keeps busy (an L2 or DRAM ceiling would be the whole chip's)
    from roofline.render.text import reuse_phrase, verdict_sentence

    doc = api.read(PLOTS / "counters-h100-bf16-8192.json")
    k = next(k for k in doc.kernels if k.name == "mma_pipeline")
    v = doc.verdict(k)
    assert v.binding.level == "SMEM"
    assert 2 * 8192**3 / k.counted.smem_bytes == pytest.approx(23.28, abs=0.01)
    tensor = next(f for f in v.floors if f.level == "BF16 tensor")
    ridge = tensor.roof.value / v.binding.roof.value
    assert reuse_phrase(v) == (f"; 23.3 FLOP per SMEM byte, where the BF16 tensor roof needs {ridge:.3g}: more reuse "
                               f"at this level lowers the floor by at most {ridge / (2 * 8192**3 / k.counted.smem_bytes):.2f}x")
    assert reuse_phrase(v) in verdict_sentence("mma_pipeline", v, None)
    ws = doc.verdict(next(k for k in doc.kernels if k.name == "wgmma_ws"))
    assert ws.binding.level == "BF16 tensor" and reuse_phrase(ws) == ""  # compute-bound: nothing to say


def test_a_smem_bound_verdict_names_the_bank_conflicts_counted():
    # mma_sync (32-bit fragment loads, 4-way conflicts) on the H100: 1.217 G conflicts over 68.72 GB of
    # shared-memory bytes, 537 M passes of 128 bytes, 2.27 further passes each; mma_ldmatrix's 8 M
    # (0.015 a pass) are not worth a word
    from roofline.render.text import conflicts_phrase

    doc = api.read(PLOTS / "counters-h100-bf16-8192.json")
    sync, ldm = (next(k for k in doc.kernels if k.name == n) for n in ("mma_sync", "mma_ldmatrix"))
    per_pass = sync.counted.bank_conflicts / (sync.counted.smem_bytes / 128)
    assert per_pass == pytest.approx(2.27, abs=0.005)
    v = doc.verdict(sync)
    said = conflicts_phrase(v, sync.counted)
    assert said.startswith("; 1.22 G bank conflicts counted, 2.27 per 128-byte pass its bytes need")
    # its bytes' passes and one more per conflict at the SMEM roof: 3.27x its floor, the pipe that share busy
    with_conflicts = v.binding.floor_ms * (1 + per_pass)
    assert (f"its passes with them take {with_conflicts:.3f} ms at the SMEM ceiling; it ran "
            f"{v.time_ms / with_conflicts:.2f}x that") in said
    assert conflicts_phrase(doc.verdict(ldm), ldm.counted) == ""


def test_a_measured_ceiling_a_rate_went_past_is_raised_to_it_never_past_its_roof_nor_lowered():
    from roofline.model.roofs import Roofs, at_least_seen

    # the H200's L2: 15,354 GB/s theoretical, 7,302 measured by one stream; counted bytes at 10,184
    roofs = Roofs(66_908, 4_814, l2_gbps=15_354, measured_l2_gbps=7_302, measured_dram_gbps=4_296)
    out, beaten = at_least_seen(roofs, {"L2": (10_184, "wgmma_tma", True)})
    assert out.roof("L2").value == 10_184 and out.roof("L2").seen and [b.used for b in beaten] == [10_184]
    assert out.roof("DRAM").value == 4_296 and not out.roof("DRAM").seen  # no rate went past it
    # a counted rate past the theoretical roof raises the ceiling to that roof, no further
    out, beaten = at_least_seen(roofs, {"L2": (16_000, "k", True)})
    assert out.roof("L2").value == 15_354 and beaten[0].used == 15_354 and beaten[0].seen == 16_000
    # a measured value already above its theoretical roof (a clock above the nominal one) is not lowered
    high = Roofs(66_908, 4_814, l2_gbps=15_354, measured_l2_gbps=15_500)
    out, beaten = at_least_seen(high, {"L2": (15_600, "k", True)})
    assert out.roof("L2").value == 15_500 and beaten == ()


def test_the_tolerance_is_the_same_factor_either_way():
    # 25 %: the model at 1.25x the count agrees, and so does the count at 1.25x the model (0.8x)
    assert agrees_with_count(125, 100) and agrees_with_count(80, 100)
    assert not agrees_with_count(126, 100) and not agrees_with_count(79, 100) and not agrees_with_count(0, 100)


def test_a_rate_seen_at_another_size_of_a_sweep_names_that_size():
    from roofline.render.text import ceiling_lines
    from roofline.results import store
    from roofline.results.schema import Results

    plots = Path(__file__).resolve().parent.parent / "plots"
    nine = Results.model_validate(store.load(plots / "sweep-h200-nine.json"))  # read at 8192^3, the largest
    seen = nine.seen_rates()
    assert seen["FP32"][1] == "cuBLAS at 1024x1024x16384" and seen["L2"][1] == "tile_by_shape at 1024x1024x16384"
    bf16 = Results.model_validate(store.load(plots / "results-h200-bf16.json"))  # its best at the size it is read at
    assert bf16.seen_rates()["BF16 tensor"][1] == "wgmma_persistent"
    (line,) = ceiling_lines(bf16)[:1]
    assert "779,452 GFLOP/s wgmma_persistent reached on the SMs its grid kept busy at 8192x8192x8192 bf16" in line
