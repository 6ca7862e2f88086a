"""On a CUDA GPU: every ladder kernel verifies against cuBLAS, the occupancy calculator agrees
with the driver, a broken kernel is caught, counters profile the tile asked for, and the CLI runs
end to end. Skipped without a GPU."""

import dataclasses
import json
from pathlib import Path

import pytest

from roofline.ladder import dispatch, families, tiles
from roofline.measure import runner
from roofline.measure.compile import compile_kernel
from roofline.model.occupancy import calculate
from roofline.model.problem import Problem
from roofline.model.verify import TOLERANCE

pytestmark = pytest.mark.gpu

SHAPES = [(1, 1, 1), (127, 127, 127), (1000, 1000, 1000), (4097, 4097, 4097), (4096, 1024, 333),
          (512, 512, 512), (1000, 777, 333), (1, 127, 1), (127, 1, 5), (33, 65, 4097), (130, 258, 7),
          # Interior blocks on the check-free path beside edge blocks on the checked one:
          (300, 520, 64), (2000, 1032, 1024)]


@pytest.fixture(scope="module")
def runs():
    ladder = families.select(None, tiles.resolve("NVIDIA H200"))
    return {shape: runner.run(ladder, Problem(*shape), timed=False) for shape in SHAPES}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_kernel_verifies(runs, shape):
    for r in runs[shape].kernels:
        assert r.error is None, r.error
        v = r.verification
        assert v.passed and v.nan_or_unwritten_elements == 0
        assert 0 <= v.rel_error <= TOLERANCE


# split_k at each candidate tile, with slices from 2 to 16 (16 on K = 5: fifteen empty slices).
SPLIT_VARIANTS = [{**c.params, "SPLITS": s} for c, s in zip(dispatch.CANDIDATES, (3, 16, 5, 2))]
RAGGED = [(1000, 777, 333), (33, 65, 4097), (2000, 1032, 1024), (127, 1, 5), (300, 520, 64), (1, 1, 1)]
NEW_SHAPES = [(8192, 1024, 4096), (1024, 1024, 16384), (4096, 4096, 512), (3000, 3000, 3000), (1024, 1024, 1024),
              (512, 512, 512)]


@pytest.mark.parametrize("shape", RAGGED + NEW_SHAPES)
def test_split_k_verifies_at_every_tile_and_split(shape):
    specs = [families.BY_NAME["split_k"].spec(p, "variant") for p in SPLIT_VARIANTS]
    specs += [families.BY_NAME[n].spec() for n in ("tile_by_shape", "split_k")]  # as the dispatch picks
    for r in runner.run(specs, Problem(*shape), timed=False).kernels:
        assert r.error is None, r.error
        assert r.verification.passed and r.verification.nan_or_unwritten_elements == 0, r.spec.name_expression


def test_split_k_gives_the_same_bits_every_run():
    import cupy

    p = Problem(1024, 1024, 16384)
    spec = families.BY_NAME["split_k"].spec({**dispatch.CANDIDATES[0].params, "SPLITS": 8}, "variant")
    kernel = compile_kernel(spec, runner.preflight(p).arch_limits)
    a, b = runner.random_inputs(p)
    results = []
    for _ in range(3):
        c = cupy.full((p.m, p.n), cupy.nan, dtype=cupy.float32)
        args = runner.kernel_args(p, a, b, c, spec)
        for _ in range(4):
            kernel.launch(spec.grid(p), args)
        assert not args[-1].any()  # every tile's arrival counter is back to zero
        results.append(c.view(cupy.uint32))
    assert all(bool((r == results[0]).all()) for r in results[1:])


