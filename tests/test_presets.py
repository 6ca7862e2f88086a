"""GPU presets: the memory size their name gives, and the L2 size with its source, which sets the
DRAM floor aside in `kernels --gpu` exactly as in a results file's reading."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.errors import UsageError
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
    "A800-SXM4-80GB": 40, "A800 80GB PCIe": 40, "A30": 24, "Jetson AGX Orin 64GB": 4, "Jetson AGX Orin 32GB": 4,
    "GeForce RTX 4070": 36, "GeForce RTX 4060 Ti": 32, "GeForce RTX 4060": 24, "GeForce RTX 4070 Laptop GPU": 32,
    "GeForce RTX 4060 Laptop GPU": 32, "GeForce RTX 5070": 48, "GeForce RTX 5060 Ti": 32,
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
    ("H100 NVL", 94), ("h200", 141), ("NVIDIA GeForce RTX 5070", 12), ("NVIDIA A30", 24),
    ("NVIDIA A800-SXM4-80GB", 80), ("NVIDIA GeForce RTX 4060 Laptop GPU", 8), ("agx-orin-32gb", 32),
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


def test_kernels_reads_each_level_against_its_own_roof():
    # 4096^3 on the H200, theoretical roofs: naive's 550 GB of GMEM requests are its L1's (set aside at
    # the L2); its 32-byte sectors, 33 B per multiply-add (2.27 TB), take 67.8 ms on the 33,454 GB/s
    # shared-memory data path and bind. register_tiling_2d's 4.29 GB of requests take 0.280 ms at the
    # L2's 15,354 GB/s; FP32 (2.05 ms) binds. --model-only has no occupancy: no DRAM bytes, no DRAM floor.
    rows, notes = _kernels_json(4096)
    naive = rows["naive"]["floors"]
    assert naive["binding_level"] == "L1" and naive["binding"] == "memory" and naive["set_aside"] == {"L2": "L1"}
    assert naive["memory_floor_ms"] == pytest.approx(33 * 4096**3 / 33_454.08e6, rel=1e-6)
    rt2d = rows["register_tiling_2d"]["floors"]
    assert rt2d["binding_level"] == "FP32" and rt2d["binding"] == "compute"
    assert rt2d["levels_ms"]["L2"] == pytest.approx(4.294967296e9 / 15_354.336e6, rel=1e-6)
    assert "DRAM" not in rt2d["levels_ms"] and rows["register_tiling_2d"]["model"]["dram_bytes"] is None
    assert any("no occupancy, and the DRAM bytes follow from the blocks that run at once" in n for n in notes)
    assert not any("fit in the" in n for n in notes)  # 192 MB: no "A, B and C fit in the L2" note


def test_kernels_says_when_a_b_and_c_fit_in_l2():
    # 1024^3: A, B and C are 12 MB, in the H200's 60 MB L2: DRAM serves the compulsory bytes alone.
    rows, notes = _kernels_json(1024)
    assert any("fit in the H200's 60 MB L2: DRAM serves only the compulsory bytes" in n for n in notes)


def test_the_h200_preset_has_the_l2_the_h200_reported():
    recorded = json.loads((Path(__file__).resolve().parent.parent / "plots" / "results-h200.json").read_text())
    assert from_preset("h200").l2_bytes == recorded["device"]["l2_bytes"] == 60 * MIB


# Figures checked by hand against the datasheets: (name nvidia-smi prints, short name, SMs, FP32 GFLOP/s
# worked out as cores x 2 x boost MHz, DRAM GB/s).
HAND_CHECKED = [
    ("NVIDIA GeForce RTX 5070", "rtx5070", 48, 6144 * 2 * 2512 / 1e3, 672),      # 30.87 TFLOP/s
    ("NVIDIA GeForce RTX 5060 Ti", "rtx5060ti", 36, 4608 * 2 * 2570 / 1e3, 448),
    ("NVIDIA GeForce RTX 4070", "rtx4070", 46, 5888 * 2 * 2480 / 1e3, 504),
    ("NVIDIA GeForce RTX 4060 Ti", "rtx4060ti", 34, 4352 * 2 * 2540 / 1e3, 288),
    ("NVIDIA GeForce RTX 4060", "rtx4060", 24, 3072 * 2 * 2460 / 1e3, 272),
    ("NVIDIA GeForce RTX 4070 Laptop GPU", "rtx4070-laptop", 36, 4608 * 2 * 2175 / 1e3, 256),  # top of 1230-2175
    ("NVIDIA GeForce RTX 4060 Laptop GPU", "rtx4060-laptop", 24, 3072 * 2 * 2370 / 1e3, 256),  # top of 1470-2370
    ("NVIDIA A30", "a30", 56, 3584 * 2 * 1440 / 1e3, 933),
    ("NVIDIA A800-SXM4-80GB", "a800-sxm4-80gb", 108, 6912 * 2 * 1410 / 1e3, 2039),
    ("NVIDIA A800 80GB PCIe", "a800-pcie-80gb", 108, 6912 * 2 * 1410 / 1e3, 1935),
    ("Jetson AGX Orin 64GB", "agx-orin-64gb", 16, 2048 * 2 * 1300 / 1e3, 204.8),
    ("Jetson AGX Orin 32GB", "agx-orin-32gb", 14, 1792 * 2 * 930 / 1e3, 204.8),
]


@pytest.mark.parametrize("name, short, sms, gflops, gbps", HAND_CHECKED)
def test_a_new_preset_has_its_datasheet_figures_under_the_name_nvidia_smi_prints(name, short, sms, gflops, gbps):
    p = find_preset(name)
    assert p is find_preset(short) and p.aliases[0] == short
    assert (p.sm_count, p.dram_gbps) == (sms, gbps)
    assert p.peak_fp32_gflops == pytest.approx(gflops)
    dev = from_preset(name)
    assert dev.peak_fp32_gflops == pytest.approx(gflops) and dev.peak_dram_gbps == gbps


@pytest.mark.parametrize("short, tflops", [
    ("rtx5070", 30.9),         # the RTX Blackwell whitepaper's shader TFLOPS
    ("a30", 10.3),             # A30 datasheet
    ("a800-sxm4-80gb", 19.5),  # A800 datasheet, as the A100's
    ("agx-orin-64gb", 5.3),    # Jetson AGX Orin technical brief
])
def test_fp32_peaks_match_the_datasheets_within_one_percent(short, tflops):
    assert from_preset(short).peak_fp32_gflops == pytest.approx(tflops * 1e3, rel=0.01)


def test_the_a30_tensor_peaks_match_its_datasheet():
    # A30 datasheet: 165 TFLOP/s dense BF16 (56 SMs x 2048 FLOP/clk x 1440 MHz), 5.2 TFLOP/s FP64,
    # 10.3 TFLOP/s FP64 tensor: the boost clock itself, so no tensor clock of its own.
    peaks = from_preset("NVIDIA A30").peaks_gflops
    assert peaks["bf16_tensor"] == pytest.approx(165e3, rel=0.01)
    assert peaks["fp64"] == pytest.approx(5.2e3, rel=0.01)
    assert peaks["fp64_tensor"] == pytest.approx(10.3e3, rel=0.01)
    assert find_preset("a30").tensor_clock_mhz is None


def test_the_orin_gpus_int8_tensor_peak_is_half_the_briefs_sparse_figure():
    # Jetson AGX Orin Series technical brief: the 64GB's GPU gives 170 sparse INT8 TOPS (its DLAs the rest of 275),
    # 85 dense = 16 SMs x 4,096 x 1.3 GHz, GA100's rate a SM (GA102's half of it read 42.6 until 2026-12-07)
    peaks = from_preset("agx-orin-64gb").peaks_gflops
    assert 2 * peaks["int8_tensor"] == pytest.approx(170e3, rel=0.01)
    assert peaks["fp16_tensor"] == peaks["bf16_tensor"] == pytest.approx(42.6e3, rel=0.01)
    assert "fp8_tensor" not in peaks  # Ampere: no FP8


@pytest.mark.parametrize("name, ai_tops", [
    ("NVIDIA GeForce RTX 4070 Laptop GPU", 321),  # NVIDIA's laptop specifications
    ("NVIDIA GeForce RTX 4060 Laptop GPU", 233),
])
def test_a_laptop_gpu_is_a_geforce_at_the_top_of_its_boost_range(name, ai_tops):
    # NVIDIA's "AI TOPS" is FP8 with sparsity at FP16 accumulate, four times the dense FP8 rate with
    # FP32 accumulate that a GeForce board gets (half the professional 2048 per SM per clock): the
    # figure comes out only at the top of the boost range, which is the preset's clock.
    dev = from_preset(name)
    assert "GeForce" in dev.name and "Laptop" in dev.name
    assert 4 * dev.peaks_gflops["fp8_tensor"] == pytest.approx(ai_tops * 1e3, rel=0.01)


def test_a_laptop_name_is_not_taken_for_the_desktop_board():
    laptop, desktop = find_preset("NVIDIA GeForce RTX 4070 Laptop GPU"), find_preset("NVIDIA GeForce RTX 4070")
    assert (laptop.fp32_cores, laptop.boost_clock_mhz) == (4608, 2175)
    assert (desktop.fp32_cores, desktop.boost_clock_mhz) == (5888, 2480)
    assert find_preset("rtx 4070 laptop") is laptop
    assert find_preset("NVIDIA GeForce RTX 5070 Laptop GPU") is None  # no preset: not the desktop RTX 5070


def test_a_board_whose_sizes_nvidia_smi_names_alike_leaves_the_size_unknown():
    # The RTX 4060 Ti and 5060 Ti come with 8 or 16 GB under one name; the RTX 4060 with 8 GB only.
    assert from_preset("NVIDIA GeForce RTX 4060 Ti").memory_bytes is None
    assert from_preset("NVIDIA GeForce RTX 5060 Ti").memory_bytes is None
    assert from_preset("NVIDIA GeForce RTX 4060").memory_bytes == 8 * 10**9


def test_a800_and_orin_alone_list_their_variants():
    with pytest.raises(UsageError) as exc:
        find_preset("A800")
    assert "a800-sxm4-80gb (2,039 GB/s), a800-pcie-80gb (1,935 GB/s)" in str(exc.value)
    assert "nvidia-smi prints works too" in str(exc.value)
    # CUDA names every Jetson Orin 'Orin': the choices, and what tells them apart
    with pytest.raises(UsageError) as exc:
        find_preset("Orin")
    message = str(exc.value)
    assert "names 2 GPUs; choose one: agx-orin-64gb (205 GB/s), agx-orin-32gb (205 GB/s)" in message
    assert "16 on the 64GB, 14 on the 32GB" in message and "nvidia-smi prints works too" not in message
    assert "\n" not in message
    assert find_preset("a30").name == "A30"  # not taken for a family
