"""Communication across ranks, without a GPU: NCCL's kernel names, nccl-tests' bandwidth
arithmetic against its published output, interval overlap, and traces other people recorded
(tests/fixtures/traces/public, SOURCES.md there) read as a user would."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from roofline.analysis.comms import report
from roofline.cli import app
from roofline.errors import UsageError
from roofline.model import collectives, overlap
from roofline.model.links import link_of
from roofline.nsight.run import NO_MULTICAST, program_env
from roofline.traces import kineto

PUBLIC = Path(__file__).resolve().parent / "fixtures" / "traces" / "public"


@pytest.mark.parametrize("name, want", [
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     ("all_reduce", "Sum", "float", "RING", "LL")),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
     ("send_recv", "Sum", "int8_t", "RING", "SIMPLE")),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", ("all_reduce", "Sum", "bf16", "RING", "LL")),
    ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", ("all_gather", None, None, "RING", "LL")),
    ("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL128(x)", ("reduce_scatter", "Sum", "f32", "RING", "LL128")),
    ("ncclDevKernel_AllReduce_Sum_f32_NVLS_TREE_SIMPLE(x)", ("all_reduce", "Sum", "f32", "NVLS_TREE", "SIMPLE")),
])
def test_nccl_kernel_names_say_their_collective(name, want):
    c = collectives.classify(name)
    assert (c.collective, c.op, c.dtype, c.algorithm, c.protocol) == want
    assert collectives.is_nccl(name) and not collectives.is_nccl("ampere_sgemm_128x64_nn")
    assert collectives.classify("ncclDevKernel_Generic(x)") is None


def test_bandwidth_is_nccl_tests_own():
    """nccl-tests' output of an all-reduce on a 72-GPU NVLink domain (coreweave/nccl-tests pull
    request 43): 536,870,912 B in 1,806.7 us is 297.16 GB/s algbw, 586.06 busbw; 1 GiB in 3,108.8 us
    is 345.38 and 681.17."""
    for nbytes, us, algbw, busbw in ((536870912, 1806.7, 297.16, 586.06), (1073741824, 3108.8, 345.38, 681.17)):
        # its time column is rounded to 0.1 us; its bandwidths come from the unrounded time
        assert collectives.algbw_gbps(nbytes, us / 1000) == pytest.approx(algbw, rel=1e-4)
        assert collectives.busbw_gbps("all_reduce", nbytes, us / 1000, 72) == pytest.approx(busbw, rel=1e-4)
    assert collectives.bus_factor("all_gather", 8) == 7 / 8 and collectives.bus_factor("all_reduce", 8) == 1.75
    assert collectives.bus_factor("broadcast", 8) == 1.0 and collectives.bus_factor("all_reduce", 1) == 0.0


def test_overlap_by_hand():
    assert overlap.union([(5, 6), (0, 2), (1, 3), (7, 7)]) == [(0, 3), (5, 6)]
    assert overlap.covered((0, 10), [(2, 4), (8, 12)]) == 4
    assert overlap.exposed((0, 10), [(2, 4), (8, 12)]) == 6 and overlap.exposed((3, 4), [(0, 10)]) == 0


def test_a_ddp_trace_with_messages_in_the_kernels_args():
    """Rank 0 of 2 on an A100: 15 all-reduce and 6 broadcast kernels; the first all-reduce carries
    6,637,568 floats (26,550,272 bytes) and took 2,636.669 us: 10.07 GB/s, busbw the same on 2 ranks."""
    t = kineto.read(PUBLIC / "nccl_data.json.gz")
    assert (t.rank, t.world_size, t.gpu) == (0, 2, "NVIDIA A100-PG509-200")
    kinds = [c.collective for c in t.comms]
    assert kinds.count("all_reduce") == 15 and kinds.count("broadcast") == 6
    first = next(c for c in t.comms if c.kernel.dur_us == 2636.669)
    assert first.source == "kernel args" and first.ranks == 2
    r = report([t], "NVIDIA A100-SXM4-40GB")
    row = next(x for x in r.ranks[0].rows if x.name == first.kernel.name and x.time_us == first.kernel.dur_us)
    assert row.nbytes == 26_550_272 and row.algbw_gbps == pytest.approx(26_550_272 / 2636.669e-6 / 1e9, rel=1e-6)
    assert row.busbw_gbps == pytest.approx(row.algbw_gbps) and r.link.gbps == 300


def test_exposed_time_agrees_with_a_timeline_at_one_microsecond():
    """The exposed part of each collective, against a brute-force timeline of 1 us steps over
    the trace's compute kernels on the same GPU."""
    t = kineto.read(PUBLIC / "nccl_data.json.gz")
    s = report([t]).ranks[0]
    nccl = {c.kernel for c in t.comms}
    start = min(k.ts_us for k in t.kernels)
    busy = np.zeros(int(max(k.end_us for k in t.kernels) - start) + 2, dtype=bool)
    for k in t.kernels:
        if k not in nccl and k.device == 0:
            busy[int(k.ts_us - start):int(k.end_us - start)] = True
    for c, row in zip([c for c in t.comms if c.kernel.device == 0], s.rows):
        a, b = int(c.kernel.ts_us - start), int(c.kernel.end_us - start)
        assert row.exposed_us == pytest.approx((~busy[a:b]).sum(), abs=3)
    assert 0 < s.exposed_us <= s.comm_us and s.overlapped_span_us == pytest.approx(s.span_us - s.exposed_us)