def _bits_and_counters(spec, p, launches=3):
    """C's bits after `launches` launches of `spec` on `p`'s inputs, and whether every counter of its
    workspace is back to zero."""
    import cupy

    kernel = compile_kernel(spec, runner.preflight(p).arch_limits)
    a, b = runner.random_inputs(p)
    c = cupy.full((p.m, p.n), cupy.nan, dtype=cupy.float32)
    args = runner.kernel_args(p, a, b, c, spec)
    for _ in range(launches):
        kernel.launch(spec.grid(p), args)
    cupy.cuda.runtime.deviceSynchronize()
    return c.view(cupy.uint32).copy(), not args[-1].any()


# (shape, candidate, slices) whose blocks all fit on a 132-SM GPU at once: the tile's blocks add the
# slices together (REDUCERS = SPLITS), including slices with no piece to add (4 x 4 tiles: four
# float4s per thread, eight slices) and a slice count that does not divide the pieces (3, 5).
TOGETHER = [((1024, 1024, 1024), 0, 4), ((1024, 1024, 16384), 0, 4), ((512, 512, 512), 3, 4),
            ((256, 256, 256), 3, 8), ((1000, 777, 333), 0, 3), ((33, 65, 4097), 2, 5), ((127, 1, 5), 3, 2),
            ((300, 520, 64), 1, 4)]


@pytest.mark.parametrize("shape, candidate, splits", TOGETHER)
def test_split_k_slices_added_together_give_the_last_blocks_bits(shape, candidate, splits):
    p = Problem(*shape)
    params = {**dispatch.CANDIDATES[candidate].params, "SPLITS": splits}
    last = families.BY_NAME["split_k"].spec({**params, "REDUCERS": 1}, "variant")
    together = families.BY_NAME["split_k"].spec({**params, "REDUCERS": splits}, "variant")
    assert together.cooperative and not last.cooperative
    run = runner.run([together], p, timed=False).kernels[0]
    assert run.error is None and run.verification.passed and run.verification.nan_or_unwritten_elements == 0
    want, zeroed = _bits_and_counters(last, p)
    got, zeroed_together = _bits_and_counters(together, p)
    assert zeroed and zeroed_together  # arrival and departure counters back to zero after each launch
    assert bool((got == want).all())  # the same additions in the same order, wherever they run


def test_a_split_whose_blocks_cannot_all_be_resident_is_refused():
    import cupy

    # 1024 x 1024 in eight slices of 128 x 256 tiles: 256 blocks of one per SM.
    p = Problem(1024, 1024, 16384)
    spec = families.BY_NAME["split_k"].spec({**dispatch.CANDIDATES[0].params, "SPLITS": 8, "REDUCERS": 8}, "variant")
    device = runner.preflight(p)
    run = runner.run([spec], p, timed=False).kernels[0]
    if device.sm_count >= 256:
        pytest.skip("this GPU holds all 256 blocks at once")
    assert run.error is not None and "must be resident at once" in run.error and "REDUCERS = 1" in run.error
    # and the launch is a cooperative one: a grid too large is refused (by CuPy against the driver's
    # limit, or by the driver itself) rather than left to hang
    kernel = compile_kernel(spec, device.arch_limits)
    a, b = runner.random_inputs(p)
    c = cupy.zeros((p.m, p.n), dtype=cupy.float32)
    with pytest.raises((ValueError, cupy.cuda.driver.CUDADriverError), match="exceeds the limit|COOPERATIVE_LAUNCH"):
        kernel.launch(spec.grid(p), runner.kernel_args(p, a, b, c, spec))


def test_timing_takes_at_least_20_samples():
    out = runner.run([families.BY_NAME["register_tiling_2d"].spec()], Problem(512, 512, 512))
    t = out.kernels[0].timing
    assert t is not None and t.repeat >= 20 and t.median_ms > 0 and out.reference.repeat >= 20


def test_kernel_resources_are_read(runs):
    by_name = {r.spec.name: r.compiled for r in runs[(512, 512, 512)].kernels}
    assert by_name["smem_tiling"].static_smem_bytes == 2 * 32 * 32 * 4
    assert by_name["register_tiling_2d"].static_smem_bytes == 2 * 128 * 8 * 4
    assert by_name["full_tiles"].dynamic_smem_bytes == 3 * 16 * (128 + 4 + 256) * 4
    for name, c in by_name.items():
        assert 1 <= c.registers <= 255
        assert c.local_bytes == 0, f"{name} spills"


