"""The one Nsight Compute reader, without a GPU: every form of one H200 profile of a program no one
on the project wrote (examples/precisions.py's products through cuBLAS/cuBLASLt in FP32, FP16,
BF16, INT8 and FP8, PyTorch's GELU and add; `bash bench/ncu_forms.sh OUT --only ...`, see
docs/nsight-compute.md) gives the figures `roofline profile` counted for the same program; the same export re-saved, re-encoded and re-localised reads
alike; what a report lacks is named, never read as zero; names people recognise; roofs at the
clock a kernel ran at; no launch floor under ncu's durations."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from dataclasses import replace
from functools import cache

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline.cli import app
from roofline.errors import UsageError
from roofline import nsight
from roofline.measure import counters
from roofline.model.device import from_preset
from roofline.nsight.names import label, unique_labels
from roofline.nsight.metrics import COLLECT, read
from roofline.model.roofs import LAUNCH
from roofline.results import store

FORMS = FIXTURES / "ncu" / "forms"  # cuBLAS/cuBLASLt products in FP32, FP16, BF16, INT8, FP8; GELU; an add
MIXED = FIXTURES / "ncu" / "forms-mixed"  # TF32 and FP64 products, a layer norm, cuDNN attention, a Triton kernel
TRANSFORMER = FIXTURES / "ncu" / "transformer-h200-raw.csv"
RAW = ("full-raw", "full-raw-base", "section-raw", "metrics-raw-stdout")
DETAILS = ("full-details", "full-details-base", "metrics-stdout")  # no device attributes: read with --gpu h200
SAME_RUN = ("full-raw", "full-raw-base", "full-details", "full-details-base")  # one --set full report, four exports
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_line_error(result, needle, code=2):
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert lines and needle in lines[-1] and lines[-1].startswith("roofline: error: "), result.stderr
    assert "Traceback" not in result.output


@cache
def _imported(path: str, gpu: str | None, tmp: str):
    out = f"{tmp}/{abs(hash((path, gpu)))}.json"
    r = invoke("profile", "--import", path, "--out", out, *(["--gpu", gpu] if gpu else []))
    assert r.exit_code == 0, r.output
    return store.load(out, profile=True), r


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return str(tmp_path_factory.mktemp("forms"))


def imported(form: str, tmp: str, path=None, folder=FORMS):
    return _imported(str(path or folder / f"{form}.csv"), "h200" if form in DETAILS else None, tmp)[0]


def by_label(doc) -> dict:
    """Kernels keyed by the label of their demangled name (the program launches each once)."""
    return {label(k.demangled): k for k in doc.kernels}


@cache
def reference(folder) -> dict:
    """`roofline profile` of the same program (its own metric list, ncu_report reading the report)."""
    return by_label(store.load(folder / "roofline.json", profile=True))


def partial(k, key: str) -> bool:
    return any(m.startswith(key + " ") for m in k.missing)


@pytest.mark.parametrize("folder, form", [(FORMS, f) for f in RAW + DETAILS] + [
    (MIXED, f) for f in ("full-raw", "full-details", "section-raw", "metrics-stdout", "metrics-raw-stdout")])
def test_every_form_gives_the_figures_roofline_profile_counted(folder, form, tmp):
    """FLOPs per precision exactly (instruction counts, or rates x cycles to four digits), bytes per
    level and time within what separate runs of one program vary, and everything else missing by
    name, never zero."""
    doc = imported(form, tmp, folder=folder)
    reference_ = reference(folder)
    kernels = by_label(doc)
    assert set(kernels) == set(reference_)
    for name, k in kernels.items():
        ref = reference_[name]
        assert k.time_ms == pytest.approx(ref.time_ms, rel=0.1), name  # separate runs: a 16 us kernel varies 8 %
        for key, flops in k.flops.items():
            if not partial(k, key):
                assert flops == pytest.approx(ref.flops[key], rel=5e-4), (name, key)
        for key in ref.flops:
            assert key in k.flops or key in k.missing or partial(k, key), (name, key)
        for level, nbytes in k.bytes.items():
            if ref.bytes.get(level):
                assert nbytes == pytest.approx(ref.bytes[level], rel=0.05, abs=2e5), (name, level)
        for level in ref.bytes:
            assert level in k.bytes or level in k.missing, (name, level)


def test_one_reports_exports_agree_to_rounding(tmp):
    """The --set full report as raw and details CSV, in display and base units: the same time,
    DRAM bytes and clock per kernel to the digits each export prints."""
    docs = [by_label(imported(form, tmp)) for form in SAME_RUN]
    for name, k in docs[0].items():
        for other in docs[1:]:
            o = other[name]
            assert o.time_ms == pytest.approx(k.time_ms, rel=5e-4), name  # the details page: 4 digits of us
            assert o.bytes["dram"] == pytest.approx(k.bytes["dram"], rel=5e-3), name  # 4 digits of GB/s x 5 of us
            assert o.clock_mhz == pytest.approx(k.clock_mhz, rel=0.05), name  # details: the GPC clock, 3 digits
            assert o.registers == k.registers and o.grid == k.grid and o.block == k.block
    raw, base = docs[0], docs[1]
    for name, k in raw.items():
        assert base[name].flops == pytest.approx(k.flops, rel=5e-4)  # display units print rates to 6 digits


def test_set_full_reads_as_nsight_computes_own_roofline_does(tmp):
    """--set full holds the FLOP counts as per-cycle rates and DRAM as read + write bytes: read,
    they give 2 x 2048^3 for every 2048^3 product and name where each figure came from."""
    doc = imported("full-raw", tmp)
    k = by_label(doc)["cutlass_80_simt_sgemm_256x128_8x4_nn_align1"]
    assert k.precision == "fp32" and k.flops["fp32"] == pytest.approx(2 * 2048**3, rel=5e-4)
    assert "per_cycle_elapsed x smsp__cycles_elapsed.avg" in k.derived["fp32"]
    assert k.counted["dram"] == "dram__bytes_read.sum + dram__bytes_write.sum"
    assert k.counted["time"] == "gpu__time_duration.sum" and k.passes == 38
    for name, precision in (("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "bf16"),
                            ("nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", "fp16"),
                            ("cutlass_80_wmma_tensorop_i161616gemm_s8_forwardCompat_128x128_32x2_nn_align4", "int8"),
                            ("nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_algo2_TNT", "fp8")):
        g = by_label(doc)[name]
        assert g.precision == precision and g.tensor_core and g.flops[f"{precision}_tensor"] == 2 * 2048**3, name
    assert set(doc.missing()) == {"smem"}  # --set full has no shared-memory byte count


@pytest.mark.parametrize("folder, binary, export", [
    (FORMS, "full-ncurep", "full-raw-base"), (FORMS, "section-ncurep", "section-raw"),
    (MIXED, "full-ncurep", "full-raw"), (MIXED, "section-ncurep", "section-raw")])
def test_a_binary_report_reads_like_its_csv_export(folder, binary, export, tmp):
    """The .ncu-rep, read on the H200 through Nsight Compute's own Python interface (its units
    from the interface), and its raw CSV export read here: the same figures, the same sources."""
    module = by_label(store.load(folder / f"{binary}.json", profile=True))
    exported = by_label(imported(export, tmp, folder=folder))
    assert set(module) == set(exported)
    for name, k in exported.items():
        m = module[name]
        assert m.time_ms == pytest.approx(k.time_ms, rel=1e-5) and m.clock_mhz == pytest.approx(k.clock_mhz, rel=1e-5)
        assert m.flops == pytest.approx(k.flops, rel=5e-4)  # the CSV prints per-cycle rates to 6 decimals
        assert m.bytes == pytest.approx(k.bytes, rel=1e-5)
        assert m.precision == k.precision and m.registers == k.registers and m.grid == k.grid
        counted = {f: v for f, v in k.counted.items() if f != "smem_config"}  # the module's read predates the carveout
        assert (m.counted, m.derived, set(m.missing)) == (counted, k.derived, set(k.missing)), name


def test_the_details_page_with_section_bodies_gives_fp32_and_fp64_work(tmp):
    """`--print-details all` adds the roofline sections' bodies to the details page: FP32 and FP64
    instructions per cycle and the SM clock, which with the duration give the FLOPs (to the three
    digits the clock is printed with); FP16 and tensor work stay missing, and are said to be."""
    doc = _imported(str(FORMS / "full-details-all.csv"), "h200", tmp)[0]
    k = by_label(doc)["cutlass_80_simt_sgemm_256x128_8x4_nn_align1"]
    assert k.precision == "fp32" and k.flops["fp32"] == pytest.approx(2 * 2048**3, rel=5e-3)
    assert "per_cycle_elapsed x smsp__cycles_elapsed.avg.per_second x gpu__time_duration.sum" in k.derived["fp32"]
    assert "fp16" in k.missing and "bf16_tensor" in k.missing
    gemm = by_label(doc)["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"]
    assert gemm.precision == "unknown" and "tensor" in gemm.uncounted(doc.device)


def _rows(path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def _csv(rows, **kw) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n", **kw).writerows(rows)
    return out.getvalue()


def _localised(rows) -> list[list[str]]:
    """Numbers as a comma-decimal locale writes them: '1,234.5' -> '1.234,5'."""
    swap = str.maketrans({",": ".", ".": ","})
    return [[c.translate(swap) if re.fullmatch(r"-?[\d,]*\.?\d+", c) else c for c in r] for r in rows]


def _older_units(rows) -> list[list[str]]:
    """The unit spellings of older ncu versions: usecond, cycle/nsecond, Tbyte/second."""
    names = {"us": "usecond", "ns": "nsecond", "ms": "msecond", "Ghz": "cycle/nsecond", "Tbyte/s": "Tbyte/second",
             "Gbyte/s": "Gbyte/second"}
    return [rows[0], [names.get(u, u) for u in rows[1]], *rows[2:]]


TRANSFORMS = {
    "utf-16 with a byte-order mark": lambda p: p.read_text().encode("utf-16"),
    "utf-16 without one": lambda p: p.read_text().encode("utf-16-le"),
    "utf-8 with a byte-order mark, CRLF": lambda p: ("\ufeff" + p.read_text().replace("\n", "\r\n")).encode(),
    "re-saved by Python's csv module": lambda p: _csv(_rows(p)).encode(),
    "a spreadsheet's semicolons and decimal commas": lambda p: _csv(_localised(_rows(p)), delimiter=";").encode(),
    "the program's output and ncu's lines first": lambda p: ("ran: 7 kernels\n==PROF== Connected to process 9\n"
                                                            "==WARNING== a note\n" + p.read_text()).encode(),
    "older unit spellings": lambda p: _csv(_older_units(_rows(p)), quoting=csv.QUOTE_ALL).encode(),
}


@pytest.mark.parametrize("how", TRANSFORMS)
def test_the_same_export_however_saved_reads_alike(how, tmp, tmp_path):
    path = tmp_path / "export.csv"
    path.write_bytes(TRANSFORMS[how](FORMS / "full-raw.csv"))
    doc = by_label(imported("full-raw", tmp, path))
    want = by_label(imported("full-raw", tmp))
    assert set(doc) == set(want)
    for name, k in want.items():
        got = doc[name]
        assert got.time_ms == pytest.approx(k.time_ms, rel=1e-9) and got.clock_mhz == pytest.approx(k.clock_mhz)
        assert got.flops == pytest.approx(k.flops, rel=1e-9) and got.bytes == pytest.approx(k.bytes, rel=1e-9)
        assert got.precision == k.precision and got.occupancy == k.occupancy


def test_an_old_details_layout_reads_like_the_new_one(tmp, tmp_path):
    """The 12-column details page of ncu 2019-2021 (no Block Size, Grid Size, Device or CC columns,
    a Kernel Time, 'GPU Speed Of Light', usecond and cycle/nsecond) gives the same time, DRAM bytes
    and clock as today's 20-column one."""
    rows = _rows(FORMS / "full-details.csv")
    head = rows[0]
    keep = [i for i, c in enumerate(head[:15]) if c not in ("Block Size", "Grid Size", "Device", "CC")]
    units = {"us": "usecond", "ms": "msecond", "Ghz": "cycle/nsecond", "Gbyte/s": "Gbyte/second"}
    old = [[head[i] for i in keep[:5]] + ["Kernel Time"] + [head[i] for i in keep[5:]]]
    for r in rows[1:]:
        if len(r) < 15 or not r[12]:
            continue
        cells = [r[i] for i in keep]
        cells[6] = cells[6].replace("GPU Speed Of Light Throughput", "GPU Speed Of Light")
        cells[8] = units.get(cells[8], cells[8])
        old.append(cells[:5] + ["2021-Mar-01 10:00:00"] + cells[5:])
    path = tmp_path / "old.csv"
    path.write_text(_csv(old, quoting=csv.QUOTE_ALL))
    got = by_label(_imported(str(path), "h200", tmp)[0])
    want = by_label(imported("full-details", tmp))
    for name, k in want.items():
        assert got[name].time_ms == pytest.approx(k.time_ms)
        assert got[name].bytes["dram"] == pytest.approx(k.bytes["dram"])
        assert got[name].clock_mhz == pytest.approx(k.clock_mhz)
        assert got[name].threads_per_block == k.threads_per_block


