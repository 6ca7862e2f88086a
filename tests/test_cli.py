"""The command line through Typer's CliRunner: outputs, one-line errors and exit codes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from roofline.device import gpu_available

runner = CliRunner()
REPO = Path(__file__).resolve().parent.parent


def invoke(*args):
    return runner.invoke(app, list(args))


def assert_usage_error(result, needle):
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_occupancy_json_seed_example():
    r = invoke("occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert (d["active_blocks_per_sm"], d["active_warps_per_sm"], d["max_warps_per_sm"]) == (2, 16, 48)
    assert d["limiters"] == ["registers"] and d["occupancy"] == pytest.approx(1 / 3, abs=1e-6)


def test_occupancy_table_with_gpu_preset():
    r = invoke("occupancy", "--regs", "96", "--threads", "256", "--smem", "8192", "--gpu", "H200")
    assert r.exit_code == 0
    assert "16 of 64 warps = 25.0 %" in r.stdout and "registers <" in r.stdout


def test_occupancy_that_cannot_launch_is_not_an_error():
    r = invoke("occupancy", "--regs", "96", "--threads", "896", "--arch", "sm_90")
    assert r.exit_code == 0
    assert "cannot launch: needs 86,016 registers per block; the limit is 65,536" in r.stdout


@pytest.mark.parametrize("args, needle", [
    (("--regs", "0", "--threads", "256"), "registers per thread must be 1..255, got 0"),
    (("--regs", "300", "--threads", "256"), "registers per thread must be 1..255, got 300"),
    (("--regs", "32", "--threads", "2000"), "threads per block must be 1..1024, got 2000"),
    (("--regs", "32", "--threads", "0"), "threads per block must be 1..1024"),
    (("--regs", "32", "--threads", "256", "--smem", "-1"), "static shared memory must be >= 0 bytes"),
    (("--regs", "32", "--threads", "256", "--dynamic-smem", "-8"), "dynamic shared memory must be >= 0"),
    (("--regs", "abc", "--threads", "256"), "'--regs'"),
    (("--regs", "32", "--threads", "2.5"), "'--threads'"),
])
def test_occupancy_bad_numbers(args, needle):
    assert_usage_error(invoke("occupancy", *args, "--arch", "sm_90"), needle)


def test_occupancy_unknown_targets():
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_42"),
                       "unknown architecture 'sm_42'; known: sm_70")
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256", "--gpu", "voodoo"),
                       "unknown GPU 'voodoo'; known: v100")
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256", "--gpu", "h200", "--arch", "sm_90"),
                       "give --gpu or --arch, not both")
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256", "--arch", ""),
                       "unknown architecture ''")
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256", "--gpu", " "),
                       "unknown GPU ' '")
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_90", "--smem", "60000"),
                       "static shared memory must be at most 49,152 bytes (48 KB), got 60,000; use --dynamic-smem")


@pytest.mark.skipif(gpu_available(), reason="checks the no-GPU path")
def test_occupancy_without_gpu_asks_for_a_target():
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256"), "--arch sm_XY")


@pytest.mark.skipif(gpu_available(), reason="checks the no-GPU path")
def test_run_without_gpu_fails_cleanly(tmp_path):
    out = tmp_path / "r.json"
    r = invoke("run", "--all", "--out", str(out))
    assert r.exit_code == 1
    assert len(r.stderr.strip().splitlines()) == 1 and "no CUDA GPU" in r.stderr
    assert "Traceback" not in r.output and not out.exists()


@pytest.mark.parametrize("args, needle", [
    (("--kernel", "foo"), "unknown kernel 'foo'; valid: naive, gmem_coalescing"),
    (("--size", "0"), "--size must be a positive integer, got 0"),
    (("--size", "-3"), "--size must be a positive integer, got -3"),
    (("--m", "10", "--n", "10", "--k", "0"), "K must be a positive integer, got 0"),
    (("--size", "50000"), "each matrix must have at most 2,147,483,647"),
    (("--m", "10"), "give all three of --m, --n and --k"),
    (("--size", "10", "--m", "10", "--n", "1", "--k", "1"), "give --size or --m/--n/--k, not both"),
    (("--all", "--kernel", "naive"), "give --all or --kernel NAME, not both"),
    (("--size", "many"), "'--size'"),
    (("--out", "/nonexistent-dir/r.json"), "folder /nonexistent-dir does not exist"),
    (("--out", "/"), "it is a folder; give a file name"),
    (("--out", ""), "the output file name is empty"),
    (("--out", "/proc/r.json"), "folder /proc is not writable"),
])
def test_run_bad_input_is_refused_before_any_gpu_work(args, needle):
    assert_usage_error(invoke("run", *args), needle)


def test_plot_from_recorded_results(tmp_path, doc):
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    out = tmp_path / "chart.svg"
    r = invoke("plot", "--results", str(res), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "register_tiling_2d" in out.read_text()


def test_plot_errors_leave_no_file(tmp_path, doc):
    out = tmp_path / "chart.png"
    assert_usage_error(invoke("plot", "--results", str(tmp_path / "none.json"), "--out", str(out)),
                       "no such results file")
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{not json")
    assert_usage_error(invoke("plot", "--results", str(corrupt), "--out", str(out)), "not valid JSON")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(dict(doc, schema=7)))
    assert_usage_error(invoke("plot", "--results", str(wrong), "--out", str(out)), "schema 7 is not supported")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    assert_usage_error(invoke("plot", "--results", str(good), "--out", str(tmp_path / "c.gif")),
                       "use a .png, .svg or .pdf file name")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.json", "good.json", "wrong.json"]


@pytest.mark.skipif(gpu_available(), reason="checks the no-GPU path")
def test_device_without_gpu_asks_for_a_preset():
    assert_usage_error(invoke("device"), "describe one with --gpu NAME")


def test_version():
    r = invoke("--version")
    assert r.exit_code == 0 and r.stdout.startswith("roofline 0.")


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d["reference"].update(gflops=None), "reference.gflops must be a number"),
    (lambda d: d["reference"].update(gflops="fast"), "reference.gflops must be a number"),
    (lambda d: d["reference"].update(gflops=0), "reference.gflops must be in (1e-06, 1e+07]"),
    (lambda d: d["kernels"][0].update(occupancy={"x": 1}), "kernels[0].occupancy lacks occupancy, limiters"),
    (lambda d: d["kernels"][0].update(occupancy="high"), "kernels[0].occupancy must be an object"),
    (lambda d: d["kernels"][0]["occupancy"].update(limiters=None), "limiters must be a list of names"),
    (lambda d: d["kernels"][0]["occupancy"].update(occupancy="1"), "occupancy.occupancy must be a number"),
    (lambda d: d["kernels"][0].update(gflops=10**400), "kernels[0].gflops must be in"),
    (lambda d: d["kernels"][0].update(verified="false"), "kernels[0].verified must be true or false"),
    (lambda d: d["kernels"][0]["model"].update(arithmetic_intensity=-1), "arithmetic_intensity must be in"),
    (lambda d: d["device"].update(peak_fp32_gflops=1e308), "device.peak_fp32_gflops must be in"),
    (lambda d: d["device"].update(peak_dram_gbps=1e-300), "device.peak_dram_gbps must be in"),
    (lambda d: d["kernels"].append(dict(d["kernels"][0])), "kernel 'naive' appears twice"),
    (lambda d: d.update(schema=True), "schema True is not supported"),
    (lambda d: d["problem"].update(m="4096"), "problem.m must be an integer in 1..2147483648"),
    (lambda d: d["problem"].update(m=10**30), "problem.m must be an integer in 1.."),
    (lambda d: d["kernels"][0]["model"].update(flops="many"), "kernels[0].model.flops must be a number"),
    (lambda d: d["kernels"][0]["model"].update(gmem_bytes=0), "kernels[0].model.gmem_bytes must be in (0,"),
    (lambda d: d["kernels"][0]["model"].update(flops=-5), "kernels[0].model.flops must be in (0,"),
    (lambda d: d["device"].update(sm_count="many"), "device.sm_count must be a number"),
    (lambda d: d["device"].update(max_sm_clock_mhz=-1980), "device.max_sm_clock_mhz must be in (0,"),
    (lambda d: d["kernels"][0].update(measured={"l2_bytes": -0.5}), "measured.l2_bytes must be in [0,"),
    # Positive but absurd values whose derived figures cannot be drawn:
    (lambda d: d["kernels"][0]["model"].update(gmem_bytes=1e-300),
     "naive: arithmetic intensity at GMEM (model) comes to inf, which cannot be drawn"),
    (lambda d: d["kernels"][2]["model"].update(smem_accesses_per_result=1e-300),
     "smem_tiling: arithmetic intensity at SMEM (model) comes to 2.048e+303"),
    (lambda d: d["device"].update(max_sm_clock_mhz=1e-300), "the smem ceiling comes to"),
    (lambda d: d["kernels"][0].update(gflops=1e-300), "kernels[0].gflops must be in (1e-06, 1e+07]"),
    (lambda d: d.clear(), "not a roofline results file (no schema field)"),
    (lambda d: d.update(kernels=[]), "no kernels in these results"),
    (lambda d: d["problem"].update(m=1), "kernels[0].model.flops is 1.37439e+11, but the problem's 2*M*N*K is 3.35544e+07"),
    (lambda d: d["kernels"][0].update(registers=-1), "kernels[0].registers must be an integer in 1..255 or null, got -1"),
])
def test_plot_refuses_malformed_results(tmp_path, doc, mutate, needle):
    mutate(doc)
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    out = tmp_path / "c.png"
    assert_usage_error(invoke("plot", "--results", str(res), "--out", str(out)), needle)
    assert not out.exists()


def test_measured_chart_refuses_absurd_counters(tmp_path):
    res, out = tmp_path / "r.json", tmp_path / "c.png"
    doc = json.loads((REPO / "plots" / "results-h200.json").read_text())
    doc["kernels"][-1]["measured"]["l2_bytes"] = 1e-300
    res.write_text(json.dumps(doc))
    assert_usage_error(invoke("plot", "--results", str(res), "--measured", "--out", str(out)),
                       "full_tiles: arithmetic intensity at L2 (measured) comes to inf")


def test_plot_notes_replaced_kernels_and_sweep_files(tmp_path, doc):
    a, b, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.png"
    a.write_text(json.dumps(doc))
    b.write_text(json.dumps(doc))
    r = invoke("plot", "--results", str(a), "--results", str(b), "--out", str(out))
    assert r.exit_code == 0
    assert f"note: naive is in more than one results file; drawn from {b}, the last" in r.stderr
    sweep = REPO / "plots" / "sweep-h200.json"
    r = invoke("plot", "--results", str(sweep), "--out", str(out))
    assert r.exit_code == 0
    assert "holds a size sweep: the roofline shows its largest size, 8192x8192x8192" in r.stderr
    assert_usage_error(invoke("plot", "--results", str(a), "--results", str(sweep), "--out", str(out)),
                       f"{sweep} holds a size sweep, which is not merged with other results files")


def test_plot_output_paths(tmp_path, doc):
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    (tmp_path / "dir.png").mkdir()
    assert_usage_error(invoke("plot", "--results", str(res), "--out", str(tmp_path / "dir.png")), "it is a folder")
    assert_usage_error(invoke("plot", "--results", str(res), "--out", "/proc/x.png"), "is not writable")
    assert_usage_error(invoke("plot", "--results", str(tmp_path), "--out", str(tmp_path / "c.png")),
                       "is a folder, not a results file")


def test_device_preset_json():
    r = invoke("device", "--gpu", "h200", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert d["sm_count"] == 132 and d["peak_fp32_gflops"] == pytest.approx(66_908.2, abs=0.1)
    assert d["peak_dram_gbps"] == 4800 and d["compute_capability"] == "9.0"


def test_kernels_lists_the_ladder_with_floors():
    r = invoke("kernels", "--gpu", "rtx5080", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    names = [k["name"] for k in d["kernels"]]
    assert names == ["naive", "gmem_coalescing", "smem_tiling", "register_tiling_1d", "register_strip",
                     "register_tiling_2d", "vectorized", "bank_conflict_free", "autotuned", "warptiling",
                     "async_copy", "full_tiles"]
    two_d = d["kernels"][5]
    assert two_d["model"]["arithmetic_intensity"] == 32
    assert two_d["floors"]["memory_floor_ms"] == pytest.approx(4.47, abs=0.005)


def test_fast_commands_import_neither_cupy_nor_matplotlib():
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom cli import app\n"
            "r = CliRunner().invoke(app, ['occupancy', '--regs', '93', '--threads', '256', '--arch', 'sm_120'])\n"
            "assert r.exit_code == 0, r.output\n"
            "r = CliRunner().invoke(app, ['kernels', '--gpu', 'h200', '--model-only'])\n"
            "assert r.exit_code == 0, r.output\n"
            "print(sorted(m for m in ('cupy', 'matplotlib') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_device_measure_needs_this_gpu():
    assert_usage_error(invoke("device", "--gpu", "h200", "--measure"), "--measure needs this machine's GPU")


def test_plot_measured_needs_profiled_results(tmp_path, doc):
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    assert_usage_error(invoke("plot", "--results", str(res), "--measured", "--out", str(tmp_path / "c.png")),
                       "no kernel in these results was profiled")
    doc["device"].update(measured_dram_gbps=4256.0, measured_fp32_gflops=65_000.0)
    doc["kernels"][5]["measured"] = {"dram_bytes": 401_110_000, "l2_bytes": 4_410_000_000}
    res.write_text(json.dumps(doc))
    out = tmp_path / "c.svg"
    r = invoke("plot", "--results", str(res), "--measured", "--out", str(out))
    assert r.exit_code == 0, r.output
    svg = out.read_text()
    for text in ("DRAM measured 4,256 GB/s", "FP32 measured 65,000 GFLOP/s", "SMEM 33,454 GB/s",
                 "FP32 peak 66,908 GFLOP/s",
                 "L2 (measured)", "DRAM (measured)", "L2 4.41 GB, DRAM 0.40 GB"):
        assert text in svg, text


def test_names_with_dollar_signs_are_drawn_as_text(tmp_path, doc):
    doc["device"]["name"] = "GPU $\\foo$"
    doc["kernels"][0]["name"] = "$^^$ kernel"
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    r = invoke("plot", "--results", str(res), "--out", str(tmp_path / "c.png"))
    assert r.exit_code == 0, r.output


def test_long_and_odd_output_paths(tmp_path, doc):
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    long_name = str(tmp_path / ("x" * 300 + ".png"))
    assert_usage_error(invoke("plot", "--results", str(res), "--out", long_name), "too long")
    assert_usage_error(invoke("plot", "--results", long_name), "cannot read")
    assert_usage_error(invoke("plot", "--results", str(res), "--out", str(res) + "/c.png"), "is a file, not a folder")
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_90", "--plot", long_name),
                       "too long")
