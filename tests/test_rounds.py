"""Kernels and their reference timed alike, in rounds: the confidence interval of a median, the
pairing of a kernel with its reference, the throttle marks, and the rounds themselves on a
simulated GPU whose clock falls under sustained load (a stand-in for CuPy's events)."""

from __future__ import annotations

import json
import statistics
import sys
import types

import pytest
from conftest import make_doc

from roofline.errors import UsageError
from roofline.measure import rounds as rounds_mod
from roofline.measure.nvml import Reading, reasons_between
from roofline.measure.rounds import Item, burst_for, time_in_rounds
from roofline.model.timing import mark_throttled
from roofline.model.energy import Energy
from roofline.model.timing import Timing, median_ci95, paired
from roofline.results import store


def test_the_median_interval_is_the_binomial_rank_interval():
    # n = 100: ranks 50 -/+ 1.96 * 10 / 2 = 40.2 .. 59.8 -> the 41st and 60th order statistics
    # (0-based 40 and 59), the textbook interval for the median of 100 values.
    assert median_ci95(range(100)) == (40, 59)
    assert median_ci95(range(20)) == (5, 14)  # n = 20: 10 -/+ 4.38 -> 5.6 .. 14.4: ranks 6 to 15
    assert median_ci95([1.0] * 5) is None  # too few for a 95 % interval
    t = Timing(tuple(1.0 + i / 10_000 for i in range(100)), 3)
    assert t.ci95_ms == (1.004, 1.0059) and t.ci95_half == pytest.approx(0.00095 / 1.00495)
    assert t.stable  # known to +/-0.1 %, spread 0.5 %


def test_a_wide_interval_is_not_stable_and_few_samples_have_no_verdict():
    wide = Timing(tuple(1.0 + (i % 10) / 10 for i in range(30)), 3)  # 1.0 .. 1.9
    assert wide.ci95_half > 0.01 and wide.stable is False
    assert Timing((1.0, 1.1), 3).stable is None


def test_a_kernel_is_paired_with_the_reference_of_its_round_and_the_next():
    # reference at 1.0 ms in rounds 0 and 1, 0.8 ms (a faster clock) in round 2; the kernel at 2 ms
    ref = Timing((1.0, 1.0, 0.8), 3, rounds=(0, 1, 2))
    k = Timing((2.0, 2.0, 1.6), 3, rounds=(0, 1, 2))
    p = paired(k, ref)
    # round 0: mean(1.0, 1.0) / 2.0 = 50 %; round 1: mean(1.0, 0.8) / 2.0 = 45 %; round 2: 0.8 / 1.6 = 50 %
    assert (p.pct, p.pairs) == (50.0, 3) and p.ci95 is None
    assert paired(k, Timing((1.0,), 3)) is None  # not timed in rounds: no pairing


def test_full_clock_pairs_leave_throttled_rounds_out_and_say_when_none_is_left():
    ref = Timing((1.0, 1.2, 1.2), 3, rounds=(0, 1, 2), throttled=(False, True, True))
    k = Timing((1.0, 1.3, 1.3), 3, rounds=(0, 1, 2), throttled=(False, True, True))
    assert paired(k, ref, full_clock=True).pct == pytest.approx(100.0)
    assert paired(k, ref).pct == pytest.approx(100 * 1.2 / 1.3)  # as run: the throttled rounds rule
    hot = Timing((1.0,), 3, rounds=(0,), throttled=(True,))
    assert paired(hot, hot, full_clock=True) is None
    assert k.full_clock_median_ms == 1.0 and k.throttled_samples == 2


def test_a_sample_is_throttled_below_the_share_of_the_top_clock_or_by_its_reason_where_the_clock_is_unknown():
    marks = mark_throttled(["", "power_cap", "", "", "power_cap", "thermal"], [1980, 1980, 1900, None, None, 1850],
                           1980, 0.97)
    # 1900 and 1850 < 0.97 * 1980 = 1920.6; a reason at 1,980 MHz trails an earlier cap (the clock held): not
    # marked; with the clock unknown the reason is the evidence
    assert marks == [False, False, True, False, True, True]
    assert mark_throttled(["power_cap", ""], [1980, 1500], None, 0.97) == [True, False]  # no top clock: reasons alone


