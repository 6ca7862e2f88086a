"""The occupancy calculator against hand-checked cases (CUDA programming guide limits,
`cuda_occupancy.h` allocation rules, seed lesson 000)."""

import pytest

from roofline.errors import UsageError
from roofline.model.arch import ARCHS, limits_for_cc, parse_arch
from roofline.model.occupancy import calculate, max_registers_for_blocks


def occ(arch, regs, threads, smem=0, dyn=0):
    return calculate(parse_arch(arch), regs, threads, smem, dyn)


def test_seed_example_sm120():
    # Seed 000: 93 registers x 256 threads -> 2 blocks, 16 of 48 warps, 33.3 %, registers.
    o = occ("sm_120", 93, 256)
    assert (o.active_blocks_per_sm, o.active_warps_per_sm, o.max_warps_per_sm) == (2, 16, 48)
    assert o.occupancy == pytest.approx(1 / 3)
    assert o.limiters == ["registers"]


def test_design_json_example_sm90():
    o = occ("sm_90", 96, 256, 8192).to_dict()
    expected = {"arch": "sm_90", "registers_per_thread": 96, "threads_per_block": 256,
                "static_smem_bytes": 8192, "dynamic_smem_bytes": 0, "active_blocks_per_sm": 2,
                "active_warps_per_sm": 16, "max_warps_per_sm": 64, "occupancy": 0.25,
                "limiters": ["registers"],
                "block_limits": {"registers": 2, "shared_memory": 25, "warps": 8, "blocks": 32}}
    assert {k: o[k] for k in expected} == expected
    # 8192 B + the 1 KB the driver reserves = 9216 B per block.
    assert o["smem_per_block_bytes"] == 9216


def test_register_file_subpartitions():
    # 92 x 32 = 2944 -> 3072 registers per warp; 16384 / 3072 = 5 warps per sub-partition, 20 per SM:
    # two blocks of 7 warps, not the three that 65536 / (7 x 3072) = 3.05 suggests.
    o = occ("sm_80", 92, 224)
    assert o.block_limits["registers"] == 2
    assert o.active_blocks_per_sm == 2


def test_register_allocation_unit_rounds_per_warp():
    # 33 registers x 32 = 1056 -> 1280 per warp: 12 warps per sub-partition, 48 per SM.
    o = occ("sm_90", 33, 128)
    assert o.registers_per_block == 1280 * 4
    assert o.block_limits["registers"] == 12


def test_several_limiters_are_all_named():
    # 32 regs x 1024 threads on sm_90: registers allow 2 blocks, warps allow 64 / 32 = 2.
    o = occ("sm_90", 32, 1024)
    assert o.active_blocks_per_sm == 2
    assert o.limiters == ["registers", "warps"]
    assert o.occupancy == 1.0


def test_block_limit_binds_small_blocks():
    o = occ("sm_90", 16, 32)
    assert o.block_limits["blocks"] == 32
    assert o.active_warps_per_sm == 32 and o.occupancy == 0.5
    assert o.limiters == ["blocks"]


def test_too_many_registers_per_block_cannot_launch():
    o = occ("sm_90", 96, 896)
    assert o.active_blocks_per_sm == 0 and o.occupancy == 0
    assert o.limiters == ["registers"]
    assert o.reason == "needs 86,016 registers per block; the limit is 65,536"


def test_shared_memory_opt_in_and_above_the_maximum():
    ok = occ("sm_90", 32, 256, 8192, 92 * 1024)
    assert ok.smem_opt_in and ok.active_blocks_per_sm == 2 and ok.limiters == ["shared_memory"]
    no = occ("sm_90", 32, 256, 0, 240_000)
    assert no.active_blocks_per_sm == 0 and no.limiters == ["shared_memory"]
    assert "232,448" in no.reason
    assert not occ("sm_90", 32, 256, 48 * 1024).smem_opt_in


def test_shared_memory_granularity_before_and_after_ampere():
    # sm_75: 256 B units, no reservation: 1000 B -> 1024 B, 64 KB / 1 KB = 64 (block limit 16 binds).
    assert occ("sm_75", 32, 64, 1000).smem_per_block_bytes == 1024
    # sm_80: 128 B units plus 1 KB reserved: 1000 B -> 2048 B.
    assert occ("sm_80", 32, 64, 1000).smem_per_block_bytes == 2048


