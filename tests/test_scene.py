"""The chart as data (`render.scene`): one scene per results document, drawn by the matplotlib
chart and the HTML report alike."""

from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from roofline import documents
from roofline.render import scene, style

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "results-h200.json"


@pytest.fixture(scope="module")
def doc():
    return documents.load(FIXTURE)


def test_a_run_is_one_point_per_kernel_and_level_at_its_model_intensity(doc):
    s = scene.run_scene([doc])
    timed = [k for k in doc.kernels if k.timed]
    assert [g[0].kernel for g in s.kernels()] == [k.name for k in timed]
    k = doc.kernels[5]
    gmem = next(p for p in s.points if p.kernel == k.name and p.level == "GMEM (model)")
    assert gmem.x == pytest.approx(32.0) and gmem.y == k.gflops and gmem.index == 5
    assert (gmem.marker, gmem.symbol) == style.RUN_MARKERS["GMEM (model)"] and gmem.roof == "FP32"
    with pytest.raises(FrozenInstanceError):
        gmem.x = 1.0


def test_counted_levels_wait_for_measured_and_highlight_fades_the_others(doc):
    counted = [p for p in scene.run_scene([doc]).points if p.level and "counted" in p.level]
    assert counted and not any(p.shown for p in counted)
    assert all(p.shown for p in scene.run_scene([doc], measured=True).points)
    s = scene.run_scene([doc], highlight={"warptiling"})
    assert {p.kernel for p in s.points if not p.faded} == {"warptiling"}
    assert all(p.highlighted for p in s.points if p.kernel == "warptiling")


def test_most_keeps_the_fastest_and_the_roofs_come_from_the_vocabulary(doc):
    s = scene.run_scene([doc], most=3)
    assert sorted({p.rank for p in s.points}) == [1, 2, 3]
    fp32 = [r for r in s.compute() if r.level == "FP32"]
    assert [r.measured for r in fp32] == [False, True] and fp32[0].color == style.compute_color("FP32")
    assert [(r.level, r.measured) for r in s.memory()][0] == ("DRAM", False)
    assert all(r.color == style.MEMORY_COLORS[r.level] for r in s.memory())
    assert s.title.startswith(f"{doc.device.name}: SGEMM") and "hierarchical roofline" in s.title


PROFILE = Path(__file__).resolve().parent.parent / "plots" / "profile-h200-transformer.json"


@pytest.fixture(scope="module")
def profile():
    return documents.load(PROFILE)


def test_a_profile_is_a_point_per_counted_level_in_its_kernels_colour_against_its_precision(profile):
    s = scene.profile_scene(profile, 12)
    top = profile.kernels[0]
    first = [p for p in s.points if p.index == 0]
    # its L1/shared bytes counted below its DRAM bytes (the TMA and wgmma's traffic uncounted): no point there
    assert [p.level for p in first] == [label for key, label, _, _ in style.PROFILE_MARKERS
                                        if top.intensity(key) and key != "l1"] == ["DRAM", "L2"]
    assert top.intensity("l1") and scene.l1_undercounted(top.bytes)
    assert all(p.roof == "BF16 tensor" and p.label == "1" and p.share == top.time_share for p in first)
    assert first[0].x == top.intensity("dram") and first[0].color == style.profile_colors(12)[0]
    assert {p.index for p in s.points} <= set(range(12))
    # memory roofs of the levels counted, then the compute roofs highest first; the measured BF16 tensor roof
    # (FP16 cuBLAS's, 764,227 GFLOP/s) is the best rate the profile counted, as its verdicts read it
    assert [r.level for r in s.memory() if not r.measured] == ["DRAM", "L2", "SMEM"]
    assert [(r.level, r.measured) for r in s.compute()] == [("BF16 tensor", False), ("BF16 tensor", True),
                                                           ("FP32", False), ("FP32", True)]
    assert [r.borrowed for r in s.compute()] == [None, "best seen", None, None]
    ((rate, _, _),) = [v for lv, v in profile.seen_rates().items() if lv == "BF16 tensor"]
    assert s.compute()[1].value == rate > profile.device.roofs.roof("BF16 tensor").value
    assert s.title.startswith(f"{profile.device.name}: top 12 of {len(profile.kernels)} kernels by GPU time")


def test_a_profile_kernel_off_its_clock_has_its_roof_at_that_clock(profile):
    s = scene.profile_scene(profile)
    assert s.kernel_roofs and all(r.style == ":" and not r.memory for r in s.kernel_roofs)
    for r in s.kernel_roofs:
        k = profile.kernels[r.kernel]
        assert r.value == profile.roofs(k).roof(k.dominant, measured=False).value
        assert abs(k.clock_mhz / profile.nominal_clock_mhz(r.level) - 1) > 0.03
    faded = scene.profile_scene(profile, highlight={profile.kernels[0].name})
    assert {p.index for p in faded.points if not p.faded} == {0}


def test_roofs_of_one_value_are_one_line(doc):
    fp32 = scene.compute_roofs(doc.device.roofs, ["FP32"])
    twin = scene.RoofLine("FP64 tensor", fp32[0].value * 1.005, False, False, "#000000", "-", "")
    lines = scene.one_line_per_value([fp32[0], fp32[1], twin])
    assert [[r.level for r in g] for g in lines] == [["FP32", "FP64 tensor"], ["FP32"]]
    assert lines[1][0].measured
