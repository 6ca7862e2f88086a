"""A GPU described by its user (`--gpu mygpu.toml`): figures derived as a preset's, checked, and
read by every command that takes --gpu."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.errors import UsageError
from roofline.model import device_file
from roofline.model.device import from_preset

RTX5070 = """\
name = "NVIDIA GeForce RTX 5070"
compute_capability = "12.0"
sm_count = 48
fp32_cores = 6144
max_sm_clock_mhz = 2512
peak_dram_gbps = 672
l2_bytes = 50331648
"""


def _file(tmp_path, text, name="gpu.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_device_file_gives_the_figures_a_preset_would(tmp_path):
    spec = from_preset(str(_file(tmp_path, RTX5070)))
    assert spec.name == "NVIDIA GeForce RTX 5070" and spec.sm_count == 48
    assert spec.peak_fp32_gflops == pytest.approx(6144 * 2 * 2512e-3)  # 30,867 GFLOP/s
    assert spec.peak_dram_gbps == 672 and spec.l2_bytes == 48 * 2**20
    assert spec.arch_limits.compute_capability == "12.0" and spec.source == "device file gpu.toml"
    assert spec.peaks_gflops["fp32"] == pytest.approx(30_867.456)
    assert spec.disagreements() == []


def test_an_unquoted_compute_capability_is_read(tmp_path):
    assert from_preset(str(_file(tmp_path, RTX5070.replace('"12.0"', "12.0")))).compute_capability == "12.0"
    # one newer than every GPU the tables know is a GPU to come: modelled with the newest one's units
    future = from_preset(str(_file(tmp_path, RTX5070.replace('"12.0"', '"13.0"'))))
    assert future.arch_limits.arch == "sm_130"
    assert future.source.endswith(
        "compute capability 13.0 is newer than any roofline models, so its per-SM limits are taken as 12.1's, and it "
        "has no roof of fp64, fp16, fp16_tensor, bf16_tensor, tf32_tensor, fp8_tensor, fp4_tensor, int8_tensor unless the file "
        "gives their flops_per_sm_per_clock")
    # a rate the file gives is its roof, at any clock a kernel is read at (the table and project read it so)
    given = from_preset(str(_file(tmp_path, RTX5070.replace('"12.0"', '"13.0"') + "\n[flops_per_sm_per_clock]\n"
                                  "bf16_tensor = 4096\n")))
    assert "bf16_tensor" not in given.source.split("no roof of")[1]
    assert given.precision_peaks["bf16_tensor"].per_sm_per_clock == 4096
    half = given.roofs_at(given.max_sm_clock_mhz / 2)
    assert half.roof("bf16_tensor").value == pytest.approx(given.peaks_gflops["bf16_tensor"] / 2)
    assert "newer than any" not in from_preset(str(_file(tmp_path, RTX5070))).source


def test_rates_per_sm_per_clock_and_the_bus_instead_of_a_bandwidth(tmp_path):
    text = RTX5070.replace("peak_dram_gbps = 672", "max_mem_clock_mhz = 14000\nmemory_bus_width_bits = 192")
    text += "[flops_per_sm_per_clock]\nbf16_tensor = 1024\n"
    spec = from_preset(str(_file(tmp_path, text)))
    assert spec.peak_dram_gbps == pytest.approx(2 * 14000 * 192 / 8 / 1e3)  # 672 GB/s
    assert spec.peaks_gflops["bf16_tensor"] == pytest.approx(1024 * 48 * 2512e-3)
    assert "1024 FLOP/clk/SM" in spec.peak_sources["bf16_tensor"]


def test_the_json_that_device_prints_is_a_device_file(tmp_path):
    out = CliRunner().invoke(app, ["device", "--gpu", "a30", "--json"])
    path = _file(tmp_path, out.stdout, "a30.json")
    spec, preset = from_preset(str(path)), from_preset("a30")
    assert (spec.peak_fp32_gflops, spec.peak_dram_gbps, spec.sm_count) == (preset.peak_fp32_gflops,
                                                                         preset.peak_dram_gbps, preset.sm_count)


@pytest.mark.parametrize("text, says", [
    (RTX5070.replace("sm_count = 48\n", ""), "sm_count: Field required"),
    (RTX5070.replace("sm_count = 48", "sm_count = 0"), "sm_count: Input should be greater than or equal to 1"),
    (RTX5070.replace('"12.0"', '"4.2"'), "compute_capability: compute capability 4.2 is older than 7.0"),
    (RTX5070.replace('"12.0"', '"banana"'), "compute_capability: 'banana' is not a compute capability; give it as "
                                           "major.minor"),
    (RTX5070.replace('"12.0"', '"sm_90"'), "compute_capability: 'sm_90' is not a compute capability"),
    (RTX5070.replace('"12.0"', '"9.0.1"'), "compute_capability: '9.0.1' is not a compute capability"),
    (RTX5070.replace('"12.0"', '"9.9"'), "compute_capability: no GPU has compute capability 9.9; known: 7.0,"),
    (RTX5070.replace('"12.0"', 'true'), "compute_capability: Input should be a valid string"),  # not read as 1.0
    (RTX5070.replace("peak_dram_gbps = 672\n", ""), "give peak_dram_gbps, or max_mem_clock_mhz"),
    (RTX5070 + "sm_clock = 3\n", "unknown field 'sm_clock'; did you mean max_sm_clock_mhz?"),
    (RTX5070 + "colour = 3\n", "unknown field 'colour'; known: name, compute_capability"),
    (RTX5070.replace("fp32_cores", "fp32_core"), "unknown field 'fp32_core'; did you mean fp32_cores?"),
    (RTX5070 + "[flops_per_sm_per_clock]\nfp7 = 1\n", "unknown precision 'fp7'"),
    ("sm_count = [", "not a TOML device file"),
    ('schema = 5\nkernels = []\n', "a roofline results file, not a device file"),
    (RTX5070 + "tensor_clock_mhz = 2600\n", "tensor_clock_mhz: 2,600 MHz is above max_sm_clock_mhz 2,512"),
])
def test_a_bad_device_file_is_one_line(tmp_path, text, says):
    with pytest.raises(UsageError) as exc:
        from_preset(str(_file(tmp_path, text)))
    assert says in str(exc.value) and "\n" not in str(exc.value)
    r = CliRunner().invoke(app, ["occupancy", "--regs", "64", "--threads", "256", "--gpu", str(tmp_path / "gpu.toml")])
    assert r.exit_code == 2 and says in r.stderr and len(r.stderr.splitlines()) == 1


def test_every_command_that_takes_gpu_reads_it(tmp_path):
    path = str(_file(tmp_path, RTX5070))
    r = CliRunner().invoke(app, ["occupancy", "--regs", "64", "--threads", "256", "--gpu", path, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["arch"] == "sm_120"
    assert CliRunner().invoke(app, ["kernels", "--gpu", path, "--model-only"]).exit_code == 0
    assert device_file.is_device_file(path) and not device_file.is_device_file("rtx5070")
    missing = CliRunner().invoke(app, ["device", "--gpu", str(tmp_path / "none.toml")])
    assert missing.exit_code == 2 and "cannot read the device file" in missing.stderr


def test_kernels_model_a_gpu_newer_than_any_known(tmp_path):
    future = _file(tmp_path, RTX5070.replace('"12.0"', '"13.0"'))
    r = CliRunner().invoke(app, ["kernels", "--gpu", str(future), "--model-only", "--json"])
    assert r.exit_code == 0, r.output  # modelled with the device file's own limits, not refused as sm_130
    assert json.loads(r.stdout)["device"] == "NVIDIA GeForce RTX 5070"


def test_occupancy_on_a_gpu_newer_than_any_known_says_whose_limits_it_uses(tmp_path):
    future = _file(tmp_path, RTX5070.replace('"12.0"', '"13.0"'))
    r = CliRunner().invoke(app, ["occupancy", "--gpu", str(future), "--regs", "64", "--threads", "256"])
    assert r.exit_code == 0 and "compute capability 13.0 is newer than any roofline models: its per-SM limits " \
                                "are taken as 12.1's" in r.output
    r = CliRunner().invoke(app, ["occupancy", "--gpu", str(_file(tmp_path, RTX5070, "now.toml")), "--regs", "64",
                                 "--threads", "256"])
    assert r.exit_code == 0 and "newer than any" not in r.output


def test_a_rate_of_zero_is_refused_and_a_precision_without_a_rate_lists_no_floors(tmp_path):
    zero = _file(tmp_path, RTX5070 + "[flops_per_sm_per_clock]\nbf16_tensor = 0\n", "zero.toml")
    r = CliRunner().invoke(app, ["device", "--gpu", str(zero)])
    assert r.exit_code == 2 and "flops_per_sm_per_clock.bf16_tensor" in r.output and "Traceback" not in r.output
    # a GPU newer than any known, with no FP16 tensor rate: the ladder at FP16 is listed without floors, and
    # the note names the field that would give them (this was an AttributeError)
    future = _file(tmp_path, RTX5070.replace('"12.0"', '"13.0"') + "[flops_per_sm_per_clock]\nbf16_tensor = 2048\n")
    r = CliRunner().invoke(app, ["kernels", "--gpu", str(future), "--ladder", "tensor", "--dtype", "fp16",
                                 "--model-only"])
    assert r.exit_code == 0, r.output
    assert "no FP16 tensor-core roof (its device file gives no flops_per_sm_per_clock.fp16_tensor)" in \
        " ".join(r.output.split())


def test_a_device_files_rates_survive_its_json_read_back(tmp_path):
    # device --json of a device file, read back as one, keeps the rates the file gave
    given = _file(tmp_path, RTX5070 + "[flops_per_sm_per_clock]\nbf16_tensor = 2048\n", "given.toml")
    r = CliRunner().invoke(app, ["device", "--gpu", str(given), "--json"])
    doc = json.loads(r.stdout)
    assert doc["flops_per_sm_per_clock"] == {"bf16_tensor": 2048}
    back = tmp_path / "back.json"
    back.write_text(r.stdout)
    assert from_preset(str(back)).precision_peaks["bf16_tensor"].per_sm_per_clock == 2048
    assert json.loads(CliRunner().invoke(app, ["device", "--gpu", "h200", "--json"]).stdout)[
        "flops_per_sm_per_clock"] == {}


def test_project_onto_a_device_file_says_which_rate_it_lacks_and_whose_roofs_it_reads(tmp_path):
    future = _file(tmp_path, RTX5070.replace('"12.0"', '"13.0"') + "[flops_per_sm_per_clock]\nfp8_tensor = 4096\n")
    jax = Path(__file__).resolve().parents[1] / "plots" / "profile-h100-jax-ops.json"
    r = CliRunner().invoke(app, ["project", str(jax), "--gpu", str(future), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    left = {k["left_out"] for k in doc["targets"][0]["kernels"] if k.get("left_out")}
    assert ("the NVIDIA GeForce RTX 5070's BF16 tensor rate is not known: its device file gives no "
            "flops_per_sm_per_clock.bf16_tensor") in left
    assert any("theoretical roofs of its device file gpu.toml" in n for n in doc["targets"][0]["notes"])


def test_comms_says_what_is_wrong_with_a_device_file(tmp_path):
    traces = Path(__file__).resolve().parent / "fixtures" / "traces" / "ops"
    typo = _file(tmp_path, RTX5070.replace("sm_count", "sm_cout"), "typo.toml")
    r = CliRunner().invoke(app, ["comms", str(traces), "--gpu", str(typo)])
    assert r.exit_code == 2 and "unknown field 'sm_cout'; did you mean sm_count?" in r.output
    r = CliRunner().invoke(app, ["comms", str(traces), "--gpu", str(tmp_path / "nosuch.toml")])
    assert r.exit_code == 2 and "cannot read the device file" in r.output


def test_a_device_files_edited_peaks_are_refused_and_its_edited_limits_said(tmp_path):
    # the JSON `device --json` prints carries its peaks and limits; read back, roofline works both out
    # again from the figures (every preset's JSON reads back to its own peaks), so an edited peak is
    # refused in one line naming the field that would change it, and edited limits are said
    doc = json.loads(CliRunner().invoke(app, ["device", "--gpu", "a30", "--json"]).stdout)
    same = _file(tmp_path, json.dumps(doc), "a30.json")
    assert from_preset(str(same)).peaks_gflops == from_preset("a30").peaks_gflops
    assert "per-SM limits" not in from_preset(str(same)).source
    edited = {**doc, "peaks_gflops": {**doc["peaks_gflops"], "fp32": 99_000.0}}
    with pytest.raises(UsageError) as exc:
        from_preset(str(_file(tmp_path, json.dumps(edited), "edited.json")))
    said = str(exc.value)
    assert "peaks_gflops.fp32: 99,000 GFLOP/s is not read (its figures give 10," in said
    assert "flops_per_sm_per_clock.fp32" in said and "\n" not in said
    # a figure changed leaves the derived ones it gave stale: the line names them all, to delete
    fewer = {**doc, "sm_count": 28}
    with pytest.raises(UsageError) as exc:
        from_preset(str(_file(tmp_path, json.dumps(fewer), "fewer.json")))
    assert "more derived figures" in str(exc.value) and "delete peak_l2_gbps, peaks_gflops (printed by" in str(exc.value)
    kept = {k: v for k, v in fewer.items() if k not in ("peak_l2_gbps", "peaks_gflops")}
    assert from_preset(str(_file(tmp_path, json.dumps(kept), "kept.json"))).sm_count == 28
    # each derived figure is checked, not only the first of two that say the same
    for field, value, says in (("peak_fp32_gflops", 1000.0, "peak_fp32_gflops: 1,000 GFLOP/s is not read"),
                               ("peak_l2_gbps", 1.0, "peak_l2_gbps: 1 GB/s is not read"),
                               ("arch", "sm_90", "arch: 'sm_90' is not read (compute_capability gives sm_80)")):
        with pytest.raises(UsageError) as exc:
            from_preset(str(_file(tmp_path, json.dumps({**doc, field: value}), f"{field}.json")))
        assert says in str(exc.value), str(exc.value)
    limits = {**doc, "limits": {**doc["limits"], "max_warps_per_sm": 32}}
    dev = from_preset(str(_file(tmp_path, json.dumps(limits), "limits.json")))
    assert "not the file's own (which differ in max_warps_per_sm)" in dev.source
    assert dev.arch_limits.max_warps_per_sm == from_preset("a30").arch_limits.max_warps_per_sm