@pytest.mark.parametrize("regs, threads, smem, dyn, needle", [
    (0, 256, 0, 0, "registers per thread must be 1..255"),
    (256, 256, 0, 0, "registers per thread must be 1..255"),
    (32, 0, 0, 0, "threads per block must be 1..1024"),
    (32, 1025, 0, 0, "threads per block must be 1..1024"),
    (32, 256, -1, 0, "static shared memory must be >= 0"),
    (32, 256, 49153, 0, "static shared memory must be at most 49,152 bytes"),
    (32, 256, 0, -5, "dynamic shared memory must be >= 0"),
])
def test_invalid_input_is_a_usage_error(regs, threads, smem, dyn, needle):
    with pytest.raises(UsageError, match=needle):
        occ("sm_90", regs, threads, smem, dyn)


@pytest.mark.parametrize("text", ["sm_90", "SM90", "90", "9.0", "compute_90", "sm_90a"])
def test_arch_spellings(text):
    assert parse_arch(text).compute_capability == "9.0"


@pytest.mark.parametrize("text", ["sm_42", "sm_90aaaf", "sm_9", "", "ninety"])
def test_unknown_arch_lists_the_known_ones(text):
    with pytest.raises(UsageError, match="known: sm_70, sm_72, sm_75"):
        parse_arch(text)


@pytest.mark.parametrize("text, cc", [("sm_72", "7.2"), ("sm_103a", "10.3"), ("sm_110", "11.0"), ("sm_121", "12.1")])
def test_newer_and_embedded_targets(text, cc):
    assert parse_arch(text).compute_capability == cc


def test_table_covers_volta_to_blackwell():
    assert {"7.0", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "12.0"} <= set(ARCHS)
    # A newer minor version takes the rules of the closest older entry.
    assert limits_for_cc("12.1").max_warps_per_sm == 48
    with pytest.raises(UsageError):
        limits_for_cc("6.1")


def test_best_practices_guide_example_sm70():
    # CUDA C++ Best Practices Guide, "Calculating Occupancy": on compute capability 7.0, 37
    # registers per thread give 75 % with 128-thread blocks (12 blocks) and 63 % with 320-thread
    # blocks (4 blocks).
    small = occ("sm_70", 37, 128)
    assert (small.active_blocks_per_sm, small.occupancy) == (12, 0.75)
    large = occ("sm_70", 37, 320)
    assert large.active_blocks_per_sm == 4 and large.occupancy == 0.625  # the guide rounds to 63 %


def test_sm120_limits_from_the_guide():
    lim = parse_arch("sm_120")
    assert (lim.max_warps_per_sm, lim.max_blocks_per_sm) == (48, 24)
    assert (lim.smem_per_sm_bytes, lim.max_smem_per_block_optin_bytes) == (100 * 1024, 99 * 1024)
    # 32 blocks of 32 threads would fit the warps; the 24-block limit binds.
    assert occ("sm_120", 16, 32).limiters == ["blocks"]


def test_target_blocks_inverts_the_register_limit():
    from roofline.model.occupancy import max_registers_for_blocks

    # 3 blocks of 256 threads on sm_120: 80 registers (2560 per warp, 6 warps per sub-partition,
    # 24 warps) fit; 81 (2816 per warp, 5 per sub-partition, 20 warps) do not.
    regs, why = max_registers_for_blocks(parse_arch("sm_120"), 256, 3)
    assert regs == 80 and "__launch_bounds__(256, 3)" in why
    assert occ("sm_120", 81, 256).active_blocks_per_sm == 2
    # 2 blocks of 1024 threads need 64 warps: sm_120 has 48, so no register count helps.
    regs, why = max_registers_for_blocks(parse_arch("sm_120"), 1024, 2)
    assert regs is None and "warps allows 1" in why
    # 1 block of 1024 threads on sm_90: 64 registers per thread exactly fill the register file.
    assert max_registers_for_blocks(parse_arch("sm_90"), 1024, 1)[0] == 64
    with pytest.raises(UsageError, match="^target_blocks must be >= 1"):
        max_registers_for_blocks(parse_arch("sm_90"), 256, 0)