def test_two_ranks_of_128_with_messages_only_in_the_ops_shapes():
    """Two ranks of a sampled 128-rank step: the SendRecv kernels are all-to-all (their op is
    nccl:all_to_all), their bytes from its input's shape and type; the all-gathers' from
    c10d::_allgather_base_'s (output, input) shapes: 1,073,741,824 int8 gathered from 16,777,216
    each, so a group of 64."""
    ranks = [kineto.read(PUBLIC / f"sampled_rank-{i}.json.gz") for i in (0, 1)]
    assert [(t.rank, t.world_size) for t in ranks] == [(0, 128), (1, 128)]
    kinds = sorted({c.collective for c in ranks[0].comms})
    assert kinds == ["all_gather", "all_reduce", "all_to_all"]
    assert all("SendRecv" in c.kernel.name for c in ranks[0].comms if c.collective == "all_to_all")
    assert all(c.nbytes and c.source == "input dims" for c in ranks[0].comms)
    gathers = [c for c in ranks[0].comms if c.collective == "all_gather"]
    assert [(c.nbytes, c.ranks) for c in gathers] == [(1073741824, 64)] * 2
    assert all(c.ranks == 128 for c in ranks[0].comms if c.collective != "all_gather")
    r = report(ranks)
    assert [s.rank for s in r.ranks] == [0, 1] and r.link is None and any("no NVLink figure" in n for n in r.notes)
    both = next(a for a in r.collectives if a.what.startswith("all-reduce"))
    assert set(both.times_us) == {0, 1} and both.spread >= 1 and both.slowest in (0, 1)


def test_links_by_gpu_name():
    assert link_of("NVIDIA H200").gbps == 450 and link_of("NVIDIA A100-SXM4-80GB").gbps == 300
    assert link_of("NVIDIA H100 PCIe").gbps == 300 and link_of("NVIDIA GeForce RTX 4090") is None


