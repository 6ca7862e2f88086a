"""`roofline profile` without a GPU: the roofs per precision of each preset against datasheet
figures, the raw CSV exports recorded from a PyTorch BF16 training step on the H200 (imported,
grouped, classified, read against their roofs, charted), and every failure of a profile through a
stand-in `ncu` (tests/fixtures/ncu/fake_ncu.py)."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline.cli import app
from roofline import nsight
from roofline.nsight.metrics import TIME
from roofline.model.device import from_preset
from roofline.nsight.names import short_name
from roofline.nsight.launches import Launch, group
from roofline.results import store

NCU = FIXTURES / "ncu"
TRANSFORMER = NCU / "transformer-h200-raw.csv"   # roofline profile of examples/transformer_bf16.py on the H200
CUPY_BASE = NCU / "cupy-h200-base.csv"            # a small CuPy program, --print-units base
CUPY_UNITS = NCU / "cupy-h200-units.csv"          # the same report exported with ncu's display units
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_line_error(result, needle, code):
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert lines and needle in lines[-1] and lines[-1].startswith("roofline: error: "), result.stderr
    assert "Traceback" not in result.output


# Datasheet figures, GFLOP/s (dense, no sparsity), and the clock each implies.
@pytest.mark.parametrize("gpu, key, expected", [
    ("h100-sxm", "fp32", 66_900),         # 16,896 cores x 2 x 1980 MHz
    ("h100-sxm", "bf16_tensor", 989_400),  # 132 SMs x 4096 FLOP/clk x 1830 MHz
    ("h100-sxm", "fp16_tensor", 989_400),
    ("h100-sxm", "tf32_tensor", 494_700),
    ("h100-sxm", "fp8_tensor", 1_978_900),
    ("h100-sxm", "fp64", 33_500),          # datasheet: 34
    ("h100-sxm", "fp64_tensor", 66_900),   # datasheet: 67, at the boost clock
    ("h100-pcie", "bf16_tensor", 756_400),
    ("h200", "bf16_tensor", 989_400),
    ("a100-sxm4-40gb", "fp16_tensor", 312_000),
    ("a100-sxm4-40gb", "tf32_tensor", 156_000),
    ("a100-sxm4-40gb", "fp64", 9_700),
    ("a100-sxm4-40gb", "fp64_tensor", 19_500),
    ("v100-sxm2", "fp16_tensor", 125_000),
    ("l4", "fp8_tensor", 242_000),
    ("b200", "bf16_tensor", 2_250_000),
    ("v100-pcie", "fp16_tensor", 112_000),
    ("t4", "fp16_tensor", 65_000),
    ("t4", "int8_tensor", 130_000),       # TOPS
    ("a100-sxm4-80gb", "bf16_tensor", 312_000),
    ("a100-pcie-80gb", "bf16_tensor", 312_000),
    ("a100-pcie-40gb", "int8_tensor", 624_000),
    ("a10", "fp16_tensor", 125_000),
    ("rtx3090", "fp16_tensor", 71_000),   # GeForce: FP32 accumulate at half (142 with FP16 accumulate)
    ("rtx3090", "tf32_tensor", 35_600),
    ("rtx4090", "bf16_tensor", 165_200),
    ("rtx4090", "fp8_tensor", 330_300),
    ("rtx4090", "int8_tensor", 660_600),   # integer work is not halved
    ("h100-nvl", "bf16_tensor", 835_000),
    ("rtx5080", "fp16_tensor", 112_600),
    ("rtx5090", "bf16_tensor", 209_500),
])
def test_presets_carry_the_datasheet_rate_of_each_precision(gpu, key, expected):
    assert from_preset(gpu).peaks_gflops[key] == pytest.approx(expected, rel=0.01)


def test_precisions_an_architecture_lacks_are_absent_and_sources_recorded():
    a100, v100 = from_preset("a100-sxm4-80gb"), from_preset("v100-pcie")
    assert "fp8_tensor" not in a100.peaks_gflops and "bf16_tensor" not in v100.peaks_gflops
    h200 = from_preset("h200")
    assert h200.tensor_clock_mhz == 1830 and h200.peak_clock_mhz == 1980
    assert "Hopper whitepaper" in h200.peak_sources["bf16_tensor"]
    assert "Programming Guide" in h200.peak_sources["fp64"]
    p = h200.precision_peaks["bf16_tensor"]
    assert (p.per_sm_per_clock, p.sm_count, p.clock_mhz) == (4096, 132, 1830)
    assert h200.memory_peaks["L1"].value == pytest.approx(33_454, rel=1e-4)  # 128 B x 132 x 1980 MHz
    assert h200.roofs.roof("bf16_tensor").value == pytest.approx(989_430, rel=1e-4)


def test_device_shows_the_roof_of_each_precision_and_why_the_tensor_clock():
    r = invoke("device", "--gpu", "h100 80gb hbm3")
    assert r.exit_code == 0, r.output
    assert "BF16 tensor" in r.stdout and "4,096 x 132 x 1,830 MHz" in r.stdout and "989.4 TFLOP/s" in r.stdout
    assert "tensor-core peaks (FP64's aside) use 1,830 MHz" in r.stdout.replace("\n", " ")


@pytest.mark.parametrize("unit, scale", [("Mbyte", 1e6), ("Kbyte/cycle", 1e3), ("us", 1e3), ("msecond", 1e6),
                                         ("Ghz", 1e9), ("register/thread", 1.0), ("%", 1.0), ("byte", 1.0),
                                         ("furlong", None)])
def test_units_of_a_csv_export(unit, scale):
    assert nsight.dialect.unit_scale(unit) == scale


def test_base_and_display_units_exports_read_the_same():
    base = nsight.pages.parse_csv(CUPY_BASE.read_text()).rows
    shown = nsight.pages.parse_csv("==PROF== Connected to process 1\n" + CUPY_UNITS.read_text()).rows
    assert len(base) == len(shown) == 16
    for a, b in zip(base, shown):
        assert a.kernel == b.kernel
        for metric in (TIME, "dram__bytes.sum", "lts__t_bytes.sum", "launch__registers_per_thread"):
            assert b.values[metric] == pytest.approx(a.values[metric], rel=1e-5, abs=1.0)
    gemm = next(r for r in base if r.kernel.startswith("nvjet"))
    assert gemm.values["sm__ops_path_tensor_src_fp16.sum"] == 2 * 2048**3  # thousands separators removed
    assert gemm.values[TIME] == 25_056  # ns


@pytest.fixture(scope="module")
def transformer(tmp_path_factory):
    out = tmp_path_factory.mktemp("imported") / "profile.json"
    r = invoke("profile", "--import", TRANSFORMER, "--out", out)
    assert r.exit_code == 0, r.output
    return store.load(out, profile=True), r


def test_the_training_step_imports_grouped_by_kernel_and_configuration(transformer):
    doc, r = transformer
    assert doc.launches_profiled == 165 and len(doc.kernels) == 65
    assert doc.device.name == "NVIDIA H200" and doc.device.sm_count == 132
    assert doc.device.peak_dram_gbps == pytest.approx(4814.3, abs=0.1)  # 2 x 3201 MHz x 6016 bit / 8
    assert sum(k.launches for k in doc.kernels) == 165
    assert sum(k.time_share for k in doc.kernels) == pytest.approx(1.0)
    assert [k.time_ms for k in doc.kernels] == sorted((k.time_ms for k in doc.kernels), reverse=True)
    assert "NVIDIA H200: top 25 of 65 kernels" in r.stdout.replace("\n", " ")


def test_tensor_core_kernels_read_against_the_bf16_roof(transformer):
    doc, _ = transformer
    head = next(k for k in doc.kernels if "320x128" in k.name)
    assert head.flops["bf16_tensor"] == 2 * 8192 * 32000 * 1024  # the vocabulary projection: tokens x vocab x d_model
    assert head.precision == "bf16" and head.tensor_core and head.launches == 1
    tensor = [k for k in doc.kernels if k.tensor_core]
    assert len(tensor) == 10 and all(k.precision == "bf16" for k in tensor)
    gemms = [k for k in tensor if k.name.startswith("nvjet")]
    assert all(doc.verdict(k).binding.level == "BF16 tensor" for k in gemms)
    assert all(0.6 < k.gflops / 989_430 < 0.85 for k in gemms if k.time_share > 0.03)


def test_copies_and_elementwise_kernels_read_against_bandwidth(transformer):
    doc, _ = transformer
    copies = [k for k in doc.kernels if "direct_copy" in k.demangled]
    assert copies and all(k.precision == "none" and k.gflops is None for k in copies)  # HFMA2.MMA moves are not math
    bf16_add = next(k for k in doc.kernels if "CUDAFunctor_add<c10::BFloat16>" in k.demangled and k.launches == 4)
    assert bf16_add.precision == "fp32"  # computed in FP32; its HFMA count is register moves
    for k in doc.kernels:
        if k.precision == "none":
            assert doc.verdict(k).binding.level in ("DRAM", "L2", "SMEM", "L1")


def test_grouping_by_configuration():
    def launch(name, grid, ns):
        return Launch(name, f"void {name}<1>(int)", grid, (128, 1, 1), 32, 0, 0, ns, {"fp32": 1e6}, {"dram": 1e6})

    groups = group([launch("a", (8, 1, 1), 100), launch("b", (8, 1, 1), 50), launch("a", (8, 1, 1), 300),
                    launch("a", (16, 1, 1), 10), launch("a", (8, 1, 1), 200)])
    assert [(g.first.name, g.first.grid, g.count) for g in groups] == [("a", (8, 1, 1), 3), ("b", (8, 1, 1), 1),
                                                                       ("a", (16, 1, 1), 1)]
    assert groups[0].time_ms == pytest.approx(600e-6) and groups[0].median_ms == pytest.approx(200e-6)
    assert groups[0].flops == {"fp32": 3e6}


@pytest.mark.parametrize("flops, nbytes, uncounted, expected", [
    ({"fp32": 1e8, "fp16": 4e8}, 3e8, [], "fp32"),          # HFMA2.MMA moves (4 per HFMA) beside the real FADDs
    ({"fp16": 6e8}, 6e8, [], "none"),                        # a copy with moves only
    ({"fp16": 8e9, "fp32": 1e8}, 1e9, [], "fp16"),           # real half-precision math
    ({"fp64": 1e6}, 24e6, [], "fp64"),                       # one DADD per 24 bytes
    ({"fp32": 1e3}, 1e9, [], "none"),                        # stray instructions in a copy
    ({"fp32": 1e8, "bf16_tensor": 5e11}, 1e9, [], "bf16"),
    ({}, 1e9, ["bf16_tensor"], "unknown"),                   # no work counted, but tensor work was not counted
    ({"fp32": 1e8}, 1e9, ["bf16_tensor"], "fp32"),           # what was counted names it (the table marks it '?')
])
def test_a_kernels_precision(flops, nbytes, uncounted, expected):
    g = group([Launch("k", "k", (1, 1, 1), (32, 1, 1), 8, 0, 0, 1e3, flops, {"dram": nbytes})])[0]
    assert g.precision(uncounted) == expected


@pytest.mark.parametrize("demangled, short", [
    ("void native::vectorized_elementwise_kernel<4, native::FillFunctor<float>>(int, T2)", "vectorized_elementwise_kernel"),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"),
    ("void native::<unnamed>::cunn_SoftMaxForward<4, float>(T3 *, const T1 *, int)", "cunn_SoftMaxForward"),
])
def test_short_kernel_names(demangled, short):
    assert short_name(demangled) == short


def test_a_profile_plots_and_shows_without_a_gpu(transformer, tmp_path):
    doc, _ = transformer
    path = tmp_path / "p.json"
    store.save(doc, path)
    out = tmp_path / "chart.svg"
    r = invoke("plot", path, "--out", out)
    assert r.exit_code == 0, r.output
    svg = out.read_text()
    assert "BF16 tensor 989.4" in svg and "cunn_SoftMaxBackw" in svg and "distance from the binding roof" in svg
    r = invoke("show", path)
    assert r.exit_code == 0 and "cunn_SoftMaxBackward" in r.stdout
    assert invoke("compare", path, path).exit_code == 0  # two profiles compare (tests/test_compare_profiles.py)
    one_line_error(invoke("plot", path, "--kind", "sweep", "--out", out), "no size sweep", 2)


def test_the_schema_of_profile_files():
    r = invoke("schema", "profile")
    assert r.exit_code == 0
    schema = json.loads(r.stdout)
    assert {"device", "kernels", "launches_profiled", "total_time_ms"} <= set(schema["required"])
    assert "ProfiledKernel" in schema["$defs"]


def test_a_tampered_profile_is_refused(transformer, tmp_path):
    doc = store.dump(transformer[0])
    doc["kernels"][0]["time_share"] = 0.9
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    one_line_error(invoke("show", path), "kernels[0].time_share", 2)


@pytest.mark.parametrize("args, needle", [
    (["profile"], "give the command to profile after --"),
    (["profile", "--import", "missing.csv"], "no such report file"),
    (["profile", "--import", "notes.txt"], "notes.txt: not an Nsight Compute CSV export: no header row"),
    (["profile", "--import", "plain.csv"], "plain.csv: not an Nsight Compute CSV export"),
    (["profile", "--import", "plain.csv", "--", "python"], "not both"),
    (["profile", "--gpu", "h200", "--", "python"], "--gpu applies to --import"),
    (["profile", "--kernel-regex", "gemm(", "--", "python"], "is not a regular expression"),
    (["profile", "--launch-count", "0", "--", "python"], "--launch-count must be 1 to 100,000"),
    (["profile", "--report", "r.json", "--", "python"], ".ncu-rep name"),
    (["profile", "--import", "plain.csv", "--gpu", "a100"], "choose one"),
    (["profile", "--import", "plain.csv", "--launch-count", "10"], "an imported report holds what it holds"),
    (["profile", "--top", "0", "--", "python"], "--top must be 1 or more"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "plain.csv").write_text("a,b\n1,2\n")
    one_line_error(invoke(*args), needle, 2)
    assert not (tmp_path / "roofline-profile.json").exists()


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    """`ncu` on PATH is the stand-in; FAKE_NCU_MODE picks what it reports."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "ncu"
    exe.write_text(f"#!{sys.executable}\n" + (NCU / "fake_ncu.py").read_text())
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NCU_CSV", str(TRANSFORMER))
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_a_profile_through_ncu_is_written_with_the_report_kept(fake_ncu, tmp_path, capfd):
    r = invoke("profile", "--report", "kept.ncu-rep", "--out", "p.json", "--", sys.executable, "-c", "print('ran')")
    assert r.exit_code == 0, r.output
    assert "ran" in capfd.readouterr().out  # the command's own output passes through
    doc = store.load(tmp_path / "p.json", profile=True)
    assert doc.launches_profiled == 165 and doc.exit_code == 0 and doc.command[-1] == "print('ran')"
    assert (tmp_path / "kept.ncu-rep").read_text().startswith("FAKE-REPORT")


