"""How a user kernel's failure is told: a kernel stopped for its time says after how long, and
over the shapes it was checked at, a fault (an illegal address, a timeout) tells more than a wrong
answer. The deciding logic runs here on recorded outcomes of the child process; the GPU tests
(marked `gpu`) run a spinning kernel and an out-of-bounds writer for real."""

from __future__ import annotations

import subprocess

import pytest
from conftest import FIXTURES

from roofline import child
from roofline.ladder.user import load
from roofline.measure import isolated
from roofline.measure.runner import FAILURES, KernelRun, RunOutput
from roofline.measure.waiting import LaunchTimeout
from roofline.model.problem import Problem
from roofline.model.verify import Verification

KERNELS = FIXTURES / "kernels"
RAGGED = "at the ragged shape 511x383x255"
UNWRITTEN = Verification(False, None, 195_713, 0, 0, reason="195,713 elements NaN or unwritten")
PASSED = Verification(True, 1e-7, 0, 0, 0)
ILLEGAL = "oob_write: CUDA error: cudaErrorIllegalAddress: an illegal memory access was encountered"


def test_a_timeout_says_after_how_long_it_stopped_the_launch():
    assert str(LaunchTimeout(25.04, 5, 5.0)) == "stopped after 25.0 s, still running (--timeout: 5 launches at 5 s each)"
    assert str(LaunchTimeout(2.001, 1, 2.0)) == "stopped after 2.0 s, still running (--timeout: 2 s per launch)"


def test_a_fault_at_the_main_shape_beats_a_wrong_answer_at_the_ragged_one():
    kind, error = isolated.summarise("oob_write", [
        (RAGGED, "verification", "oob_write: failed verification: 195,713 elements NaN or unwritten"),
        ("", "fault", ILLEGAL)])
    assert kind == "fault"
    assert error == ("oob_write: CUDA error: cudaErrorIllegalAddress: an illegal memory access was encountered; "
                     f"{RAGGED}: failed verification: 195,713 elements NaN or unwritten")


def test_a_timeout_beats_a_wrong_answer_and_the_earlier_shape_wins_among_equals():
    spin = "spin: timeout: stopped after 25.0 s, still running (--timeout: 5 launches at 5 s each)"
    kind, error = isolated.summarise("spin", [(RAGGED, "verification", "spin: failed verification: x"), ("", "timeout", spin)])
    assert kind == "timeout" and error.startswith("spin: timeout: stopped after 25.0 s")
    kind, error = isolated.summarise("k", [(RAGGED, "fault", "k: CUDA error: a"), ("", "timeout", "k: timeout: b")])
    assert (kind, error) == ("fault", f"k: {RAGGED}: CUDA error: a; timeout: b")
    assert isolated.summarise("k", [(RAGGED, None, None), ("", None, None)]) == (None, None)
    assert isolated.summarise("k", [(RAGGED, "verification", "k: failed verification: y"), ("", None, None)]) == (
        "verification", f"k: {RAGGED}: failed verification: y")
    assert FAILURES.index("fault") < FAILURES.index("timeout") < FAILURES.index("verification")


class _FakeDevice:
    def __init__(self, *a):
        pass

    def use(self):
        pass


def _child_with(monkeypatch, outcomes: list[KernelRun]) -> tuple[isolated.ChildReport, list[dict]]:
    """`isolated._child` with the GPU runs replaced by recorded outcomes, one per shape in order."""
    import cupy

    kernel = load(KERNELS / "oob_write.cu")
    calls = []

    def fake_run(specs, problem, timed=True, timeout_s=None, l2="cold"):
        calls.append({"problem": problem.text(), "timed": timed})
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return RunOutput(None, problem, None, (None, None), [outcome])

    monkeypatch.setattr(isolated, "run", fake_run)
    monkeypatch.setattr(cupy.cuda.runtime, "deviceGetByPCIBusId", lambda bus: 0)
    monkeypatch.setattr(cupy.cuda, "Device", _FakeDevice)
    monkeypatch.setattr(cupy, "get_default_memory_pool", lambda: type("P", (), {"free_all_blocks": lambda self: None})())
    request = {"kernel": kernel.describe(), "problem": [256, 256, 256], "ragged": True, "timed": True,
               "timeout_s": 5.0, "pci_bus_id": "0000:00:00.0", "l2": "cold"}
    return isolated._child(request), calls