def test_sweeps_hold_the_other_inputs():
    from roofline.model.occupancy import sweeps

    s = sweeps(parse_arch("sm_90"), 96, 256, 8192)
    assert dict(s["registers"])[96] == 0.25 and dict(s["registers"])[64] == 0.5
    assert dict(s["threads"])[256] == 0.25
    assert dict(s["shared_memory"])[8192] == 0.25
    assert len(s["threads"]) == 32 and s["registers"][0][0] == 1 and s["registers"][-1][0] == 255


def test_percentages_round_half_up():
    from roofline.render.text import percent

    # 28 of 64 warps and 4 of 64: exact halves at one decimal, both rounded up.
    assert (percent(28 / 64), percent(4 / 64)) == ("43.8", "6.3")
    assert (percent(1.0), percent(0.125), percent(1 / 3)) == ("100", "12.5", "33.3")


@pytest.mark.parametrize("arch, regs, threads, blocks, limiters", [
    # 32 regs x 64 threads on sm_70: registers (64 warps / 2), warps (64 / 2) and blocks all allow 32;
    # the block takes no shared memory (none asked for, none reserved before 8.0), so it is no limiter.
    ("sm_70", 32, 64, 32, ["registers", "warps", "blocks"]),
    # 33 threads on sm_75 are 2 warps: warps (32 / 2) and blocks allow 16.
    ("sm_75", 32, 33, 16, ["warps", "blocks"]),
    ("sm_72", 16, 32, 32, ["blocks"]),
])
def test_unused_shared_memory_is_never_a_limiter(arch, regs, threads, blocks, limiters):
    o = occ(arch, regs, threads)
    assert o.active_blocks_per_sm == blocks
    assert o.limiters == limiters
    assert o.smem_per_block_bytes == 0
    # cuda_occupancy.h gives such a block an unbounded (INT_MAX) shared-memory limit: JSON null.
    d = o.to_dict()
    assert d["block_limits"]["shared_memory"] is None
    assert [r for r, b in d["block_limits"].items() if b == d["active_blocks_per_sm"]] == d["limiters"]


@pytest.mark.parametrize("arch", sorted(a.arch for a in ARCHS.values()))
def test_no_shared_memory_never_limits_any_architecture(arch):
    for threads in (1, 32, 33, 64, 96, 128, 256, 1024):
        for regs in (1, 16, 32, 64, 255):
            o = occ(arch, regs, threads)
            assert "shared_memory" not in o.limiters, (arch, regs, threads, o.block_limits)
            # the contract: limiters are exactly the resources whose limit equals the result
            assert o.limiters == [r for r, b in o.block_limits.items() if b == o.active_blocks_per_sm]


def test_reserved_shared_memory_from_ampere_gives_a_finite_limit():
    # From 8.0 the driver reserves 1 KB per block even when the kernel asks for none:
    # 164 KB / 1 KB = 164 blocks on sm_80, 100 on sm_86 and sm_89/sm_120, 228 on sm_90.
    for arch, limit in (("sm_80", 164), ("sm_86", 100), ("sm_89", 100), ("sm_90", 228), ("sm_120", 100)):
        o = occ(arch, 32, 64)
        assert o.block_limits["shared_memory"] == limit and o.smem_per_block_bytes == 1024
        assert "shared_memory" not in o.limiters


# (warps/SM, blocks/SM, shared memory per SM KB, opt-in per block KB, reserved per block B): the
# CUDA C++ Programming Guide's "Technical Specifications per Compute Capability" table, the same
# figures as CCCL's cuda::arch_traits (optin = per SM - reserved).
GUIDE = {
    "7.0": (64, 32, 96, 96, 0), "7.2": (64, 32, 96, 96, 0), "7.5": (32, 16, 64, 64, 0),
    "8.0": (64, 32, 164, 163, 1024), "8.6": (48, 16, 100, 99, 1024), "8.7": (48, 16, 164, 163, 1024),
    "8.9": (48, 24, 100, 99, 1024), "9.0": (64, 32, 228, 227, 1024), "10.0": (64, 32, 228, 227, 1024),
    "10.3": (64, 32, 228, 227, 1024), "11.0": (48, 24, 228, 227, 1024), "12.0": (48, 24, 100, 99, 1024),
    "12.1": (48, 24, 100, 99, 1024),
}


