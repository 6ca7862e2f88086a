"""The chart as data (`render.scene`): one scene per results document, drawn by the matplotlib
chart and the HTML report alike."""

from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from roofline import api
from roofline.render import scene, style

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "results-h200.json"


@pytest.fixture(scope="module")
def doc():
    return api.show([FIXTURE])[0]


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