def test_pascal_era_metric_names_and_two_decimals():
    """The oldest raw exports: gpu__time_duration without .sum, dram__read_bytes/write_bytes, every
    value with two decimals and thousands separators, per-instance lists in cells."""
    values = {"gpu__time_duration": 2720.0, "dram__read_bytes": 7552.0, "dram__write_bytes": 384.0,
              "gpc__frequency": 2.12e9, "launch__grid_size": 1.0, "launch__block_size": 1024.0}
    r = read(values, {})
    assert r.value("time") == 2720 and r.value("dram") == 7936 and r.value("clock") == 2.12e9
    assert r.quantities["dram"].source == "dram__read_bytes + dram__write_bytes"
    assert r.grid == (1, 1, 1) and r.block == (1024, 1, 1)
    assert nsight.dialect.number("1,759,000.00") == 1_759_000 and nsight.dialect.number("32.00; 32.00") is None


def test_blackwell_dram_bytes_by_operation():
    # as an RTX 5070 (gb202) report gave them: dram__bytes_op_read.sum + dram__bytes_op_write.sum
    r = read({"gpu__time_duration.sum": 292_928.0, "dram__bytes_op_read.sum": 134_221_568.0,
              "dram__bytes_op_write.sum": 43_631_104.0}, {})
    assert r.value("dram") == 134_221_568 + 43_631_104 and "dram" not in r.missing
    assert r.quantities["dram"].source == "dram__bytes_op_read.sum + dram__bytes_op_write.sum"


