"""GPU presets: the memory size their name gives, and the L2 size with its source, which sets the
DRAM floor aside in `kernels --gpu` exactly as in a results file's reading."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from roofline.model.device import from_preset
from roofline.model.presets import MIB, PRESETS, find_preset
from roofline.model.problem import Problem

# Whitepaper L2 sizes in MB of 2^20 bytes (CUDA's l2CacheSize).
L2_MB = {
    "Tesla V100-SXM2": 6, "Tesla V100-PCIE": 6, "Tesla T4": 4, "A100-SXM4-80GB": 40, "A100-SXM4-40GB": 40,
    "A100 80GB PCIe": 40, "A100-PCIE-40GB": 40, "A10": 6, "GeForce RTX 3090": 6, "L4": 48,
    "GeForce RTX 4090": 72, "H100 80GB HBM3": 50, "H100 PCIe": 50, "H100 NVL": 50, "H200": 60, "B200": 126,
    "GeForce RTX 5080": 64, "GeForce RTX 5090": 96, "RTX A6000": 6, "A40": 6, "L40S": 96,
    "RTX 6000 Ada Generation": 96, "GH200 480GB": 50, "GH200 144G HBM3e": 50, "B200 (GB200)": 126,
}


def test_every_preset_has_its_l2_size_and_says_where_it_comes_from():
    assert {p.name for p in PRESETS} == set(L2_MB)
    for p in PRESETS:
        assert p.l2_bytes == L2_MB[p.name] * MIB, p.name
        assert f"L2 {L2_MB[p.name]} MB" in p.source or f"L2 ({L2_MB[p.name]} MB)" in p.source, p.source
        assert from_preset(p.aliases[0]).l2_bytes == p.l2_bytes


@pytest.mark.parametrize("name, gb", [
    ("Tesla V100-SXM2-16GB", 16), ("Tesla V100-SXM2-32GB", 32), ("NVIDIA Tesla V100-PCIE-16GB", 16),
    ("v100-pcie-32gb", 32), ("A100-SXM4-40GB", 40), ("NVIDIA A100 80GB PCIe", 80), ("a100-pcie-40gb", 40),
    ("H100 NVL", 94), ("h200", 141),
])
def test_the_memory_size_is_the_one_the_name_gives(name, gb):
    dev = from_preset(name)
    assert dev.memory_bytes == gb * 10**9
    assert dev.peak_dram_gbps == find_preset(name).dram_gbps


def test_a_memory_variant_keeps_its_own_name_and_the_short_name_no_size():
    assert from_preset("Tesla V100-SXM2-16GB").name == "Tesla V100-SXM2-16GB"
    short = from_preset("v100-sxm2")
    assert short.memory_bytes is None and short.name == "Tesla V100-SXM2"
    # the peaks do not depend on the memory size
    assert from_preset("Tesla V100-SXM2-16GB").peak_fp32_gflops == short.peak_fp32_gflops


def test_fits_in_l2_at_the_boundary():
    # 2048^3: A, B and C are 3 x 2048^2 x 4 B = 48 MB: in the H200's 60 MB, not in the A100's 40 MB.
    ws = Problem(2048, 2048, 2048).working_set_bytes
    assert ws == 48 * MIB
    assert from_preset("h200").fits_in_l2(ws)
    assert not from_preset("a100-sxm4-80gb").fits_in_l2(ws)
    assert not from_preset("h200").fits_in_l2(Problem(4096, 4096, 4096).working_set_bytes)


def _kernels_json(size):
    r = CliRunner().invoke(app, ["kernels", "--gpu", "h200", "--size", str(size), "--model-only", "--json"])
    assert r.exit_code == 0, r.stderr
    return {k["name"]: k for k in json.loads(r.stdout)["kernels"]}, json.loads(r.stdout)["notes"]


def test_kernels_sets_the_dram_floor_aside_where_a_b_and_c_fit_in_l2():
    # 1024^3 on the H200: A, B and C are 12 MB; naive's modelled 8.59 GB of re-reads (1.79 ms at
    # 4.8 TB/s) are L2 hits, so no kernel is memory-bound (they were: naive, gmem_coalescing, smem_tiling).
    rows, notes = _kernels_json(1024)
    assert all(k["floors"]["binding"] == "compute" for k in rows.values())
    naive = rows["naive"]["floors"]
    assert naive["memory_floor_aside"] == "L2"
    assert naive["memory_floor_ms"] == pytest.approx(8.59e9 / 4.8e12 * 1e3, rel=1e-3)
    assert any("fit in the H200's 60 MB L2" in n for n in notes)


def test_kernels_keeps_the_dram_floor_where_they_do_not_fit():
    rows, notes = _kernels_json(4096)
    assert rows["naive"]["floors"]["binding"] == "memory"
    assert rows["naive"]["floors"]["memory_floor_aside"] is None
    assert not any("fit in the" in n for n in notes)  # no "A, B and C fit in the L2" note


def test_the_h200_preset_has_the_l2_the_h200_reported():
    recorded = json.loads((Path(__file__).resolve().parent.parent / "plots" / "results-h200.json").read_text())
    assert from_preset("h200").l2_bytes == recorded["device"]["l2_bytes"] == 60 * MIB
