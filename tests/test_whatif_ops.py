"""The what-if by op: a profile that records who launched its kernels, each op at the target of its
kernels' own roofs (the committed Llama step from the H200), and the op fusion what-if on launches
whose places and DRAM bytes read and written are known (a hand-made step)."""

import math
from pathlib import Path

import pytest

from roofline.analysis.owners import by_owner, row_floor
from roofline.analysis.whatif import whatif
from roofline.model.device import from_preset
from roofline.nsight.launches import Launch
from roofline.results import convert, store

ROOT = Path(__file__).resolve().parents[1]


def test_each_op_of_the_llama_step_at_the_target_of_its_kernels_roofs():
    doc = store.load(ROOT / "plots" / "profile-h200-llama-ops.json", profile=True)
    w = whatif(doc, 0.8)
    assert math.isclose(sum(o.time_ms for o in w.ops), doc.total_time_ms, rel_tol=1e-9)
    assert len(w.ops) == len(by_owner(doc, "op")) == 40
    mul = next(o for o in w.ops if (o.op, o.phase) == ("aten::mul", "backward"))
    rows = [r for r in doc.attribution.owned if (r.op, r.phase) == ("aten::mul", "backward")]
    want = math.fsum(min(r.time_ms, f[1] / 0.8) if (f := row_floor(doc, r)) else r.time_ms for r in rows)
    assert mul.target_ms == pytest.approx(want) and mul.saved_ms == pytest.approx(mul.time_ms - want)
    assert mul.launches == 46 and mul.binding == "L2" and w.ops[0] is mul  # the op that saves most
    assert mul.step_ms_after == pytest.approx(doc.total_time_ms - mul.saved_ms)
    assert all(a.saved_ms >= b.saved_ms for a, b in zip(w.ops, w.ops[1:]))
    # each op's share of a kernel's launches held to its roof: a little more than the kernels' own (docs/whatif.md)
    assert w.saved_ms <= sum(o.saved_ms for o in w.ops) <= 1.01 * w.saved_ms
    assert w.op_fusion is None and any("record no launch places" in n for n in w.notes)  # made before them
    assert set(w.to_json()) >= {"ops"} and "op_fusion" not in w.to_json()


def _launch(order, op, time_ns, read, write, name):
    return Launch(name=name, demangled=name, grid=(1024, 1, 1), block=(256, 1, 1), registers=32,
                  static_smem_bytes=0, dynamic_smem_bytes=0, time_ns=time_ns, flops={}, nbytes={"dram": read + write},
                  order=order, dram_read_bytes=read, dram_write_bytes=write,
                  nvtx=("roofline.module Net", f"{op}, seq = {order}, op_id = {order}"))


def test_op_fusion_sums_the_bytes_passing_where_one_ops_launch_follows_anothers(tmp_path):
    # mul then add, three times over: mul writes 4 MB that add reads next; each launch, 8 MB and no
    # FLOPs in 2.0 us, is DRAM-bound; the pair saves those 4 MB written and read once less at the DRAM
    # roof (1.7 us at 4.8 TB/s) each time they meet, never more than the shorter launch
    launches = []
    for i in range(3):
        launches += [_launch(2 * i, "aten::mul", 2000, 4e6, 4e6, "mul_kernel"),
                     _launch(2 * i + 1, "aten::add", 2000, 4e6, 4e6, "add_kernel")]
    doc = convert.from_profile(launches, from_preset("h200"), command=["python", "net.py"])
    path = tmp_path / "p.json"
    store.save(doc, path)
    doc = store.load(path, profile=True)
    assert all(r.launch_order for r in doc.attribution.owned)
    w = whatif(doc, 0.8)
    [mul_add, add_mul] = sorted(w.op_fusion, key=lambda f: f.first, reverse=True)
    assert (mul_add.first, mul_add.second, mul_add.occurrences) == ("aten::mul (forward)", "aten::add (forward)", 3)
    assert (add_mul.first, add_mul.second, add_mul.occurrences) == ("aten::add (forward)", "aten::mul (forward)", 2)
    per = min(2 * 4e6 / (mul_add.roof_gbps * 1e9) * 1e3, 0.002)
    assert mul_add.passing_bytes == pytest.approx(3 * 4e6) and mul_add.saved_ms == pytest.approx(3 * per)
    assert mul_add.step_ms_after == pytest.approx(doc.total_time_ms - 3 * per)
    assert {(o.op, o.launches) for o in w.ops} == {("aten::mul", 3), ("aten::add", 3)}
