"""Results files: atomic writes and the checks `plot` relies on."""

import json

import pytest

from roofline import results
from roofline.errors import UsageError


def test_round_trip(tmp_path, doc):
    path = tmp_path / "r.json"
    results.write_atomic(doc, path)
    assert results.load(path) == json.loads(json.dumps(doc))
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_interrupted_write_keeps_the_old_file(tmp_path, doc):
    path = tmp_path / "r.json"
    results.write_atomic(doc, path)
    before = path.read_text()
    bad = dict(doc, oops=object())  # json cannot encode this: the write fails midway
    with pytest.raises(TypeError):
        results.write_atomic(bad, path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_files_get_the_usual_permissions(tmp_path, doc):
    import os
    import stat

    old = os.umask(0o022)
    try:
        results.write_atomic(doc, tmp_path / "r.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644


def test_missing_folder(tmp_path, doc):
    with pytest.raises(UsageError, match="does not exist"):
        results.write_atomic(doc, tmp_path / "no" / "r.json")


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d.update(schema=2), "schema 2 is not supported; expected 1"),
    (lambda d: d.pop("reference"), "reference must be an object"),
    (lambda d: d["device"].pop("peak_dram_gbps"), "device lacks peak_dram_gbps"),
    (lambda d: d["device"].update(peak_fp32_gflops=-1), r"peak_fp32_gflops must be in \(0, 1e\+07\]"),
    (lambda d: d["kernels"][0].pop("model"), r"kernels\[0\] lacks model"),
    (lambda d: d.update(kernels={}), "kernels must be a list"),
])
def test_wrong_schema_is_a_usage_error(tmp_path, doc, mutate, needle):
    mutate(doc)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=needle):
        results.load(path)


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(UsageError, match="no such results file"):
        results.load(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": 1, "device": ')
    with pytest.raises(UsageError, match="not valid JSON"):
        results.load(bad)
    arr = tmp_path / "arr.json"
    arr.write_text("[1, 2]")
    with pytest.raises(UsageError, match="not a roofline results file"):
        results.load(arr)


def test_merge_runs_of_different_kernels(doc):
    from copy import deepcopy

    a, b = deepcopy(doc), deepcopy(doc)
    a["kernels"] = a["kernels"][:2]
    b["kernels"] = b["kernels"][1:3]
    b["kernels"][0]["gflops"] = 1234.0
    merged = results.merge([a, b], ["a", "b"])
    assert [k["name"] for k in merged["kernels"]] == ["naive", "gmem_coalescing", "smem_tiling"]
    assert merged["kernels"][1]["gflops"] == 1234.0
    b["problem"]["m"] = 1
    with pytest.raises(UsageError, match="problem size differs"):
        results.merge([a, b], ["a", "b"])


def test_gflops_units():
    # 137.4 GFLOP in 6.996 ms is 19,645 GFLOP/s (seed 000's kernel 6).
    assert results.gflops(2 * 4096**3, 6.996) == pytest.approx(19_645, abs=1)


def test_problem_that_does_not_fit_is_refused_before_allocating():
    from roofline.runner import Problem, check_fits

    p = Problem(40_000, 40_000, 40_000)  # 5 x 6.4 GB of float32
    assert p.device_bytes == 4 * 5 * 40_000**2
    with pytest.raises(UsageError, match="needs 32.0 GB of GPU memory but only 16.0 GB is free"):
        check_fits(p, 16 * 10**9)
    check_fits(Problem(4096, 4096, 4096), 16 * 10**9)  # 336 MB: fine


NCU_CSV = '''==PROF== Connected to process 1234
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum","l1tex__t_bytes.sum","lts__t_bytes.sum","smsp__sass_data_bytes_mem_shared.sum","smsp__sass_thread_inst_executed_op_fadd_pred_on.sum","smsp__sass_thread_inst_executed_op_ffma_pred_on.sum","smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
"","","","","","","","","","","","byte","","byte","byte","byte","inst","inst","inst"
"0","1234","python3","host","register_tiling_2d","1","7","(256, 1, 1)","(32, 32, 1)","0","9.0","401110000","274903434","4830000000","4410000000","23620000000","0","68719476736","16777216"
'''


def test_ncu_csv_gives_the_measured_object():
    from roofline import profile

    measured = profile.measured_from(profile.parse_ncu_csv(NCU_CSV))
    assert measured == {"dram_bytes": 401_110_000, "l2_bytes": 4_410_000_000, "l1_bytes": 4_830_000_000,
                        "smem_bytes": 23_620_000_000, "bank_conflicts": 274_903_434,
                        "fp32_flops": 2 * 68_719_476_736 + 16_777_216}
    with pytest.raises(profile.ProfileUnavailable, match="no kernel"):
        profile.parse_ncu_csv("==ERROR== something broke\n")


def test_hierarchy_ceilings_and_verdict(doc):
    from roofline import hierarchy

    # H200: 132 SMs x 32 banks x 4 B x 1980 MHz.
    assert hierarchy.smem_gbps(132, 1980) == pytest.approx(33_454.08)
    doc["device"].update(measured_dram_gbps=4256.0, measured_fp32_gflops=65_000.0)
    k = next(k for k in doc["kernels"] if k["name"] == "register_tiling_2d")
    v = hierarchy.verdict(k, doc["device"], doc["problem"])
    assert v["binding"] == "FP32"
    assert v["floors_ms"]["FP32"] == pytest.approx(137.439 / 65.0, rel=1e-4)
    assert v["times_floor"] == pytest.approx(k["time_ms"] / v["floors_ms"]["FP32"])
    assert "FP32-bound (measured)" in v["text"] and "occupancy 50 % (registers)" in v["text"]
    # The 32x32 shared-memory kernel reads 2K floats per result from shared memory: 549.8 GB at
    # 33.45 TB/s is 16.4 ms, above its DRAM floor (17.18 GB at 4256 GB/s, 4.0 ms).
    s = next(k for k in doc["kernels"] if k["name"] == "smem_tiling")
    vs = hierarchy.verdict(s, doc["device"], doc["problem"])
    assert vs["binding"] == "SMEM" and vs["floors_ms"]["SMEM"] == pytest.approx(549.76 / 33.454, rel=1e-3)
    # Profiled bytes replace the model's.
    k["measured"] = {"dram_bytes": 401_110_000, "smem_bytes": 23_620_000_000}
    assert hierarchy.level_bytes(k, doc["problem"])["dram"] == 401_110_000