def test_json_owns_stdout_the_commands_output_goes_to_stderr(fake_ncu, tmp_path, capfd):
    r = invoke("profile", "--json", "--out", "p.json", "--", sys.executable, "-c", "print('chatty program')")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["kind"] == "profile"
    captured = capfd.readouterr()
    assert "chatty program" in captured.err and "chatty program" not in captured.out


def test_a_failing_command_keeps_its_kernels_and_exits_1(fake_ncu, tmp_path):
    r = invoke("profile", "--out", "p.json", "--", sys.executable, "-c", "import sys; sys.exit(3)")
    one_line_error(r, "the command exited with code 3; the 165 launches profiled before that are kept in p.json", 1)
    assert store.load(tmp_path / "p.json", profile=True).exit_code == 3
    assert "profile it with --no-ops" in r.output  # a Python program: PyTorch's own profiler may be why
    r = invoke("profile", "--no-ops", "--out", "p.json", "--", sys.executable, "-c", "import sys; sys.exit(3)")
    assert r.exit_code == 1 and "--no-ops" not in r.output


def test_a_program_a_signal_ended_is_said_to_have_crashed():
    # a JAX program segfaulted under ncu on the H200 (exit 139): said so, not as "exited with code 139"
    from roofline.commands.profile import _exit

    assert _exit(139) == "crashed (signal 11, SIGSEGV)" == _exit(-11)
    assert (_exit(3), _exit(255)) == ("exited with code 3", "exited with code 255")


