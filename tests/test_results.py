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
