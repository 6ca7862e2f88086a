"""The corpus of real reports (tests/fixtures/ncu/corpus, made on an H200 with ncu 2025.3.1 by
`bash bench/ncu_corpus.sh`): one step of each program of examples/corpus.py, whose kernels come
from libraries no one on this project wrote (cuDNN attention, convolutions and batch norms,
CUTLASS inside cuDNN, nvjet, cuBLAS and cuBLASLt GEMMs, Inductor's Triton kernels, PyTorch's
native and fused-optimizer kernels, CUB, cuFFT, CuPy; Hugging Face Llama, BERT, ViT and T5,
torchvision's ResNet-18), profiled by `roofline profile` (roofline.json, the reference)
and by ncu under `--set full`, its default set and `--set roofline`, each report exported in every
form (raw and details CSV, ncu's text output with and without the sections' bodies, the binary
report), and the default set's text as ncu printed it around the program's own output
(basic-live.txt: another run). Every form of every report is imported and held, kernel by kernel (by launch order), against
the reference for each figure the form carries, and against "missing" where it lacks one.

The reference is another run of the same program: figures that move between runs are held within
the issue's tolerances (work 0.5 %, bytes 2 %, time 10 % or 1 us a launch), except L2 bytes,
which moved between runs by up to 2.8 % for the one nvjet FP8 GEMM and 3.6 % for ResNet's CUTLASS
fprop convolution inside cuDNN (lts__t_sectors.sum x 32 in --set full against lts__t_bytes.sum in
the reference; the forms of one report agree exactly): 4 % there.
"""

from __future__ import annotations

import csv
import io
import json
import lzma
import math
import re
from pathlib import Path

import pytest

from roofline.commands import profile as profile_cmd
from roofline.errors import UsageError
from roofline.results import store

CORPUS = Path(__file__).resolve().parent / "fixtures" / "ncu" / "corpus"
PROGRAMS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
SETS = ("full", "basic", "rooflineset")
CSV_FORMS = ("-raw.csv", "-raw-base.csv", "-details.csv", "-details-all.csv")
WORK_TOLERANCE, BYTES_TOLERANCE, L2_TOLERANCE, TIME_TOLERANCE = 0.005, 0.02, 0.04, 0.10
SMEM_DISPLAY_HALF_STEP = 5  # bytes: "213.19 Kbyte/block"


def _unpacked(tmp_path: Path, program: str, name: str) -> Path:
    out = tmp_path / name
    out.write_bytes(lzma.decompress((CORPUS / program / f"{name}.xz").read_bytes()))
    return out


def _reference(program: str):
    doc = json.loads(lzma.decompress((CORPUS / program / "roofline.json.xz").read_bytes()))
    return store.parse(doc, f"{program}/roofline.json", profile=True)


def _unsuffixed(name: str) -> str:
    return re.sub(r" #\d+$", "", name)


