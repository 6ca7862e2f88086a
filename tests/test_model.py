"""The traffic model and floors against the worked numbers of seed lesson 000."""

import pytest

from roofline import registry
from roofline.device import dram_gbps, fp32_gflops, from_preset
from roofline.model import TrafficModel, attainable_gflops, floors, ridge_point

N = 4096


def fig(name, n=N):
    return registry.BY_NAME[name].model.figures(n, n, n)


@pytest.mark.parametrize("name, gmem, smem, gbytes, ai", [
    ("naive", 8192, None, 549.76, 0.25),
    ("gmem_coalescing", 8192, None, 549.76, 0.25),
    ("smem_tiling", 256, 8192, 17.18, 8),
    ("register_tiling_1d", 128, 4608, 8.59, 16),
    ("register_strip", 128, 4608, 8.59, 16),
    ("register_tiling_2d", 64, 1024, 4.29, 32),
])
def test_worked_numbers_at_4096(name, gmem, smem, gbytes, ai):
    f = fig(name)
    assert f.flops == 2 * N**3 == 137_438_953_472
    assert f.gmem_accesses_per_result == gmem
    assert f.smem_accesses_per_result == smem
    assert f.gmem_bytes / 1e9 == pytest.approx(gbytes, abs=0.005)
    assert f.arithmetic_intensity == pytest.approx(ai)


def test_seed_rtx5080_floors_and_ridge():
    dev = from_preset("rtx 5080")
    assert dev.peak_fp32_gflops == pytest.approx(56_276, rel=1e-4)  # 10752 cores x 2 x 2.617 GHz
    assert dev.ridge_point == pytest.approx(58.6, abs=0.05)
    fl = floors(fig("register_tiling_2d"), dev.peak_fp32_gflops, dev.peak_dram_gbps)
    assert fl.compute_floor_ms == pytest.approx(2.44, abs=0.005)
    assert fl.memory_floor_ms == pytest.approx(4.47, abs=0.005)
    assert fl.binding == "memory"
    assert fl.times_floor(6.996) == pytest.approx(1.56, abs=0.01)  # seed: "1.56 times off"
    # The naive kernel's memory floor: 549.8 GB at 960 GB/s is 573 ms.
    naive = floors(fig("naive"), dev.peak_fp32_gflops, dev.peak_dram_gbps)
    assert naive.memory_floor_ms == pytest.approx(572.7, abs=0.1)
    # The sloped roof at AI 32 is 32 x 960 = 30,720 GFLOP/s.
    assert attainable_gflops(32, dev.peak_fp32_gflops, dev.peak_dram_gbps) == pytest.approx(30_720)


def test_h200_nvml_peaks_formulas():
    # NVML on an H200: 3201 MHz x 6016-bit bus -> 4814 GB/s; 16896 cores x 1980 MHz -> 66.9 TFLOP/s.
    assert dram_gbps(3201, 6016) == pytest.approx(4814.3, abs=0.1)
    assert fp32_gflops(16896, 1980) == pytest.approx(66_908.2, abs=0.1)
    assert ridge_point(66_908.2, 4814.3) == pytest.approx(13.9, abs=0.01)


def test_ragged_sizes_count_the_tiles_actually_loaded():
    # 100 x 100 x 100 with 32 x 32 tiles: 4 block columns re-read A, 4 block rows re-read B.
    f = TrafficModel(block_tile=(32, 32), thread_tile=(1, 1)).figures(100, 100, 100)
    assert f.gmem_accesses_per_result == (100 * 100 * 4 + 100 * 100 * 4) / (100 * 100) == 8
    # A 1 x N x K problem: the single block row reads B once, A once per block column.
    g = TrafficModel(block_tile=(128, 128), thread_tile=(8, 8)).figures(1, 256, 64)
    assert g.gmem_bytes == 4 * (1 * 64 * 2 + 64 * 256 * 1)


def test_square_tile_minimises_gmem_for_a_given_area():
    square = TrafficModel((64, 64), None).figures(N, N, N).gmem_accesses_per_result
    rect = TrafficModel((128, 32), None).figures(N, N, N).gmem_accesses_per_result
    assert square < rect


def test_compute_binds_above_the_ridge():
    dev = from_preset("h200")  # ridge 13.9 FLOP/B
    fl = floors(fig("register_tiling_2d"), dev.peak_fp32_gflops, dev.peak_dram_gbps)
    assert fl.binding == "compute"
    assert fl.compute_floor_ms == pytest.approx(137.439 / 66.908, rel=1e-4)
