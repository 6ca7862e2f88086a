"""On a CUDA GPU: every ladder kernel verifies against cuBLAS, the occupancy calculator agrees
with the driver, a broken kernel is caught, and the CLI runs end to end. Skipped without a GPU."""

import dataclasses
import json

import pytest

from roofline import registry, runner
from roofline.occupancy import calculate

pytestmark = pytest.mark.gpu

SHAPES = [(1, 1, 1), (127, 127, 127), (1000, 1000, 1000), (4097, 4097, 4097), (4096, 1024, 333),
          (512, 512, 512), (1000, 777, 333), (1, 127, 1), (127, 1, 5), (33, 65, 4097), (130, 258, 7),
          # Interior blocks on the check-free path beside edge blocks on the checked one:
          (300, 520, 64), (2000, 1032, 1024)]


@pytest.fixture(scope="module")
def runs():
    ladder = registry.select(None, "test")
    return {shape: runner.run(ladder, runner.Problem(*shape), timed=False) for shape in SHAPES}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_kernel_verifies(runs, shape):
    for r in runs[shape].kernels:
        assert r.error is None, r.error
        assert r.verified and r.unwritten == 0
        assert 0 <= r.rel_error <= runner.TOLERANCE


def test_timing_takes_at_least_20_samples():
    out = runner.run([registry.BY_NAME["register_tiling_2d"]], runner.Problem(512, 512, 512))
    t = out.kernels[0].timing
    assert t is not None and t.repeat >= 20 and t.median_ms > 0 and out.reference.repeat >= 20


def test_kernel_resources_are_read(runs):
    by_name = {r.spec.name: r for r in runs[(512, 512, 512)].kernels}
    assert by_name["smem_tiling"].static_smem_bytes == 2 * 32 * 32 * 4
    assert by_name["register_tiling_2d"].static_smem_bytes == 2 * 128 * 8 * 4
    for r in by_name.values():
        assert 1 <= r.registers <= 255
        assert r.local_bytes == 0, f"{r.spec.name} spills"


@pytest.mark.parametrize("dynamic_smem", [0, 12_000, 40_000, 48 * 1024])
def test_occupancy_matches_the_driver(dynamic_smem):
    import cupy

    device = runner.preflight(runner.Problem(64, 64, 64))
    for spec in registry.LADDER:
        kernel = runner.compile_kernel(spec)
        dyn = spec.dynamic_smem_bytes + dynamic_smem
        if dyn > device.limits.max_smem_per_block_optin_bytes - kernel.shared_size_bytes:
            continue
        kernel.max_dynamic_shared_size_bytes = dyn  # what a kernel does to use more than 48 KB in all: opt in
        calc = calculate(device.limits, kernel.num_regs, spec.threads_per_block, kernel.shared_size_bytes, dyn)
        driver = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, spec.threads_per_block, dyn)
        assert calc.active_blocks_per_sm == driver, (spec.name, dynamic_smem, calc.block_limits)


def test_a_kernel_that_leaves_elements_unwritten_fails():
    # The grid below covers only half the rows of C: the NaN poison must survive and be caught.
    spec = registry.BY_NAME["smem_tiling"]
    half = dataclasses.replace(spec, block_tile=(64, 32))
    out = runner.run([half], runner.Problem(256, 256, 256))
    r = out.kernels[0]
    assert not r.verified and r.timing is None
    assert r.unwritten == 128 * 256
    assert "failed verification" in r.error


def test_relative_error_catches_small_and_nan_differences():
    import cupy

    ref = cupy.random.default_rng(1).standard_normal((300, 200), dtype=cupy.float32)
    scratch = cupy.empty_like(ref)
    err, nans = runner.relative_error(ref * (1 + 1e-3), ref, scratch)
    assert err == pytest.approx(1e-3, rel=1e-3) and err > runner.TOLERANCE and nans == 0
    bad = ref.copy()
    bad[7, 9] = cupy.nan
    err, nans = runner.relative_error(bad, ref, scratch)
    assert nans == 1 and not err <= runner.TOLERANCE


def test_tf32_must_be_off(monkeypatch):
    monkeypatch.setenv("CUPY_TF32", "1")
    from roofline.errors import UsageError

    with pytest.raises(UsageError, match="CUPY_TF32=1"):
        runner.preflight(runner.Problem(64, 64, 64))


def test_nvml_peaks():
    from roofline.device import from_nvml

    d = from_nvml()
    assert d.peak_fp32_gflops > 1000 and d.peak_dram_gbps > 100
    if "H200" in d.name:  # NVML on an H200: 1980 MHz, 3201 MHz, 6016 bit, 16896 cores
        assert d.peak_dram_gbps == pytest.approx(4814.3, abs=0.1)
        assert d.peak_fp32_gflops == pytest.approx(66_908.2, abs=0.1)
        assert d.limits.smem_per_sm_bytes == 233_472 and d.limits.max_warps_per_sm == 64


def test_cli_run_then_plot(tmp_path):
    from typer.testing import CliRunner

    from cli import app

    res, chart = tmp_path / "r.json", tmp_path / "r.png"
    r = CliRunner().invoke(app, ["run", "--all", "--size", "256", "--out", str(res), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc == json.loads(res.read_text())
    assert [k["name"] for k in doc["kernels"]] == [k.name for k in registry.LADDER]
    assert doc["kernels"][-1]["dynamic_smem_bytes"] == registry.LADDER[-1].dynamic_smem_bytes > 48 * 1024
    assert all(k["verified"] for k in doc["kernels"])
    assert doc["reference"]["tf32"] is False
    r = CliRunner().invoke(app, ["plot", "--results", str(res), "--out", str(chart)])
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

    device = runner.preflight(runner.Problem(64, 64, 64))
    limits = device.limits
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
                room = limits.max_smem_per_block_optin_bytes - static
                if dynamic > room:
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


def test_measured_ceilings_are_plausible(tmp_path, monkeypatch):
    from roofline import ceilings
    from roofline.device import from_nvml

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    d = from_nvml()
    c = ceilings.measure(d, refresh=True)
    assert 0.5 * d.peak_dram_gbps < c.dram_gbps < d.peak_dram_gbps
    assert 0.8 * d.peak_fp32_gflops < c.fp32_gflops < 1.01 * d.peak_fp32_gflops
    assert ceilings.cached(d) == c  # kept for the next run


def test_profile_counts_the_flops():
    from roofline import profile

    if profile.ncu_path() is None:
        pytest.skip("ncu is not installed")
    n = 1024
    try:
        measured = profile.profile(registry.BY_NAME["register_tiling_2d"], n, n, n)
    except profile.ProfileUnavailable as exc:
        pytest.skip(str(exc))
    assert measured["fp32_flops"] == pytest.approx(2 * n**3, rel=0.01)
    assert measured["l2_bytes"] > 0 and measured["smem_bytes"] > 0 and measured["bank_conflicts"] > 0