def test_reasons_come_from_either_mask_or_a_violation_time_that_grew():
    quiet = Reading(1980, 0x1, 300_000, None, 5_000, 0)  # idle only
    capped = Reading(1635, 0x4, 700_000, None, 5_000, 0)
    assert reasons_between(quiet, quiet) == ""
    assert reasons_between(quiet, capped) == "power_cap"
    grew = Reading(1980, 0x0, 700_000, None, 9_000, 10)  # the mask cleared, but the counters grew
    assert reasons_between(quiet, grew) == "power_cap+thermal"
    assert reasons_between(quiet, Reading(None, None, None, None, None, None)) == ""


def test_every_item_gets_the_same_burst_sized_by_the_slowest():
    assert burst_for([2.7, 5.0, 1.0]) == 4  # 20 ms / 5 ms
    assert burst_for([70.0, 2.7]) == 1
    assert burst_for([0.01]) == rounds_mod.MAX_BURST


class FakeGPU:
    """CuPy's events on a simulated GPU: each launch takes its item's base time over the clock,
    and the clock falls from 1,980 to 1,635 MHz (a power cap) once `heat` ms of work have run."""

    def __init__(self, heat_ms: float = 1e9):
        self.t = 0.0
        self.busy = 0.0
        self.heat = heat_ms
        self.log: list[str] = []
        gpu = self

        class Event:
            done = True  # the simulated launches run as they are enqueued

            def record(self):
                self.at = gpu.t

        cuda = types.SimpleNamespace(Event=Event, get_elapsed_time=lambda a, b: b.at - a.at)
        self.module = types.SimpleNamespace(cuda=cuda)

    @property
    def clock(self) -> int:
        return 1980 if self.busy < self.heat else 1635

    def item(self, name: str, base_ms: float, fail_after: int | None = None) -> Item:
        count = [0]

        def launch():
            count[0] += 1
            if fail_after is not None and count[0] > fail_after:
                raise RuntimeError(f"{name} faulted")
            ms = base_ms * 1980 / self.clock
            self.t += ms
            self.busy += ms
            self.log.append(name)
        return Item(launch, lambda n: None)


class FakeSampler:
    def __init__(self, gpu: FakeGPU):
        self.gpu = gpu
        self.unsupported: list[str] = []

    def read(self, energy=False):
        capped = self.gpu.clock < 1980
        return Reading(self.gpu.clock, 0x4 if capped else 0, 500_000, None, None, None)


@pytest.fixture
def gpu(monkeypatch):
    g = FakeGPU()
    monkeypatch.setitem(sys.modules, "cupy", g.module)
    return g


def test_rounds_interleave_the_reference_and_rotate_the_kernels(gpu):
    items = [gpu.item("ref", 1.0), gpu.item("a", 2.0), gpu.item("b", 5.0)]
    out = time_in_rounds(items, sampler=FakeSampler(gpu), min_samples=8, max_samples=8)
    assert out.burst == 4 and out.rounds == 2  # 20 ms / 5 ms; 8 samples each
    timed = gpu.log[3 * rounds_mod.WARMUP:]  # after each item's warm-up
    bursts = [timed[i] for i in range(0, len(timed), 4)]
    assert bursts == ["ref", "a", "b", "ref", "b", "a"]  # the reference first, the kernels rotated
    ref, a, b = out.timings
    assert ref.samples_ms == (1.0,) * 8 and a.rounds == (0,) * 4 + (1,) * 4
    assert paired(a, ref).pct == 50.0 and paired(b, ref).pct == 20.0
    assert a.throttled == (False,) * 8 and a.sm_clock_mhz == (1980,) * 8 and a.full_clock_share == 0.97