@pytest.mark.parametrize("mode, args, needle, code", [
    ("perm", [], "NVreg_RestrictProfilingToAdminUsers=0", 1),
    ("none", [], "the command launched no CUDA kernel", 1),
    ("none", ["--no-profile-from-start"], "between cudaProfilerStart and cudaProfilerStop", 1),
    ("nomatch", ["--kernel-regex", "attn"], "matched none of the 2 kernels the command launched: nvjet_sm90_tst_256x128, "
                                            "vectorized_elementwise_kernel", 2),
])
def test_profile_failures_are_one_line_and_write_nothing(fake_ncu, tmp_path, mode, args, needle, code):
    fake_ncu.setenv("FAKE_NCU_MODE", mode)
    r = invoke("profile", *args, "--out", "p.json", "--", sys.executable, "-c", "pass")
    one_line_error(r, needle, code)
    assert not (tmp_path / "p.json").exists()


def test_ncu_missing_and_an_unreadable_report(tmp_path, monkeypatch, fake_ncu):
    bad = tmp_path / "broken.ncu-rep"
    bad.write_bytes(b"\x00\x01not a report")
    one_line_error(invoke("profile", "--import", bad, "--out", "p.json"), "ncu cannot read it as a report", 2)
    one_line_error(invoke("profile", "--out", "p.json", "--", "no-such-program-here"), "no such program on PATH", 2)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    one_line_error(invoke("profile", "--", "python", "x.py"), "ncu (Nsight Compute) is not on PATH", 1)
    if nsight.binary._ncu_report_module() is None:  # neither NVIDIA's report reader nor ncu
        one_line_error(invoke("profile", "--import", bad), "needs NVIDIA's report reader: pip install "
                                                           "'ncu-report>=2025.3' (roofline's nsight extra)", 1)
    else:  # the reader (the test extra) says it cannot read the file
        one_line_error(invoke("profile", "--import", bad), "ncu_report) cannot read it", 2)
    assert not (tmp_path / "p.json").exists()


