"""The fusion what-if (`roofline whatif`, JSON key `fusion`): memory-bound kernels that run one
right after the other, the DRAM bytes one writes and the next reads, and the time fusing them
would save; and what profiles record for it (`dram_read_bytes`, `dram_write_bytes`,
`launch_order`), checked by hand on a four-launch profile and on a real H200 export."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from roofline.cli import app
from roofline import nsight
from roofline.nsight.metrics import COLLECT, read
from roofline.render.whatif import tables
from roofline.results import store
from roofline.results.convert import from_profile
from roofline.results.profile import ProfileResults
from roofline.analysis.whatif import whatif

ROOT = Path(__file__).resolve().parent.parent
TRANSFORMER = ROOT / "plots" / "profile-h200-transformer.json"
FULL_RAW = Path(__file__).resolve().parent / "fixtures" / "ncu" / "forms" / "full-raw.csv"

GB = 4_814_304_000.0  # bytes the H200's datasheet DRAM roof (4,814.304 GB/s) moves in 1 ms


def four_launches() -> dict:
    """A profile of one 3.8 ms step on the H200 at its datasheet roofs (measured ones taken out),
    launches A, B, A, B (places 0 1 2 3), no operations, so DRAM binds both. Per launch:

    A  1.2 ms, reads 0.5 GB (2,407,152,000 B), writes 0.5 GB     -> DRAM floor 1.0 ms
    B  0.7 ms, reads 0.5 GB, writes 0.1 GB (481,430,400 B)       -> DRAM floor 0.6 ms
    (GB here: what the roof moves in 1 ms; 0.5 GB takes 0.5 ms)
    """
    device = json.loads(TRANSFORMER.read_text())["device"]
    for key in [k for k in device if k.startswith("measured")] + ["launch_latency_ms"]:
        device.pop(key, None)

    def kernel(name, per_launch_ms, read_b, write_b, order):
        n = len(order)
        return {"name": name, "demangled": name, "launches": n, "time_ms": n * per_launch_ms,
                "median_ms": per_launch_ms, "time_share": n * per_launch_ms / 3.8, "precision": "none",
                "tensor_core": False, "bytes": {"dram": n * (read_b + write_b)},
                "dram_read_bytes": n * read_b, "dram_write_bytes": n * write_b, "launch_order": order}

    return {"schema": 3, "kind": "profile", "device": device, "launches_profiled": 4, "total_time_ms": 3.8,
            "command": ["python", "step.py"], "kernels": [
                kernel("A", 1.2, 0.5 * GB, 0.5 * GB, [0, 2]),
                kernel("B", 0.7, 0.5 * GB, 0.1 * GB, [1, 3])]}


def test_four_launches_worked_by_hand():
    w = whatif(ProfileResults.model_validate(four_launches()))
    ab, ba = w.fusion
    # A -> B at places 0-1 and 2-3: passing min(A writes 0.5 GB, B reads 0.5 GB) = 0.5 GB; written
    # and read once less: 2 x 0.5 GB = 1.0 ms at the DRAM roof, but never more than the shorter
    # launch, B's 0.7 ms: 0.7 ms each time, 1.4 ms for both; the step 3.8 - 1.4 = 2.4 ms, 1.5833x
    assert (ab.first, ab.second, ab.first_roof, ab.second_roof) == ("A", "B", "DRAM", "DRAM")
    assert ab.occurrences == 2 and ab.passing_bytes == pytest.approx(2 * 0.5 * GB)
    assert ab.saved_ms == pytest.approx(1.4) and ab.step_ms_after == pytest.approx(2.4)
    assert ab.speedup == pytest.approx(3.8 / 2.4)
    assert ab.roof_gbps == pytest.approx(4814.304) and ab.roof_measured is False
    # B -> A at places 1-2: passing min(B writes 0.1 GB, A reads 0.5 GB) = 0.1 GB = 481,430,400 B;
    # 2 x 0.1 GB = 0.2 ms (under both launches' times); the step 3.8 - 0.2 = 3.6 ms, 1.0556x
    assert (ba.first, ba.second, ba.occurrences) == ("B", "A", 1)
    assert ba.passing_bytes == pytest.approx(481_430_400.0)
    assert ba.saved_ms == pytest.approx(0.2) and ba.step_ms_after == pytest.approx(3.6)
    assert ba.speedup == pytest.approx(3.8 / 3.6)
    assert any("2 pairs of memory-bound kernels" in n and "do not add" in n for n in w.notes)
    assert not any("no fusion what-if" in n for n in w.notes)
    doc = w.to_json()
    assert [(f["first"], f["second"], f["occurrences"]) for f in doc["fusion"]] == [("A", "B", 2), ("B", "A", 1)]
    assert doc["fusion"][0]["saved_ms"] == pytest.approx(1.4)
    text = "\n".join(_text(t) for t in tables(w))
    assert "fusion: kernels that write to DRAM what the next one reads" in text and "1.583x" in text


def _text(table) -> str:
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=200).print(table)
    return out.getvalue()


def test_a_kernel_launched_again_right_after_itself_is_no_fusion_pair():
    # the Llama step's foreach optimizer: one multi_tensor_apply kernel four times at 320 blocks, then its tail at 69
    # (chunks of one call over different tensors): four of five pairs, 0.146 ms, claimed savings no fusion could give
    doc = four_launches()
    a, b = doc["kernels"]
    a["launch_order"], b["launch_order"] = [0, 1], [2, 3]  # A A B B
    b["name"] = b["demangled"] = "A"  # the tail: the same kernel at a grid of its own, a row of its own
    w = whatif(ProfileResults.model_validate(doc))
    assert w.fusion == [] and any("no two memory-bound kernels" in n for n in w.notes)
    b["name"] = b["demangled"] = "B"  # A A B B: A -> B once, at places 1-2
    (ab,) = whatif(ProfileResults.model_validate(doc)).fusion
    assert (ab.first, ab.second, ab.occurrences) == ("A", "B", 1)


def test_a_compute_bound_neighbour_is_no_fusion_pair():
    doc = four_launches()
    b = doc["kernels"][1]  # B: 2 x 0.7 ms at BF16 tensor: 1.2 ms of work at 989,429.76 GFLOP/s binds it
    b.update(precision="bf16", tensor_core=True, flops={"bf16_tensor": 989_429_760_000 * 1.2},
             gflops=989_429_760_000 * 1.2 / 1.4e6)
    w = whatif(ProfileResults.model_validate(doc))
    assert w.fusion == []
    assert any("no two memory-bound kernels" in n for n in w.notes)


def test_a_profile_without_order_or_split_keeps_the_note():
    w = whatif(store.load(TRANSFORMER, profile=True))
    assert w.fusion == [] and w.to_json()["fusion"] == []
    note = [n for n in w.notes if n.startswith("no fusion what-if")]
    assert len(note) == 1 and "this profile holds neither" in note[0]
    assert "profile again with this version of roofline" in note[0]
    doc = four_launches()
    for k in doc["kernels"]:
        del k["launch_order"]
    note = [n for n in whatif(ProfileResults.model_validate(doc)).notes if n.startswith("no fusion")]
    assert len(note) == 1 and "holds no launch order" in note[0]


def test_a_raw_export_fills_the_new_fields():
    """The H200 raw export holds dram__bytes_read.sum and dram__bytes_write.sum (Mbyte) and launch
    IDs 0..6; GELU (ID 5) writes 47.141632 MB that the add (ID 6) reads next."""
    rows = nsight.pages.parse_csv(FULL_RAW.read_text()).rows
    launches, _ = nsight.launches.from_rows(rows)
    doc = from_profile(launches, nsight.device.device_from_rows(rows), report=FULL_RAW.name)
    by_order = {k.launch_order[0]: k for k in doc.kernels}
    assert sorted(by_order) == list(range(7)) and all(len(k.launch_order) == 1 for k in doc.kernels)
    gelu, add = by_order[5], by_order[6]
    assert "Gelu" in gelu.name and "add" in add.name
    assert (gelu.dram_read_bytes, gelu.dram_write_bytes) == (67_127_552.0, 47_141_632.0)
    assert (add.dram_read_bytes, add.dram_write_bytes) == (134_238_208.0, 49_223_424.0)
    assert gelu.bytes["dram"] == 67_127_552.0 + 47_141_632.0  # the total reads as before
    assert by_order[0].dram_read_bytes == 33_629_952.0 and by_order[0].dram_write_bytes == 2_475_776.0
    w = whatif(ProfileResults.model_validate(store.dump(doc)))  # through the file's form
    (pair,) = w.fusion
    assert pair.occurrences == 1 and (pair.first_roof, pair.second_roof) == ("DRAM", "DRAM")
    assert pair.first.startswith(gelu.name) and pair.second.startswith(add.name)
    # min(47,141,632 written, 134,238,208 read) x 2 / 4,814.304 GB/s = 0.019584 ms
    assert pair.passing_bytes == 47_141_632.0
    assert pair.saved_ms == pytest.approx(2 * 47_141_632 / 4_814.304e6)
    assert pair.roof_gbps == pytest.approx(doc.device.peak_dram_gbps)


def test_the_split_is_collected_and_read_with_its_stand_ins():
    assert {"dram__bytes_read.sum", "dram__bytes_write.sum"} <= set(COLLECT)
    r = read({"dram__bytes_read.sum": 300.0, "dram__bytes_write.sum": 100.0})
    assert (r.value("dram"), r.value("dram_read"), r.value("dram_write")) == (400.0, 300.0, 100.0)
    r = read({"dram__bytes.sum": 400.0, "dram__sectors_read.sum": 9.0, "dram__sectors_write.sum": 3.0})
    assert (r.value("dram"), r.value("dram_read"), r.value("dram_write")) == (400.0, 288.0, 96.0)
    assert r.quantities["dram_read"].source == "dram__sectors_read.sum x 32 B"
    r = read({"dram__bytes.sum": 400.0})  # no split: nothing invented, nothing reported missing
    assert r.value("dram_read") is None and "dram_read" not in r.missing


def test_launch_order_follows_the_launch_ids():
    rows = [nsight.rows.Row(kernel=k, text={"ID": i}) for k, i in (("a", "7"), ("b", "3"), ("c", "5"))]
    assert nsight.launches.launch_order(rows) == [2, 0, 1]
    rows[1].text["ID"] = "7"  # IDs repeated (two processes): the report's own order
    assert nsight.launches.launch_order(rows) == [0, 1, 2]


@pytest.mark.parametrize("change, needle", [
    (lambda d: d["kernels"][1].update(launch_order=[1, 2]), "kernels[1].launch_order"),
    (lambda d: d["kernels"][0].update(launch_order=[0]), "kernels[0].launch_order"),
    (lambda d: d["kernels"][0].update(dram_write_bytes=3 * GB), "kernels[0].dram_write_bytes"),
])
def test_inconsistent_fields_are_refused(change, needle):
    doc = four_launches()
    change(doc)
    with pytest.raises(ValidationError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        ProfileResults.model_validate(doc)


def test_the_profile_schema_names_the_new_fields():
    r = CliRunner().invoke(app, ["schema", "profile"])
    assert r.exit_code == 0
    props = json.loads(r.stdout)["$defs"]["ProfiledKernel"]["properties"]
    assert {"dram_read_bytes", "dram_write_bytes", "launch_order"} <= set(props)
