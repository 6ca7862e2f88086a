"""The ladder compiled offline through NVRTC for three targets, with no GPU: every kernel must
compile, spill nothing, and its occupancy follow from its real registers."""

import json

import pytest
from typer.testing import CliRunner

from cli import app
from roofline import registry


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_120"])
def test_kernels_compile_for_target_without_spilling(arch):
    r = CliRunner().invoke(app, ["kernels", "--arch", arch, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["arch"] == arch
    rows = {k["name"]: k for k in doc["kernels"]}
    assert list(rows) == [k.name for k in registry.LADDER]
    for name, k in rows.items():
        assert k["spill_bytes"] == 0, f"{name} spills {k['spill_bytes']} bytes on {arch}"
        assert 16 <= k["registers"] <= 255
        assert k["occupancy"]["registers_per_thread"] == k["registers"]
        assert k["occupancy"]["active_blocks_per_sm"] >= 1
    # Static shared memory is fixed by the tile sizes, whatever the target.
    assert rows["smem_tiling"]["static_smem_bytes"] == 2 * 32 * 32 * 4
    assert rows["register_strip"]["static_smem_bytes"] == 4 * (8 * (64 + 4) + 8 * 64)
    assert rows["register_tiling_2d"]["static_smem_bytes"] == 2 * 128 * 8 * 4
    assert rows["bank_conflict_free"]["static_smem_bytes"] == 4 * 8 * (128 + 4 + 128)
    assert rows["async_copy"]["static_smem_bytes"] == 0
    assert rows["async_copy"]["dynamic_smem_bytes"] == rows["full_tiles"]["dynamic_smem_bytes"] == 74_496


def test_ptxas_log_parsing():
    from roofline.resources import parse_ptxas_log

    log = ("ptxas info    : Compiling entry function '_Z4testPf' for 'sm_90'\n"
           "ptxas info    : Function properties for _Z4testPf\n"
           "ptxas         .     16 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 128 registers, used 1 barriers, 16 bytes cumulative stack size, 8192 bytes smem\n")
    res = parse_ptxas_log(log)
    assert (res.registers, res.static_smem_bytes, res.stack_frame_bytes, res.spill_bytes) == (128, 8192, 16, 12)
    no_smem = parse_ptxas_log("ptxas info    : Used 32 registers, used 0 barriers")
    assert (no_smem.registers, no_smem.static_smem_bytes, no_smem.spill_bytes) == (32, 0, 0)


def test_occupancy_plot_and_target(tmp_path):
    out = tmp_path / "occ.png"
    r = CliRunner().invoke(app, ["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120",
                                 "--target-blocks", "3", "--plot", str(out), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["target"]["max_registers_per_thread"] == 80
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_targets_without_cp_async_list_the_rest():
    r = CliRunner().invoke(app, ["kernels", "--arch", "sm_75", "--json"])
    assert r.exit_code == 0, r.output
    rows = {k["name"]: k for k in json.loads(r.stdout)["kernels"]}
    assert rows["async_copy"]["unavailable"] == "async_copy needs sm_80 or newer; not run on sm_75"
    assert rows["full_tiles"]["unavailable"] == "full_tiles needs sm_80 or newer; not run on sm_75"
    assert all("registers" not in rows[name] for name in registry.PIPELINED)
    assert all("registers" in k for name, k in rows.items() if name not in registry.PIPELINED)
    table = CliRunner().invoke(app, ["kernels", "--arch", "sm_75"])
    assert table.exit_code == 0 and "n/a on this target" in table.stdout
    assert "74,496 dyn" in CliRunner().invoke(app, ["kernels", "--arch", "sm_90"]).stdout


def test_presets_use_their_tuned_tile():
    r = CliRunner().invoke(app, ["kernels", "--gpu", "h200", "--json"])
    rows = {k["name"]: k for k in json.loads(r.stdout)["kernels"]}
    assert rows["autotuned"]["template"] == "autotuned<128,128,16,4,8>"


def test_a_target_this_nvrtc_lacks_is_one_line_before_any_compile():
    from cupy_backends.cuda.libs import nvrtc

    from roofline.arch import ARCHS

    supported = set(nvrtc.getSupportedArchs())
    missing = [a.arch for a in ARCHS.values() if int(a.arch.removeprefix("sm_")) not in supported]
    if not missing:
        pytest.skip("this NVRTC compiles for every known target")
    r = CliRunner().invoke(app, ["kernels", "--arch", missing[0]])
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines() == [
        f"roofline: error: this NVRTC ({'.'.join(map(str, nvrtc.getVersion()))}) cannot compile for {missing[0]}; "
        "the other CUDA flavour may: pip install '.[cuda13]' (or '.[cuda12]')"]
    assert r.stdout == ""
