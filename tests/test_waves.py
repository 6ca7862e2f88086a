"""Waves and the tail effect, worked by hand: blocks over block slots (SMs x active blocks per
SM), the share of the GPU a grid keeps busy, and the floors and verdicts that account for it."""

import pytest
from conftest import make_doc
from rich.console import Console

from roofline.errors import UsageError
from roofline.model.device import from_preset
from roofline.model.problem import Problem
from roofline.model.roofs import plain_verdict
from roofline.model.traffic import TrafficModel
from roofline.model.waves import Waves, waves_of
from roofline.render.tables import run_tables
from roofline.render.text import tail_phrase, verdict_sentence
from roofline.results import store


@pytest.mark.parametrize("blocks, slots, waves, last, busy, full", [
    (32, 132, 32 / 132, 32 / 132, 32 / 132, 1),   # full_tiles' 128x256 tile at 1024^3 on the H200, 1 block/SM
    (264, 132, 2.0, 1.0, 1.0, 2),                 # two full waves
    (133, 132, 133 / 132, 1 / 132, 133 / 264, 2),  # one block too many: a second wave for 1 block
])
def test_waves_by_hand(blocks, slots, waves, last, busy, full):
    w = Waves.of(blocks, slots)
    assert (w.waves, w.last_wave_efficiency, w.utilization, w.full_waves) == pytest.approx((waves, last, busy, full))


def test_the_tail_is_named_when_it_costs_more_than_a_tenth():
    assert Waves.of(32, 132).tail_matters and Waves.of(133, 132).tail_matters
    assert not Waves.of(264, 132).tail_matters
    assert not Waves.of(1320 + 120, 132).tail_matters  # 11 waves, the last 91 % full: 1.5 % lost
    assert tail_phrase(Waves.of(32, 132)) == "32 blocks fill 32 of 132 block slots: 24 % of the GPU busy"
    assert tail_phrase(Waves.of(133, 132)) == ("133 blocks take 2 waves of 132 block slots, the last 1 % full: "
                                               "50 % of the GPU busy")


def test_waves_of_a_grid():
    assert waves_of((8, 4, 1), 132, 1) == Waves.of(32, 132, 132)
    assert waves_of((16, 16, 1), 132, 2) == Waves.of(256, 264, 132)
    assert waves_of((8, 4, 1), 132, 0) is None  # a block that cannot launch


def test_a_partial_wave_is_spread_over_the_sms_first():
    # register_tiling_2d at 1024^3: 64 blocks of a kernel that fits 2 per SM: 64 of 264 slots,
    # but one block on each of 64 of the 132 SMs: 48 % busy, not 24 %
    w = Waves.of(64, 264, 132)
    assert w.waves == pytest.approx(64 / 264) and w.utilization == pytest.approx(64 / 132)
    assert tail_phrase(w) == "64 blocks fill 64 of 264 block slots (64 of 132 SMs): 48 % of the GPU busy"
    # 300 blocks at 2 per SM: one full wave (264), then 36 blocks on 36 SMs
    assert Waves.of(300, 264, 132).utilization == pytest.approx((132 + 36) / (2 * 132))


def test_a_quarter_of_the_gpu_busy_makes_the_floors_four_times_higher():
    h200 = from_preset("h200")
    p = Problem(1024, 1024, 1024)
    fig = TrafficModel((128, 256), (8, 8)).figures(p)
    alone = plain_verdict(fig, h200.roofs, 0.2)
    tail = plain_verdict(fig, h200.roofs, 0.2, waves=Waves.of(32, 132))
    assert tail.binding.floor_ms == pytest.approx(alone.binding.floor_ms * 132 / 32)
    assert tail.times_floor == pytest.approx(alone.times_floor * 32 / 132)
    sentence = verdict_sentence("full_tiles", tail, None)
    assert sentence.endswith("tail: 32 blocks fill 32 of 132 block slots: 24 % of the GPU busy, which the floors count")


def test_results_record_waves_and_the_table_shows_them():
    from dataclasses import asdict

    d = make_doc()
    k = d["kernels"][-1]
    per_sm = k["occupancy"]["active_blocks_per_sm"]
    k["waves"] = asdict(Waves.of(2048, 132 * per_sm, 132))
    doc = store.parse(d)
    w = doc.kernels[-1].waves
    assert w.waves == pytest.approx(2048 / (132 * per_sm)) and doc.floors(doc.kernels[-1]).waves == w
    console = Console(width=300, record=True)
    for table in run_tables(doc, 300):
        console.print(table)
    shown = console.export_text()
    assert " waves " in shown and f" {w.waves:.3g} " in shown
    for waves, needle in ((dict(asdict(w), waves=4.0), "give 3.87879"),
                          (asdict(Waves.of(2048, 264 * per_sm, 132)), "blocks per SM of its occupancy"),
                          (asdict(Waves.of(2048, 132 * per_sm, 66)), "the device has 132 SMs")):
        bad = make_doc()
        bad["kernels"][-1]["waves"] = waves
        with pytest.raises(UsageError, match=needle):
            store.parse(bad)


def test_a_kernel_near_an_empty_launch_is_launch_bound():
    from dataclasses import replace

    h200 = replace(from_preset("h200"), launch_latency_ms=0.0031)
    tiny = Problem(1, 1, 1)
    fig = TrafficModel((1, 1), None).figures(tiny)
    v = plain_verdict(fig, h200.roofs, 0.0042)
    assert v.binding.level == "launch" and v.times_floor == pytest.approx(0.0042 / 0.0031)
    assert verdict_sentence("naive", v, None).startswith(
        "naive: launch-bound: 0.0042 ms, 1.4x the 0.0031 ms an empty kernel takes to launch and finish")
    big = plain_verdict(TrafficModel((128, 128), (8, 8)).figures(Problem(4096, 4096, 4096)), h200.roofs, 2.8)
    assert big.binding.level == "FP32"  # a real kernel is far above the launch floor


@pytest.mark.xdist_group("ladder_sm_90")  # after test_offline's sm_90 parts: every kernel found compiled
@pytest.mark.nvrtc
def test_the_listing_says_how_few_slots_a_small_problem_fills():
    """`kernels --gpu h200 --size 1024`: full_tiles' 128 x 256 tiles give 32 blocks, one per SM at its
    occupancy (218 registers x 256 threads), for 132 SMs: its floors 132/32 times the plain ones."""
    from roofline.commands import kernels as kernels_cmd

    listing = kernels_cmd.kernels(size=1024, gpu="h200")
    row = next(r for r in listing.rows if r.spec.name == "full_tiles")
    assert row.waves == Waves.of(32, 132, 132)
    plain = plain_verdict(row.figures, from_preset("h200").roofs)
    assert row.floors.floor("FP32").floor_ms == pytest.approx(plain.floor("FP32").floor_ms * 132 / 32)
    by_name = {k["name"]: k for k in listing.to_json()["kernels"]}
    assert by_name["full_tiles"]["waves"]["blocks"] == 32
    # split_k at the tile and slices it picks for the H200: 32 tiles in 4 slices, 128 of 132 SMs.
    assert by_name["split_k"]["waves"]["blocks"] == 128
