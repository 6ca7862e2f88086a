"""The ladder compiled offline through NVRTC for three targets, with no GPU: every kernel must
compile and spill nothing; shared memory, dynamic shared memory and tile validity come from the
compiler."""

import json

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.commands import kernels as kernels_cmd
from roofline.errors import RunError
from roofline.ladder.families import BY_NAME, LADDER, variant
from roofline.measure import compile_cache, compile_pool, nvrtc_compile


# Each target's ladder is compiled in parts (its ten quick kernels, then each of the slow ones, about
# 2 s each), then listed by `kernels`, which finds every kernel compiled (the session's compile
# cache, tests/conftest.py). A target's tests run in one process, in this order (a group), so that
# each kernel is compiled once per target and no test waits for a whole ladder. sm_90 is listed as
# the H200 lists a small problem (`kernels --gpu h200 --size 1024`): the autotuned kernel at the
# H200's tile, tile_by_shape and split_k at the tile and slices they pick there; test_waves reads
# that listing, in sm_90's group.
TARGETS = [pytest.param(arch, marks=pytest.mark.xdist_group(f"ladder_{arch}")) for arch in ("sm_80", "sm_90", "sm_120")]
LISTED = {"sm_80": {"arch": "sm_80"}, "sm_90": {"gpu": "h200", "size": 1024}, "sm_120": {"arch": "sm_120"}}
PARTS = {"async_copy": ["async_copy"], "full_tiles": ["full_tiles", "tile_by_shape"],  # one program at its tile
         "split_k": ["split_k"]}
PARTS = {"the quick ten": [f.name for f in LADDER if not any(f.name in part for part in PARTS.values())], **PARTS}


def listed_specs(arch: str) -> dict:
    """The kernels `kernels` lists for `arch` (LISTED), by name, at the tiles it lists them."""
    return {row.spec.name: row.spec for row in kernels_cmd.kernels(model_only=True, **LISTED[arch]).rows}


@pytest.mark.parametrize("arch", TARGETS)
@pytest.mark.parametrize("part", list(PARTS))
@pytest.mark.nvrtc
def test_each_ladder_kernel_compiles_for_target_without_spilling(part, arch):
    names, specs = PARTS[part], listed_specs(arch)
    for name, res in zip(names, compile_pool.compile_in_fresh_process([specs[n] for n in names], arch)):
        assert isinstance(res, nvrtc_compile.KernelResources), res
        assert res.local_bytes == 0, f"{name} uses {res.local_bytes} bytes of local memory on {arch}"
        assert 16 <= res.registers <= 255


def test_the_parts_are_the_ladder():
    assert sorted(n for part in PARTS.values() for n in part) == sorted(f.name for f in LADDER)
    assert len(PARTS["the quick ten"]) == 10


