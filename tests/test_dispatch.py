"""The tile and split-K dispatch (`ladder.dispatch`), the split kernel's launch and traffic, and
the L2's state in the results: figures worked out by hand for the H200 (132 SMs, 66,908 GFLOP/s
FP32 peak: 253.44 GMAC/s per SM)."""

from dataclasses import replace

import pytest

from roofline.ladder import dispatch
from roofline.ladder.families import BY_NAME
from roofline.model.device import from_preset
from roofline.model.problem import Problem
from roofline.model.roofs import verdict
from roofline import collect
from roofline.results import store
from test_results import fake_run

H200 = from_preset("h200")
SMS, PEAK = 132, 66_908.0
BIG, SQUARE8, WIDE8, SMALL = dispatch.CANDIDATES  # 128x256, 128x128, 64x128 (8x16 thread tiles), 64x64 (4x4)


def test_one_unsplit_round_at_1024_by_hand():
    # 32 tiles of 128 x 256, one per SM: one round of 128 x 256 x (1024 + FILL_K 32) multiply-adds
    # at 0.74 of an SM's 253.44 GMAC/s (8 warps: the whole rate).
    est = dispatch.estimate(BIG, 1, Problem(1024, 1024, 1024), SMS, PEAK)
    assert (est.blocks, est.rounds) == (32, 1)
    assert est.seconds == pytest.approx(128 * 256 * 1056 / (PEAK * 1e9 / 2 / SMS * 0.74))
    assert est.seconds == pytest.approx(184.51e-6, rel=1e-4)


def test_four_slices_at_1024_by_hand():
    # 128 blocks, a quarter as deep: 50.32 us of multiply-adds, then 128 KB of partial sums
    # written at 9 GB/s per SM (14.56 us); all 128 resident at once, so each block reads back a
    # quarter of each of the four slices, 128 KB at 64 GB/s (2.05 us), not all four (8.19 us).
    est = dispatch.estimate(BIG, 4, Problem(1024, 1024, 1024), SMS, PEAK)
    assert (est.blocks, est.rounds) == (128, 1)
    assert est.seconds == pytest.approx(50.32e-6 + 14.56e-6 + 2.05e-6, rel=1e-3)
    assert est.together and est.params["REDUCERS"] == 4


def test_slices_in_more_than_one_round_are_added_by_the_last_block():
    # 1,152 blocks of 128 x 256 at 3000^3 in four slices: nine rounds, so the tile's blocks are not
    # all resident at once and cannot wait for each other: the last to arrive reads all four slices.
    est = dispatch.estimate(BIG, 4, Problem(3000, 3000, 3000), SMS, PEAK)
    assert est.rounds == 9 and not est.together and est.params["REDUCERS"] == 1
    unsplit = dispatch.estimate(BIG, 1, Problem(1024, 1024, 1024), SMS, PEAK)
    assert not unsplit.together and unsplit.params["REDUCERS"] == 1


def test_a_lone_small_block_runs_at_the_share_its_warps_reach():
    # 64 x 128 at 512^3: 32 blocks of 2 warps, one per SM: 2 / 6.8 of the SM's rate.
    est = dispatch.estimate(WIDE8, 1, Problem(512, 512, 512), SMS, PEAK)
    full = 64 * 128 * (512 + 32) / (PEAK * 1e9 / 2 / SMS * 0.71)
    assert est.seconds == pytest.approx(full * 6.8 / 2)


