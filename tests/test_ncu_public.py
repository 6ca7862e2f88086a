"""Reports other people made and published (tests/fixtures/ncu/public, SOURCES.md there), read
as a user would: the figures hand-checked against each file."""

from pathlib import Path

import pytest

from roofline.commands import profile as profile_cmd
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
    done = profile_cmd.import_profile(PUBLIC / name, tmp_path / "p.json", gpu)
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


@pytest.mark.parametrize("name", ["heateq_ncu_summary_3D.txt", "kitsune_raytrace_summary_cut.txt"])
def test_print_summary_output_is_named_for_what_it_is(tmp_path, name):
    # per kernel ('..., Invocations 12') and with the launch's shape ('..., Grid Size 8192, 1 invocations')
    with pytest.raises(UsageError, match="--print-summary output"):
        _read(name, tmp_path, "a100-sxm4-80gb")


def test_a_gpu_without_a_preset_is_asked_for_by_device_file_and_a_preset_of_other_sms_noted(tmp_path):
    with pytest.raises(UsageError, match=r"it gives compute capability 12\.0, not the device's name.*if it is another, describe it in a device file"):
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


def test_launch_lines_at_column_0_and_six_spaces_are_read(tmp_path):
    """A T4's reductions pasted as plain text: the first two launch lines at column 0, the third
    at six spaces, their sections at four (23.76, 26.87 and 88.73 ms, as its Duration rows say;
    'CC 7.5' and '# SMs 40' name the Tesla T4)."""
    done, doc = _read("t4_atomics_mixed_indent.txt", tmp_path)
    assert doc.device.name == "Tesla T4"
    assert {k.name: k.time_ms for k in doc.kernels} == {
        "atomic_global_step": pytest.approx(23.76), "atomic_per_block_step": pytest.approx(26.87),
        "interleaved_addressing_1_step": pytest.approx(88.73)}
    assert sum(k.time_ms for k in doc.kernels) == pytest.approx(139.36)
    assert all(k.registers == 16 for k in doc.kernels)
    assert not any("before the first launch line" in n or "cut short" in n for n in done.notes)


def test_one_launch_indented_one_space_and_another_two_are_both_read(tmp_path):
    """The same T4 text with its first launch line one space in and the rest two (as a lab note
    pasted it): every launch is read, none left behind a note about sections before it."""
    lines = (PUBLIC / "t4_atomics_mixed_indent.txt").read_text().splitlines()
    launches = [i for i, line in enumerate(lines) if ", Context 1, Stream 7" in line]
    for n, i in enumerate(launches):
        lines[i] = (" " if n == 0 else "  ") + lines[i].lstrip()
    report = tmp_path / "note.txt"
    report.write_text("\n".join(lines) + "\n")
    done = profile_cmd.import_profile(report, tmp_path / "p.json")
    doc = store.load(tmp_path / "p.json", profile=True)
    assert len(doc.kernels) == 3 and sum(k.time_ms for k in doc.kernels) == pytest.approx(139.36)
    assert not any("before the first launch line" in n for n in done.notes)


def test_a_text_cut_inside_its_last_section_keeps_what_it_printed(tmp_path):
    """llm.c PR 762's A30 softmax, pasted up to its Duration row (1.47 ms; SM Frequency
    928.26 cycle/usecond): read from what it printed, with a note that it was cut."""
    done, doc = _read("llmc_pr762_a30_softmax_cut.txt", tmp_path, "a30")
    (k,) = doc.kernels
    assert k.name == "softmax_forward_kernel5" and k.time_ms == pytest.approx(1.47)
    assert k.clock_mhz == pytest.approx(928.26)
    assert any("cut short" in n and "inside its GPU Speed Of Light Throughput section" in n for n in done.notes)