def _fixture_lines() -> list[str]:
    return TRANSFORMER.read_text().splitlines()


def test_an_import_read_against_a_preset_of_another_architecture_is_refused(tmp_path):
    one_line_error(invoke("profile", "--import", TRANSFORMER, "--gpu", "v100-sxm2", "--out", tmp_path / "p.json"),
                   "recorded on NVIDIA H200 (compute capability 9.0); --gpu Tesla V100-SXM2 is 7.0", 2)
    r = invoke("profile", "--import", TRANSFORMER, "--gpu", "h200", "--out", tmp_path / "p.json")
    assert r.exit_code == 0 and r.stderr == ""  # the report's own GPU by its preset name: nothing to say
    one_line_error(invoke("profile", "--import", TRANSFORMER, "--gpu", "h100-sxm", "--out", tmp_path / "p.json"),
                   "above the device's 3,350; the file looks corrupt, or its rates are those of NVIDIA H200, the GPU "
                   "it was recorded on, above --gpu h100-sxm's roofs: read it without --gpu to tell which", 2)
    # a GPU of the same architecture with another SM count: the launches ran on the report's 132 SMs
    one_line_error(invoke("profile", "--import", TRANSFORMER, "--gpu", "h100-pcie", "--out", tmp_path / "q.json"),
                   "recorded on NVIDIA H200 (132 SMs); --gpu H100 PCIe has 114, whose roofs do not fit launches", 2)
    assert not (tmp_path / "q.json").exists()


