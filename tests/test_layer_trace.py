"""Calls go down the layers: tools/layer_trace.py runs a command under a profiler and counts the
calls from a module of a lower layer into one of a higher layer (climbs back) and the calls back
into a module the flow had left for another (re-entries). The counts of three commands on
committed inputs are held at most where they stand: `plot` and `show` of the committed H200 run,
and `grade` up to where it stops without a GPU (CUDA_VISIBLE_DEVICES is emptied, so a machine
with one traces the same start). Lower a bound when a change lowers its count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "layer_trace.py"

COMMANDS = {
    "plot": ["plot", "plots/results-h200.json", "--out", "{tmp}/chart.png"],
    "show": ["show", "plots/results-h200.json"],
    "grade": ["run", "examples/grade/softmax_online.cu", "examples/grade/softmax_naive.cu", "--baseline",
              "softmax_naive", "--out", "{tmp}/grades.json"],
    "run": ["run", "--all", "--out", "{tmp}/results.json"],
}
# The most each command may count, distinct caller -> callee edges (today's counts).
CLIMBS_AT_MOST = {"plot": 3, "show": 3, "grade": 3, "run": 3}  # the bound issue 42 set; today 0 each
# cli <-> console (the terminal runs the app and shows its view), and each document kind registering
# itself with the registry as the registry first loads it
REENTRIES_AT_MOST = {"plot": 14, "show": 13, "grade": 1, "run": 1}  # +1: the trace kind; +1: the owners kinds; +1: problems
# (each a kind's module registering itself as the registry imports it: `documents.registry.kinds`)
EXIT_CODE = {"plot": 0, "show": 0, "grade": 1, "run": 1}  # grade and run: no GPU


def traced(name: str, tmp_path: Path) -> dict:
    """tools/layer_trace.py run on command `name` in a fresh interpreter, its JSON report."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[name]]
    out = tmp_path / "trace.json"
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, str(TOOL), "--json", str(out), "--", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=300)
    assert out.exists(), done.stdout + done.stderr
    report = json.loads(out.read_text())
    assert done.returncode == report["exit code"] == EXIT_CODE[name], done.stdout + done.stderr
    return report


def _listed(edges: list[dict]) -> str:
    return "\n".join(f"{e['caller']} [{e['caller layer']}] -> {e['callee']} [{e['callee layer']}] x{e['calls']}"
                     for e in edges)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_calls_climb_back_no_more_than_they_do_today(name, tmp_path):
    report = traced(name, tmp_path)
    assert report["calls"] > 100  # the command ran under the trace, through the library
    assert report["unknown modules"] == [], "modules in no layer of tools/layer_trace.py's LAYERS"
    assert report["climbs"] <= CLIMBS_AT_MOST[name], _listed(report["climbs listed"])
    assert report["reentries"] <= REENTRIES_AT_MOST[name], _listed(report["reentries listed"])


def _tool():
    sys.path.insert(0, str(TOOL.parent))
    try:
        import layer_trace
    finally:
        sys.path.remove(str(TOOL.parent))
    return layer_trace


def test_the_trace_sees_a_climb_and_a_module_outside_the_layers():
    """The counting itself, on `show` with the layers turned upside down: every call that went
    down is now a climb, each from a lower layer to a higher one; a table without the model
    reports its modules as unknown and counts none of their calls."""
    lt = _tool()
    args = ["show", str(ROOT / "plots" / "results-h200.json")]
    code, _, trace = lt.run(args, lt.Trace(layers=list(reversed(lt.LAYERS))))
    report = trace.report()
    assert code == 0 and report["climbs"] > 5 and report["unknown modules"] == []
    depth = {name: i for i, (name, _) in enumerate(reversed(lt.LAYERS))}
    assert all(depth[e["callee layer"]] < depth[e["caller layer"]] for e in report["climbs listed"])

    without_model = [(name, [m for m in modules if m != "roofline.model"]) for name, modules in lt.LAYERS]
    _, _, trace = lt.run(args, lt.Trace(layers=without_model))
    report = trace.report()
    assert report["unknown modules"] and all(m.startswith("roofline.model") for m in report["unknown modules"])
    assert not [e for e in report["climbs listed"] + report["reentries listed"]
                if "unknown" in (e["caller layer"], e["callee layer"])]


def test_a_module_takes_the_layer_of_its_longest_entry():
    lt = _tool()
    index = lt._index([("top", ["roofline.render"]), ("low", ["roofline.render.encoding"])], ["roofline"])
    assert lt.layer_of("roofline.render.chart", index) == 0
    assert lt.layer_of("roofline.render.encoding", index) == 1
    assert lt.layer_of("roofline", index) == lt.BESIDE_LAYER
    assert lt.layer_of("roofline.model.units", index) is None  # "roofline" beside is the package's own module only