@pytest.mark.parametrize("unit, scale", [
    ("Mbyte", 1e6), ("Kbyte/cycle", 1e3), ("us", 1e3), ("usecond", 1e3), ("msecond", 1e6), ("second", 1e9),
    ("Ghz", 1e9), ("hz", 1.0), ("cycle/nsecond", 1e9), ("cycle/usecond", 1e6), ("Tbyte/s", 1e12),
    ("Gbyte/second", 1e9), ("sector/ns", 1e9), ("sector/us", 1e6), ("byte/block", 1.0), ("Kbyte/block", 1e3),
    ("register/thread", 1.0), ("inst/cycle", 1.0), ("%", 1.0), ("", 1.0), ("Kibyte", 1024.0), ("furlong", None),
])
def test_units_as_ncu_writes_them(unit, scale):
    assert nsight.dialect.unit_scale(unit) == pytest.approx(scale) if scale else nsight.dialect.unit_scale(unit) is None


@pytest.mark.parametrize("cells, mark", [
    (["27.595.520", "65,77", "117.344"], ","), (["342.75", "1,234,567", "117.344"], "."), (["117.344"], "."),
    (["0.000000", "1,976.40"], "."), (["1.234,5"], ","),
])
def test_a_files_decimal_mark(cells, mark):
    assert nsight.dialect.decimal_mark(cells) == mark


def test_what_a_short_metric_list_lacks_is_named_and_never_blamed_on_latency(tmp):
    """The details page of a five-metric `--metrics ... --csv` run (with the program's output
    first): the BF16 GEMM read from the hgmma-only tensor metric against the BF16 roof; FP32 from
    FFMA alone, a lower bound said so; no occupancy without shared memory; no kernel called
    latency-bound while kinds of work went uncounted; every missing figure listed with where to
    get it."""
    doc = imported("metrics-stdout", tmp)
    k = by_label(doc)
    gemm = k["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"]
    assert gemm.precision == "bf16" and gemm.tensor_core and gemm.flops["bf16_tensor"] == 2 * 2048**3
    assert doc.verdict(gemm).binding.level == "BF16 tensor"
    sgemm = k["cutlass_80_simt_sgemm_256x128_8x4_nn_align1"]
    assert "fp32 ADD/MUL" in sgemm.missing and "lower bound" in sgemm.counted["fp32"]
    assert all(x.occupancy is None and x.registers is not None for x in doc.kernels)  # registers, but no smem
    r = invoke("show", _path_of("metrics-stdout", tmp))
    assert r.exit_code == 0, r.output
    text = " ".join(r.stdout.split())
    assert "latency" not in text and "not in this report" in text
    for what in ("FP32 ADD/MUL instructions", "FP16 operations", "tensor-core operations", "the SM clock",
                 "shared memory per block", "L2 bytes"):
        assert what in text, what


def _path_of(form: str, tmp: str) -> str:
    path = str(FORMS / f"{form}.csv")
    return f"{tmp}/{abs(hash((path, 'h200' if form in DETAILS else None)))}.json"


def test_a_report_of_the_roofline_section_alone_places_no_tensor_roof(tmp):
    """--section SpeedOfLight_RooflineChart counts FP32 and FP64 only: the tensor-core GEMMs show
    no work they can be read by, are marked '?', and their verdict says another roof may bind."""
    doc = imported("section-raw", tmp)
    k = by_label(doc)
    for name in ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"):
        assert k[name].precision == "unknown" and k[name].gflops is None
        assert "tensor" in k[name].uncounted(doc.device)
    r = invoke("show", _path_of("section-raw", tmp))
    text = " ".join(r.stdout.split())
    assert "another roof may bind instead" in text and "latency" not in text


def test_a_details_export_without_device_attributes_needs_a_gpu(tmp_path):
    one_line_error(invoke("profile", "--import", FORMS / "full-details.csv", "--out", tmp_path / "p.json"),
                   "does not say which GPU it ran on (it gives compute capability 9.0 and 132 SMs, not the device's name, "
                   "clocks and memory bus, which its peaks come from); name "
                   "it with --gpu if it is one of the GPUs known of that kind (h100-sxm, h100-nvl, h200, gh200-96gb, "
                   "gh200-144gb); if it is another, describe it in a device file, --gpu mygpu.toml")
    one_line_error(invoke("profile", "--import", FORMS / "full-details.csv", "--gpu", "a100-sxm4-80gb",
                          "--out", tmp_path / "p.json"), "compute capability 9.0; --gpu A100-SXM4-80GB is 8.0")
    one_line_error(invoke("profile", "--import", FORMS / "section-details.csv", "--gpu", "h200",
                          "--out", tmp_path / "p.json"), "holds 7 launches without a duration")
    assert not (tmp_path / "p.json").exists()


def test_an_import_never_overwrites_its_report(tmp_path):
    report = tmp_path / "r.csv"
    report.write_bytes((FORMS / "section-raw.csv").read_bytes())
    one_line_error(invoke("profile", "--import", report, "--out", report), "is the report being imported")
    assert report.read_bytes() == (FORMS / "section-raw.csv").read_bytes()
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    one_line_error(invoke("profile", "--import", report, "--out", fifo), "it is a device, pipe or socket, not a file")
    assert fifo.is_fifo()
    binary = tmp_path / "b.csv"
    binary.write_bytes(bytes(range(256)) * 20)
    one_line_error(invoke("profile", "--import", binary, "--out", tmp_path / "p.json"), "not a CSV export (a binary")


def test_the_metrics_collected_are_the_metrics_read():
    """Every figure the reader wants comes from the one list `roofline profile` and `run --profile`
    collect: a launch holding exactly those metrics misses nothing, and each figure is counted,
    not derived; `run --profile` reads its figures from the same reading."""
    other_chips = {f"sm__ops_path_tensor_src_{t}.sum" for t in (
        "fp16_dst_fp16", "fp16_dst_fp32", "fp16_bf16_tf32_dst_fp32", "fp8_dst_fp16", "fp8_dst_fp32",
        "fp4_fp6_fp8_dst_fp16", "fp4_fp6_fp8_dst_fp32")}  # the spellings of chips other than the H200's
    assert other_chips < set(COLLECT)
    values = {m: 1000.0 + i for i, m in enumerate(COLLECT) if m not in other_chips}
    values |= {"launch__registers_per_thread": 64, "launch__shared_mem_per_block_static": 0}
    r = read(values)
    assert r.missing == {}
    assert all(q.counted for q in r.quantities.values()), {k: q.source for k, q in r.quantities.items()}
    used = set(re.findall(r"[\w.]+__[\w.]+", " ".join(q.source for q in r.quantities.values())))
    launch = {"launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z", "launch__block_dim_x",
              "launch__block_dim_y", "launch__block_dim_z", "launch__grid_size", "launch__block_size"}
    assert r.launch_source == "launch__grid_dim_x/y/z, launch__block_dim_x/y/z"
    assert set(COLLECT) - used - launch - other_chips <= {"sm__cycles_elapsed.avg"}  # the stand-in for rates
    ga100 = read({**values, **{m: 500.0 for m in other_chips if "fp16_dst" in m}}
                 | {"sm__ops_path_tensor_src_fp16.sum": float("nan")})
    assert ga100.quantities["fp16_tensor"].source == ("sm__ops_path_tensor_src_fp16_dst_fp16.sum + "
                                                      "sm__ops_path_tensor_src_fp16_dst_fp32.sum")
    row = nsight.rows.Row("void k<1>(float *)", values=values)
    traffic = counters.counted_from(row)
    assert None not in (traffic.dram_bytes, traffic.l2_bytes, traffic.l1_bytes, traffic.smem_bytes,
                        traffic.bank_conflicts, traffic.fp32_flops)