@pytest.mark.parametrize("shape, split, expected", [
    ((4096, 4096, 4096), True, (BIG, 1)),        # 512 tiles: 3.9 rounds, splitting only adds partial sums
    ((2048, 2048, 2048), False, (BIG, 1)),       # 128 tiles fill 128 of 132 SMs
    ((1024, 1024, 1024), True, (BIG, 4)),        # 32 tiles: four slices fill 128 SMs
    ((1024, 1024, 1024), False, (SMALL, 1)),     # unsplit, the 4x4 tiles' 2,048 warps do best
    ((1024, 1024, 16384), True, (BIG, 4)),
    ((512, 512, 512), True, (SMALL, 4)),
    ((3000, 3000, 3000), True, (BIG, 4)),        # 288 tiles: 2.2 waves; 1,152 blocks: 8.7
])
def test_the_dispatch_picks_by_shape(shape, split, expected):
    choice = dispatch.choose(Problem(*shape), SMS, PEAK, split)
    assert (choice.candidate, choice.splits) == expected


def test_slices_are_never_shorter_than_four_k_tiles():
    assert dispatch.choose(Problem(64, 64, 200), SMS, PEAK, split=True).splits <= 200 // dispatch.MIN_SLICE_K
    assert dispatch.choose(Problem(1, 1, 1), SMS, PEAK, split=True).splits == 1


def test_split_k_runs_at_the_tile_and_slices_it_picks():
    p = Problem(1024, 1024, 1024)
    spec = BY_NAME["split_k"].spec().for_problem(p, H200)
    assert spec.tile_source == "shape" and spec.params == {**BIG.params, "SPLITS": 4, "REDUCERS": 4}
    assert spec.grid(p) == (4, 8, 4)  # N / 256, M / 128, four slices
    # a slab per tile and slice; arrival and departure counters per tile
    assert spec.workspace(p) == (32 * 4 * 128 * 256, 64)
    assert spec.name_expression == "split_k<128,256,16,32,128,8,16,3,4,4>" and spec.cooperative
    # A record from before REDUCERS names the kernel as it ran: the last block adds the slices.
    old = BY_NAME["split_k"].spec({**BIG.params, "SPLITS": 4}, "variant")
    assert old.params["REDUCERS"] == 1 and not old.cooperative and old.workspace(p) == (32 * 4 * 128 * 256, 32)
    tile = BY_NAME["tile_by_shape"].spec().for_problem(p, H200)
    assert tile.name_expression == "full_tiles<64,64,16,16,32,4,4,3>" and tile.workspace(p) is None
    # A tile given explicitly is kept, and every other kernel runs as it is.
    forced = BY_NAME["split_k"].spec({**WIDE8.params, "SPLITS": 2}, "variant")
    assert forced.for_problem(p, H200) is forced
    plain = BY_NAME["full_tiles"].spec()
    assert plain.for_problem(p, H200) is plain and plain.grid(p) == (4, 8, 1)


def test_an_unsplit_split_k_needs_no_real_workspace():
    spec = BY_NAME["split_k"].spec({**BIG.params, "SPLITS": 1})
    assert spec.workspace(Problem(4096, 4096, 4096)) == (1, 1)


def test_the_partial_sums_are_gmem_traffic_by_hand():
    # 1024^3 at 128 x 256 in four slices: A read 4 times (N / 256), B 8 times (M / 128): 12 Mi
    # accesses; then four slabs of 1024 x 1024 partial sums written and read back: 8 Mi.
    p = Problem(1024, 1024, 1024)
    spec = BY_NAME["split_k"].spec({**BIG.params, "SPLITS": 4})
    assert spec.figures(p).gmem_bytes == 4 * (12 + 8) * 2**20
    assert BY_NAME["full_tiles"].spec().figures(p).gmem_bytes == 4 * 12 * 2**20