def test_under_a_power_cap_both_readings_are_kept_and_never_mixed(gpu):
    gpu.heat = 100.0  # the clock falls after 100 ms of work
    items = [gpu.item("ref", 1.0), gpu.item("k", 1.0 / 0.9)]  # the kernel at 90 % of the reference
    out = time_in_rounds(items, sampler=FakeSampler(gpu), min_samples=200, max_samples=200)
    ref, k = out.timings
    assert out.top_clock_mhz == 1980
    assert 0 < k.throttled_samples < len(k.samples_ms)
    assert paired(k, ref).pct == pytest.approx(90.0)  # timed alike, both throttled alike
    assert paired(k, ref, full_clock=True).pct == pytest.approx(90.0)
    assert k.full_clock_median_ms == pytest.approx(1.0 / 0.9)
    assert k.median_ms == pytest.approx(1.0 / 0.9 * 1980 / 1635)  # as run: mostly throttled
    assert k.reasons_seen == ["power_cap"] and k.clock_mhz == (1635, 1980)


def test_rounds_stop_when_every_median_is_known_to_one_percent(gpu):
    items = [gpu.item("ref", 1.0), gpu.item("k", 2.0)]
    out = time_in_rounds(items, sampler=None, min_samples=20, max_samples=400)
    assert len(out.timings[0].samples_ms) == 20  # steady times: settled as soon as allowed
    assert out.timings[0].throttled is None and out.timings[0].sm_clock_mhz is None  # no sampler: not recorded


def test_rounds_stop_at_the_budget_once_each_has_its_minimum(gpu):
    def noisy_items():
        flip = [0]

        def launch():  # 1.0 and 1.5 ms in turn: a median that never settles to 1 %
            flip[0] += 1
            gpu.t += 1.0 if flip[0] % 2 else 1.5
        return [Item(launch, lambda n: None), gpu.item("k", 2.0)]

    seconds = iter(range(0, 10**6, 10))  # each look at the clock: ten seconds later
    out = time_in_rounds(noisy_items(), sampler=None, budget_s=3, clock=lambda: next(seconds))
    assert out.burst == 10 and [len(t.samples_ms) for t in out.timings] == [20, 20]  # 2 rounds, then spent
    unbounded = time_in_rounds(noisy_items(), sampler=None, budget_s=1e9, max_samples=100)
    assert [len(t.samples_ms) for t in unbounded.timings] == [100, 100]  # never settled: up to the most


def test_a_kernel_that_faults_is_set_aside_and_the_rest_go_on(gpu):
    items = [gpu.item("ref", 1.0), gpu.item("bad", 1.0, fail_after=5), gpu.item("k", 2.0)]
    out = time_in_rounds(items, sampler=None, min_samples=20, max_samples=20)
    assert isinstance(items[1].error, RuntimeError) and out.timings[1] is None
    assert len(out.timings[2].samples_ms) == 20


def test_a_file_records_each_samples_conditions_and_its_paired_percentage():
    doc = make_doc()
    n = 6
    ref_ms = doc["reference"]["time_ms"]
    doc["reference"]["timing"] = {"samples_ms": [ref_ms] * n, "warmup": 3, "rounds": list(range(n)),
                                  "sm_clock_mhz": [1980] * n, "reasons": [""] * n, "power_w": [600.0] * n,
                                  "throttled": [False] * n, "full_clock_share": 0.97}
    k = doc["kernels"][5]
    k["timing"] = dict(doc["reference"]["timing"], samples_ms=[k["time_ms"]] * n)
    k["pct_of_reference"] = 100 * ref_ms / k["time_ms"]
    k["energy"] = {"joules_per_launch": 2.0, "watts": 600.0, "launches": 300, "seconds": 1.0}
    r = store.parse(json.loads(json.dumps(doc)))
    rec = r.kernels[5]
    assert rec.timing.sm_clock_mhz == (1980,) * n and rec.energy.gflop_per_j(r.problem.problem.flops) == \
        pytest.approx(2 * 4096**3 / 2.0 / 1e9)
    k["pct_of_reference"] *= 1.1  # not what its paired samples give
    with pytest.raises(UsageError, match=r"kernels\[5\]\.pct_of_reference"):
        store.parse(json.loads(json.dumps(doc)))
    k["pct_of_reference"] /= 1.1
    k["timing"]["throttled"] = [False] * (n - 1)
    with pytest.raises(UsageError, match=r"kernels\[5\]\.timing\.throttled: 5 values for 6 samples"):
        store.parse(json.loads(json.dumps(doc)))