@pytest.mark.parametrize("demangled, name", [
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(T1::Params)",
     "cutlass_80_simt_sgemm_256x128_8x4_nn_align1"),
    ("void cutlass::Kernel<cutlass_80_tensorop_s16816gemm_bf16_128x128_32x4_nn_align8>(T1::Params)",
     "cutlass_80_tensorop_s16816gemm_bf16_128x128_32x4_nn_align8"),
    ("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
     "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, "
     "cute::tuple<cute::C<1>, cute::C<1>, cute::C<1>>, cutlass::gemm::KernelTmaWarpSpecialized>, "
     "cute::tuple<cute::C<128>, cute::C<256>, cute::C<64>>, cutlass::bfloat16_t>, void>>(T1::Params)",
     "device_kernel [GemmUniversal 128x256x64]"),
    ("void at::vectorized_elementwise_kernel<8, at::GeluCUDAKernelImpl(at::TensorIteratorBase &, at::GeluType)::"
     "[lambda() (instance 1)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, 2>>"
     "(int, T2, T3)", "vectorized_elementwise_kernel [GeluCUDAKernelImpl]"),
    ("void at::vectorized_elementwise_kernel<8, at::CUDAFunctor_add<c10::BFloat16>, std::array<char *, 3>>(int, T2, T3)",
     "vectorized_elementwise_kernel [CUDAFunctor_add]"),
    ("void native::elementwise_kernel<128, 2, void native::gpu_kernel_impl_nocast<native::direct_copy_kernel_cuda("
     "at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda(long) (instance 1)]>("
     "at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
     "elementwise_kernel [direct_copy_kernel_cuda]"),
    ("void native::reduce_kernel<512, 1, native::ReduceOp<float, native::func_wrapper_t<float, "
     "native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) "
     "(instance 1)]>, unsigned int, float, 4, 4>>(T3)", "reduce_kernel [sum_functor]"),
    ("void native::<unnamed>::multi_tensor_apply_kernel<native::<unnamed>::TensorListMetadata<1>, "
     "native::<unnamed>::BinaryOpScalarFunctor<c10::BFloat16, 1, 1, 0>, std::multiplies<float>, float>(T1, T2, T3...)",
     "multi_tensor_apply_kernel [BinaryOpScalarFunctor, multiplies]"),
    ("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, float, 0, 1, cublasGemvParamsEx<int, "
     "cublasGemvTensorStridedBatched<const __nv_bfloat16>, float>>(T13)", "kernel [cublasGemvParamsEx]"),
    ("void unnamed>::transpose_tiled_kernel<32>(float *, const float *, int, int)", "transpose_tiled_kernel"),
    ("void register_tiling_2d<128, 128, 8, 8, 8>(int, int, int, float, const float *, const float *, float, float *)",
     "register_tiling_2d"),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"),
    # as ncu 2025.3.1's CSV and text print PyTorch's fused AdamW on Linux (tests/fixtures/ncu/corpus/adamw)
    ("void unnamed>::multi_tensor_apply_kernel<unnamed>::FusedOptimizerTensorListMetadata<4>, "
     "unnamed>::FusedAdamMathFunctor<float, 4, 1, 0>, const float *, double, double, double, double, double, bool, "
     "const float *, const float *>(T1, T2, T3...)", "multi_tensor_apply_kernel [FusedAdamMathFunctor]"),
])
def test_names_people_recognise(demangled, name):
    assert label(demangled) == name


def test_different_kernels_never_share_a_name():
    names = [r[4] for r in _rows(TRANSFORMER)[2:]] + [r[4] for r in _rows(FORMS / "full-raw.csv")[2:]]
    labels = unique_labels(names)
    assert len(set(labels.values())) == len(set(names))
    fills = sorted(v for v in labels.values() if "FillFunctor" in v)
    assert fills == ["vectorized_elementwise_kernel [FillFunctor<BFloat16>]",
                     "vectorized_elementwise_kernel [FillFunctor<float>]"]


def test_roofs_at_the_clock_a_kernel_ran_at():
    """Per SM per clock x SMs x the kernel's clock, measured ceilings capped there; DRAM and L2
    as they are. H200 at 1692 MHz: 132 x 4096 x 1692 MHz = 914.8 TFLOP/s BF16, 16896 x 2 x 1692
    MHz = 57.2 TFLOP/s FP32; an A100 held at its 765 MHz base clock: 54 % of its FP32 roof."""
    h200 = replace(from_preset("h200"), measured_fp32_gflops=62_030.0)
    at = h200.roofs_at(1692)
    assert at.roof("bf16_tensor", measured=False).value == pytest.approx(914_817, rel=1e-5)
    assert at.roof("FP32", measured=False).value == pytest.approx(57_176, rel=1e-4)
    assert at.roof("FP32").value == pytest.approx(57_176, rel=1e-4) and at.roof("FP32").measured  # capped
    assert at.roof("DRAM").value == h200.roofs.roof("DRAM").value and at.roof("L2").value == h200.roofs.roof("L2").value
    assert h200.roofs_at(None) == h200.roofs
    a100 = from_preset("a100-sxm4-80gb")
    assert a100.roofs_at(765).roof("FP32").value / a100.roofs.roof("FP32").value == pytest.approx(765 / 1410)


def test_a_profile_is_never_launch_bound(tmp_path):
    """Nsight Compute's duration leaves the launch out: a 7.6 us kernel is read against its memory
    and compute roofs, even where an event-timed empty kernel took longer."""
    doc = store.load(FORMS / "roofline.json", profile=True)
    slow_launch = doc.model_copy(update={"device": replace(doc.device, launch_latency_ms=0.05)})
    for k in slow_launch.kernels:
        v = slow_launch.verdict(k)
        assert v.binding.level != LAUNCH and all(f.level != LAUNCH for f in v.floors)


def test_a_launch_without_registers_has_no_occupancy():
    """Registers absent from a report are not zero: no theoretical occupancy, and it says so."""
    r = read({"gpu__time_duration.sum": 1e4, "dram__bytes.sum": 1e6, "launch__grid_size": 64, "launch__block_size": 256})
    assert "registers" in r.missing and r.value("registers") is None
    from roofline.nsight.launches import from_reading
    from roofline.results.convert import from_profile

    doc = from_profile([from_reading("void k(float *)", r)], from_preset("h200"))
    assert doc.kernels[0].registers is None and doc.kernels[0].occupancy is None
    assert store.dump(doc)["kernels"][0]["missing"]["registers"].startswith("--section LaunchStats")
    other = read({"gpu__time_duration.sum": 1e4, "launch__grid_size": 64, "launch__block_size": 256,
                  "launch__registers_per_thread": 64, "launch__shared_mem_per_block_static": 0,
                  "sm__maximum_warps_per_active_cycle_pct": 25.0})  # ncu's own, on the GPU it ran on
    doc = from_profile([from_reading("void k(float *)", other)], from_preset("h200"))
    assert doc.kernels[0].occupancy.occupancy == 0.5
    assert "k 50.0 % against ncu's 25.0 %): was it another GPU?" in doc.notes[-1]


@pytest.fixture
def module_on_path(monkeypatch):
    """The stand-in for ncu's Python interface (tests/fixtures/ncu/module) importable here and in
    the child process that reads through it; no ncu on PATH."""
    folder = str(FIXTURES / "ncu" / "module")
    monkeypatch.syspath_prepend(folder)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)
    yield
    sys.modules.pop("ncu_report", None)