def test_a_working_set_that_fits_in_a_warm_l2_has_no_binding_dram_floor():
    # register_tiling_2d at 1024^3: A, B and C (12 MiB) fit in the L2, so its waves fetch each panel
    # once: 8 MiB of A and B; C's 4 MiB, one wave's, is still in the L2 when the kernel ends. At a
    # made-up DRAM ceiling of 10 GB/s that is 0.84 ms,
    # which binds with a cold L2 (the compulsory reads come from DRAM); with a warm one they are
    # L2 hits, and the floor is set aside.
    p = Problem(1024, 1024, 1024)
    spec = BY_NAME["register_tiling_2d"].spec()
    fig = spec.model.with_dram(spec.figures(p), p, 264, 30 * 2**20)
    assert fig.dram_bytes == p.working_set_bytes - 4 * 2**20 == 8 * 2**20
    roofs = replace(H200.roofs, dram_gbps=10.0)
    cold = verdict(fig, roofs, 1.0, measured=False)
    assert cold.binding.level == "DRAM" and cold.binding.floor_ms == pytest.approx(8 * 2**20 / 10e6)
    v = verdict(fig, roofs, 1.0, measured=False, fits_in_l2=True)
    assert v.l2_resident and v.floor("DRAM").aside == "L2" and v.binding.level != "DRAM"


def test_the_documents_l2_check_uses_the_devices_l2_size():
    cold = collect.from_run(fake_run())  # 256^3, the L2 flushed before each launch
    assert cold.device.l2_bytes == 60 * 2**20 and not cold.fits_in_l2(Problem(256, 256, 256))
    doc = cold.model_copy(update={"l2": "warm"})
    assert doc.fits_in_l2(Problem(256, 256, 256))  # the preset's L2
    unknown = doc.model_copy(update={"device": replace(doc.device, l2_bytes=None)})
    assert not unknown.fits_in_l2(Problem(256, 256, 256))
    doc = doc.model_copy(update={"device": replace(doc.device, l2_bytes=60 * 2**20)})
    assert doc.fits_in_l2(Problem(2048, 2048, 2048))  # 48 MiB
    assert not doc.fits_in_l2(Problem(4096, 4096, 4096))  # 192 MiB
    ok = doc.kernels[0]
    assert doc.verdict(ok).l2_resident and doc.floors(ok).l2_resident


@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_the_l2_mode_is_recorded(mode):
    doc = collect.from_run(replace(fake_run(), l2=mode))
    assert doc.l2 == mode
    assert store.parse(store.dump(doc)).l2 == mode


def test_the_tables_name_the_tile_each_size_got():
    from pathlib import Path

    from roofline.render.tables import sweep_tables, verdict_lines

    doc = store.load(Path(__file__).resolve().parent.parent / "plots" / "shapes-h200.json")
    chosen = [t for t in sweep_tables(doc) if "the tile each size got" in str(t.title)]
    assert len(chosen) == 1
    cells = [c for col in chosen[0].columns for c in col._cells]
    assert "128x256 8x16 K/4" in cells and "64x64 4x4" in cells
    assert "split_k (128x256, 8x16 per thread): FP32-bound" in "\n".join(verdict_lines(doc))


def _sweep_json():
    import json
    from pathlib import Path

    return json.loads((Path(__file__).resolve().parent.parent / "plots" / "sweep-h200.json").read_text())