def test_energy_per_flop_and_per_byte():
    e = Energy(joules_per_launch=0.5, watts=500.0, launches=2000, seconds=1.0)
    assert e.gflop_per_j(1e12) == 2000.0 and e.bytes_per_j(1e9) == 2e9
    assert Energy(0.0, 0.0, 1, 1.0).gflop_per_j(1e12) is None and e.bytes_per_j(None) is None


def test_median_of_pairs_is_what_statistics_says():
    ref = Timing(tuple([1.0] * 10), 3, rounds=tuple(range(10)))
    k = Timing(tuple(1.0 + i / 100 for i in range(10)), 3, rounds=tuple(range(10)))
    ratios = [100 * 1.0 / (1.0 + i / 100) for i in range(10)]
    assert paired(k, ref).pct == pytest.approx(statistics.median(ratios))


def _rounds_doc(throttle_all: bool = False) -> dict:
    """make_doc's run as if timed in 6 rounds: cuBLAS and register_tiling_2d throttled in rounds
    3 to 5 (1,635 MHz under the power cap, 20 % slower), or in every round."""
    doc = make_doc()
    n = 6
    hot = [throttle_all or r >= 3 for r in range(n)]
    ref_ms = doc["reference"]["time_ms"]

    def timing(ms):
        return {"samples_ms": [ms * (1.2 if h else 1.0) for h in hot], "warmup": 3, "rounds": list(range(n)),
                "sm_clock_mhz": [1635 if h else 1980 for h in hot], "reasons": ["power_cap" if h else "" for h in hot],
                "power_w": [700.0] * n, "throttled": hot, "full_clock_share": 0.97}
    doc["reference"]["timing"] = timing(ref_ms)
    doc["reference"]["time_ms"] = statistics.median(doc["reference"]["timing"]["samples_ms"])
    doc["reference"]["gflops"] = 2 * 4096**3 / doc["reference"]["time_ms"] / 1e6
    doc["timed_in_rounds"] = {"rounds": n, "burst": 1, "top_clock_mhz": 1980, "full_clock_share": 0.97, "seconds": 0.2}
    for k in doc["kernels"]:
        if k.get("time_ms") is None:
            continue
        k["timing"] = timing(k["time_ms"])
        k["time_ms"] = statistics.median(k["timing"]["samples_ms"])
        k["gflops"] = 2 * 4096**3 / k["time_ms"] / 1e6
        k["pct_of_reference"] = 100 * doc["reference"]["time_ms"] / k["time_ms"]
    doc["kernels"][5]["energy"] = {"joules_per_launch": 2.5, "watts": 650.0, "launches": 300, "seconds": 1.1}
    return doc


def _shown(doc) -> str:
    from rich.console import Console

    from roofline.render.tables import run_tables, timing_lines

    console = Console(width=300, record=True)
    for table in run_tables(doc, 300):
        console.print(table)
    return console.export_text() + "\n".join(timing_lines(doc))


def test_the_run_table_shows_the_clock_the_throttled_samples_the_full_clock_figure_and_the_energy():
    doc = store.parse(_rounds_doc())
    shown = _shown(doc)
    row = next(line for line in shown.splitlines() if line.strip().startswith("register_tiling_2d"))
    k = doc.kernels[5]
    assert k.pct_of_reference == pytest.approx(100 * doc.reference.time_ms / k.time_ms)
    for cell in ("1,635-1,980", "3/6", f"{100 * 1.0 / (k.timing.full_clock_median_ms / doc.reference.timing.full_clock_median_ms):.1f}",
                 "2.50", "650", f"{2 * 4096**3 / 2.5 / 1e9:,.0f}", f"{k.model.gmem_bytes / 2.5 / 1e9:#.3g}"):
        assert cell in row, (cell, row)
    from roofline.render.tables import energy_lines

    assert "GB/J: bytes per joule, of model GMEM bytes (counted where Nsight Compute counted them" in energy_lines(doc)[-1]
    assert "throttled: 45 of 90 samples ran under a clock cap (power_cap) or below 97 % of 1,980 MHz" in shown
    assert "timed in 6 rounds of 1 launch per kernel" in shown