def test_a_binary_report_is_read_through_ncus_module_in_a_child_process(module_on_path, tmp_path):
    """Units from the interface (us, Mbyte, Ghz); metric kinds it cannot give as numbers left
    alone; a fault inside the native interface does not take roofline down."""
    report = tmp_path / "r.ncu-rep"
    report.write_text(json.dumps([{"name": "void k<4>(float *)", "metrics": {
        "gpu__time_duration.sum": ["double", 25.056, "us"], "dram__bytes.sum": ["double", 33.6, "Mbyte"],
        "sm__cycles_elapsed.avg.per_second": ["double", 1.98, "Ghz"],
        "device__attribute_display_name": ["string", "NVIDIA H200", ""], "launch__grid_size": ["uint64", 128, ""],
        "launch__function_pcs": ["any", 1, ""], "SM_A.TriageCompute.sm__cycles_active.avg": ["any", 1, ""]}}]))
    got = nsight.binary.read_report(report)
    assert "ncu_report" in got.read_with
    row = got.rows[0]
    assert row.kernel == "void k<4>(float *)" and row.text["device__attribute_display_name"] == "NVIDIA H200"
    assert row.values["gpu__time_duration.sum"] == pytest.approx(25_056)
    assert row.values["dram__bytes.sum"] == pytest.approx(33.6e6) and row.values["launch__grid_size"] == 128
    assert row.values["sm__cycles_elapsed.avg.per_second"] == pytest.approx(1.98e9)
    crash = tmp_path / "crash.ncu-rep"
    crash.write_text(json.dumps([{"name": "CRASH", "metrics": {}}]))
    with pytest.raises(UsageError, match="ncu_report. cannot read it"):  # the fault is survived, and said
        nsight.binary.read_report(crash)


def test_theoretical_occupancy_agrees_with_ncus_own():
    """The project's calculator on the report's own per-SM limits gives, for every kernel of the
    three H200 raw exports (77 kernels: cuBLAS, cuDNN, CUTLASS, PyTorch, Triton), the theoretical
    occupancy Nsight Compute computed (sm__maximum_warps_per_active_cycle_pct)."""
    from roofline.results.convert import from_profile

    compared = 0
    for path in (TRANSFORMER, FORMS / "full-raw.csv", MIXED / "full-raw.csv"):
        rows = nsight.pages.parse_csv(path.read_text()).rows
        launches, _ = nsight.launches.from_rows(rows)
        doc = from_profile(launches, nsight.device.device_from_rows(rows))
        assert not any("differs from the one ncu computed" in n for n in doc.notes)
        theirs = {x.key: x.reported_occupancy for x in launches}
        for k in doc.kernels:
            key = (k.demangled, tuple(k.grid), tuple(k.block), k.registers, k.static_smem_bytes, k.dynamic_smem_bytes)
            assert k.occupancy.occupancy == pytest.approx(theirs[key], abs=1e-6), k.name
            compared += 1
    assert compared == 65 + 7 + 5


def _with(path, tmp_path, name: str, text: str):
    out = tmp_path / name
    out.write_text(text)
    return out


def test_joined_exports_and_repeated_launches_are_refused(tmp_path):
    raw = (FORMS / "full-raw.csv").read_text()
    one_line_error(invoke("profile", "--import", _with(FORMS, tmp_path, "two.csv", raw + raw), "--out", tmp_path / "p.json"),
                   "holds a second export after the first (another header row)")
    lines = raw.splitlines()
    one_line_error(invoke("profile", "--import", _with(FORMS, tmp_path, "rep.csv", "\n".join(lines + [lines[2]])),
                          "--out", tmp_path / "p.json"), "launch ID 0 appears twice")
    details = _rows(FORMS / "full-details.csv")
    renumbered = [details[0]] + [r[:1] + r[1:] if r[0] != "1" else ["0"] + r[1:] for r in details[1:]]
    one_line_error(invoke("profile", "--import", _with(FORMS, tmp_path, "ids.csv", _csv(renumbered)), "--gpu", "h200",
                          "--out", tmp_path / "p.json"), "launch ID 0 names two kernels")
    assert not (tmp_path / "p.json").exists()


def test_a_file_cut_inside_a_value_loses_that_row_not_a_digit(tmp_path):
    """Cut three bytes short, the last cell reads '"33,554,4': not 335,544 FLOPs but a row cut
    short, left out and said to be."""
    text = (FORMS / "metrics-raw-stdout.csv").read_text().rstrip("\n")
    r = invoke("profile", "--import", _with(FORMS, tmp_path, "cut.csv", text[:-3]), "--out", tmp_path / "p.json")
    assert r.exit_code == 0 and "1 report row left out: cut short" in r.stderr
    assert len(store.load(tmp_path / "p.json", profile=True).kernels) == 6
    assert nsight.dialect.number("33,554,4") is None and nsight.dialect.number("1.234.5", ",") is None


@pytest.mark.parametrize("label, unit", [("Duration", "%"), ("Duration", "byte"), ("Duration", ""),
                                          ("SM Frequency", ""), ("Achieved Occupancy", "warp")])
def test_a_value_in_a_unit_of_the_wrong_kind_is_not_read(label, unit, tmp_path):
    rows = _rows(FORMS / "full-details.csv")
    for r in rows[1:]:
        if len(r) > 14 and r[12] == label:
            r[13] = unit
    r = invoke("profile", "--import", _with(FORMS, tmp_path, "u.csv", _csv(rows, quoting=csv.QUOTE_ALL)), "--gpu", "h200",
               "--out", tmp_path / "p.json")
    assert "in units this reader does not know or that do not fit them" in r.stderr, r.output
    if r.exit_code == 0:
        doc = store.load(tmp_path / "p.json", profile=True)
        assert all(k.clock_mhz is None or k.clock_mhz > 1000 for k in doc.kernels)
        assert all(k.achieved_occupancy is None for k in doc.kernels) if label == "Achieved Occupancy" else True
    else:
        one_line_error(r, "without a duration")


def test_a_launch_figure_no_launch_has_is_named_and_left_out(tmp_path):
    rows = _rows(FORMS / "full-raw.csv")
    head = rows[0]
    rows[3][head.index("launch__registers_per_thread")] = "40.5"
    r = invoke("profile", "--import", _with(FORMS, tmp_path, "n.csv", _csv(rows, quoting=csv.QUOTE_ALL)),
               "--out", tmp_path / "p.json")
    assert r.exit_code == 0
    assert "launch__registers_per_thread is 40.5, which no launch has: left out" in r.stderr
    second = by_label(store.load(tmp_path / "p.json", profile=True))[label(rows[3][4])]
    assert second.registers is None and second.occupancy is None


def _damaged(tmp_path, metric: str, value: str, row: int = 2, path=TRANSFORMER):
    """`profile --import` of the transformer export with one cell of launch `row - 2` replaced."""
    rows = _rows(path)
    rows[row][rows[0].index(metric)] = value
    return invoke("profile", "--import", _with(FORMS, tmp_path, "d.csv", _csv(rows, quoting=csv.QUOTE_ALL)),
                  "--out", tmp_path / "p.json")


FIRST = "launch 0 (elementwise_kernel [direct_copy_kernel_cuda])"  # the transformer export's first launch


