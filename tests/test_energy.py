"""Energy: the fit of power against rate, the energy ceiling, the device table's rows, the energy
roofline chart and its refusals, drawn from the committed H200 run made with --energy."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.measure import ceilings
from roofline.measure.energy_ceilings import fit
from roofline.measure.rounds import Item
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


def test_a_fit_whose_power_did_not_rise_with_the_rate_is_no_energy():
    # an H100's FP16 tensor loads, every one at the power limit (device --measure, 2026-12-07): the slope is
    # below zero, and a model paying -0.163 pJ a FLOP would call the tensor cores' work free
    capped = EnergyFit("fp16_tensor", "FLOP", -0.163, 0.076, 797.0, 38.0, 6)
    flat = EnergyFit("fp32", "FLOP", 0.3, 0.2, 180.0, 6.0, 4)  # above zero, within two errors of it
    energy = EnergyCeilings(idle_w=128.0, fits=(capped, flat, FITS.fits[1]), measured_at="2026-12-07")
    assert not capped.resolved and not flat.resolved and FITS.fits[1].resolved
    assert energy.fit("fp16_tensor") is None and energy.fit("fp32") is None and energy.fit("dram") is not None
    assert energy.gflop_per_j(1000, "fp16_tensor", 1e6, 4000) is None
    rows = dict(energy_rows(energy))
    assert rows["energy per FLOP (FP16 tensor, fitted)"].startswith(
        "not resolved: the power did not rise with the rate over 6 loads (-0.16 ± 0.076 pJ, 797 W at no rate")


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
    r = runner.invoke(app, ["plot", str(PLOTS / "results-h200.json"), "--kind", "energy",
                            "--out", str(tmp_path / "e.png")])
    assert r.exit_code == 2 and "no kernel's energy was measured; run the kernels with roofline run --energy" in r.stderr
    r = runner.invoke(app, ["plot", str(PLOTS / "profile-h200-gpt2.json"), "--kind", "energy",
                            "--out", str(tmp_path / "e.png")])
    assert r.exit_code == 2 and "no energy per kernel (ncu replays each kernel)" in r.stderr
    r = runner.invoke(app, ["plot", str(ENERGY_RUN), "--kind", "energy", "--measured",
                            "--out", str(tmp_path / "e.png")])
    assert r.exit_code == 2 and "--measured applies to --kind roofline" in r.stderr
    assert not (tmp_path / "e.png").exists()


FP32_ENERGY = PLOTS / "results-h200-energy.json"


def test_compare_and_whatif_carry_the_joules_where_the_files_have_them():
    from roofline import documents
    from roofline.commands import whatif as whatif_cmd

    same = documents.compare(FP32_ENERGY, FP32_ENERGY)
    doc = store.load(FP32_ENERGY)
    k = next(k for k in doc.kernels if k.name == "full_tiles")
    d = next(d for d in same.kernels if d.label == "full_tiles")
    assert d.joules == (k.energy.joules_per_launch, k.energy.joules_per_launch)
    assert d.to_dict()["joules"] == [k.energy.joules_per_launch] * 2
    without = documents.compare(FP32_ENERGY, PLOTS / "results-h200.json")  # one file without energy: none compared
    assert all(d.joules is None for d in without.kernels) and "joules" not in without.kernels[0].to_dict()
    w = whatif_cmd.whatif(FP32_ENERGY)
    assert next(x for x in w.kernels if x.name == "full_tiles").joules == k.energy.joules_per_launch
    assert "joules" not in whatif_cmd.whatif(PLOTS / "results-h200.json").kernels[0].to_json()


class SimulatedGpu:
    """A stream that runs its launches back to back after the host enqueues them, at a power per
    kind of launch over an idle floor, and an NVML energy counter that changes only every
    `update_s` of the clock (as a real one does: every few to tens of milliseconds)."""

    def __init__(self, update_s: float, idle_w: float = 100.0):
        self.t, self.free_at, self.update_s, self.idle_w = 0.0, 0.0, update_s, idle_w
        self.starts: list[float] = []  # each launch's start, end and its joules above idle so far
        self.ends: list[float] = []
        self.watts: list[float] = []
        self.cumulative = [0.0]

    def work(self, seconds: float, watts: float):
        def launch():
            self.t += 5e-6  # the host's enqueuing
            start = max(self.t, self.free_at)
            self.free_at = start + seconds
            self.starts.append(start)
            self.ends.append(self.free_at)
            self.watts.append(watts - self.idle_w)
            self.cumulative.append(self.cumulative[-1] + (watts - self.idle_w) * seconds)
        return launch

    def joules(self, at: float) -> float:
        import bisect

        done = bisect.bisect_right(self.ends, at)  # launches are back to back, in order
        partial = 0.0
        if done < len(self.starts) and self.starts[done] < at:
            partial = self.watts[done] * (at - self.starts[done])
        return self.idle_w * at + self.cumulative[done] + partial

    def read(self, energy=False):
        from roofline.measure.nvml import Reading

        self.t += 20e-6  # an NVML query
        seen = self.update_s * (self.t // self.update_s)
        return Reading(None, None, None, int(1000 * self.joules(seen)), None, None)

    def mark(self):
        end = self.free_at
        return lambda: self.t >= end

    def wait(self, n=0):
        self.t = max(self.t, self.free_at)

    def sleep(self, s):
        self.t += s

    def now(self):
        return self.t


@pytest.mark.parametrize("update_s", [0.001, 0.02, 0.1])
def test_a_kernels_energy_is_read_between_the_counters_own_updates_and_the_flush_subtracted(update_s):
    from roofline.measure import energy as meter

    gpu = SimulatedGpu(update_s)
    flush = gpu.work(0.0001, 300.0)                   # 0.1 ms at 300 W: 0.03 J a flush
    kernel = Item(gpu.work(0.002, 600.0), gpu.wait)   # 2 ms at 600 W: 1.2 J a launch
    other = Item(gpu.work(0.0005, 400.0), gpu.wait)   # 0.5 ms at 400 W: 0.2 J a launch
    energies, flush_j = meter.measure_rounds([kernel, other], [2.0, 0.5], gpu, flush, before_ms=0.1,
                                             mark=gpu.mark, clock=gpu.now, sleep=gpu.sleep)
    assert flush_j == pytest.approx(0.03, rel=0.01)
    k, o = energies
    # Two readings around each half-second loop would be off by up to one update at each end
    # (up to 40 % with 100 ms updates); between the updates seen inside it, the power is exact.
    assert k.windowed and o.windowed and len(k.loops_j) == meter.LOOPS
    assert k.joules_per_launch == pytest.approx(1.2, rel=0.01) and o.joules_per_launch == pytest.approx(0.2, rel=0.02)
    assert k.watts == pytest.approx((1.2 + 0.03) / 0.0021, rel=0.01) and k.subtracted_j == flush_j
    assert k.ci95_j[0] <= k.joules_per_launch <= k.ci95_j[1] and k.stable


def test_a_counter_that_updates_too_slowly_for_a_window_is_read_at_the_loops_ends_and_says_so():
    from roofline.measure import energy as meter

    gpu = SimulatedGpu(update_s=3.0)
    kernel = Item(gpu.work(0.002, 600.0), gpu.wait)
    (e,), _ = meter.measure_rounds([kernel], [2.0], gpu, None, mark=gpu.mark, clock=gpu.now, sleep=gpu.sleep, loops=6)
    assert not e.windowed and len(e.loops_j) == 6
    assert not e.stable  # a 3 s counter over one-second loops: whole updates or none, never a stable figure


def test_a_kernel_that_faults_in_its_energy_loop_keeps_no_energy_and_the_rest_go_on():
    from roofline.measure import energy as meter

    gpu = SimulatedGpu(update_s=0.01)
    calls = {"n": 0}

    def faulty():
        calls["n"] += 1
        if calls["n"] > 10:
            raise RuntimeError("illegal address")
        gpu.work(0.001, 500.0)()

    bad, good = Item(faulty, gpu.wait), Item(gpu.work(0.001, 500.0), gpu.wait)
    (e_bad, e_good), _ = meter.measure_rounds([bad, good], [1.0, 1.0], gpu, None, mark=gpu.mark, clock=gpu.now, sleep=gpu.sleep)
    assert e_bad is None and isinstance(bad.error, RuntimeError)
    assert e_good.joules_per_launch == pytest.approx(0.5, rel=0.01)


def test_a_launch_that_hangs_in_its_energy_loop_is_left_to_its_own_wait_whose_timeout_ends_it():
    from roofline.measure import energy as meter

    gpu = SimulatedGpu(update_s=0.01)

    def stuck(n=0):
        if gpu.free_at > 1e6:
            raise TimeoutError("stopped after 5.0 s, still running")
        gpu.wait(n)

    hang = Item(lambda: setattr(gpu, "free_at", 1e9), stuck)  # a launch that never ends
    (e,), _ = meter.measure_rounds([hang], [1.0], gpu, None, mark=gpu.mark, clock=gpu.now, sleep=gpu.sleep)
    assert e is None and isinstance(hang.error, TimeoutError) and gpu.t < 10  # after its patience, not forever


def test_no_energy_counter_gives_no_energy():
    from roofline.measure import energy as meter
    from roofline.measure.nvml import Reading

    class NoCounter(SimulatedGpu):
        def read(self, energy=False):
            return Reading(1980, 0, None, None, None, None)

    gpu = NoCounter(0.01)
    assert meter.measure_rounds([Item(gpu.work(0.001, 500.0), gpu.wait)], [1.0], gpu, None,
                                mark=gpu.mark, clock=gpu.now, sleep=gpu.sleep) is None


def test_a_counter_that_never_moves_gives_no_energy_and_says_so_not_zero_joules():
    from roofline.measure import energy as meter

    class Still(SimulatedGpu):
        unsupported: list[str] = []

        def read(self, energy=False):
            from roofline.measure.nvml import Reading

            self.t += 20e-6
            return Reading(None, None, None, 123_456, None, None)  # the same millijoules at every reading

    gpu = Still(0.01)
    gpu.unsupported = []
    assert meter.measure_rounds([Item(gpu.work(0.001, 500.0), gpu.wait)], [1.0], gpu, None,
                                mark=gpu.mark, clock=gpu.now, sleep=gpu.sleep) is None
    assert gpu.unsupported == [meter.STILL_COUNTER]
    from roofline.measure.runner import _nvml_notes

    assert _nvml_notes(gpu.unsupported, energy=True)[0].startswith(
        "NVML gives no energy (its counter did not move while the loops ran) on this GPU")


def test_an_item_whose_loops_never_saw_the_counter_move_has_no_energy_while_the_others_keep_theirs():
    from roofline.measure import energy as meter

    gpu = SimulatedGpu(update_s=0.01)
    idle = Item(lambda: None, gpu.wait)  # enqueues nothing: its loops take no time, the counter never moves in them
    busy = Item(gpu.work(0.001, 500.0), gpu.wait)
    (e_idle, e_busy), _ = meter.measure_rounds([idle, busy], [0.0005, 1.0], gpu, None, mark=gpu.mark, clock=gpu.now,
                                               sleep=gpu.sleep)
    assert e_idle is None and e_busy.joules_per_launch == pytest.approx(0.5, rel=0.01)


@pytest.mark.parametrize("edit, says", [
    (lambda e: e.update(joules_per_launch=-1.0), "energy.joules_per_launch: -1.0 is not a non-negative number"),
    (lambda e: e.update(joules_per_launch=0.5), "energy.joules_per_launch: 0.5 disagrees with the 1.7"),
    (lambda e: e.update(watts=2000.0), "do not add up to the loops' 2,000 W"),
    (lambda e: e.update(launches=0), "watts, seconds and launches must be positive"),
    (lambda e: e.update(subtracted_j=5.0), "J of flush do not add up"),
])
def test_a_hand_edited_energy_record_is_refused_in_one_line(edit, says):
    """The committed BF16 energy file, one figure of wgmma_tma's energy changed."""
    import json
    from pathlib import Path

    from roofline.errors import UsageError
    from roofline.results import store

    doc = json.loads((Path(__file__).parent.parent / "plots" / "results-h200-bf16-8192-energy.json").read_text())
    k = next(k for k in doc["kernels"] if k["name"] == "wgmma_tma")
    edit(k["energy"])
    with pytest.raises(UsageError, match=re.escape(says)) as err:
        store.parse(doc)
    assert "\n" not in str(err.value) and str(err.value).startswith("results: kernels[3].energy")