def test_where_no_sample_ran_at_full_clock_the_table_says_so():
    doc = store.parse(_rounds_doc(throttle_all=True))
    shown = _shown(doc)
    row = next(line for line in shown.splitlines() if line.strip().startswith("register_tiling_2d"))
    assert " none " in row
    assert "no sample ran at full clock: the full-clock readings are missing" in shown


def test_a_kernel_timed_apart_from_the_rounds_has_no_full_clock_figure_and_the_table_says_why():
    raw = _rounds_doc()
    raw["kernels"][5]["timing"]["rounds"] = None  # a user's kernel, timed in its own process
    doc = store.parse(raw)
    shown = _shown(doc)
    row = next(line for line in shown.splitlines() if line.strip().startswith("register_tiling_2d"))
    assert " none " not in row and f"{doc.kernels[5].pct_of_reference:.1f}" in row
    assert ("timed apart from cuBLAS's rounds (each in its own process): register_tiling_2d; their %cuBLAS is the "
            "ratio of the two medians") in shown
    k = doc.kernels[6]  # a kernel in the rounds keeps its full-clock pairing
    other = next(line for line in shown.splitlines() if line.strip().startswith(k.name))
    full = paired(k.timing, doc.reference.timing, full_clock=True).pct
    assert f" {full:.1f} " in other, (full, other)


def test_a_kernel_timed_in_its_own_process_may_have_seen_a_higher_clock_than_the_runs_rounds():
    """A user kernel's samples come from its own process's rounds, marked against that process's
    top clock (1,995 MHz here, above the parent's 1,980, with a power-cap reason at full clock left
    unmarked): the file is read, not refused; a sample of the parent's rounds above its top is not."""
    raw = _rounds_doc()
    t = raw["kernels"][5]["timing"]
    t["rounds"], t["sm_clock_mhz"][0], t["reasons"][0], t["throttled"][0] = None, 1995, "power_cap", False
    assert store.parse(raw).kernels[5].timing.sm_clock_mhz[0] == 1995
    raw = _rounds_doc()
    raw["kernels"][5]["timing"]["sm_clock_mhz"][0] = 1995
    with pytest.raises(Exception, match="1,995 MHz is above the run's top clock"):
        store.parse(raw)


def test_each_launch_gets_the_readings_taken_while_it_could_have_run():
    """A burst of 4 launches polled 3 times each: the power cap set during the third launch marks
    the third and the fourth, not the first two, and each launch's clock is the lowest reading of
    its own span."""
    def reading(mhz, capped=False, violation=0):
        return Reading(mhz, 0x4 if capped else 0, mhz * 300, None, violation, 0)
    # readings: before, then 3 per launch (taken while it runs), then one after the burst
    readings = [reading(1980)] + [reading(1980)] * 3 + [reading(1980)] * 3 \
        + [reading(1980), reading(1700, True, 5), reading(1640, True, 9)] + [reading(1635, True, 12)] * 3 \
        + [reading(1635, True, 12)]
    marks = [3, 6, 9, 12]  # launch j seen done after the reading at index 3 (j + 1)
    got = rounds_mod.launch_conditions(readings, marks, 4)
    assert [c for c, _, _ in got] == [1980, 1980, 1640, 1635]
    assert [w for _, w, _ in got] == ["", "", "power_cap", "power_cap"]
    assert got[0][2] == pytest.approx(1980 * 0.3) and got[3][2] == pytest.approx(1635 * 0.3)
    # a burst the host stopped watching (its patience ran out after two launches): the rest get
    # the readings to the end
    late = rounds_mod.launch_conditions(readings[:7] + readings[-1:], [3, 6], 4)
    assert [c for c, _, _ in late] == [1980, 1980, 1635, 1635]
    # no sampler: nothing known, for every launch
    assert rounds_mod.launch_conditions([], [], 3) == [(None, "", None)] * 3