def test_a_text_cut_inside_its_last_value_drops_that_value(tmp_path):
    """A file whose last line has no line end may be cut inside its number ('1.4' of '1.47'):
    that row is dropped, so the launch, now without a duration, is left out as cut short."""
    report = tmp_path / "cut.txt"
    report.write_text((PUBLIC / "llmc_pr762_a30_softmax_cut.txt").read_text().rstrip("\n")[:-1])
    with pytest.raises(UsageError, match="1 launch without a duration"):
        profile_cmd.import_profile(report, tmp_path / "p.json", "a30")


def test_two_gpus_joined_in_one_text_are_refused_naming_both(tmp_path):
    """A CC 7.5 board's (16 SMs) vector add and an H20's naive SGEMM (CC 9.0) in one file: one
    profile has one GPU's roofs, so the file is refused naming both, with or without --gpu."""
    for gpu in (None, "t4", "h200"):
        with pytest.raises(UsageError, match=r"two GPUs, a GPU of compute capability 7\.5, 16 SMs \(launch 0 "
                                             r"\(elementwise_add_float4.*compute capability 9\.0 \(launch 1 "
                                             r"\(naive_kernel"):
            _read("joined_cc75_and_h20.txt", tmp_path, gpu)
    first = (PUBLIC / "joined_cc75_and_h20.txt").read_text().split("\n\n  naive_kernel")[0]
    alone = tmp_path / "alone.txt"
    alone.write_text(first + "\n")  # the first GPU's part on its own reads
    profile_cmd.import_profile(alone, tmp_path / "p.json", "t4")
    assert store.load(tmp_path / "p.json", profile=True).kernels[0].time_ms == pytest.approx(0.0024)


def test_values_with_text_after_them_are_read_and_the_text_noted(tmp_path):
    """'41.00  # note' and '1.83 (boost off)'... a value a person annotated is read, its text is a note."""
    text = (PUBLIC / "joined_cc75_and_h20.txt").read_text()
    h20 = "  naive_kernel" + text.split("\n  naive_kernel", 1)[1]
    h20 = h20.replace("ms         41.00", "ms         41.00  # run 2, warm L2").replace(
        "Ghz          1.83", "Ghz          1.83 locked")
    report = tmp_path / "h20.txt"
    report.write_text(h20)
    (tmp_path / "h20.toml").write_text('name = "NVIDIA H20"\ncompute_capability = "9.0"\nsm_count = 78\n'
                                       'fp32_cores = 9984\nmax_sm_clock_mhz = 1980\npeak_dram_gbps = 4000\n')
    done = profile_cmd.import_profile(report, tmp_path / "p.json", str(tmp_path / "h20.toml"))
    (k,) = store.load(tmp_path / "p.json", profile=True).kernels
    assert k.time_ms == pytest.approx(41.00) and k.clock_mhz == pytest.approx(1830)
    assert any("2 values with text after them" in n and "'41.00  # run 2, warm L2'" in n for n in done.notes)
    assert not any("damaged" in n for n in done.notes)


def test_a_truncated_binary_report_says_so(tmp_path):
    """The GTX 1660 Ti's report cut at 80,000 of its 99,927 bytes: ncu_report reads the two whole
    launches before the cut (warmingUp, mathKernel1) and an empty record for the third; the import
    keeps the two and says the file is truncated. Cut inside its first launch it is refused."""
    pytest.importorskip("ncu_report", reason="reading a .ncu-rep takes the ncu-report package (the test extra)")
    data = (PUBLIC / "josiahls_profile.ncu-rep").read_bytes()
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[:80_000])
    done = profile_cmd.import_profile(cut, tmp_path / "p.json")
    doc = store.load(tmp_path / "p.json", profile=True)
    assert sorted(k.name for k in doc.kernels) == ["mathKernel1", "warmingUp"]
    assert any(n.startswith("a truncated report: the file ends inside the record of launch 2") for n in done.notes)
    cut.write_bytes(data[:20_000])
    with pytest.raises(UsageError, match="a truncated report .*no launch in it is whole"):
        profile_cmd.import_profile(cut, tmp_path / "p.json")