def test_throttle_marks_that_disagree_with_their_reasons_or_clock_are_refused():
    import json
    from pathlib import Path

    from roofline.errors import UsageError
    from roofline.results import store

    raw = json.loads((Path(__file__).parent.parent / "plots" / "results-h200-bf16-8192-run1.json").read_text())
    t = raw["kernels"][0]["timing"]
    i = next(i for i, (r, c) in enumerate(zip(t["reasons"], t["sm_clock_mhz"])) if not r and c == 1980)
    t["throttled"][i] = True  # a sample at full clock with no reason, marked throttled
    with pytest.raises(UsageError, match=rf"kernels\[0\]\.timing\.throttled\[{i}\]: true, but its reasons \(none\) and "
                                         r"clock \(1980 MHz\) make it false"):
        store.parse(raw)
    raw = json.loads((Path(__file__).parent.parent / "plots" / "results-h200-bf16-8192-run1.json").read_text())
    raw["kernels"][0]["timing"]["sm_clock_mhz"] = [1000] * len(raw["kernels"][0]["timing"]["samples_ms"])
    raw["kernels"][0]["timing"]["reasons"] = [""] * len(raw["kernels"][0]["timing"]["samples_ms"])  # none given
    with pytest.raises(UsageError, match=r"kernels\[0\]\.timing\.throttled\[\d+\]: false, but its reasons \(none\) and "
                                         r"clock \(1000 MHz\) make it true"):
        store.parse(raw)