def test_the_host_polls_nvml_while_a_burst_runs_and_marks_each_launch_seen_done():
    """`_watch` on a simulated asynchronous GPU: every reading takes 0.25 ms of host time and a
    launch's end event completes 1 ms after the one before; each launch is marked by the last
    reading before it was seen done, and a burst still running at its patience is left."""
    host = [0.0]

    class Sampler:
        def read(self, energy=False):
            host[0] += 0.25
            return Reading(1980, 0, 300_000, None, None, None)

    class End:
        def __init__(self, at):
            self.at = at

        @property
        def done(self):
            return host[0] >= self.at

    events = [(None, End(1.0 * (j + 1))) for j in range(4)]
    first = Reading(1980, 0, 300_000, None, None, None)
    readings, marks = rounds_mod._watch(events, Sampler(), first, 1.0, clock=lambda: host[0] / 1000)
    assert marks == [4, 8, 12, 16] and len(readings) == 17
    host[0] = 0.0
    readings, marks = rounds_mod._watch(events, Sampler(), first, 0.0022, clock=lambda: host[0] / 1000)
    assert marks == [4, 8] and len(readings) == 10  # patience 2.2 ms: the last two launches not seen


def test_a_gpu_whose_nvml_says_less_gives_a_note_and_the_timing_as_before(gpu):
    from roofline.measure.runner import _nvml_notes

    assert _nvml_notes([], energy=True) == []
    assert _nvml_notes(["energy"], energy=False) == []  # not asked for: nothing to say
    note = _nvml_notes(["clock event reasons", "power-cap time"], energy=False)[0]
    assert note.startswith("NVML gives no clock event reasons, power-cap time on this GPU")

    class Mute(FakeSampler):  # a GPU whose NVML answers nothing
        def read(self, energy=False):
            return Reading(None, None, None, None, None, None)
    items = [gpu.item("ref", 1.0), gpu.item("k", 2.0)]
    out = time_in_rounds(items, sampler=Mute(gpu), min_samples=20, max_samples=20)
    k = out.timings[1]
    assert k.median_ms == 2.0 and out.top_clock_mhz is None
    assert k.throttled is None and k.sm_clock_mhz is None  # not known, so not recorded (never "not throttled")


def test_a_reason_seen_at_full_clock_is_not_throttled_and_the_note_says_so():
    """NVML's power-cap reason in the first rounds while every clock held 1,980 MHz (it trails a load
    that ended before the rounds): no sample is throttled, and a line says how many saw it."""
    raw = _rounds_doc()
    for t in [raw["reference"]["timing"], *(k["timing"] for k in raw["kernels"] if k.get("timing"))]:
        n = len(t["samples_ms"])
        t["sm_clock_mhz"] = [1980] * n
        t["reasons"] = ["power_cap" if r < 2 else "" for r in range(n)]
        t["throttled"] = [False] * n
        t["samples_ms"] = [t["samples_ms"][0]] * n
    for k in [raw["reference"], *raw["kernels"]]:
        if k.get("timing"):
            k["time_ms"] = k["timing"]["samples_ms"][0]
            k["gflops"] = 2 * 4096**3 / k["time_ms"] / 1e6
            if k is not raw["reference"]:
                k["pct_of_reference"] = 100 * raw["reference"]["time_ms"] / k["time_ms"]
    shown = _shown(store.parse(raw))
    assert "no sample ran throttled (at or above 97 % of 1,980 MHz)" in shown
    assert ("NVML reported a clock cap (power_cap) during 30 samples whose clock held at or above 97 % of 1,980 MHz: "
            "not counted as throttled") in shown