@pytest.mark.parametrize("cc", sorted(GUIDE))
def test_tables_match_the_programming_guide(cc):
    lim = ARCHS[cc]
    warps, blocks, smem_sm, optin, reserved = GUIDE[cc]
    assert (lim.max_warps_per_sm, lim.max_blocks_per_sm) == (warps, blocks)
    assert (lim.smem_per_sm_bytes, lim.max_smem_per_block_optin_bytes) == (smem_sm * 1024, optin * 1024)
    assert lim.reserved_smem_per_block_bytes == reserved
    assert lim.smem_alloc_unit_bytes == (256 if cc.startswith("7.") else 128)
    assert (lim.registers_per_sm, lim.max_registers_per_block, lim.max_threads_per_block) == (65536, 65536, 1024)
    assert set(ARCHS) == set(GUIDE)


@pytest.mark.parametrize("arch, regs, threads, smem, blocks, limiters", [
    # Worked through cuda_occupancy.h's rules by hand:
    # sm_70, 8 KB: 96 KB / 8 KB = 12 blocks; registers 64 / 4 warps = 16; warps 16.
    ("sm_70", 32, 128, 8192, 12, ["shared_memory"]),
    # sm_75, 40 regs x 256: 1280 regs/warp -> 12 warps per sub-partition, 48 / 8 = 6; warps 32 / 8 = 4.
    ("sm_75", 40, 256, 0, 4, ["warps"]),
    # sm_80, 48 KB: 49152 + 1024 = 50176 B, 167936 / 50176 = 3.
    ("sm_80", 32, 256, 48 * 1024, 3, ["shared_memory"]),
    # sm_86, 64 regs x 128: 2048 regs/warp -> 8 per sub-partition, 32 warps, 8 blocks; warps 12; blocks 16.
    ("sm_86", 64, 128, 0, 8, ["registers"]),
    # sm_89, 24 blocks bind 32-thread blocks (warps allow 48).
    ("sm_89", 32, 32, 0, 24, ["blocks"]),
    # sm_90, 32 KB: 32768 + 1024 = 33792 B, 233472 / 33792 = 6 (warps 8, registers 8).
    ("sm_90", 32, 256, 32 * 1024, 6, ["shared_memory"]),
    # sm_120: 99 KB + 1 KB reserved = the whole 100 KB: one block.
    ("sm_120", 32, 128, 99 * 1024, 1, ["shared_memory"]),
])
def test_calculator_answers(arch, regs, threads, smem, blocks, limiters):
    o = occ(arch, regs, threads, 0, smem)
    assert o.active_blocks_per_sm == blocks
    assert o.limiters == limiters


def test_the_register_budget_names_the_resource_in_words():
    regs, why = max_registers_for_blocks(parse_arch("sm_90"), 256, 2, 40_000, 150_000)
    assert regs is None and why.endswith("whatever the registers: shared memory allows 1")


def test_a_target_no_register_budget_meets_exits_1_with_its_reason():
    # 100 blocks of 256 threads on sm_90: 64 warps hold 8 at most, whatever the registers; a script tells
    # that from an answer by the exit code (and by the JSON's null budget)
    import json

    from typer.testing import CliRunner

    from roofline.cli import app

    r = CliRunner().invoke(app, ["occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_90",
                                 "--target-blocks", "100", "--json"])
    assert r.exit_code == 1, r.output
    target = json.loads(r.stdout)["target"]
    assert target["max_registers_per_thread"] is None and "warps allows 8" in target["explanation"]
    ok = CliRunner().invoke(app, ["occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_90",
                                  "--target-blocks", "8"])
    assert ok.exit_code == 0 and "__launch_bounds__(256, 8)" in ok.stdout