def test_rows_cut_short_or_not_finite_are_left_out_with_a_note(tmp_path):
    lines = _fixture_lines()
    cut = tmp_path / "cut.csv"
    cut.write_text("\n".join(lines[:40]) + "\n" + lines[40][: len(lines[40]) // 2] + "\n")
    r = invoke("profile", "--import", cut, "--out", tmp_path / "p.json")
    assert r.exit_code == 0, r.output
    assert "1 report row left out: cut short" in r.stderr
    assert store.load(tmp_path / "p.json", profile=True).launches_profiled == 38  # rows 2..39: the units row first
    header = lines[0].split('","')
    time = header.index(TIME)
    row = lines[2].split('","')
    row[time] = "nan"
    bad = tmp_path / "nan.csv"
    bad.write_text("\n".join([lines[0], lines[1], '","'.join(row)] + lines[3:]) + "\n")
    r = invoke("profile", "--import", bad, "--out", tmp_path / "q.json")  # a damaged duration: that launch left out, named
    assert r.exit_code == 0, r.output
    assert "launch 0 (elementwise_kernel [direct_copy_kernel_cuda]): gpu__time_duration.sum is 'nan', not a number" in r.stderr
    assert store.load(tmp_path / "q.json", profile=True).launches_profiled == 164  # the export's 165 but that one


def test_impossible_figures_in_a_report_are_one_line(tmp_path):
    lines = _fixture_lines()
    header = lines[0].split('","')
    dram = header.index("dram__bytes.sum")
    row = lines[2].split('","')
    row[dram] = "1e21"
    bad = tmp_path / "huge.csv"
    bad.write_text("\n".join([lines[0], lines[1], '","'.join(row)]) + "\n")
    one_line_error(invoke("profile", "--import", bad, "--out", tmp_path / "p.json"), "the device's dram peak of", 2)
    assert not (tmp_path / "p.json").exists()


def test_a_slow_kernel_keeps_its_tiny_rate(tmp_path):
    lines = _fixture_lines()
    header = lines[0].split('","')
    row = lines[2].split('","')
    row[header.index(TIME)] = "10,000,000,000"  # 10 s for the launch
    slow = tmp_path / "slow.csv"
    slow.write_text("\n".join([lines[0], lines[1], '","'.join(row)]) + "\n")
    r = invoke("profile", "--import", slow, "--out", tmp_path / "p.json")
    assert r.exit_code == 0, r.output
    assert store.load(tmp_path / "p.json", profile=True).kernels[0].time_ms == 10_000


def test_a_byte_order_mark_and_an_upper_case_suffix_are_read(tmp_path):
    upper = tmp_path / "REPORT.CSV"
    upper.write_text("\ufeff" + TRANSFORMER.read_text())
    r = invoke("profile", "--import", upper, "--out", tmp_path / "p.json")
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("field, value, needle", [
    ("gflops", 5.0, "kernels[0].gflops: 5, but its bf16_tensor operations over its time give"),
    ("precision", "fp64", "no fp64_tensor operations counted"),
    ("tensor_core", False, "'bf16' with tensor_core false is not a precision"),
    ("registers", 32, "computed for 168 registers"),
    ("median_ms", 100.0, "median_ms: 100 is more than"),
])
def test_figures_that_disagree_in_a_profile_file_are_refused(transformer, tmp_path, field, value, needle):
    doc = store.dump(transformer[0])
    doc["kernels"][0][field] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    one_line_error(invoke("show", path), needle, 2)


def test_a_profile_without_its_kind_says_so(transformer, tmp_path):
    doc = store.dump(transformer[0])
    del doc["kind"]
    path = tmp_path / "nokind.json"
    path.write_text(json.dumps(doc))
    one_line_error(invoke("show", path), "looks like a profile but has no", 2)


def test_report_and_out_must_differ_and_a_plain_file_is_not_a_program(fake_ncu, tmp_path):
    one_line_error(invoke("profile", "--report", "x.ncu-rep", "--out", "x.ncu-rep", "--", sys.executable, "-c", "1"),
                   "--report and --out both name", 2)
    (tmp_path / "data.txt").write_text("not a program")
    one_line_error(invoke("profile", "--", str(tmp_path / "data.txt")), "it is not executable", 2)


def test_out_must_be_a_json_file_of_the_same_kind(tmp_path):
    """`--out x.png` would write JSON into a .png, and `--out` naming a ladder run would replace
    it with a profile: both refused in one line, nothing written; a profile replaces a profile."""
    report = FIXTURES / "ncu" / "transformer-h200-raw.csv"
    png = tmp_path / "x.png"
    one_line_error(invoke("profile", "--import", report, "--out", png), "a profile file is JSON; give it a .json name, "
                                                                         "e.g. x.json", 2)
    run = tmp_path / "run.json"
    run.write_bytes((FIXTURES.parent.parent / "plots" / "results-h200.json").read_bytes())
    one_line_error(invoke("profile", "--import", report, "--out", run), "the file there holds a run's results, which "
                                                                         "this profile would replace", 2)
    assert run.read_bytes() == (FIXTURES.parent.parent / "plots" / "results-h200.json").read_bytes() and not png.exists()
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}')
    one_line_error(invoke("profile", "--import", report, "--out", notes), "no roofline results file", 2)
    again = tmp_path / "p.json"
    assert invoke("profile", "--import", report, "--out", again).exit_code == 0
    assert invoke("profile", "--import", report, "--out", again).exit_code == 0  # a profile replaces a profile
    one_line_error(invoke("run", "--all", "--out", again), "the file there holds a program's profile", 2)


def test_names_alike_in_a_table_get_their_suffix_by_name_not_by_row():
    from roofline.render.text import display_names

    a, b = "multi_tensor_apply_kernel [BinaryOpListAlphaFunctor, divides]", \
        "multi_tensor_apply_kernel [BinaryOpScalarFunctor, divides]"
    forward, backward = display_names([a, b], 40), display_names([b, a], 40)
    assert forward[0] == backward[1] and forward[1] == backward[0] and forward[0] != forward[1]


def test_names_alike_are_cut_where_they_differ_not_given_a_suffix_the_file_does_not_hold():
    # a new-user trial (2026-12-08): names that the middle cut made alike read 'multi_tensor_apply_ke...tor,
    # divides] #2', a '#2' that a profile's names hold themselves (a name repeated, nsight.names); now the cut
    # shows where they differ: a functor's name, a template argument, a tile in the middle of a cuBLAS name
    from roofline.render.text import display_names

    names = ["multi_tensor_apply_kernel [BinaryOpScalarListFunctor, divides]",
             "multi_tensor_apply_kernel [PointwiseOpScalarListFunctor, divides]",
             "elementwise_kernel<128,2> [MulFunctor<float>]", "elementwise_kernel<128,4> [MulFunctor<float>]",
             "elementwise_kernel<128,2> [MulFunctor<float>] #2",
             "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_"
             "execute_kernel__5x_cublas",
             "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x128x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_"
             "execute_kernel__5x_cublas", "short_kernel"]
    shown = display_names(names, 40)
    assert shown == ["multi_tensor_apply_kernel [Binary...des]", "multi_tensor_apply_kernel [Pointw...des]",
                     "elementwise_kernel<128,2...nctor<float>]", "elementwise_kernel<128,4...nctor<float>]",
                     "elementwise_kernel<128,...tor<float>] #2", "sm80_xmma_gemm_f32f32...tilesize64x128x8",
                     "sm80_xmma_gemm_f32f32...tilesize32x128x8", "short_kernel"]
    assert all(len(s) <= 40 for s in shown)
    # one name alone keeps the middle cut; the same cut whatever the rows' order
    assert display_names(names[:1], 40) == ["multi_tensor_apply_kern...ctor, divides]"]
    assert display_names(names[::-1], 40) == shown[::-1]
    # a second trial: cuDNN's wgrad kernels of a ResNet-18 step differ in a tile and in a split, two places no one
    # cut shows; they read '~2' to '~7' then, and now each by the parts of its name the others do not all hold
    wgrad = "sm90_xmma_wgrad_indexed_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize{}_warpgroupsize1x1x1_g1_" \
            "execute_{}_kernel__5x_cudnn"
    kinds = [wgrad.format(t, k) for t in ("64x64x64", "128x64x64") for k in ("segment_k_on", "segment_k_off", "split_k")]
    shown = display_names(kinds, 40)
    assert len(set(shown)) == 6 and not [s for s in shown if "~" in s]
    assert shown[0].endswith("tilesize64x64x64_segment_on") and shown[5].endswith("tilesize128x64x64_split")


def test_a_small_grids_verdict_says_it_reads_the_busy_sms_and_gives_the_whole_gpus_figure():
    """17 blocks of an FP64 kernel on an A100's 108 SMs (one block each): its floor is of the 16 %
    of the GPU it keeps busy, 8.0x below there and 50.8x below the whole GPU's roof, the one the
    chart draws; with a byte level uncounted, the tail is still said."""
    from roofline.model.roofs import Floor, Roof, Verdict
    from roofline.model.waves import Waves
    from roofline.render.text import profile_verdict

    waves = Waves.of(17, 108, 108)
    floor = Floor("FP64", 1.0, Roof("FP64", 9_700.0, False), True)  # 1 ms at the busy SMs' share of the roof
    v = Verdict((floor,), 8.0, waves)
    line = profile_verdict(v, None, None, 17, 108, uncounted=["L1 bytes"])
    assert line.startswith("tail: 17 blocks fill 17 of 108 block slots")
    assert "8.0x below its FP64 roof on the 16 % of the GPU its grid keeps busy (50.8x below the whole GPU's)" in line
    assert "another roof may bind instead" in line


def test_energy_is_the_commands_over_an_unprofiled_run_recorded_with_a_note(fake_ncu, tmp_path, monkeypatch):
    import pynvml

    counter = iter([1_000_000, 1_450_000])  # mJ before and after the unprofiled run: 450 J
    monkeypatch.setattr(pynvml, "nvmlInit", lambda: None)
    monkeypatch.setattr(pynvml, "nvmlShutdown", lambda: None)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetHandleByPciBusId", lambda bus: "gpu", raising=False)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetHandleByIndex", lambda i: "gpu")
    monkeypatch.setattr(pynvml, "nvmlDeviceGetTotalEnergyConsumption", lambda h: next(counter))
    marker = tmp_path / "runs.txt"
    r = invoke("profile", "--energy", "--out", "p.json", "--", sys.executable, "-c",
               f"open({str(marker)!r}, 'a').write('run\\n')")
    assert r.exit_code == 0, r.output
    doc = store.load(tmp_path / "p.json", profile=True)
    assert doc.command_energy.joules == 450.0 and doc.command_energy.exit_code == 0
    assert marker.read_text() == "run\n" * 2  # once under ncu, once without
    assert "energy: the command run once more without ncu took 450.0 J of the GPU" in r.stderr
    assert "per kernel, energy cannot be measured under ncu" in r.stderr
    r = invoke("profile", "--energy", "--import", str(TRANSFORMER), "--out", "q.json")
    assert r.exit_code == 2 and "an imported report has no command to run" in r.stderr