def test_an_edited_time_is_named_as_the_time_not_as_the_rate():
    import json
    from pathlib import Path

    from roofline.errors import UsageError
    from roofline.results import store

    raw = json.loads((Path(__file__).parent.parent / "plots" / "results-h200-bf16-8192-energy.json").read_text())
    raw["kernels"][3]["time_ms"] = 1.0
    with pytest.raises(UsageError, match=r"kernels\[3\]\.time_ms: 1 disagrees with"):
        store.parse(raw)


def test_a_loop_records_the_clock_it_ran_at_and_the_note_compares_it_with_the_timing():
    """A GPU whose clock falls to 1,650 MHz under the loop's sustained load (a power cap): the loop
    records that clock, and the run's notes set it and the loop's time per launch beside the
    timing's."""
    from roofline.measure import energy as meter
    from roofline.measure.nvml import Reading
    from roofline.render.tables import energy_lines
    from roofline.results import store
    from conftest import make_doc

    class Capped(SimulatedGpu):
        def read(self, energy=False):
            r = super().read(energy)
            return Reading(1980 if self.t < 0.02 else 1650, None, None, r.energy_mj, None, None)

    gpu = Capped(0.01)
    (e,), _ = meter.measure_rounds([Item(gpu.work(0.002, 600.0), gpu.wait)], [2.0], gpu, None, mark=gpu.mark,
                                   clock=gpu.now, sleep=gpu.sleep)
    assert e.clock_mhz == 1650 and e.ms_per_launch == pytest.approx(1000 * e.seconds / e.launches)
    raw = make_doc()
    k = raw["kernels"][5]
    k["timing"] = {"samples_ms": [k["time_ms"]] * 20, "warmup": 3, "sm_clock_mhz": [1980] * 20, "reasons": [""] * 20,
                   "power_w": [500.0] * 20, "throttled": [False] * 20, "full_clock_share": 0.97}
    k["energy"] = {"joules_per_launch": 2.0, "watts": 700.0, "launches": 300, "seconds": 300 * 2.0 / 700,
                   "clock_mhz": 1650, "loops_j": [2.0] * 6, "windowed": True}
    doc = store.parse(raw)
    line = energy_lines(doc)[-1]
    assert line.startswith("energy loops are a second of sustained load each, and these ran at a lower clock")
    assert f"register_tiling_2d 1,650 MHz and {1000 * 2.0 / 700:.3f} ms a launch (timed {k['time_ms']:.3f} ms, up to 1,980 MHz)" in line