@pytest.mark.cupy
def test_the_child_still_checks_the_main_shape_after_a_wrong_answer_at_the_ragged_one(monkeypatch):
    kernel = load(KERNELS / "oob_write.cu")
    ragged = KernelRun(kernel, None, None, UNWRITTEN, error="oob_write: failed verification: 195,713 elements NaN "
                       "or unwritten", failure="verification")
    main = KernelRun(kernel, None, None, None, error=ILLEGAL, failure="fault")
    report, calls = _child_with(monkeypatch, [ragged, main])
    assert calls == [{"problem": "511x383x255", "timed": False}, {"problem": "256x256x256", "timed": False}]
    assert report.failure == "fault" and report.error.startswith(ILLEGAL + f"; {RAGGED}: failed verification")
    assert report.ragged == UNWRITTEN


@pytest.mark.cupy
def test_a_fault_left_by_the_ragged_launch_is_named_not_read_as_nan(monkeypatch):
    import cupy

    kernel = load(KERNELS / "oob_write.cu")
    ragged = KernelRun(kernel, None, None, UNWRITTEN, error="oob_write: failed verification: x", failure="verification")
    sticky = cupy.cuda.runtime.CUDARuntimeError(700)  # cudaErrorIllegalAddress, raised by the next CUDA call
    report, _ = _child_with(monkeypatch, [ragged, sticky])
    assert report.failure == "fault"
    assert report.error.startswith("oob_write: CUDA error: cudaErrorIllegalAddress")


@pytest.mark.cupy
def test_a_timeout_at_the_ragged_shape_ends_the_child_there(monkeypatch):
    """The launch still running raises out of the run (nothing after it may wait on the GPU): the
    child reports the timeout at once, with the start-up before it, and launches nothing more."""
    spin = LaunchTimeout(5.01, 1, 5.0)
    report, calls = _child_with(monkeypatch, [spin])
    assert len(calls) == 1  # the kernel may still be running: nothing more is launched in that process
    assert report.failure == "timeout"
    assert report.error.startswith(f"oob_write: {RAGGED}: timeout: stopped after 5.0 s, still running (--timeout: "
                                   "5 s per launch); ")
    assert report.error.endswith(" s of start-up, compile, inputs and reference before it")


@pytest.mark.cupy
def test_a_clean_pass_at_both_shapes_is_timed(monkeypatch):
    kernel = load(KERNELS / "oob_write.cu")
    ok = KernelRun(kernel, None, None, PASSED)
    report, calls = _child_with(monkeypatch, [ok, ok])
    assert calls[1] == {"problem": "256x256x256", "timed": True}
    assert report.error is None and report.failure is None


def test_the_parent_keeps_the_childs_failure_kind(monkeypatch):
    kernel = load(KERNELS / "infinite_loop.cu")
    report = isolated.ChildReport(error="infinite_loop: timeout: stopped after 2.0 s, still running", failure="timeout")
    line = isolated._REPORT.dump_json(report).decode()
    monkeypatch.setattr(child.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=line + "\n",
                                                                                                   stderr=""))
    r = isolated.run_isolated(kernel, Problem(64, 64, 64), "0000:00:00.0", timeout_s=2)
    assert (r.failure, r.error) == ("timeout", "infinite_loop: timeout: stopped after 2.0 s, still running")
    assert not r.correct


@pytest.mark.gpu
def test_a_spinning_kernel_is_reported_as_stopped_after_its_time():
    import cupy

    bus = cupy.cuda.runtime.deviceGetPCIBusId(0)
    r = isolated.run_isolated(load(KERNELS / "infinite_loop.cu"), Problem(256, 256, 256), bus, timeout_s=2)
    assert r.failure == "timeout", r.error
    assert "timeout: stopped after 2." in r.error and "NaN" not in r.error and "unwritten" not in r.error


@pytest.mark.gpu
def test_an_out_of_bounds_writer_is_reported_by_its_fault():
    import cupy

    bus = cupy.cuda.runtime.deviceGetPCIBusId(0)
    for ragged in (True, False):
        r = isolated.run_isolated(load(KERNELS / "oob_write.cu"), Problem(256, 256, 256), bus, timeout_s=5,
                                  ragged=ragged)
        assert r.failure == "fault", r.error
        assert "illegal" in r.error.lower() and not r.error.startswith("oob_write: failed verification")