@pytest.mark.parametrize("extra_smem", [0, 12_000, 40_000, 48 * 1024])
def test_occupancy_matches_the_driver(extra_smem):
    import cupy

    device = runner.preflight(Problem(64, 64, 64))
    for fam in families.LADDER:
        spec = fam.spec()
        ck = compile_kernel(spec, device.arch_limits)
        dyn = ck.dynamic_smem_bytes + extra_smem
        if dyn > device.arch_limits.max_smem_per_block_optin_bytes - ck.static_smem_bytes:
            continue
        ck.kernel.max_dynamic_shared_size_bytes = dyn  # what a kernel does to use more than 48 KB in all: opt in
        calc = calculate(device.arch_limits, ck.registers, spec.threads_per_block, ck.static_smem_bytes, dyn)
        driver = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(ck.kernel.kernel.ptr, spec.threads_per_block, dyn)
        assert calc.active_blocks_per_sm == driver, (spec.name, extra_smem, calc.block_limits)


def test_a_kernel_that_leaves_rows_unwritten_fails():
    # A family whose blocks claim 64 rows but compute 32: half the rows of C keep their NaN poison.
    fam = families.BY_NAME["smem_tiling"]
    half = dataclasses.replace(fam, c_tile=lambda p: (2 * p["BS"], p["BS"]))
    out = runner.run([half.spec()], Problem(256, 256, 256))
    r = out.kernels[0]
    assert not r.correct and r.timing is None
    assert r.verification.nan_or_unwritten_elements == 128 * 256
    assert r.verification.unwritten_rows == 128
    assert "failed verification" in r.error


def test_tf32_must_be_off(monkeypatch):
    monkeypatch.setenv("CUPY_TF32", "1")
    from roofline.errors import UsageError

    with pytest.raises(UsageError, match="CUPY_TF32=1"):
        runner.preflight(Problem(64, 64, 64))


def test_nvml_peaks():
    from roofline.measure.nvml import from_nvml

    d = from_nvml()
    assert d.peak_fp32_gflops > 1000 and d.peak_dram_gbps > 100
    if "H200" in d.name:  # NVML on an H200: 1980 MHz, 3201 MHz, 6016 bit, 16896 cores
        assert d.peak_dram_gbps == pytest.approx(4814.3, abs=0.1)
        assert d.peak_fp32_gflops == pytest.approx(66_908.2, abs=0.1)
        assert d.arch_limits.smem_per_sm_bytes == 233_472 and d.arch_limits.max_warps_per_sm == 64