@pytest.mark.parametrize("metric, value, says", [
    ("gpu__time_duration.sum", "fast", "gpu__time_duration.sum is 'fast', not a number"),
    ("gpu__time_duration.sum", "-5", "gpu__time_duration.sum is -5, below zero"),
    ("gpu__time_duration.sum", "nan", "gpu__time_duration.sum is 'nan', not a number"),
    ("gpu__time_duration.sum", "inf", "gpu__time_duration.sum is 'inf', not a number"),
    ("dram__bytes.sum", "abc", "dram__bytes.sum is 'abc', not a number"),
    ("dram__bytes.sum", "-78,336", "dram__bytes.sum is -78336, below zero"),
    ("launch__grid_size", "many", "launch__grid_size is 'many', not a number"),
    # 1e300 ns: pydantic's "time_ms: Input should be less than or equal to 1000000000" before
    ("gpu__time_duration.sum", "1e300", "gpu__time_duration.sum gives 1e+291 s, longer than any real launch (a day)"),
    # 78,336 B in 3,040 ns is 25.8 GB/s; a million times more is 5,353x the H200's 4,814 GB/s
    ("dram__bytes.sum", "78,336,000,000", "dram__bytes.sum = 7.8336e+10 bytes in 3,040 ns is 25,768,421 GB/s, "
                                          "5.35e+03x the device's dram peak of 4,814 GB/s, which no kernel reaches "
                                          "on NVIDIA H200"),
])
def test_a_damaged_figure_leaves_its_launch_out_naming_it_the_metric_and_the_value(metric, value, says, tmp_path):
    r = _damaged(tmp_path, metric, value)
    assert r.exit_code == 0, r.output
    note = next(line for line in r.stderr.splitlines() if "damaged figure" in line)
    assert f"1 launch left out for a damaged figure in a metric the roofline reads" in note
    assert f"{FIRST}: {says}" in note
    doc = store.load(tmp_path / "p.json", profile=True)
    assert doc.launches_profiled == 164  # the other 164 of the export's 165 read
    places = sorted(o for k in doc.kernels for o in k.launch_order)
    assert places == list(range(1, 165))  # the others keep their places in the launch order: a gap at 0


def test_a_report_whose_every_launch_is_damaged_is_refused_in_one_line(tmp_path):
    rows = _rows(TRANSFORMER)
    time = rows[0].index("gpu__time_duration.sum")
    for row in rows[2:]:
        row[time] = "?!"
    r = invoke("profile", "--import", _with(FORMS, tmp_path, "d.csv", _csv(rows, quoting=csv.QUOTE_ALL)),
               "--out", tmp_path / "p.json")
    one_line_error(r, f"{FIRST}: gpu__time_duration.sum is '?!', not a number (164 more damaged figures after it); "
                      "the report is damaged: export the report again")
    assert not (tmp_path / "p.json").exists()


def test_a_damaged_figure_in_a_metric_no_roofline_reads_harms_nothing(tmp_path):
    """ncu writes small negative values into derived sub-metrics of cuDNN and nvjet kernels
    (`lts__t_sectors_srcunit_tex_op_red_lookup_hit.sum` -1 on the H200): a metric that shares a
    prefix with one a roofline reads is not read, and its value is no damage."""
    rows = _rows(TRANSFORMER)
    rows[0].append("lts__t_sectors_srcunit_tex_op_red_lookup_hit.sum")
    rows[1].append("sector")
    for row in rows[2:]:
        row.append("-1")
    r = invoke("profile", "--import", _with(FORMS, tmp_path, "d.csv", _csv(rows, quoting=csv.QUOTE_ALL)),
               "--out", tmp_path / "p.json")
    assert r.exit_code == 0 and "damaged" not in r.stderr, r.output
    assert store.load(tmp_path / "p.json", profile=True).launches_profiled == 165


@pytest.mark.parametrize("value", ["n/a", "", "N/A"])
def test_a_cell_not_collected_stays_missing(value, tmp_path):
    r = _damaged(tmp_path, "dram__bytes.sum", value)
    assert r.exit_code == 0, r.output
    doc = store.load(tmp_path / "p.json", profile=True)
    assert doc.launches_profiled == 165
    assert "damaged" not in r.stderr


def test_a_damaged_value_on_the_details_page_leaves_its_launch_out(tmp_path):
    rows = _rows(FORMS / "full-details.csv")
    hit = next(r for r in rows[1:] if len(r) > 14 and r[12] == "Duration")
    hit[14] = "quick"
    r = invoke("profile", "--import", _with(FORMS, tmp_path, "d.csv", _csv(rows, quoting=csv.QUOTE_ALL)), "--gpu", "h200",
               "--out", tmp_path / "p.json")
    assert r.exit_code == 0, r.output
    assert f"launch {hit[0]} ({label(hit[4])}): gpu__time_duration.sum is 'quick', not a number" in r.stderr


def test_check_rows_reads_rows_from_any_source():
    """The rows ncu's Python module gives (no ID column: the position names the launch)."""
    ok = nsight.rows.Row(kernel="void k(float *)", values={"gpu__time_duration.sum": 1000.0, "dram__bytes.sum": 1e6})
    cut = nsight.rows.Row(kernel="cut", incomplete=True, values={"gpu__time_duration.sum": -1.0})
    assert nsight.checks.check_rows([ok, cut], "rep") == ([ok, cut], [])
    bad = nsight.rows.Row(kernel="void k(float *)", values={"gpu__time_duration.sum": 5.0, "dram__bytes.sum": -1.0})
    rows, notes = nsight.checks.check_rows([ok, bad], "rep")
    assert rows == [ok, bad] and bad.left_out and not ok.left_out and notes == ["1 launch left out for a damaged figure in a metric the roofline reads (the "
                                      "report is damaged): launch 1 (k): dram__bytes.sum is -1, below zero"]
    bad.left_out = False
    with pytest.raises(UsageError, match=r"^rep: launch 0 \(k\): dram__bytes.sum is -1, below zero; "):
        nsight.checks.check_rows([bad], "rep")
    day = nsight.rows.Row(kernel="void k(float *)", values={"gpu__time_duration.sum": 2 * 86_400e9})
    with pytest.raises(UsageError, match=r"launch 0 \(k\): gpu__time_duration.sum gives 172,800 s, longer than"):
        nsight.checks.check_rows([day], "rep")


def test_an_ambiguous_decimal_mark_is_said_and_a_csv_named_ncu_rep_is_read(tmp_path):
    cells = ["117.344", "2", "512"]
    assert nsight.dialect.ambiguous_marks(cells) == "117.344" and nsight.dialect.ambiguous_marks(cells + ["65,77"]) is None
    report = tmp_path / "export.ncu-rep"
    report.write_bytes((FORMS / "section-raw.csv").read_bytes())
    r = invoke("profile", "--import", report, "--out", tmp_path / "p.json")
    assert r.exit_code == 0, r.output