@pytest.mark.parametrize("arch", TARGETS)
@pytest.mark.nvrtc
def test_kernels_compile_for_target_without_spilling(arch):
    r = CliRunner().invoke(app, ["kernels", *(f"--{k}={v}" for k, v in LISTED[arch].items()), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["arch"] == arch
    rows = {k["name"]: k for k in doc["kernels"]}
    assert list(rows) == [f.name for f in LADDER]
    for name, k in rows.items():
        assert k["local_bytes"] == 0, f"{name} uses {k['local_bytes']} bytes of local memory on {arch}"
        assert 16 <= k["registers"] <= 255
    # Static shared memory is fixed by the tile sizes, whatever the target.
    assert rows["smem_tiling"]["static_smem_bytes"] == 2 * 32 * 32 * 4
    assert rows["register_strip"]["static_smem_bytes"] == 4 * (8 * (64 + 4) + 8 * 64)
    assert rows["register_tiling_2d"]["static_smem_bytes"] == 2 * 128 * 8 * 4
    assert rows["bank_conflict_free"]["static_smem_bytes"] == 4 * 8 * (128 + 4 + 128)
    assert rows["async_copy"]["static_smem_bytes"] == 0
    # Dynamic: 3 stages of a 16 x (128 + 4) A tile and a 16 x 256 B tile, in floats.
    assert rows["async_copy"]["dynamic_smem_bytes"] == rows["full_tiles"]["dynamic_smem_bytes"] == 74_496
    # full_tiles has more than 128 registers: 8 warps of more than 4,096 registers fill the register
    # file's four sub-partitions (2 warps each), so one 256-thread block per SM, 8 of 64 warps on sm_90.
    if arch == "sm_90":
        assert rows["full_tiles"]["registers"] > 128
        occ = rows["full_tiles"]["occupancy"]
        assert (occ["active_blocks_per_sm"], occ["occupancy"], occ["limiters"]) == (1, 0.125, ["registers"])


@pytest.mark.nvrtc
def test_dynamic_shared_memory_is_read_from_the_kernel_file():
    assert nvrtc_compile.dynamic_smem_bytes(variant("async_copy<128,128,8,32,64,8,8,4>")) == 4 * 8 * (128 + 4 + 128) * 4
    assert nvrtc_compile.dynamic_smem_bytes(BY_NAME["warptiling"].spec()) == 0


@pytest.mark.nvrtc
def test_tile_validity_comes_from_the_compiler():
    fam = BY_NAME["autotuned"]
    ok = nvrtc_compile.compile_for(fam.spec({"BM": 128, "BN": 64, "BK": 16, "TM": 8, "TN": 4}), "sm_90")
    assert ok.static_smem_bytes == 4 * 16 * (128 + 4 + 64)
    with pytest.raises(RunError, match="static assertion failed.*a block holds 32 to 1024 threads"):
        nvrtc_compile.compile_for(fam.spec({"BM": 256, "BN": 256, "BK": 8, "TM": 4, "TN": 4}), "sm_90")
    with pytest.raises(RunError, match="every thread loads whole float4s of A"):  # 1024 threads, 256 float4s
        nvrtc_compile.compile_for(fam.spec({"BM": 128, "BN": 128, "BK": 8, "TM": 4, "TN": 4}), "sm_90")
    with pytest.raises(RunError, match="uses too much shared data"):  # 64 x (128 + 4 + 128) floats: 66,560 bytes
        nvrtc_compile.compile_for(fam.spec({"BM": 128, "BN": 128, "BK": 64, "TM": 4, "TN": 4}), "sm_90")


def test_ptxas_log_parsing():
    log = ("ptxas info    : Compiling entry function '_Z4testPf' for 'sm_90'\n"
           "ptxas info    : Function properties for _Z4testPf\n"
           "ptxas         .     16 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 128 registers, used 1 barriers, 16 bytes cumulative stack size, 8192 bytes smem\n")
    res = nvrtc_compile.parse_ptxas_log(log)
    assert (res.registers, res.static_smem_bytes, res.local_bytes) == (128, 8192, 16)
    bare = nvrtc_compile.parse_ptxas_log("ptxas info    : Used 32 registers, used 0 barriers")
    assert (bare.registers, bare.static_smem_bytes, bare.local_bytes) == (32, 0, 0)
    with pytest.raises(RunError, match="no ptxas resource report"):
        nvrtc_compile.parse_ptxas_log("nothing here")


# ptxas's report of a file of two kernels (tests/fixtures/kernels/block_sums.cu, for sm_90 by NVRTC
# 12.9): the second kernel first, the entry, block_sums, second.
TWO_KERNEL_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z10merge_sumsPKfPfi' for 'sm_90'
ptxas info    : Function properties for _Z10merge_sumsPKfPfi
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 128 bytes smem
ptxas info    : Compile time = 4.167 ms
ptxas info    : Compiling entry function '_Z10block_sumsPKfPfx' for 'sm_90'
ptxas info    : Function properties for _Z10block_sumsPKfPfx
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 12.591 ms
"""

def test_a_log_of_several_kernels_is_read_at_the_entrys_section():
    def figures(log, entry):
        res = nvrtc_compile.parse_ptxas_log(log, entry)
        return res.registers, res.static_smem_bytes, res.local_bytes

    assert figures(TWO_KERNEL_LOG, "_Z10block_sumsPKfPfx") == (40, 1024, 0)
    assert figures(TWO_KERNEL_LOG, "_Z10merge_sumsPKfPfi") == (12, 128, 0)
    # A kernel without shared memory takes none from the next kernel's section; a callee's "Function
    # properties" after its caller's report are not the caller's stack frame.
    log = ("ptxas info    : Compiling entry function 'scale_c' for 'sm_90'\n"
           "ptxas info    : Function properties for scale_c\n"
           "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 8 registers, used 0 barriers\n"
           "ptxas info    : Function properties for _Z4deepPfi\n"
           "ptxas         .     256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Compiling entry function '_Z9sgemm_8x8iiifPKfS0_fPf' for 'sm_90'\n"
           "ptxas info    : Used 106 registers, used 1 barriers, 16384 bytes smem\n")
    assert figures(log, "scale_c") == (8, 0, 0)
    assert figures(log, "_Z9sgemm_8x8iiifPKfS0_fPf") == (106, 16384, 0)
    with pytest.raises(RunError, match="reports 2 kernels .* name the entry"):
        nvrtc_compile.parse_ptxas_log(TWO_KERNEL_LOG)
    with pytest.raises(RunError, match="reports 2 kernels .*, not _Z5otherv"):
        nvrtc_compile.parse_ptxas_log(TWO_KERNEL_LOG, "_Z5otherv")


def test_occupancy_plot_and_target(tmp_path):
    out = tmp_path / "occ.png"
    r = CliRunner().invoke(app, ["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120",
                                 "--target-blocks", "3", "--chart", str(out), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["target"]["max_registers_per_thread"] == 80
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert r.stderr == f"wrote {out}\n"  # said, on stderr: stdout holds only the JSON


@pytest.mark.nvrtc
def test_targets_without_cp_async_list_the_rest():
    r = CliRunner().invoke(app, ["kernels", "--arch", "sm_75", "--json"])
    assert r.exit_code == 0, r.output
    rows = {k["name"]: k for k in json.loads(r.stdout)["kernels"]}
    assert rows["async_copy"]["unavailable"] == "async_copy needs sm_80 or newer; not run on sm_75"
    assert rows["full_tiles"]["unavailable"] == "full_tiles needs sm_80 or newer; not run on sm_75"
    assert [n for n, k in rows.items() if "registers" not in k] == ["async_copy", "full_tiles", "tile_by_shape", "split_k"]
    table = CliRunner().invoke(app, ["kernels", "--arch", "sm_75"])
    assert table.exit_code == 0 and "n/a on this target" in table.stdout


def test_presets_use_the_tile_run_would_use():
    r = CliRunner().invoke(app, ["kernels", "--gpu", "h200", "--model-only", "--json"])
    rows = {k["name"]: k for k in json.loads(r.stdout)["kernels"]}
    assert rows["autotuned"]["template"] == "autotuned<128,128,16,4,8>"
    assert rows["autotuned"]["tile_source"] == "built-in"
    r = CliRunner().invoke(app, ["kernels", "--gpu", "rtx5080", "--model-only", "--json"])
    rows = {k["name"]: k for k in json.loads(r.stdout)["kernels"]}
    assert (rows["autotuned"]["template"], rows["autotuned"]["tile_source"]) == ("autotuned<128,128,8,8,8>", "default")


@pytest.mark.nvrtc
def test_a_target_this_nvrtc_lacks_is_one_line_before_any_compile():
    from cupy_backends.cuda.libs import nvrtc

    from roofline.extras import install_hint
    from roofline.model.arch import ARCHS

    supported = set(nvrtc.getSupportedArchs())
    missing = [a.arch for a in ARCHS.values() if int(a.arch.removeprefix("sm_")) not in supported]
    if not missing:
        pytest.skip("this NVRTC compiles for every known target")
    r = CliRunner().invoke(app, ["kernels", "--arch", missing[0]])
    assert r.exit_code == 1
    other = "cuda13" if nvrtc.getVersion()[0] < 13 else "cuda12"
    assert r.stderr.strip().splitlines() == [
        f"roofline: error: this NVRTC ({'.'.join(map(str, nvrtc.getVersion()))}) cannot compile for {missing[0]}; "
        f"the other CUDA flavour may: in a fresh environment, {install_hint(other)} (the two CuPy flavours "
        "cannot be installed together)"]
    assert f"(roofline's {other} extra)" in r.stderr
    assert r.stdout == ""


@pytest.mark.nvrtc
def test_compiled_figures_are_kept_on_disk_and_reused(tmp_path, monkeypatch):
    folder = tmp_path / "compiled"
    monkeypatch.setenv("ROOFLINE_COMPILE_CACHE", str(folder))
    monkeypatch.setattr(compile_cache, "_memo", {})
    naive = BY_NAME["naive"].spec()
    (first,) = compile_pool.compile_in_fresh_process([naive], "sm_90")
    assert first.registers > 0 and first.local_bytes == 0
    (kept,) = list(folder.iterdir())
    assert json.loads(kept.read_text()) == {"registers": first.registers, "static_smem_bytes": first.static_smem_bytes,
                                            "local_bytes": 0, "max_threads_per_block": first.max_threads_per_block,
                                            "compiler": first.compiler}
    assert first.compiler.startswith("NVRTC ")

    def no_compile(specs, arch):
        raise AssertionError(f"compiled {[s.name for s in specs]} again")

    monkeypatch.setattr(compile_pool, "_compile_forked", no_compile)
    monkeypatch.setattr(compile_cache, "_memo", {})  # a new process: from the file alone
    assert compile_pool.compile_in_fresh_process([naive], "sm_90") == [first]
    with pytest.raises(AssertionError, match="compiled"):  # another target is another compile
        compile_pool.compile_in_fresh_process([naive], "sm_80")
    with pytest.raises(AssertionError, match="compiled"):  # and cache=False compiles whatever is kept
        compile_pool.compile_in_fresh_process([naive], "sm_90", cache=False)
    kept.write_text('{"registers": -3}')  # a damaged file is no answer
    monkeypatch.setattr(compile_cache, "_memo", {})
    with pytest.raises(AssertionError, match="compiled"):
        compile_pool.compile_in_fresh_process([naive], "sm_90")
    for off in ("", "off"):
        monkeypatch.setenv("ROOFLINE_COMPILE_CACHE", off)
        assert compile_cache.compile_cache_folder() is None
    monkeypatch.delenv("ROOFLINE_COMPILE_CACHE")
    assert compile_cache.compile_cache_folder() == compile_cache.cache_file("compiled")


@pytest.mark.nvrtc
def test_a_users_kernel_with_headers_of_its_own_is_not_kept(tmp_path):
    from roofline.ladder.user import load

    own = tmp_path / "mine.cu"
    own.write_text('#include "tile.cuh"\n#include <cuda_fp16.h>\n__global__ void k(float* c) { c[0] = TILE; }\n')
    (tmp_path / "tile.cuh").write_text("#define TILE 4\n")
    alone = tmp_path / "alone.cu"
    alone.write_text("#include <cuda_fp16.h>\n__global__ void k(float* c) { c[0] = 4; }\n")
    assert compile_cache.cache_key(load(own, {"entry": "k", "block": "32", "grid": "1"}), "sm_90") is None
    assert len(compile_cache.cache_key(load(alone, {"entry": "k", "block": "32", "grid": "1"}), "sm_90")) == 64


def test_a_compile_that_ends_without_an_answer_says_how(tmp_path):
    (tmp_path / "3.status").write_text("-9")
    (tmp_path / "3.err").write_text("ptxas: out of memory\n\n")
    err = compile_pool._answer(tmp_path, 3, BY_NAME["naive"].spec(), "sm_90", "")
    assert str(err) == "naive for sm_90: the compiling process failed (exit code -9): ptxas: out of memory"
    err = compile_pool._answer(tmp_path, 4, BY_NAME["naive"].spec(), "sm_90", "Traceback ...\nImportError: no cupy\n")
    assert str(err) == "naive for sm_90: the compiling process failed (exit code unknown): ImportError: no cupy"


@pytest.mark.nvrtc
def test_one_fork_server_serves_every_compile_and_one_that_ended_is_replaced():
    naive = BY_NAME["naive"].spec()
    (first,) = compile_pool.compile_in_fresh_process([naive], "sm_90", cache=False)
    server = compile_pool._server
    (again,) = compile_pool.compile_in_fresh_process([naive], "sm_90", cache=False)
    assert compile_pool._server is server and again == first
    server.stop()
    (third,) = compile_pool.compile_in_fresh_process([naive], "sm_90", cache=False)
    assert compile_pool._server is not server and third == first


def test_a_fork_server_that_ends_or_takes_too_long_is_stopped_and_says_so(tmp_path):
    (tmp_path / "0.job").write_text(json.dumps(compile_pool.job(BY_NAME["split_k"].spec(), "sm_90")))
    slow = compile_pool._ForkServer()
    assert slow.run(str(tmp_path), 0.05) == "no answer within 0.05 s" and not slow.alive()
    ended = compile_pool._ForkServer()
    ended.proc.kill()
    ended.proc.wait()
    assert ended.run(str(tmp_path), 5) == "the compiling process ended (exit code -9)"


@pytest.mark.xdist_group("ladder_sm_90")
@pytest.mark.nvrtc
def test_the_warp_specialised_rung_compiles_for_sm_90a_without_spilling():
    spec = BY_NAME["wgmma_ws"].spec(dtype="bf16")
    res = compile_pool.compile_in_fresh_process([spec], "sm_90")[0]  # wgmma and setmaxnreg: compiled for sm_90a
    assert isinstance(res, nvrtc_compile.KernelResources), res
    assert res.local_bytes == 0 and 64 <= res.registers <= 168  # __launch_bounds__(384, 1): 65,536 / 384, rounded down to 8
    # 4 stages of a 128 x 64 A box and a 256 x 64 B box of 2-byte elements, 1,024 bytes to align
    # the first to the swizzle's atom, and two 8-byte barriers per stage.
    assert nvrtc_compile.dynamic_smem_bytes(spec, "sm_90") == 1024 + 4 * (128 + 256) * 64 * 2 + 16 * 4 == 197_696


def test_model_only_with_an_arch_says_which_kernels_cannot_run_there():
    # --arch with --model-only was dropped: the wgmma rungs were listed for sm_80 with no remark
    from typer.testing import CliRunner

    from roofline.cli import app
    r = CliRunner().invoke(app, ["kernels", "--model-only", "--dtype", "tf32", "--arch", "sm_80"])
    assert r.exit_code == 0, r.output
    for name in ("wgmma_tma", "wgmma_ws", "wgmma_persistent"):
        assert f"{name} uses Hopper's wgmma and TMA (sm_90a only); not run on sm_80" in r.output
    r = CliRunner().invoke(app, ["kernels", "--model-only", "--arch", "sm_70"])
    assert r.exit_code == 0 and "async_copy needs sm_80 or newer; not run on sm_70" in r.output