def test_a_kernel_as_near_two_roofs_is_read_against_both():
    # the Llama step's cuBLAS BF16 GEMM: 86 % of the measured L2 ceiling and 84 % of the BF16 tensor one;
    # which binds is within what the ceilings' own measurement tells, so the verdict names both
    from pathlib import Path

    from roofline.render.text import profiled_kernel_verdict
    from roofline.results import store

    doc = store.load(Path(__file__).resolve().parent.parent / "plots" / "profile-h200-llama-ops.json", profile=True)
    k = next(k for k in doc.kernels if k.name.startswith("nvjet_sm90_tst_128x256") and k.name.endswith("coopA_NTN"))
    assert profiled_kernel_verdict(doc, k) == "at its L2 roof (86 %); its BF16 tensor roof as near (84 %)"
    far = next(k for k in doc.kernels if "splitK" in k.name)  # at its tensor roof, the L2 well below: one roof
    assert "as near" not in profiled_kernel_verdict(doc, far)


def test_a_verdict_between_near_and_far_on_part_of_the_gpu_reads_as_one_sentence():
    # the committed Llama step (H200): an nvjet GEMM at 64 % of its BF16 roof, its waves keeping 97 % of the GPU busy;
    # it read "at 64 % of the 97 % of the GPU its waves keep busy of its BF16 tensor roof"
    from typer.testing import CliRunner

    from roofline.cli import app
    from pathlib import Path
    r = CliRunner().invoke(app, ["show", str(Path(__file__).parents[1] / "plots" / "profile-h200-llama-ops.json")],
                           env={"COLUMNS": "240"})
    text = " ".join(r.output.split())
    assert "at 64 % of its BF16 tensor roof (on the 97 % of the GPU its waves keep busy)" in text
    assert "busy of its" not in text