def test_every_spelling_of_the_instruction_counts_and_of_the_time():
    """The sm__ roll-up of the FP64 counts (how a public CC 8.9 details export spells them), the
    counts without _pred_on (with a note), and the duration as any unit's elapsed cycles over its
    rate (a public A100 `--metrics` export has only smsp__cycles_elapsed.avg and its rate)."""
    from roofline.nsight import metrics as m

    rollup = m.read({"sm__sass_thread_inst_executed_op_dfma_pred_on.sum": 1e9,
                     "sm__sass_thread_inst_executed_op_dadd_pred_on.sum": 2e8,
                     "sm__sass_thread_inst_executed_op_dmul_pred_on.sum": 0.0, m.TIME: 1e6})
    assert rollup.value("fp64") == 2.2e9 and rollup.quantities["fp64"].counted
    assert "sm__sass_thread_inst_executed_op_dfma_pred_on.sum x 2" in rollup.quantities["fp64"].source
    plain = m.read({"smsp__sass_thread_inst_executed_op_ffma.sum": 5e8, m.TIME: 1e6})
    assert plain.value("fp32") == 1e9
    assert any("counts predicated-off threads too" in n for n in plain.notes)
    both = m.read({"smsp__sass_thread_inst_executed_op_ffma.sum": 5e8,
                   "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 4e8, m.TIME: 1e6})
    assert both.value("fp32") == 8e8 and not both.notes  # a _pred_on count wins
    cycles = m.read({"smsp__cycles_elapsed.avg": 1_980_000.0, "smsp__cycles_elapsed.avg.per_second": 1.98e9})
    assert cycles.value("time") == pytest.approx(1e6)  # ns
    assert cycles.quantities["time"].source == "smsp__cycles_elapsed.avg / smsp__cycles_elapsed.avg.per_second"
    dram = m.read({"dram__cycles_elapsed.max": 3_000_000.0, "dram__cycles_elapsed.avg.per_second": 3e9})
    assert dram.value("time") == pytest.approx(1e6)


def test_a_counter_as_its_mean_over_instances_and_as_a_share_of_its_peak():
    """`.avg` times the unit's instances (its cycles' sum over their mean, or the SM count and
    four sub-partitions per SM), and `.pct_of_peak_sustained_elapsed` with the peak beside it:
    the figures hand-worked below, each read only after every exact count."""
    from roofline.nsight import metrics as m

    t = {m.TIME: 1e6}
    # 132 SMs x 4 sub-partitions = 528; 1e6 FFMA per sub-partition on average: 1.056e9 FLOPs
    avg = m.read({**t, "smsp__sass_thread_inst_executed_op_ffma_pred_on.avg": 1e6, "launch__sm_count": 132.0})
    assert avg.value("fp32") == pytest.approx(2 * 528e6)
    assert "528 SM sub-partitions" in avg.quantities["fp32"].source and not avg.quantities["fp32"].counted
    # DRAM: 24 instances (cycles 2,400,000 / 100,000), 1 MB each on average
    dram = m.read({**t, "dram__bytes.avg": 1e6, "dram__cycles_elapsed.sum": 2.4e6, "dram__cycles_elapsed.avg": 1e5})
    assert dram.value("dram") == pytest.approx(24e6)
    assert dram.quantities["dram"].source == "dram__bytes.avg x 24 instances (dram__cycles_elapsed.sum / .avg)"
    # 40 % of a peak of 5,120 B/cycle over 100,000 elapsed cycles: 204.8 MB
    pct = m.read({**t, "lts__t_bytes.sum.pct_of_peak_sustained_elapsed": 40.0, "lts__t_bytes.sum.peak_sustained": 5120.0,
                  "lts__cycles_elapsed.avg": 1e5})
    assert pct.value("l2") == pytest.approx(204.8e6)
    assert "lts__t_bytes.sum.peak_sustained" in pct.quantities["l2"].source
    no_peak = m.read({**t, "lts__t_bytes.sum.pct_of_peak_sustained_elapsed": 40.0, "lts__cycles_elapsed.avg": 1e5})
    assert no_peak.value("l2") is None and "l2" in no_peak.missing  # a share alone is no figure
    exact = m.read({**t, "dram__bytes.sum": 5e6, "dram__bytes.avg": 1e6, "launch__sm_count": 132.0,
                    "dram__cycles_elapsed.sum": 2.4e6, "dram__cycles_elapsed.avg": 1e5})
    assert exact.value("dram") == 5e6 and exact.quantities["dram"].counted  # the count wins
    for name in ("dram__bytes.avg", "lts__t_bytes.sum.pct_of_peak_sustained_elapsed", "lts__t_bytes.sum.peak_sustained",
                 "sm__ops_path_tensor_src_bf16.avg.per_second", "sm__sass_thread_inst_executed_op_dfma_pred_on.avg"):
        assert m.reads(name), name


@pytest.mark.parametrize("shown, exact, said", [("8.19", 8192, True), ("49.15", 49152, True), ("213.19", 213190, False),
                                                ("0", 0, False)])
def test_a_size_printed_rounded_is_read_as_what_it_rounds(shown, exact, said):
    """The details page prints Triton's 8,192 B of dynamic shared memory as 8.19 Kbyte/block: the
    multiple of sm_90's 128 B allocation granule within the printed step (5 B) is the size; where
    none is (213.19 Kbyte), the byte it rounds; a size in bytes is exact."""
    rows = _rows(FORMS / "full-details.csv")
    header, body = rows[0], [r for r in rows[1:] if len(r) > 14]
    launch = body[0][0]
    for r in body:
        if r[0] == launch and r[12] == "Dynamic Shared Memory Per Block":
            r[13], r[14] = ("byte/block" if shown == "0" else "Kbyte/block"), shown
    report = nsight.pages.parse_csv(_csv([header] + [r for r in body if r[0] == launch]), "d.csv")
    got = report.rows[0].reading.quantities["dynamic_smem"]
    assert got.value == exact
    assert ("printed rounded" in got.source) == said


def test_a_compressed_report_is_read_as_it_is(tmp_path):
    """A raw export kept as .csv.gz, the corpus's text kept as .txt.xz: unpacked by their first
    bytes and read like the files inside them; a gzip cut short is refused in one line."""
    import gzip

    plain = _imported(str(FORMS / "section-raw.csv"), None, str(tmp_path))[0]
    packed = tmp_path / "section-raw.csv.gz"
    packed.write_bytes(gzip.compress((FORMS / "section-raw.csv").read_bytes()))
    doc = _imported(str(packed), None, str(tmp_path))[0]
    assert [(k.name, k.time_ms) for k in doc.kernels] == [(k.name, k.time_ms) for k in plain.kernels]
    assert len(doc.kernels) == 7
    text = _imported(str(FIXTURES / "ncu" / "corpus" / "llama" / "basic.txt.xz"), "h200", str(tmp_path))[0]
    assert text.launches_profiled == 15  # its 15 launch lines
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(packed.read_bytes()[:-40])
    one_line_error(invoke("profile", "--import", cut, "--out", tmp_path / "p.json"),
                   "a gzip file that does not unpack whole (cut short or damaged")


@pytest.mark.parametrize("printed", [
    "==PROF== Connected to process 4242 (/usr/bin/python3)\ndone\n==PROF== Disconnected from process 4242\n"
    "==WARNING== No kernels were profiled.\n",
    '==PROF== Connected to process 4242 (/usr/bin/python3)\n==WARNING== No kernels were profiled.\n'
    '==WARNING== Profiling kernels launched by child processes requires the --target-processes all option.\n'])
def test_ncu_output_of_no_kernel_says_so(printed, tmp_path):
    for name in ("report.csv", "report.txt"):  # `ncu --csv ... > report.csv`, `ncu ./app > report.txt`
        report = tmp_path / name
        report.write_text(printed)
        one_line_error(invoke("profile", "--import", report, "--out", tmp_path / "p.json"), "ncu profiled no kernel")


def test_import_is_given_once(tmp_path):
    result = invoke("profile", "--import", FORMS / "section-raw.csv", "--import", FORMS / "full-raw.csv",
                    "--out", tmp_path / "p.json")
    one_line_error(result, "--import takes one report, given 2")
    assert not (tmp_path / "p.json").exists()


def test_a_hint_never_repeats_what_the_report_was_made_with(tmp_path):
    """The basic set's text with --print-details all lacks the FP32 counts: it is told which
    section brings them, not to add --print-details all; the same text without the bodies is
    told both. A raw page lacking the FP16 counts is not told to export as --page raw."""
    corpus = FIXTURES / "ncu" / "corpus" / "llama"
    bodies = _imported(str(corpus / "basic-all.txt.xz"), "h200", str(tmp_path))[0]
    plain = _imported(str(corpus / "basic.txt.xz"), "h200", str(tmp_path))[0]
    hint = {k: v for x in bodies.kernels for k, v in x.missing.items()}
    assert hint["fp32"] == "--section SpeedOfLight_RooflineChart or --set full (FP32 instruction counts)"
    assert not any("--print-details all" in v for v in hint.values())
    assert any("--print-details all" in v for x in plain.kernels for v in x.missing.values())
    raw = _imported(str(FORMS / "section-raw.csv"), None, str(tmp_path))[0]
    hints = {k: v for x in raw.kernels for k, v in x.missing.items()}
    assert hints["fp16"] == "--section SpeedOfLight_HierarchicalHalfRooflineChart or --set full (HFMA/HADD/HMUL counts)"
    assert not any("--page raw" in v or "--print-details all" in v for v in hints.values())


ROOFLINE_SECTION_TEXT = """\
  void scale_kernel<float>(float *, unsigned long) (2048, 1, 1)x(512, 1, 1), Context 1, Stream 7, Device 0, CC 7.5
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    DRAM Frequency                  Ghz         5.00
    SM Frequency                    Ghz         1.50
    Elapsed Cycles                cycle      900,000
    Duration                         us       600.00
    ----------------------- ----------- ------------

    Section: GPU Speed Of Light Roofline Chart (Overview)
    ----------------------------------------------------------- ----------- ------------
    Metric Name                                                 Metric Unit Metric Value
    ----------------------------------------------------------- ----------- ------------
    Theoretical Predicated-On FFMA Thread Instructions Executed  inst/cycle          896
    Predicated-On FFMA Thread Instructions Executed Per Cycle    inst/cycle        28.46
    ----------------------------------------------------------- ----------- ------------
"""


def test_a_report_made_with_the_roofline_section_is_not_told_to_add_it(tmp_path):
    """A Turing text made with --section SpeedOfLight_RooflineChart prints FFMA as a rate per
    cycle without the cycles that scale it (the shape of a public MX450 paste): its FP32 count is
    still missing, and the hint points past the section it was made with, to --set full."""
    path = tmp_path / "turing.txt"
    path.write_text(ROOFLINE_SECTION_TEXT)
    doc = _imported(str(path), "t4", str(tmp_path))[0]
    hints = {k: v for x in doc.kernels for k, v in x.missing.items()}
    assert hints["fp32"].startswith("--set full") and "SpeedOfLight_RooflineChart" not in hints["fp32"], hints
    assert "SpeedOfLight_RooflineChart" not in hints.get("dram", ""), hints


def test_importing_one_of_roofline_s_own_files_or_a_trace_names_what_it_is(tmp_path):
    """A results file, a grade file or a PyTorch trace (gzip) given to profile --import is named,
    with the command that reads it, in one line."""
    plots, traces = FIXTURES.parent.parent / "plots", FIXTURES / "traces" / "public"
    for path, needle in ((plots / "results-h200.json", "a roofline file (results, profile or grade)"),
                         (plots / "grades-h200.json", "which `roofline show`, `plot` and `compare` read"),
                         (traces / "sampled_rank-0.json.gz", "a PyTorch profiler trace, which `roofline show` and `comms` read")):
        one_line_error(invoke("profile", "--import", path, "--out", tmp_path / "p.json"), needle)
    assert not (tmp_path / "p.json").exists()
    # the same file cut short is said to be broken, not named a roofline file it no longer is
    cut = tmp_path / "cut.json"
    cut.write_bytes((plots / "results-h200.json").read_bytes()[:3000])
    one_line_error(invoke("profile", "--import", cut, "--out", tmp_path / "p.json"),
                   "cut.json: JSON that does not parse (cut short or damaged; it begins as a roofline file")
    empty = tmp_path / "empty.csv"
    empty.write_text("\n")
    one_line_error(invoke("profile", "--import", empty, "--out", tmp_path / "p.json"), "empty.csv: the file is empty")


def test_a_report_the_python_reader_fails_on_is_read_from_the_csv_export_saying_why(monkeypatch, tmp_path):
    """The report reader's child dies (as a mismatched ncu_report can): the report is read through
    ncu's CSV export, and the note says why the reader failed and what the export lacks."""
    from roofline import child
    from roofline.nsight import binary

    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"NVR\x00rest")
    raw = (FIXTURES / "ncu" / "cupy-h200-base.csv").read_text()
    monkeypatch.setattr(binary, "_ncu_report_module", lambda: object())
    monkeypatch.setattr(binary.child, "ask", lambda *a, **k: child.Reply(failure="died", why="signal 11",
                                                                         returncode=-11,
                                                                         stderr_tail="Segmentation fault"))
    monkeypatch.setattr(binary, "export_raw", lambda path: raw)
    monkeypatch.setattr(binary.shutil, "which", lambda name: "/usr/bin/ncu")
    rows = binary.read_report(report)
    assert rows.rows and rows.read_with == "ncu --import --csv --page raw"
    assert ("Nsight Compute's Python report interface could not read it (exit code -11: Segmentation fault): read "
            "through ncu's CSV export, which holds no PM sampling") in rows.notes


def test_an_export_cut_short_inside_its_header_row_is_called_truncated(tmp_path):
    # full-raw.csv's header row alone is longer than the copy that was made of it
    text = (FORMS / "full-raw.csv").read_text()
    header_end = text.index("\n", text.index('"ID"'))
    cut = tmp_path / "cut.csv"
    cut.write_text(text[:header_end // 2])
    one_line_error(invoke("profile", "--import", cut, "--out", tmp_path / "p.json"),
                   "cut short inside its header row (a truncated file?)")
    assert not (tmp_path / "p.json").exists()


def test_a_details_export_cut_inside_a_row_says_which_row_it_left_out(tmp_path):
    # the file ends inside the last launch's Duration row (a copy cut short): that row is left out and said to
    # be, as a raw export's cut row is, not dropped in silence with the time worked out another way
    text = (FORMS / "full-details.csv").read_text()
    at = text.rindex('"Duration"')
    cut = text[:at + len('"Duration","us","1')]
    r = invoke("profile", "--import", _with(FORMS, tmp_path, "cut.csv", cut), "--gpu", "h200", "--out", tmp_path / "p.json")
    assert r.exit_code == 0, r.output
    assert "the export ends inside a quoted value (cut short?): its last row (Duration of launch" in r.stderr


def test_a_profile_of_another_program_replaced_by_an_import_is_named(tmp_path):
    # --out a profile of GPT-2's step: an import may replace it (a profile replaces a profile), and says what it held
    import shutil

    out = tmp_path / "profile.json"
    shutil.copy(FIXTURES.parent.parent / "plots" / "profile-h200-gpt2.json", out)
    report = FIXTURES / "ncu" / "cupy-h200-base.csv"
    got = invoke("profile", "--import", report, "--out", out)
    assert got.exit_code == 0, got.output
    assert f"{out} held the profile of python3 examples/gpt2_step.py, which this one of cupy-h200-base.csv replaced" \
        in " ".join(got.stderr.split())
    again = invoke("profile", "--import", report, "--out", out)  # the same report again: nothing lost, no note
    assert again.exit_code == 0 and "held the profile" not in again.stderr