def test_comms_command(tmp_path):
    r = CliRunner().invoke(app, ["comms", str(PUBLIC), "--gpu", "a100-sxm4-40gb"], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "exposed" in r.output and "NVLink 3 300 GB/s each way" in r.output
    doc = json.loads(CliRunner().invoke(app, ["comms", str(PUBLIC / "nccl_data.json.gz"), "--json"]).stdout)
    assert doc["ranks"][0]["rank"] == 0 and len(doc["ranks"][0]["rows"]) == 21
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    (tmp_path / "empty").mkdir()
    for args, why in (([str(bad)], "no traceEvents"), ([str(tmp_path / "none.json")], "no such trace file or folder"),
                      ([str(tmp_path / "traces")], "traces: no such trace file or folder"),
                      ([str(tmp_path / "empty")], "a folder with no .json"), ([], "give the traces"),
                      ([str(PUBLIC / "nccl_data.json.gz"), str(PUBLIC)], "given twice (also as")):
        r = CliRunner().invoke(app, ["comms", *args])
        assert r.exit_code == 2 and why in r.output and r.output.count("\n") == 1, r.output
    empty = tmp_path / "t.json.gz"
    empty.write_bytes(gzip.compress(json.dumps({"traceEvents": []}).encode()))
    with pytest.raises(UsageError, match="no GPU kernel in the trace"):
        kineto.read(empty)


def test_programs_start_with_nvlink_multicast_off():
    env = program_env({"NCCL_NVLS_ENABLE": "1", "PATH": "/bin"})
    assert env["NCCL_NVLS_ENABLE"] == "1"  # the user's own setting stands
    assert env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1" and env["NVSHMEM_DISABLE_NVLS"] == "1"
    assert set(NO_MULTICAST) <= set(program_env({}))


def test_the_communication_roof_is_drawn(tmp_path):
    out = tmp_path / "comms.png"
    r = CliRunner().invoke(app, ["comms", str(PUBLIC / "sampled_rank-0.json.gz"), str(PUBLIC / "sampled_rank-1.json.gz"),
                                 "--gpu", "a100-sxm4-80gb", "--chart", str(out)])
    assert r.exit_code == 0, r.output
    assert out.stat().st_size > 20_000 and f"wrote {out}" in r.stdout


def test_nccl_tests_output_is_the_reference():
    """The published all_reduce_perf rows of 72 GB200 ranks: read as printed (out-of-place), their
    ranks from the highest rank line, busbw interpolated in log size between rows; our own
    arithmetic over their sizes and times gives their busbw back to 0.01 %."""
    from roofline.traces import nccl_tests

    ref = nccl_tests.read(PUBLIC / "nccl-tests-gb200-nvl72.txt", "all_reduce")
    assert (ref.collective, ref.ranks, len(ref.points)) == ("all_reduce", 72, 5)
    assert ref.busbw_at(536870912) == 586.06 and ref.busbw_at(2**29 * 2**0.5) == pytest.approx((586.06 + 681.17) / 2)
    assert ref.busbw_at(100) is None
    for p in ref.points:
        assert collectives.busbw_gbps("all_reduce", p.nbytes, p.time_us / 1000, ref.ranks) == pytest.approx(
            p.busbw_gbps, rel=1e-4)
    with pytest.raises(UsageError, match="no nccl-tests result row"):
        nccl_tests.read(PUBLIC / "SOURCES.md")


def test_comms_against_nccl_tests(tmp_path):
    r = CliRunner().invoke(app, ["comms", str(PUBLIC / "nccl_data.json.gz"), "--gpu", "a100-sxm4-40gb", "--nccl-tests",
                                 str(PUBLIC / "nccl-tests-gb200-nvl72.txt"), "--collective", "all_reduce", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["nccl_tests"]["ranks"] == 72 and any("ran on 72 ranks" in n for n in doc["notes"])
    r = CliRunner().invoke(app, ["comms", str(PUBLIC / "nccl_data.json.gz"), "--collective", "all_reduce"])
    assert r.exit_code == 2 and "--collective names the collective of --nccl-tests output" in r.output


def test_a_collective_as_fast_as_nccl_tests_reads_100_percent_of_it():
    from roofline.analysis.comms import summarise
    from roofline.model.links import Link
    from roofline.traces import nccl_tests
    from roofline.traces.kineto import Comm, Kernel, RankTrace

    ref = nccl_tests.read(PUBLIC / "nccl-tests-gb200-nvl72.txt", "all_reduce")
    nccl = Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 1000.0, 3108.8, 0, 7)
    gemm = Kernel("sm90_xmma_gemm", 0.0, 2000.0, 0, 8)
    trace = RankTrace("t", 0, 72, None, [gemm, nccl], [Comm(nccl, "all_reduce", 1073741824.0, 72)])
    s = summarise(trace, Link("NVLink 5", 18, 50.0, "test"), ref)
    row = s.rows[0]
    assert row.of_reference == pytest.approx(1.0, rel=1e-4) and row.of_link == pytest.approx(681.17 / 900, rel=1e-4)
    assert row.exposed_us == pytest.approx(3108.8 - 1000.0) and s.span_us == pytest.approx(4108.8)


def _trace(path, kernels, rank=None, world=None, gpu=None):
    doc = {"traceEvents": [{"cat": "kernel", "name": n, "ts": ts, "dur": dur, "args": {"device": 0, "stream": 7, **a}}
                           for n, ts, dur, a in kernels]}
    if rank is not None:
        doc["distributedInfo"] = {"rank": rank, "world_size": world}
    if gpu:
        doc["deviceProperties"] = [{"id": 0, "name": gpu}]
    path.write_text(json.dumps(doc))
    return path


def test_a_synthetic_step_by_hand(tmp_path):
    """Compute at 0-100 and 150-190 us; an all_to_allv of 4,194,304 bytes on 8 ranks at 80-180 us
    (compute covers 80-100 and 150-180 of it: 50 us exposed); an all-gather whose S is its output
    (4,194,304 floats) at 200-300 us, all exposed."""
    ata = {"Collective name": "all_to_allv", "In msg nelems": 1048576, "Out msg nelems": 1048576, "dtype": "Float",
           "Group size": 8}
    ag = {"Collective name": "_allgather_base", "In msg nelems": 524288, "Out msg nelems": 4194304, "dtype": "Float",
          "Group size": 8}
    t = kineto.read(_trace(tmp_path / "r0.json", [("gemm", 0, 100, {}), ("gemm", 150, 40, {}),
                                                ("ncclDevKernel_SendRecv(x)", 80, 100, ata),
                                                ("ncclDevKernel_AllGather_RING_LL(x)", 200, 100, ag)], 0, 8, "NVIDIA H100 80GB HBM3"))
    s = report([t]).ranks[0]
    a2a, gather = s.rows
    assert a2a.collective == "all_to_all" and a2a.exposed_us == 50
    assert a2a.busbw_gbps == pytest.approx(4194304 / 100e-6 / 1e9 * 7 / 8)
    assert gather.nbytes == 4194304 * 4 and gather.exposed_us == 100 and gather.algorithm == "RING"
    assert s.span_us == 300 and s.compute_us == 140 and s.exposed_us == 150


def test_mixed_and_unnumbered_traces_are_said_so(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    _trace(folder / "a.json", [("gemm", 0, 10, {})])
    _trace(folder / "b.json", [("gemm", 0, 12, {})])
    (folder / "notes.json").write_text('{"not": "a trace"}')
    r = CliRunner().invoke(app, ["comms", str(folder), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [x["rank"] for x in doc["ranks"]] == [0, 1]
    assert any("not a trace, left out" in n for n in doc["notes"]) and any("no NCCL kernel" in n for n in doc["notes"])
    assert any("ranks numbered by the order of the files" in n for n in doc["notes"])
    mixed = report([kineto.read(PUBLIC / "nccl_data.json.gz"), kineto.read(PUBLIC / "sampled_rank-0.json.gz")])
    assert any("different jobs" in n for n in mixed.notes)
    r = CliRunner().invoke(app, ["comms", str(PUBLIC), "--gpu", "nonsense"])
    assert r.exit_code == 2 and "--gpu 'nonsense': no preset of that name" in r.output