@pytest.mark.parametrize("edit, needle", [
    (lambda k: k["waves"].update(blocks=1, block_slots=1000, waves=0.001),
     "waves.block_slots: 1000, not a whole number of blocks on each of the device's 132 SMs"),
    (lambda k: k["waves"].update(waves=0.5), "waves: 0.5 waves and a last wave 0.969697 full, but 128 blocks over 132 slots give 0.969697"),
    (lambda k: k["model"].update(flops=1.0), "model.flops: 1, but this size's 2"),  # its 2*M*N*K
])
def test_a_sweeps_recorded_tiles_are_checked(tmp_path, edit, needle):
    raw = _sweep_json()
    point = raw["sweep"][3]  # 1024^3
    edit(next(k for k in point["kernels"] if k["name"] == "split_k"))
    path = tmp_path / "s.json"
    path.write_text(__import__("json").dumps(raw))
    from roofline.errors import UsageError

    with pytest.raises(UsageError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        store.load(path)


def test_runs_timed_with_different_l2_states_do_not_merge_and_compare_says_so():
    from pathlib import Path

    from roofline.errors import UsageError
    from roofline.analysis.compare import compare_work

    cold = store.load(Path(__file__).resolve().parent.parent / "plots" / "results-h200.json")
    warm = cold.model_copy(update={"l2": "warm"})
    with pytest.raises(UsageError, match="timed with the L2 warm, a.json with it cold"):
        store.merge([cold, warm], ["a.json", "b.json"])
    assert any("L2 cold before and warm after" in n for n in compare_work(cold, warm).notes)


def test_a_tile_whose_blocks_add_the_slices_together_says_so():
    from roofline.render.text import chosen_tile

    split = {**BIG.params, "SPLITS": 4}
    assert chosen_tile({**split, "REDUCERS": 4}) == \
        "128x256, 8x16 per thread, K in 4 slices, each tile's 4 blocks adding them together"
    assert chosen_tile({**split, "REDUCERS": 1}) == "128x256, 8x16 per thread, K in 4 slices"
    assert chosen_tile(split) == chosen_tile({**split, "REDUCERS": 1})  # a record from before REDUCERS
    assert chosen_tile({**split, "REDUCERS": 4}, short=True) == "128x256 8x16 K/4 together"
    assert chosen_tile({**split, "REDUCERS": 1}, short=True) == "128x256 8x16 K/4"


def test_a_split_the_gpu_cannot_hold_at_once_runs_with_the_last_block_adding():
    # a split the dispatch counted all resident (two blocks per SM) on a GPU that holds fewer at once (the
    # driver's count, one per SM here): the runner runs it as the last block of each tile adds
    from roofline.measure.runner import _not_resident, the_last_block_adds

    p = Problem(1024, 1024, 1024)
    spec = BY_NAME["split_k"].spec({**SQUARE8.params, "SPLITS": 2, "REDUCERS": 2}, "shape")
    grid = spec.grid(p)  # 8 x 8 tiles, two slices: 128 blocks
    assert _not_resident(spec, grid, 2, 66) is None  # two per SM on 66 SMs: all resident
    assert "all must be resident at once" in _not_resident(spec, grid, 1, 66)
    last = the_last_block_adds(spec)
    assert last.params == {**spec.params, "REDUCERS": 1} and not last.cooperative and last.tile_source == "shape"
    assert _not_resident(last, grid, 1, 66) is None


def test_the_blocks_an_sm_holds_are_capped_by_its_shared_memory():
    # three stages of BK 16, 4-byte elements, 1 KB reserved a block: 128 x 128 takes 16 x (132 + 128) x 4 x 3
    # = 49,920 bytes, so two fit even in the 100 KB of sm_86/sm_89 (101,888 of 102,400); 64 x 128 takes
    # 37,632, so sm_90's 228 KB holds the four its registers allow, 100 KB two
    assert SQUARE8.smem_bytes == 49_920 and WIDE8.smem_bytes == 37_632
    assert SQUARE8.held_by(100 * 1024, 1024).blocks_per_sm == 2 and SQUARE8.held_by(None) == SQUARE8
    assert WIDE8.held_by(228 * 1024, 1024).blocks_per_sm == 4 and WIDE8.held_by(164 * 1024, 1024).blocks_per_sm == 4
    assert WIDE8.held_by(100 * 1024, 1024).blocks_per_sm == 2 and BIG.held_by(100 * 1024, 1024) == BIG
    # on the H200 the dispatch picks as it did without the cap
    limits = H200.arch_limits
    for shape in [(1024, 1024, 1024), (3000, 3000, 3000), (512, 512, 512), (1024, 1024, 16384)]:
        capped = dispatch.choose(Problem(*shape), SMS, PEAK, True, limits.smem_per_sm_bytes,
                                 limits.reserved_smem_per_block_bytes)
        assert capped == dispatch.choose(Problem(*shape), SMS, PEAK, True)
