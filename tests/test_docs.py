"""The README and docs/ against the committed results they quote.

Three kinds of check: a block marked `<!-- excerpt of: roofline ARGS -->` holds only lines the
command prints from the committed files (whitespace aside, so that a table may wrap); each figure
the prose quotes from a results file is worked out again from that file; every relative link
points at a file of the repository. A figure that goes stale, or a table printed by an older
release, fails here."""

import json
import re
import shlex
import statistics
from functools import lru_cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.model import presets

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXCERPT = re.compile(r"<!-- excerpt of: roofline (.+?) -->\n```[a-z]*\n(.*?)```", re.S)


def _squash(text: str) -> str:
    return " ".join(text.split())


@lru_cache(maxsize=None)
def _output(args: str) -> str:
    """What `roofline ARGS` prints, run from the repository root at 200 columns."""
    result = CliRunner().invoke(app, shlex.split(args), env={"COLUMNS": "200"},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return _squash(result.output)


def _load(name: str) -> dict:
    return json.loads((ROOT / "plots" / name).read_text())


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_excerpts_are_what_the_command_prints(doc, monkeypatch):
    monkeypatch.chdir(ROOT)
    for args, block in EXCERPT.findall(doc.read_text()):
        printed = _output(args)
        for line in block.splitlines():
            if line.strip():
                assert _squash(line) in printed, f"{doc.name}: `roofline {args}` no longer prints {line!r}"


def test_the_excerpts_are_found():
    counts = {doc.name: len(EXCERPT.findall(doc.read_text())) for doc in DOCS}
    assert counts["README.md"] == 2 and counts["h200-results.md"] == 3


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_links_point_at_files(doc):
    for target in re.findall(r"\]\(([^)#]+)\)", doc.read_text()):
        if "://" not in target:
            assert (doc.parent / target).exists(), f"{doc.name}: {target} does not exist"


def _pct(x: float) -> str:
    return f"{x:.1f}"


def _share(kernels, part: str) -> float:
    return sum(k["time_share"] for k in kernels if part in k["name"])


def _by_round(timing: dict, full_clock: bool) -> dict[int, float]:
    """A timing's median per round, only its unthrottled samples with `full_clock`."""
    per: dict[int, list[float]] = {}
    hot = timing.get("throttled") or [False] * len(timing["samples_ms"])
    for t, r, h in zip(timing["samples_ms"], timing["rounds"], hot):
        if not (full_clock and h):
            per.setdefault(r, []).append(t)
    return {r: statistics.median(ts) for r, ts in per.items()}


def _pct_full(kernel: dict, reference: dict) -> float:
    """% of cuBLAS from the rounds at full clock: per round the reference's median (that round's
    and the next's, averaged) over the kernel's, their median."""
    k, ref = _by_round(kernel["timing"], True), _by_round(reference["timing"], True)
    return statistics.median(100 * statistics.fmean([ref[x] for x in (r, r + 1) if x in ref]) / t
                             for r, t in sorted(k.items()) if r in ref or r + 1 in ref)


def _conditions(run: dict) -> tuple[str, int, int]:
    """The SM clock range every sample of a run (cuBLAS and its kernels) saw, and how many of its
    samples ran throttled, of how many."""
    timings = [run["reference"]["timing"], *(k["timing"] for k in run["kernels"])]
    clocks = [c for t in timings for c in t["sm_clock_mhz"]]
    low, high = min(clocks), max(clocks)
    return (f"{high:,}" if low == high else f"{low:,}–{high:,}",
            sum(sum(t["throttled"]) for t in timings), sum(len(t["throttled"]) for t in timings))


def _spread(samples: list[float]) -> float:
    """The interquartile range over the median, as `show` prints it."""
    q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return (q3 - q1) / median


def _best(kernels: list[dict]) -> dict:
    return max((k for k in kernels if k.get("verified")), key=lambda k: k["gflops"])


def _claims() -> list[tuple[str, str]]:
    """(doc, text) pairs: each text worked out from a committed results file."""
    run = _load("results-h200.json")
    dev = run["device"]
    by = {k["name"]: k for k in run["kernels"]}
    sweep = {(r["problem"]["m"], r["problem"]["n"], r["problem"]["k"]): r
             for f in ("sweep-h200.json", "shapes-h200.json") for r in _load(f)["sweep"]}
    user = next(k for k in _load("user-kernel-h200.json")["kernels"] if k.get("tile_source") == "user")
    prof = _load("profile-h200-transformer.json")
    pk = prof["kernels"]
    pdev = prof["device"]
    nvjet = [k for k in pk if "nvjet" in k["name"]]
    on_roof = [k for k in nvjet if k["time_share"] > 0.01]
    copy = next(k for k in pk if k["name"] == "unrolled_elementwise_kernel [direct_copy_kernel_cuda]")
    sdpa = [k["gflops"] for k in pk if "sdpa" in k["name"]]
    r2d = by["register_tiling_2d"]
    tiles = _load("tune-h200.json")["kernels"]
    slowest = min(tiles, key=lambda k: k["gflops"])
    claims = [
        ("README.md", f"at {round(_best(run['kernels'])['pct_of_reference'])} % of cuBLAS on an\n  H200"),
        ("method.md", f"On the H200: {dev['measured_dram_gbps']:,.0f} of {dev['peak_dram_gbps']:,.0f} GB/s "
                      f"({100 * dev['measured_dram_gbps'] / dev['peak_dram_gbps']:.0f} %) and\n  "
                      f"{dev['measured_fp32_gflops']:,.0f} of {dev['peak_fp32_gflops']:,.0f} GFLOP/s "
                      f"({100 * dev['measured_fp32_gflops'] / dev['peak_fp32_gflops']:.0f} %)"),
        ("method.md", f"DRAM {pdev['measured_dram_gbps']:,.0f} GB/s "
                      f"({100 * pdev['measured_dram_gbps'] / pdev['peak_dram_gbps']:.0f} %), "
                      f"L2 {pdev['measured_l2_gbps']:,.0f} GB/s "
                      f"({100 * pdev['measured_l2_gbps'] / pdev['peak_l2_gbps']:.0f} % of\n"
                      f"{pdev['peak_l2_gbps']:,.0f}"),
        ("method.md", f"shared memory {pdev['measured_smem_gbps']:,.0f} GB/s "
                      f"({100 * pdev['measured_smem_gbps'] / (pdev['sm_count'] * 128 * pdev['peak_clock_mhz'] / 1000):.0f} %), FP32 "
                      f"{pdev['measured_fp32_gflops']:,.0f} GFLOP/s "
                      f"({100 * pdev['measured_fp32_gflops'] / pdev['peak_fp32_gflops']:.0f} %), FP16 tensor "
                      f"{pdev['measured_peaks_gflops']['fp16_tensor'] / 1000:.0f} TFLOP/s "
                      f"({100 * pdev['measured_peaks_gflops']['fp16_tensor'] / pdev['peaks_gflops']['fp16_tensor']:.0f} %)"),
        ("h200-results.md", f"the model says {r2d['model']['gmem_bytes'] / 1e9:.2f} GB, Nsight Compute counted "
                            f"{r2d['measured']['l2_bytes'] / 1e9:.2f} GB through L2"),
        # today's waves model, as show reads the file (which recorded an older model's 0.41 GB)
        ("h200-results.md", f"0.39 GB by the waves model and {r2d['measured']['dram_bytes'] / 1e9:.2f} GB\ncounted"),
        ("h200-results.md", f"{_pct(by['full_tiles']['pct_of_reference'])} % of cuBLAS at\n4096³ and "
                            f"{_pct(next(k for k in sweep[8192, 8192, 8192]['kernels'] if k['name'] == 'full_tiles')['pct_of_reference'])}"
                            " % at 8192³"),
        ("h200-results.md", f"({dev['launch_latency_ms'] * 1000:.1f} µs on the H200"),
        ("h200-results.md", f"against the H200's {dev['l2_bytes'] / 2**20:.0f} MiB"),
        ("h200-results.md", f"ran\nat {user['gflops']:,.0f} GFLOP/s, {user['pct_of_reference']:.0f} % of cuBLAS, "
                            f"{user['registers']} registers, {100 * user['occupancy']['occupancy']:.0f} % occupancy"),
        ("h200-results.md", f"{sum(k['launches'] for k in pk)} launches of {len(pk)} kernels,\n"
                            f"{prof['total_time_ms']:.2f} ms of GPU time"),
        ("h200-results.md", f"{100 * _share(nvjet, 'nvjet'):.0f} % of the time"),
        ("h200-results.md", f"{min(k['gflops'] for k in on_roof) / 1000:.0f}–{max(k['gflops'] for k in on_roof) / 1000:.0f} TFLOP/s"),
        ("h200-results.md", f"{min(k['clock_mhz'] for k in on_roof):,.0f}–{max(k['clock_mhz'] for k in on_roof):,.0f} MHz"),
        ("h200-results.md", f"forward are {100 * _share(pk, 'cunn_SoftMax'):.0f} % of the step"),
        ("h200-results.md", f"({100 * copy['time_share']:.0f} %, the logits' conversion from BF16\n  to FP32 for the loss: "
                            f"{copy['bytes']['dram'] / 1e9:.2f} GB through DRAM) moves "
                            f"{copy['bytes']['dram'] / copy['time_ms'] / 1e6:,.0f} GB/s"),
        ("h200-results.md", f"with {100 * copy['achieved_occupancy']:.0f} % achieved occupancy"),
        ("h200-results.md", f"{100 * _share(pk, 'sdpa'):.0f} %) runs at {min(sdpa) / 1000:.0f}–{max(sdpa) / 1000:.0f} TFLOP/s"),
        ("h200-results.md", f"The eighth, the smallest ({100 * min(k['time_share'] for k in nvjet):.1f} %)"),
        ("h200-results.md", f"and {1000 * next(k for k in sweep[1024, 1024, 1024]['kernels'] if k['name'] == 'register_tiling_2d')['time_ms']:.0f} µs flushed"),
        ("h200-results.md", f"{len(tiles)} valid tiles of the autotuned kernel"),
        ("h200-results.md", f"compiled to {slowest['registers']} registers and spilled {slowest['local_bytes']:,} B per thread"),
        ("h200-results.md", f"12 MiB at 1024³" if 3 * 1024 * 1024 * 4 == 12 * 2**20 else "?"),
    ]
    swept = _load("sweep-h200.json")["device"]
    claims += [("h200-results.md", f"{swept['launch_latency_ms'] * 1000:.1f} µs in the sweep's own file; each")]
    # the BF16 ladder at 8192^3, three runs one after another, and one with --energy
    runs = [_load(f"results-h200-bf16-8192-run{i}.json") for i in (1, 2, 3)]
    best = [_best(r["kernels"]) for r in runs]
    cond = [_conditions(r) for r in runs]
    # at 8192^3 wgmma_by_shape picks wgmma_persistent's tile: the two are the same kernel there
    twins = ("wgmma_persistent", "wgmma_by_shape")
    assert {b["name"] for b in best} <= set(twins)
    as_run = [b["pct_of_reference"] for b in best]
    full = [_pct_full(b, r["reference"]) for b, r in zip(best, runs)]
    named = [{k["name"]: k for k in r["kernels"]} for r in runs]

    def three(name, at_full):
        v = [_pct_full(n[name], r["reference"]) if at_full else n[name]["pct_of_reference"] for n, r in zip(named, runs)]
        return f"{_pct(v[0])}, {_pct(v[1])} and {_pct(v[2])} %"
    energy = _load("results-h200-bf16-8192-energy.json")
    eb, eref = _best(energy["kernels"]), energy["reference"]

    def joules(k):
        return f"{k['energy']['joules_per_launch']:.2f} J per launch"

    def per_joule(k):
        return f"{eb['model']['flops'] / 1e9 / k['energy']['joules_per_launch']:,.0f} GFLOP/J"

    claims += [
        ("h200-results.md", f"{twins[0]} ran at {three(twins[0], False)} of cuBLAS as run and {twins[1]} at\n"
                            f"{three(twins[1], False)}; at full clock {three(twins[0], True)}, and "
                            f"{three(twins[1], True)}"),
        ("h200-results.md", f"the SM clock read {cond[0][0]} MHz in each, and {cond[0][1]} of its {cond[0][2]} "
                            "samples ran throttled" if len(set(cond)) == 1 else "?"),
        ("h200-results.md", "Each run's two readings agree\nwithin 0.1 point"
         if max(abs(a - f) for a, f in zip(as_run, full)) < 0.1 else "?"),
        ("h200-results.md", "three runs within 0.3 point as run and 0.3 point at full clock"
         if max(as_run) - min(as_run) < 0.3 and max(full) - min(full) < 0.3 else "?"),
        ("h200-results.md", f"gives cuBLAS {joules(eref)}, {per_joule(eref)},\nand {eb['name']} {joules(eb)}, "
                            f"{per_joule(eb)}"),
    ]
    # how well each energy figure is known (the CI95 over its loops), the clock its loops ran at,
    # and the FP32 fits beside them
    ek = {k["name"]: k for k in [*energy["kernels"], eref]}
    capped = [ek[n] for n in ("cublas", "wgmma_ws", "wgmma_persistent", "wgmma_by_shape")]
    held = [k for k in energy["kernels"] if k["energy"]["clock_mhz"] == 1980]
    shaky = [k for k in energy["kernels"] if _energy_ci(k) > 2]
    fp32e = _load("results-h200-energy.json")
    fits = {f["kind"]: f for f in fp32e["device"]["measured_energy"]["fits"]}
    ladder_ci = [_energy_ci(k) for k in fp32e["kernels"]]

    def fit(kind, digits):
        f = fits[kind]
        return f"{f['pj_per_unit']:.{digits}f} ± {f['pj_error']:.2g} pJ"

    def span(values, fmt):
        return f"{fmt.format(min(values))}–{fmt.format(max(values))}"

    claims += [
        ("h200-results.md", f"NVML read {span([k['energy']['clock_mhz'] for k in capped], '{:,}')} MHz through the "
                            f"loops of cuBLAS and the\nthree fastest wgmma rungs ({ek['wgmma_tma']['energy']['clock_mhz']:,} "
                            "MHz for wgmma_tma)"),
        ("h200-results.md", f"a launch took {span([1000 * k['energy']['seconds'] / k['energy']['launches'] for k in capped], '{:.2f}')} ms\n"
                            f"of the loop against {span([k['time_ms'] for k in capped], '{:.2f}')} ms in the timing's"),
        ("h200-results.md", "The three rungs below the cap held 1,980 MHz" if len(held) == 3 else "?"),
        ("h200-results.md", f"cuBLAS's joules are known to\n±{_energy_ci(eref):.1f} % and wgmma_persistent's to "
                            f"±{_energy_ci(ek['wgmma_persistent']):.1f} %"),
        ("h200-results.md", f"wgmma_tma, wgmma_ws and wgmma_by_shape (±{min(map(_energy_ci, shaky)):.1f} to "
                            f"±{max(map(_energy_ci, shaky)):.1f} %)\nare marked not stable"
         if [k["name"] for k in shaky] == ["wgmma_tma", "wgmma_ws", "wgmma_by_shape"] else "?"),
        ("h200-results.md", f"is known to ±{min(ladder_ci):.1f} to\n±{max(ladder_ci):.1f} % per kernel and cuBLAS to "
                            f"±{_energy_ci(fp32e['reference']):.1f} %"),
        ("h200-results.md", f"{fit('fp32', 2)} per FP32 FLOP, {fit('dram', 1)} per DRAM byte, {fit('l2', 1)} per L2 "
                            f"byte and\n{fit('fp16_tensor', 2)} per FP16 tensor FLOP, with "
                            f"{fp32e['device']['measured_energy']['idle_w']:.0f} W idle"),
    ]
    # the tensor-core sweeps (the tables of docs/tensor.md: test_the_tensor_tables_match_the_sweeps)
    bf16, tf32 = _load("results-h200-bf16.json"), _load("results-h200-tf32.json")
    bsw = {r["problem"]["m"]: r for r in bf16["sweep"]}
    twins = [(abs(ks["wgmma_persistent"]["pct_of_reference"] - ks["wgmma_by_shape"]["pct_of_reference"]),
              max(ks["wgmma_persistent"]["gflops"], ks["wgmma_by_shape"]["gflops"])
              / min(ks["wgmma_persistent"]["gflops"], ks["wgmma_by_shape"]["gflops"]) - 1, f"{p} at {n}³")
             for p, d in (("BF16", bf16), ("TF32", tf32)) for r in d["sweep"]
             for n, ks in [(r["problem"]["m"], {k["name"]: k for k in r["kernels"]})]]
    points, ratio, where = max(twins)
    (bc, bt, bn), (tc, tt, tn) = _conditions(bf16), _conditions(tf32)
    full_gap = max(abs(k["pct_of_reference"] - _pct_full(k, d["reference"]))
                   for d in (bf16, tf32) for k in d["kernels"])
    claims += [
        ("README.md", f"the best BF16 rung runs at {round(_best(bsw[4096]['kernels'])['pct_of_reference'])} % of cuBLAS "
                      f"at 4096³ and {round(_best(bsw[8192]['kernels'])['pct_of_reference'])} %\nat 8192³"),
        ("tensor.md", f"up to {points:.1f} points of cuBLAS ({100 * ratio:.1f} %, {where})"),
        ("tensor.md", f"(BF16:\n{bc} MHz, {bt} of {bn} samples throttled; TF32: {tc} MHz, {tt} of {tn})"),
        ("tensor.md", "is within 0.1 point of its share as run" if full_gap < 0.1 else "?"),
        ("tensor.md", "every spread there is under 2 %"
         if max(_spread(k["timing"]["samples_ms"]) for d in (bf16, tf32) for k in [*d["kernels"], d["reference"]]) < 0.02
         else "?"),
        ("tensor.md", f"BF16 product runs at {bsw[8192]['reference']['gflops'] / 1000:.0f} TFLOP/s at 8192³ "
                      f"against {bsw[4096]['reference']['gflops'] / 1000:.0f} at 4096³"),
    ]
    foreach, fused = _load("profile-h200-adamw-foreach.json"), _load("profile-h200-adamw-fused.json")

    def optimizer(doc):
        mt = [k for k in doc["kernels"] if k["name"].startswith("multi_tensor_apply_kernel")]
        return (f"{len(mt)}", f"{sum(k['launches'] for k in mt)} launches", f"{sum(k['time_ms'] for k in mt):.3f} ms",
                f"{sum(k['bytes']['dram'] for k in mt) / 1e9:.2f} GB")

    claims += [
        ("compare.md", f"went from {foreach['total_time_ms']:.3f} ms to {fused['total_time_ms']:.3f} ms "
                       f"({100 * (fused['total_time_ms'] / foreach['total_time_ms'] - 1):.1f} %)"),
        ("compare.md", "optimizer's {} multi-tensor kernels ({},\n{}, {} through DRAM)".format(*optimizer(foreach))),
        ("compare.md", "the fused step's {} ({}, {}, {})".format(*optimizer(fused))),
    ]
    gpt2 = _load("profile-h200-gpt2.json")
    worst = max(gpt2["kernels"], key=lambda k: k["time_ms"])
    claims += [("whatif.md", f"(`plots/profile-h200-gpt2.json`, {gpt2['total_time_ms']:.2f} ms"),
               ("whatif.md", f"the first runs {worst['time_ms']:.3f} ms"),
               ("whatif.md", f"{worst['name'].split('_align1')[0].split('_')[0].upper()}")]
    return claims


def _energy_ci(k: dict) -> float:
    """A kernel's energy CI95 half-width in percent, as `show` prints it (model.energy.Energy)."""
    from roofline.model.timing import ci95_half

    return 100 * ci95_half(k["energy"]["loops_j"])


def _text(name: str) -> str:
    path = ROOT / name if name == "README.md" else ROOT / "docs" / name
    return path.read_text()


@pytest.mark.parametrize("doc, text", _claims(), ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_figures_quoted_from_results_files(doc, text):
    assert _squash(text) in _squash(_text(doc)), f"{doc} should say: {text!r}"


def test_the_table_of_sizes_matches_the_sweeps():
    """Each row of docs/h200-results.md's table of sizes: the best step at that problem, its
    share of cuBLAS, and full_tiles', from plots/sweep-h200-nine.json; and every size at 90 % of
    cuBLAS or more."""
    runs = {(r["problem"]["m"], r["problem"]["n"], r["problem"]["k"]): r for r in _load("sweep-h200-nine.json")["sweep"]}
    rows = re.findall(r"^\| (\d+)(?:³|×(\d+)×(\d+)) \| (\w+) \|([^|]*)\| ([\d.]+) \| ([\d.]+) \|$",
                      _text("h200-results.md"), re.M)
    assert len(rows) == 9
    for m, n, k, best, choice, pct, full in rows:
        m = int(m)
        run = runs[(m, int(n), int(k)) if n else (m, m, m)]
        kernels = {x["name"]: x for x in run["kernels"] if x.get("verified")}
        top = max(kernels.values(), key=lambda x: x["gflops"])
        assert (best, pct, full) == (top["name"], _pct(top["pct_of_reference"]),
                                     _pct(kernels["full_tiles"]["pct_of_reference"]))
        assert top["pct_of_reference"] >= 90
        params = top.get("params") or {}
        if choice.strip():
            assert choice.strip().startswith(f"{params['BM']}×{params['BN']}")
            slices = re.search(r"(\d+) slices", choice)
            assert params.get("SPLITS", 1) == (int(slices.group(1)) if slices else 1)
            assert ("together" in choice) == (params.get("REDUCERS", 1) > 1)


def test_the_tensor_tables_match_the_sweeps():
    """docs/tensor.md's two tables, BF16 and TF32: cuBLAS's TFLOP/s and each rung's share of it at
    each size, from plots/results-h200-bf16.json and plots/results-h200-tf32.json."""
    text = _text("tensor.md")
    for dtype, name in (("BF16", "results-h200-bf16.json"), ("TF32", "results-h200-tf32.json")):
        sweep = _load(name)["sweep"]
        head = f"| {dtype}, % of cuBLAS | " + " | ".join(f"{r['problem']['m']}³" for r in sweep) + " |"
        rows = text.split(head + "\n| --- | --- | --- | --- |\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert len(rows) >= 6
        for row in rows:
            label, *cells = [c.strip() for c in row.strip("|").split("|")]
            if label == "cuBLAS (TFLOP/s)":
                want = [f"{r['reference']['gflops'] / 1000:.1f}" for r in sweep]
            else:
                want = [_pct(next(k for k in r["kernels"] if k["name"] == label)["pct_of_reference"]) for r in sweep]
            assert cells == want, f"tensor.md, {dtype} {label}: {cells} should be {want}"


def test_readme_lists_every_preset():
    readme = _squash(_text("README.md"))
    listed = re.search(r"`--gpu` takes a preset \(([^)]*), each with its datasheet source\)", readme)
    names = [n.strip() for n in listed.group(1).split(",")]
    assert names == [p.aliases[0] for p in presets.PRESETS]


def test_readme_is_a_guide_not_a_notebook():
    lines = _text("README.md").splitlines()
    assert len(lines) <= 260
    # the no-GPU install and first commands come before any measured table
    assert lines.index("### Without a GPU") < 60


def test_the_sweeps_readings_quoted_are_what_show_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    printed = _output("show plots/sweep-h200.json")
    quotes = re.findall(r"`((?:tail FP32|launch) [\d.]+)`", _text("h200-results.md"))
    assert len(quotes) == 2
    for quoted in quotes:
        assert quoted in printed


def _spellings() -> dict[str, list[str]]:
    """The table of spellings in docs/nsight-compute.md: figure -> the metrics its row names, in order."""
    text = (ROOT / "docs" / "nsight-compute.md").read_text()
    section = text.split("## Each figure's spellings", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return {row[0].strip("| "): re.findall(r"`([a-z0-9_]+__[a-z0-9_.]+)`", row[1]) for row in rows[1:]}


def test_the_table_of_spellings_is_what_the_reader_reads():
    """Every metric the table names is one `metrics.reads` reads; every metric roofline
    collects is in the table (or is a tensor-core spelling, which the table gives as a pattern);
    the orders of preference the table gives are the code's."""
    from roofline.nsight import metrics as m

    table = _spellings()
    named = [n for names in table.values() for n in names]
    assert len(named) > 40 and [n for n in named if not m.reads(n)] == []
    one_op = [re.sub(r"_op_[dfh](fma|add|mul)", "_op_dfma", n) for n in m.COLLECT]  # the table spells dfma's
    assert [n for n in one_op if n not in named and not m.TENSOR.match(n)] == []
    assert not m.reads("lts__t_sectors_srcunit_tex_op_red_lookup_hit.sum")  # a prefix is not a name
    assert table["FP64, FP32, FP16 work"] == list(m.instruction_spellings("dfma"))
    assert table["clock"] == list(m.CLOCKS)
    time = table["time"]
    assert time[:2] == [m.TIME, "gpu__time_duration"]
    assert [p for pair in m._elapsed_pairs({})[::2][:3] for p in pair] == time[2:]
    section = (ROOT / "docs" / "nsight-compute.md").read_text().split("## Each figure's spellings", 1)[1]
    forms = re.findall(r"`(X\.(?:sum|avg)[a-z_.]*)`", section.split("| figure |", 1)[0])
    assert [f for f in dict.fromkeys(forms) if not f.endswith(".peak_sustained")] == list(m.COUNTER_FORMS)


def test_readme_names_every_command_that_takes_json():
    import typer.main

    from roofline.cli import app

    commands = typer.main.get_command(app).commands
    takes = [n for n, c in commands.items() if any("--json" in p.opts for p in c.params)]
    sentence = _squash(_text("README.md")).split("`--json` on ", 1)[1].split("prints exactly one", 1)[0]
    assert re.findall(r"`([a-z]+)`", sentence) == takes


def test_the_counted_tensor_table_is_the_counters_file():
    """docs/tensor.md's table of Nsight Compute's counts, row by row, from plots/counters-h200-bf16.json."""
    doc = _load("counters-h200-bf16.json")
    text = _text("tensor.md")
    for k in doc["kernels"]:
        m, model = k["measured"], k["model"]
        row = (f"| {k['name']} | {model['smem_served_bytes'] / 1e9:.2f} | {m['smem_bytes'] / 1e9:.2f} | "
               f"{m['bank_conflicts']:,.0f} | {m['l2_bytes'] / 1e9:.2f} | {m['tensor_flops'] / model['flops']:.2f} |")
        assert row in text, row
    first, second = doc["kernels"][:2]
    assert (f"remove {100 * (1 - second['measured']['bank_conflicts'] / first['measured']['bank_conflicts']):.1f} % "
            "of mma_sync's bank\nconflicts") in text