def _disagreements(reference, doc, display: bool = False) -> list[str]:
    """Each figure of `doc` that neither agrees with `reference` nor is said to be missing
    (`display`: the form prints sizes rounded, as the details page does)."""
    ours = {tuple(k.launch_order): k for k in doc.kernels}
    theirs = {tuple(k.launch_order): k for k in reference.kernels}
    bad = [f"launches {sorted(set(theirs) ^ set(ours))} in one only"] if set(ours) != set(theirs) else []
    for key, ref in theirs.items():
        got = ours.get(key)
        if got is None:
            continue
        if _unsuffixed(got.name) != _unsuffixed(ref.name):  # the reference's '#2' came by time, before launch order
            bad.append(f"launch {key}: {got.name} against {ref.name}")
        if abs(got.time_ms - ref.time_ms) > max(TIME_TOLERANCE * ref.time_ms, 1e-3 * ref.launches):
            bad.append(f"{ref.name}: {got.time_ms:.6g} ms against {ref.time_ms:.6g}")
        for figure in ("registers", "static_smem_bytes", "dynamic_smem_bytes", "grid", "block"):
            mine, theirs = getattr(got, figure), getattr(ref, figure)
            # the details page prints sizes in Kbyte to two decimals: within 5 B of the byte count
            step = SMEM_DISPLAY_HALF_STEP if figure.endswith("smem_bytes") and display else 0
            if mine is not None and mine != theirs and not (step and abs(mine - theirs) <= step):
                bad.append(f"{ref.name}: {figure} {mine} against {theirs}")
        if got.occupancy is not None and got.occupancy.active_blocks_per_sm != ref.occupancy.active_blocks_per_sm:
            bad.append(f"{ref.name}: {got.occupancy.active_blocks_per_sm} blocks per SM against "
                       f"{ref.occupancy.active_blocks_per_sm}")
        missing = " ".join(got.missing or {})
        for kind, figures, tolerance in (("work", ref.flops or {}, WORK_TOLERANCE), ("bytes", ref.bytes or {}, None)):
            mine = dict((got.flops if kind == "work" else got.bytes) or {})
            for figure, value in figures.items():
                if figure not in mine and (figure in missing or (kind == "bytes" and "smem" == figure)):
                    continue  # said to be missing
                if figure not in mine and kind == "bytes":
                    bad.append(f"{ref.name}: {figure} neither read nor said missing")
                    continue
                mine.setdefault(figure, 0.0)  # work a kernel's file leaves out is none (a rate printed 0.00)
                rel = tolerance if tolerance is not None else L2_TOLERANCE if figure == "l2" else BYTES_TOLERANCE
                if not math.isclose(mine[figure], value, rel_tol=rel, abs_tol=1024 * ref.launches):
                    bad.append(f"{ref.name}: {figure} {mine[figure]:,.6g} against {value:,.6g}")
    return bad


TEXT_FORMS = (".txt", "-all.txt")  # ncu -i REPORT, and with --print-details all
CASES = [pytest.param(program, s + form, id=f"{program}-{s}{form}")
         for program in PROGRAMS for s in SETS for form in (*CSV_FORMS, *TEXT_FORMS, ".ncu-rep")]
CASES += [pytest.param(program, "basic-live.txt", id=f"{program}-basic-live.txt") for program in PROGRAMS]


def test_the_corpus_is_there():
    assert {"adamw", "attention", "bert", "compiled", "cupy", "fp8", "llama", "resnet", "t5", "vit"} <= set(PROGRAMS)
    for program in PROGRAMS:
        assert (CORPUS / program / "roofline.json.xz").exists()
        for s in SETS:
            for form in (*CSV_FORMS, *TEXT_FORMS, ".ncu-rep"):
                assert (CORPUS / program / f"{s}{form}.xz").exists(), (program, s, form)


@pytest.mark.parametrize("program, name", CASES)
def test_every_form_of_every_report_agrees_with_roofline_profile(program, name, tmp_path):
    if name.endswith(".ncu-rep"):
        pytest.importorskip("ncu_report", reason="reading a .ncu-rep takes the ncu-report package (the test extra)")
    report = _unpacked(tmp_path, program, name)
    printed = "-details" in name or name.endswith(".txt")  # the details page and the text: sizes rounded
    gpu = "h200" if printed else None  # neither holds device attributes
    profile_cmd.import_profile(report, tmp_path / "p.json", gpu)
    doc = store.load(tmp_path / "p.json", profile=True)
    reference = _reference(program)
    assert _disagreements(reference, doc, display=printed) == []
    assert doc.device.name in ("NVIDIA H200", "H200")  # the report's own name, or the preset's


def test_a_cudnn_kernels_negative_sub_metric_leaves_the_report_whole(tmp_path):
    """cuDNN's flash attention kernel carries lts__t_sectors_srcunit_tex_op_red_lookup_hit.sum =
    -1 under --set full: no figure a roofline reads, so no launch is left out."""
    report = _unpacked(tmp_path, "attention", "full-raw.csv")
    rows = list(csv.reader(report.read_text().splitlines()))
    column = rows[0].index("lts__t_sectors_srcunit_tex_op_red_lookup_hit.sum")
    assert any(float(r[column]) < 0 and r[4].startswith("cudnn_generated") for r in rows[2:])
    done = profile_cmd.import_profile(report, tmp_path / "p.json")
    assert not any("damaged" in n for n in done.notes)
    kernels = store.load(tmp_path / "p.json", profile=True).kernels
    assert any(k.name.startswith("cudnn_generated_fort_native_sdpa_sm90_flash") for k in kernels)


