"""Reports other people made and published (tests/fixtures/ncu/public, SOURCES.md there), read
as a user would: the figures hand-checked against each file."""

from pathlib import Path

import pytest

from roofline import api
from roofline.errors import UsageError
from roofline.results import store

PUBLIC = Path(__file__).resolve().parent / "fixtures" / "ncu" / "public"
RTX3070 = """name = "NVIDIA GeForce RTX 3070"
compute_capability = "8.6"
sm_count = 46
fp32_cores = 5888
max_sm_clock_mhz = 1725
peak_dram_gbps = 448
"""


def _read(name: str, tmp_path: Path, gpu: str | None = None):
    done = api.import_profile(PUBLIC / name, tmp_path / "p.json", gpu)
    return done, store.load(tmp_path / "p.json", profile=True)


def test_ncu_2022_text_whose_rows_sit_two_past_their_rule(tmp_path):
    """The three reductions of an RTX 3070 (30.51 ms, 114.85 us and 111.71 us, as the file's
    Duration rows say), though ncu 2022 indents their rows two columns past the rule it splits
    them by."""
    (tmp_path / "rtx3070.toml").write_text(RTX3070)
    _, doc = _read("eduardo_3070_reductions.txt", tmp_path, str(tmp_path / "rtx3070.toml"))
    times = sorted(round(k.time_ms, 5) for k in doc.kernels)
    assert times == [0.11171, 0.11485, 30.51]
    assert doc.kernels[0].clock_mhz == pytest.approx(779.96, rel=1e-4)  # 'SM Frequency cycle/usecond 779.96'


def test_a_decimal_comma_and_a_space_between_thousands(tmp_path):
    _, doc = _read("hpc_course_V100_2020_commadecimal.txt", tmp_path, "v100-sxm2")
    (k,) = doc.kernels
    assert k.name == "ax_kernel" and k.time_ms == pytest.approx(10.55)  # 'Duration msecond 10,55'
    assert k.clock_mhz == pytest.approx(1250)  # 'SM Frequency cycle/nsecond 1,25'


def test_a_launch_that_failed_is_said_to_have_failed(tmp_path):
    with pytest.raises(UsageError, match=r"holds no launch that ran \(1 failed launch .*render\(vec3"):
        _read("dd2360_ncu_report_failed_launch.txt", tmp_path, "rtx4090")


def test_sections_before_the_first_launch_line_are_left_out_with_a_note(tmp_path):
    done, doc = _read("kernelabstractions_V100_2020_nvtx.txt", tmp_path, "v100-sxm2")
    assert sorted(round(k.time_ms, 2) for k in doc.kernels) == [2.00, 3.02]
    assert any("sections before the first launch line" in n for n in done.notes)


def test_two_runs_joined_are_not_taken_for_a_file_cut_short(tmp_path):
    done, doc = _read("g2bmm_two_runs_A100_ncu2023.txt", tmp_path, "a100-sxm4-80gb")
    assert doc.launches_profiled == 1
    assert not any("cut short" in n for n in done.notes)
    assert any("no kernel name or no duration" in n for n in done.notes)  # the second run's launch


def test_print_summary_output_is_named_for_what_it_is(tmp_path):
    with pytest.raises(UsageError, match="--print-summary output"):
        _read("heateq_ncu_summary_3D.txt", tmp_path)


def test_a_gpu_without_a_preset_is_asked_for_by_device_file_and_a_preset_of_other_sms_noted(tmp_path):
    with pytest.raises(UsageError, match=r"compute capability 12\.0\).*or describe it in a device file"):
        _read("rtx5060laptop_gemv.txt", tmp_path)
    done, _ = _read("rtx5060laptop_gemv.txt", tmp_path, "rtx5060ti")
    assert any("ran on 26 SMs; --gpu GeForce RTX 5060 Ti has 36" in n for n in done.notes)


def test_a_board_without_tensor_cores_gets_no_tensor_roof(tmp_path):
    pytest.importorskip("ncu_report", reason="reading a .ncu-rep takes the ncu-report package (the test extra)")
    _, doc = _read("josiahls_profile.ncu-rep", tmp_path)
    assert doc.device.name == "NVIDIA GeForce GTX 1660 Ti"
    assert set(doc.device.peaks_gflops) == {"fp64", "fp32", "fp16"}
    assert not any("tensor" in m for k in doc.kernels for m in (k.missing or {}))


def test_a_cut_down_fp64_gpu_reads_its_fp64_roof_from_the_report():
    """An H800 reports single_to_double_precision_perf_ratio 64 where sm_90's table has 2: FP64
    (and FP64 tensor) at FP32 / 64, 1.05 TFLOP/s, as its datasheet's 1 TFLOP/s."""
    from roofline.nsight.device import device_from_rows
    from roofline.nsight.rows import Row

    attrs = {"compute_capability_major": 9, "compute_capability_minor": 0, "multiprocessor_count": 132,
             "max_gpu_frequency_khz": 1980000, "max_mem_frequency_khz": 2619000, "global_memory_bus_width": 5120,
             "single_to_double_precision_perf_ratio": 64}
    row = Row("k", values={f"device__attribute_{k}": float(v) for k, v in attrs.items()},
              text={"device__attribute_display_name": "NVIDIA H800"})
    peaks = device_from_rows([row]).peaks_gflops
    assert peaks["fp64"] == pytest.approx(peaks["fp32"] / 64) == pytest.approx(1045.4, rel=1e-3)
    assert peaks["fp64_tensor"] == peaks["fp64"]
    del row.values["device__attribute_single_to_double_precision_perf_ratio"]
    assert device_from_rows([row]).peaks_gflops["fp64"] == pytest.approx(peaks["fp32"] / 2)  # the table's
