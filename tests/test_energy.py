"""Energy: the fit of power against rate, the energy ceiling, the device table's rows, the energy
roofline chart and its refusals, drawn from the committed H200 run made with --energy."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.measure import ceilings
from roofline.measure.energy_ceilings import fit
from roofline.model.energy import EnergyCeilings, EnergyFit
from roofline.render import energy_chart
from roofline.render.tables import energy_rows
from roofline.results import store

PLOTS = Path(__file__).resolve().parent.parent / "plots"
ENERGY_RUN = PLOTS / "results-h200-bf16-8192-energy.json"
FITS = EnergyCeilings(idle_w=75.0, fits=(EnergyFit("fp16_tensor", "FLOP", 0.5, 0.05, 250.0, 10.0, 4),
                                          EnergyFit("dram", "byte", 20.0, 2.0, 200.0, 8.0, 4),
                                          EnergyFit("fp32", "FLOP", 8.0, 0.4, 180.0, 6.0, 4)),
                      measured_at="2026-12-02T06:40:00+00:00")


def test_power_against_rate_is_fitted_with_its_errors():
    # 100 W at rest and 10 pJ per byte: 1 TB/s draws 110 W, 3 TB/s 130 W; exact points, no error
    points = [(100 + 10e-12 * r, r) for r in (1e12, 2e12, 3e12, 4e12)]
    f = fit("dram", "byte", points)
    assert (round(f.pj_per_unit, 6), round(f.static_w, 6), f.points) == (10.0, 100.0, 4)
    assert f.pj_error == pytest.approx(0, abs=1e-6) and f.static_error == pytest.approx(0, abs=1e-6)
    noisy = fit("dram", "byte", [(111, 1e12), (119, 2e12), (131, 3e12), (139, 4e12)])
    assert noisy.pj_per_unit == pytest.approx(9.6) and noisy.pj_error > 0.5  # the residuals give it an error
    assert fit("dram", "byte", points[:2]) is None  # two points: a line, but no error


def test_the_energy_ceiling_is_the_roofline_paying_each_flop_byte_and_second():
    # a 1,000 TFLOP/s roof and 4 TB/s: the ridge at 250 FLOP/B. At 1,000 FLOP/B compute-bound,
    # 1 ps per FLOP: 0.5 pJ + 20/1000 pJ + 250 W x 1 ps = 0.77 pJ per FLOP -> 1,298.7 GFLOP/J
    assert FITS.gflop_per_j(1000, "fp16_tensor", 1e6, 4000) == pytest.approx(1e-9 / 0.77e-12)
    # at 100 FLOP/B memory-bound, 2.5 ps per FLOP: 0.5 + 0.2 + 0.625 = 1.325 pJ -> 754.7 GFLOP/J
    assert FITS.gflop_per_j(100, "fp16_tensor", 1e6, 4000) == pytest.approx(1e-9 / 1.325e-12)
    # at 1 FLOP/B: memory-bound, 250 ps per FLOP: 0.5 + 20 + 62.5 = 83 pJ -> 12.05 GFLOP/J
    assert FITS.gflop_per_j(1, "fp16_tensor", 1e6, 4000) == pytest.approx(1e-9 / 83e-12)
    assert FITS.gflop_per_j(1, "tf32_only", 1e6, 4000) is None


def test_the_device_table_shows_the_fits_with_their_errors():
    rows = dict(energy_rows(FITS))
    assert rows["idle power (measured)"] == "75 W"
    assert rows["energy per byte (DRAM, fitted)"] == "20 ± 2 pJ; 200 ± 8 W at no rate (4 loads)"
    assert energy_rows(None) == []


def test_the_cached_ceilings_carry_the_energy_fits():
    entry = ceilings.Ceilings(4283.0, 61874.0, "now", 2**30, energy=json.loads(json.dumps(
        {"idle_w": 75.0, "fits": [vars(f) for f in FITS.fits], "measured_at": FITS.measured_at})))
    doc = store.load(ENERGY_RUN)
    assert entry.attach(doc.device).measured_energy == FITS


def test_the_energy_roofline_draws_the_ladder_under_its_fitted_ceiling(tmp_path):
    doc = store.load(ENERGY_RUN)
    pts = energy_chart.points(doc)
    flops = 2 * 8192**3
    best = max(pts, key=lambda p: p[2])
    k = next(k for k in doc.kernels if k.name == best[0])
    assert best[2] == pytest.approx(flops / k.energy.joules_per_launch / 1e9)
    assert len(pts) == sum(1 for k in doc.kernels if k.timed and k.energy)
    withfit = doc.model_copy(update={"device": replace(doc.device, measured_energy=FITS)})
    fig = energy_chart.render(withfit)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[0].startswith("energy ceiling (fitted): 0.5 ± 0.05 pJ/FLOP (FP16 tensor fit), 20 ± 2 pJ/DRAM byte")
    assert any(t.startswith(f"{best[0]}: {best[2]:,.0f} GFLOP/J") for t in labels)
    bare = energy_chart.render(doc)  # no fit on this device: the chart says how to get one
    assert any("roofline device --measure" in t.get_text() for t in bare.axes[0].texts) or doc.device.measured_energy


def test_the_energy_chart_is_refused_in_one_line_where_it_has_nothing_to_draw(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["plot", "--results", str(PLOTS / "results-h200.json"), "--kind", "energy",
                            "--out", str(tmp_path / "e.png")])
    assert r.exit_code == 2 and "no kernel's energy was measured; run the kernels with roofline run --energy" in r.stderr
    r = runner.invoke(app, ["plot", "--results", str(PLOTS / "profile-h200-gpt2.json"), "--kind", "energy",
                            "--out", str(tmp_path / "e.png")])
    assert r.exit_code == 2 and "no energy per kernel (ncu replays each kernel)" in r.stderr
    r = runner.invoke(app, ["plot", "--results", str(ENERGY_RUN), "--kind", "energy", "--measured",
                            "--out", str(tmp_path / "e.png")])
    assert r.exit_code == 2 and "--measured applies to --kind roofline" in r.stderr
    assert not (tmp_path / "e.png").exists()


FP32_ENERGY = PLOTS / "results-h200-energy.json"


def test_compare_and_whatif_carry_the_joules_where_the_files_have_them():
    from roofline import api

    same = api.compare(FP32_ENERGY, FP32_ENERGY)
    doc = store.load(FP32_ENERGY)
    k = next(k for k in doc.kernels if k.name == "full_tiles")
    d = next(d for d in same.kernels if d.label == "full_tiles")
    assert d.joules == (k.energy.joules_per_launch, k.energy.joules_per_launch)
    assert d.to_dict()["joules"] == [k.energy.joules_per_launch] * 2
    without = api.compare(FP32_ENERGY, PLOTS / "results-h200.json")  # one file without energy: none compared
    assert all(d.joules is None for d in without.kernels) and "joules" not in without.kernels[0].to_dict()
    w = api.whatif(FP32_ENERGY)
    assert next(x for x in w.kernels if x.name == "full_tiles").joules == k.energy.joules_per_launch
    assert "joules" not in api.whatif(PLOTS / "results-h200.json").kernels[0].to_json()


def test_the_flush_is_subtracted_at_its_own_energy_from_a_loop_long_enough_for_the_counter(monkeypatch):
    from roofline.measure import energy as meter
    from roofline.measure.nvml import Reading

    state = {"t": 0.0, "mj": 0.0}
    monkeypatch.setattr(meter.time, "monotonic", lambda: state["t"])

    def spend(seconds, joules):
        state["t"] += seconds
        state["mj"] += 1000 * joules

    class Counter:  # NVML's counter, updated only every 50 ms of the clock
        def read(self, energy=False):
            return Reading(None, None, None, 50 * (state["mj"] // 50), None, None)

    flush = lambda: spend(0.0001, 0.05)  # 0.1 ms and 50 mJ a flush: a kernel's flushes alone last milliseconds
    kernel = lambda: spend(0.002, 1.2)   # 2 ms and 1.2 J a launch
    per_flush = meter.before_joules(flush, lambda n: None, Counter())
    assert per_flush == pytest.approx(0.05, rel=1e-3)  # a second of flushes: the counter's 50 mJ steps vanish
    e = meter.measure(kernel, 2.0, lambda n: None, Counter(), flush, before_j=per_flush)
    assert e.joules_per_launch == pytest.approx(1.2, rel=1e-3) and e.launches == 500 and e.subtracted_j == per_flush