def _resaved(data: bytes, how: str) -> bytes:
    text = data.decode()
    if how == "cut":
        return data[: len(data) // 2]
    if how == "utf16":
        return text.encode("utf-16")
    if how == "crlf":
        return text.replace("\n", "\r\n").encode()
    if how == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if how in ("spreadsheet", "locale"):  # saved again by a spreadsheet: quotes only where needed; or a
        out = io.StringIO()                # comma-decimal locale's: ';' between cells, decimal commas
        writer = csv.writer(out, delimiter=";" if how == "locale" else ",", lineterminator="\r\n")
        for row in csv.reader(text.splitlines()):
            if how == "locale":
                row = [c.replace(",", "").replace(".", ",") if re.fullmatch(r"[-+]?[\d,]*\.?\d+(e[-+]?\d+)?", c) else c
                       for c in row]
            writer.writerow(row)
        return out.getvalue().encode("cp1252" if how == "locale" else "utf-8", errors="replace")
    raise ValueError(how)


@pytest.mark.parametrize("how", ["cut", "utf16", "crlf", "bom", "spreadsheet", "locale"])
@pytest.mark.parametrize("name", ["full-raw.csv", "full-details-all.csv", "full-all.txt", "basic-live.txt"])
def test_a_form_saved_again_badly_is_read_or_refused_in_one_line(name, how, tmp_path):
    """Every form of the corpus cut short, re-encoded or re-lined: read (what survives of it) or
    refused in one line with exit 2; never a traceback, and the report never overwritten."""
    from typer.testing import CliRunner

    from roofline.cli import app

    path = tmp_path / name
    data = _resaved(lzma.decompress((CORPUS / "attention" / f"{name}.xz").read_bytes()), how)
    path.write_bytes(data)
    args = ["profile", "--import", str(path), "--out", str(tmp_path / "p.json")]
    r = CliRunner().invoke(app, args + (["--gpu", "h200"] if "details" in name or name.endswith(".txt") else []))
    assert r.exit_code in (0, 2) and "Traceback" not in r.output and isinstance(r.exception, (SystemExit, type(None)))
    if r.exit_code == 2:
        assert len(r.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == data


@pytest.mark.parametrize("how", ["spreadsheet", "locale"])
@pytest.mark.parametrize("name", ["full-raw.csv", "basic-raw-base.csv", "full-details.csv", "rooflineset-details-all.csv"])
def test_a_csv_saved_again_by_a_spreadsheet_or_in_another_locale_reads_the_same(name, how, tmp_path):
    """A CSV export opened and saved again by a spreadsheet (minimal quoting, CRLF), or in a
    comma-decimal locale (';' between cells, '0,5' for 0.5, Windows-1252): the same figures."""
    path = tmp_path / name
    path.write_bytes(_resaved(lzma.decompress((CORPUS / "compiled" / f"{name}.xz").read_bytes()), how))
    printed = "details" in name
    profile_cmd.import_profile(path, tmp_path / "p.json", "h200" if printed else None)
    assert _disagreements(_reference("compiled"), store.load(tmp_path / "p.json", profile=True), display=printed) == []


@pytest.mark.xdist_group("corpus_chart")
def test_the_charts_bars_say_where_a_grid_keeps_part_of_the_gpu_busy():
    """The Llama step's 2-block cuBLAS SGEMM (cutlass_80_simt_sgemm_128x32) keeps 1.5 % of the
    H200's block slots busy: its bar reads its roof on the busy SMs and gives the whole GPU's
    share beside it, as its verdict does; a kernel that fills the GPU gets no such words."""
    from roofline.render.profile_chart import render

    doc = _reference("llama")
    fig = render(doc)
    texts = [t.get_text() for t in fig.findobj(match=lambda a: hasattr(a, "get_text"))]
    small = next(k for k in doc.kernels if k.name.startswith("cutlass_80_simt_sgemm_128x32"))
    v = doc.verdict(small)
    share = 100 / v.times_floor
    assert any(f"{share:.0f}% of" in t and f"on busy SMs,\n{share * v.waves.utilization:.0f}% of the GPU's" in t
               for t in texts)
    assert sum("on busy SMs" in t for t in texts) < len(doc.kernels)


def test_a_clock_read_above_the_gpus_maximum_is_read_at_the_maximum(tmp_path):
    """ncu's elapsed cycles per second of the Llama step's 2-5 us kernels read up to 2,257 MHz on
    an H200 that tops out at 1,980 MHz: their roofs are read at 1,980, with a note naming the
    reading."""
    report = _unpacked(tmp_path, "llama", "full-raw.csv")
    profile_cmd.import_profile(report, tmp_path / "p.json")
    doc = store.load(tmp_path / "p.json", profile=True)
    assert max(k.clock_mhz for k in doc.kernels if k.clock_mhz) <= 1.03 * 1980  # within 3 %: a reading, kept
    said = [n for k in doc.kernels for n in k.notes if "above NVIDIA H200's maximum of 1,980 MHz" in n]
    assert said and all("its roofs are read at the maximum" in n for n in said)


@pytest.mark.parametrize("name, named", [("full-all.txt", True), ("full-details-all.csv", True), ("full.txt", False),
                                         ("basic-details.csv", False)])
def test_a_report_that_names_its_gpu_is_read_against_its_preset(name, named, tmp_path):
    """With the sections' bodies, --set full's NUMA Affinity section names the GPU ('1 (NVIDIA
    H200)'): a report without device attributes is read against that preset (its compute
    capability and SM count the report's); without it, --gpu is asked for, naming the presets."""
    report = _unpacked(tmp_path, "cupy", name)
    if named:
        profile_cmd.import_profile(report, tmp_path / "p.json")
        device = store.load(tmp_path / "p.json", profile=True).device
        assert device.name == "H200" and "the report names this GPU (NVIDIA H200)" in device.source
    else:
        with pytest.raises(UsageError, match="does not say which GPU it ran on .it gives compute capability 9.0.*h200"):
            profile_cmd.import_profile(report, tmp_path / "p.json")


OCCUPANCY_LIMITS = {"registers": "launch__occupancy_limit_registers", "shared_memory": "launch__occupancy_limit_shared_mem",
                    "warps": "launch__occupancy_limit_warps", "blocks": "launch__occupancy_limit_blocks"}


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("form", ["full-raw.csv", "full-details.csv", "basic-all.txt"])
def test_each_kernels_block_limits_are_ncus_own(program, form, tmp_path):
    """Every kernel's block limits (registers, shared memory in the launch's configured carveout,
    warps, blocks) are the ones Nsight Compute's own calculator gave its first launch
    (`launch__occupancy_limit_*` of --set full), in every form that carries the carveout: a
    reduction asking 2,064 B in a 32 KB carveout fits 10 blocks, not the 72 the SM's 228 KB
    would hold."""
    raw = list(csv.DictReader(lzma.decompress((CORPUS / program / "full-raw.csv.xz").read_bytes()).decode()
                              .splitlines()))[1:]  # the unit row
    report = _unpacked(tmp_path, program, form)
    profile_cmd.import_profile(report, tmp_path / "p.json", None if form.endswith("raw.csv") else "h200")
    kernels = store.load(tmp_path / "p.json", profile=True).kernels
    checked = 0
    for k in kernels:
        if k.occupancy is None:
            continue
        theirs = raw[min(k.launch_order)]
        assert k.demangled == theirs["Kernel Name"]
        assert k.occupancy.block_limits == {r: int(float(theirs[m])) for r, m in OCCUPANCY_LIMITS.items()}, k.name
        checked += 1
    assert checked == len(kernels)


@pytest.mark.parametrize("name", ["full-details.csv", "basic-details-all.csv"])
def test_a_details_page_cut_between_two_rows_loses_its_last_launch_with_a_note(name, tmp_path):
    """A file cut between two rows leaves no quote open: the last launch, which lacks the row
    every other launch ends with, is said to be cut short and left out, not read half."""
    whole = _unpacked(tmp_path, "llama", name)
    lines = whole.read_text().splitlines(keepends=True)
    cut = tmp_path / f"cut-{name}"
    last = lines[-1].split(",", 1)[0]  # the last launch's ID cell
    first_of_last = next(i for i, line in enumerate(lines) if line.split(",", 1)[0] == last)
    cut.write_text("".join(lines[:(first_of_last + len(lines)) // 2]))  # half of the last launch's rows
    kept = profile_cmd.import_profile(whole, tmp_path / "a.json", "h200")
    done = profile_cmd.import_profile(cut, tmp_path / "b.json", "h200")
    assert not any("cut short" in n for n in kept.notes)
    assert any(n.startswith("1 report row left out: cut short (a truncated file?): launch ") for n in done.notes)
    assert done.results.launches_profiled == kept.results.launches_profiled - 1
    assert any("the raw page of the same report has every counter it holds" in n for n in kept.notes)


@pytest.mark.parametrize("width", [80, 120])
def test_the_flags_a_user_must_type_are_never_cut(width, tmp_path):
    """The table of what a report lacks names the sections and metrics to collect: at 80 and 120
    columns each one is printed whole (folded onto the next line where it is longer than its
    column), never cut."""
    from rich.console import Console

    from roofline.render.tables import missing_tables

    report = _unpacked(tmp_path, "llama", "full-details.csv")
    profile_cmd.import_profile(report, tmp_path / "p.json", "h200")
    console = Console(width=width, record=True, soft_wrap=False)
    for table in missing_tables(store.load(tmp_path / "p.json", profile=True), width):
        console.print(table)
    printed = console.export_text()
    assert max(len(line) for line in printed.splitlines()) <= width
    lines = printed.splitlines()
    head = next(i for i, line in enumerate(lines) if "where to get it" in line)
    start = lines[head].index("where to get it")
    column = [line[start:] for line in lines[head + 2:]]  # the column alone, its lines in order
    joined = "".join("".join(column).split())  # a word folded over two lines reads whole once the breaks go
    for flag in ("--section SpeedOfLight_HierarchicalTensorRooflineChart", "--section SpeedOfLight_RooflineChart",
                 "--metrics smsp__sass_data_bytes_mem_shared.sum", "--print-details all"):
        assert "".join(flag.split()) in joined, flag


@pytest.mark.parametrize("name", ["full-details-all.csv", "basic-all.txt", "rooflineset-details-all.csv"])
def test_a_busy_tensor_pipe_whose_operations_no_form_counts_is_said(name, tmp_path):
    """An FP8 GEMM (cuBLAS's nvjet qqtst kernel, H200) exported with the sections' bodies: the tensor
    pipe busy in 70 % of its cycles by the SpeedOfLight breakdown, no tensor operation counted, its
    epilogue's FP32 work counted. The kernel keeps that reading, with a note that its tensor roof may
    bind instead; the raw page, which counts the FP8 operations, has no such note."""
    profile_cmd.import_profile(_unpacked(tmp_path, "fp8", name), tmp_path / "p.json", gpu="h200")
    (k,) = store.load(tmp_path / "p.json", profile=True).kernels
    said = [n for n in k.notes if n.startswith("its tensor pipe was busy in 70 % of its cycles")]
    assert len(said) == 1 and "its tensor roof may bind" in said[0], k.notes
    profile_cmd.import_profile(_unpacked(tmp_path, "fp8", "full-raw.csv"), tmp_path / "raw.json")
    (raw,) = store.load(tmp_path / "raw.json", profile=True).kernels
    assert raw.precision == "fp8" and not any("tensor pipe" in n for n in raw.notes)