def test_cli_run_then_plot(tmp_path):
    from typer.testing import CliRunner

    from roofline.cli import app

    res, chart = tmp_path / "r.json", tmp_path / "r.png"
    r = CliRunner().invoke(app, ["run", "--all", "--size", "256", "--out", str(res), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc == json.loads(res.read_text()) and doc["schema"] == 4
    assert [k["name"] for k in doc["kernels"]] == [f.name for f in families.LADDER]
    by_name = {k["name"]: k for k in doc["kernels"]}
    assert by_name["full_tiles"]["dynamic_smem_bytes"] == 74_496
    assert by_name["split_k"]["tile_source"] == "shape" and doc["l2"] == "cold"
    assert all(k["verified"] for k in doc["kernels"])
    assert doc["reference"]["tf32"] is False
    assert {k["name"]: k["tile_source"] for k in doc["kernels"]}["autotuned"] in ("built-in", "default")
    r = CliRunner().invoke(app, ["plot", str(res), "--out", str(chart)])
    assert r.exit_code == 0, r.output
    assert chart.stat().st_size > 20_000


PRESSURE_KERNEL = r"""
// N live accumulators: with --maxrregcount the compiler lands on many different register counts.
template <int N, int STATIC_FLOATS>
__global__ void pressure(float* out, int iters) {
    __shared__ float stat[STATIC_FLOATS];
    extern __shared__ float dyn[];
    float acc[N];
#pragma unroll
    for (int i = 0; i < N; ++i) acc[i] = threadIdx.x * (i + 1);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int i = 0; i < N; ++i) acc[i] = acc[i] * acc[(i + 7) % N] + 1.0f;
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) s += acc[i];
    if (iters < 0) { stat[threadIdx.x % STATIC_FLOATS] = s; dyn[threadIdx.x] = s; s += stat[0] + dyn[1]; }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""


def test_occupancy_calculator_agrees_with_the_driver_across_configurations():
    """Registers (through --maxrregcount), block sizes, static and dynamic shared memory: every
    combination's calculated blocks per SM must equal cuOccupancyMaxActiveBlocksPerMultiprocessor."""
    import cupy

    device = runner.preflight(Problem(64, 64, 64))
    limits = device.arch_limits
    threads_list = [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512, 640, 768, 896, 1024]
    dynamic_list = [0, 1000, 6000, 20_000, 40_000, 64_000, 100_000, 150_000, 200_000, 232_448]
    cases, mismatches, regs_seen = 0, [], set()
    for static_floats in (4, 3000):
        for maxrreg in (16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 128, 144, 168, 200, 232, 255):
            expr = f"pressure<200,{static_floats}>"
            module = cupy.RawModule(code=PRESSURE_KERNEL, options=(f"--maxrregcount={maxrreg}",),
                                    name_expressions=[expr])
            kernel = module.get_function(expr)
            regs, static = kernel.num_regs, kernel.shared_size_bytes
            regs_seen.add(regs)
            for dynamic in dynamic_list:
                if dynamic > limits.max_smem_per_block_optin_bytes - static:
                    continue  # cannot even be requested: the calculator's 0-block case is tested on the CPU
                kernel.max_dynamic_shared_size_bytes = dynamic
                for threads in threads_list:
                    if threads > kernel.max_threads_per_block:
                        driver = 0  # the launch would fail: too many registers per block
                    else:
                        driver = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                            kernel.kernel.ptr, threads, dynamic)
                    calc = calculate(limits, regs, threads, static, dynamic).active_blocks_per_sm
                    cases += 1
                    if calc != driver:
                        mismatches.append((regs, threads, static, dynamic, calc, driver))
    print(f"\noccupancy cross-check on {device.name}: {cases} configurations, "
          f"{cases - len(mismatches)} agree; register counts seen: {sorted(regs_seen)}")
    assert len(regs_seen) >= 10
    assert not mismatches, mismatches[:10]
    if limits.max_smem_per_block_optin_bytes == 232_448:  # an H200 (sm_90): the README and docs/method.md quote it
        assert cases == 5202


def test_measured_ceilings_are_plausible():
    from roofline.measure import ceilings
    from roofline.measure.nvml import from_nvml

    d = from_nvml()
    c = ceilings.measure(d, refresh=True)
    assert 0.5 * d.peak_dram_gbps < c.dram_gbps < d.peak_dram_gbps
    assert 0.8 * d.peak_fp32_gflops < c.fp32_gflops < 1.01 * d.peak_fp32_gflops
    assert ceilings.cached(d) == c  # kept for the next run, in the test's private cache


def test_profile_counts_the_flops_of_the_tile_asked_for():
    """A variant's counters are the variant's: the profiled launch runs the tile it is given."""
    import shutil

    from roofline import nsight
    from roofline.measure import counters

    if shutil.which("ncu") is None:
        pytest.skip("ncu is not installed")
    n = 1024
    problem = Problem(n, n, n)
    try:
        ladder, launch, _ = counters.profile(families.BY_NAME["register_tiling_2d"].spec(), problem)
        small, _, _ = counters.profile(families.variant("warptiling<64,64,8,32,32,4,8>"), problem)
        default, _, _ = counters.profile(families.BY_NAME["warptiling"].spec(), problem)
    except nsight.run.NcuError as exc:
        pytest.skip(str(exc))
    # sampled over its run where the report reader has timelines (ncu_report 2025.4 and newer)
    reader = nsight.binary._ncu_report_module()
    if reader is not None and hasattr(reader.IAction, "timelines"):
        assert launch is not None and launch.sampled is not None and len(launch.sampled.t_ns) >= 10
    assert ladder.fp32_flops == pytest.approx(2 * n**3, rel=0.01)
    assert ladder.l2_bytes > 0 and ladder.smem_bytes > 0 and ladder.bank_conflicts > 0
    # 64x64 block tiles load A and B twice as often as 128x128 ones: the global loads through L1
    # double (had the default tile run instead, the two would be equal).
    assert small.l1_bytes > 1.8 * default.l1_bytes


USER_KERNELS = Path(__file__).resolve().parent / "fixtures" / "kernels"


def test_user_kernels_fault_alone_and_the_run_goes_on(tmp_path):
    """Four faulty kernels and a good one beside a ladder kernel, in one run: each fault is its
    own failure, the others' results are whole, the file complete, exit 1, no traceback."""
    from typer.testing import CliRunner

    from roofline.cli import app

    out = tmp_path / "r.json"
    files = ["tiled_f4", "oob_write", "infinite_loop", "wrong_answer", "wrong_grid"]
    args = ["run", "--kernel", "smem_tiling", "--size", "1024", "--timeout", "2", "--out", str(out)]
    for f in files:
        args += [str(USER_KERNELS / f"{f}.cu")]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    doc = json.loads(out.read_text())
    by_name = {k["name"]: k for k in doc["kernels"]}
    assert list(by_name) == ["smem_tiling"] + files
    for name in ("smem_tiling", "tiled_f4"):
        k = by_name[name]
        assert k["verified"] and k["gflops"] > 0 and k["error"] is None and k["rel_error"] <= TOLERANCE
    tiled = by_name["tiled_f4"]
    assert tiled["tile_source"] == "user" and tiled["dynamic_smem_bytes"] == 8192 and tiled["ragged"]["passed"]
    assert tiled["occupancy"]["active_blocks_per_sm"] == tiled["driver_active_blocks_per_sm"]
    errors = {name: by_name[name]["error"] or "" for name in files[1:]}
    assert "illegal memory access" in errors["oob_write"]
    assert "timeout" in errors["infinite_loop"]
    assert "relative error" in errors["wrong_answer"] and not by_name["wrong_answer"]["verified"]
    assert "rows never written" in errors["wrong_grid"]
    for name in files[1:]:
        assert not by_name[name]["verified"] and by_name[name]["gflops"] is None
        assert f"roofline: error: 1024x1024x1024: {name}:" in r.stderr


@pytest.mark.parametrize("size", [256, 4096])
def test_a_kernel_that_never_ends_is_stopped_at_its_timeout_and_the_run_goes_on(tmp_path, size):
    """A kernel that spins forever, run with --timeout 2 beside a ladder kernel and before a good
    kernel of the user's: its process ends 2 s into its first launch (plus its start-up, which the
    error states), at a small size and at the default one; the good kernel after it is verified
    and timed on the same GPU, and the results file holds all three."""
    import time

    from typer.testing import CliRunner

    from roofline.cli import app

    out = tmp_path / "r.json"
    args = ["run", "--kernel", "smem_tiling", "--size", str(size), "--timeout", "2", "--out", str(out),
            str(USER_KERNELS / "infinite_loop.cu"), str(USER_KERNELS / "tiled_f4.cu")]
    start = time.monotonic()
    r = CliRunner().invoke(app, args)
    took = time.monotonic() - start
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    by_name = {k["name"]: k for k in json.loads(out.read_text())["kernels"]}
    assert list(by_name) == ["smem_tiling", "infinite_loop", "tiled_f4"]
    error = by_name["infinite_loop"]["error"]
    assert "timeout: stopped after 2." in error and "--timeout: 2 s per launch" in error, error
    assert "s of start-up, compile, inputs and reference before it" in error, error
    assert by_name["tiled_f4"]["verified"] and by_name["tiled_f4"]["gflops"] > 0
    assert took < 90, took  # the stuck kernel's share: start-up and 2 s, not the parent's 328 s limit


def test_the_offline_figures_of_a_file_of_several_kernels_are_its_entrys_on_the_gpu(tmp_path):
    """`kernels FILE.cu` (NVRTC for sm_90, no GPU needed) and the kernel compiled and run on the
    H200 agree on the declared entry's registers and static shared memory in a file of three
    kernels whose other two have fewer of both (the offline figures were another kernel's). The
    fixture is built for its resources, not as a whole GEMM: the run records them whatever its
    check says."""
    from typer.testing import CliRunner

    from roofline.cli import app

    path = str(USER_KERNELS / "three_kernels.cu")
    offline = CliRunner().invoke(app, ["kernels", path, "--arch", "sm_90", "--json"])
    assert offline.exit_code == 0, offline.output
    (listed,) = json.loads(offline.stdout)["kernels"]
    out = tmp_path / "r.json"
    r = CliRunner().invoke(app, ["run", path, "--size", "1024", "--no-ragged", "--out", str(out)])
    assert r.exit_code in (0, 1) and "Traceback" not in r.output, r.output
    (ran,) = json.loads(out.read_text())["kernels"]
    assert listed["static_smem_bytes"] == ran["static_smem_bytes"] == 16384
    assert "0 x NaN is NaN" in ran["error"]  # it reads C with beta = 0: told so, not only "rows never written"
    assert listed["registers"] == ran["registers"] > 64, (listed["registers"], ran["registers"])


def test_a_user_kernel_runs_beside_the_ladder_on_the_gpu_chosen(tmp_path):
    import cupy
    from typer.testing import CliRunner

    from roofline.cli import app

    bus_id = cupy.cuda.runtime.deviceGetPCIBusId(0)
    out = tmp_path / "r.json"
    r = CliRunner().invoke(app, ["run", "--kernel", "register_tiling_2d",
                                 str(USER_KERNELS / "tiled_f4.cu"), "--size", "2048", "--device", bus_id,
                                 "--profile", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["device"]["pci_bus_id"].lower().endswith(bus_id.lower()[-7:])
    tiled = doc["kernels"][-1]
    assert tiled["name"] == "tiled_f4" and tiled["verified"] and tiled["source"]["grid"] == "cdiv(N,64), cdiv(M,64)"
    if tiled.get("measured"):  # ncu present and allowed: the user kernel is profiled like the ladder
        assert abs(tiled["measured"]["fp32_flops"] - 2 * 2048**3) <= 2 * 2048**2  # + the alpha multiply
    chart = tmp_path / "c.png"
    r = CliRunner().invoke(app, ["plot", str(out), "--out", str(chart)])
    assert r.exit_code == 0 and chart.stat().st_size > 10_000
    r = CliRunner().invoke(app, ["run", str(USER_KERNELS / "does_not_compile.cu"), "--size", "256",
                                 "--out", str(tmp_path / "c.json")])
    assert r.exit_code == 1 and "does_not_compile.cu(7): error" in r.stderr and "Traceback" not in r.output


def test_the_readme_example_kernel_verifies(tmp_path):
    from test_user import readme_kernel
    from typer.testing import CliRunner

    from roofline.cli import app

    r = CliRunner().invoke(app, ["run", str(readme_kernel(tmp_path)), "--size", "1000",
                                 "--out", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    (k,) = json.loads((tmp_path / "r.json").read_text())["kernels"]
    assert k["verified"] and k["ragged"]["passed"] and k["rel_error"] <= TOLERANCE
