"""The cheat corpus as `roofline run` graded it on a GPU (the committed plots/grades-h100-corpus-*.json,
made by `bench/problems_visit.sh`'s corpus step on an H100: `-clamp` on 2026-12-05, `-matmul` again on
2026-12-06 with every matmul cheat, after the harness reset the L2's persisting lines before every call; `-newest` the three cheats written after the first visit, graded on an
H100 the same way later on 2026-12-05; all three again on the H200 on 2026-12-06,
plots/grades-h200-corpus-*.json): every cheat flagged, refused or graded at no gain as its file's
first line says, the honest ones graded with no flag. Needs no PyTorch: it reads the files."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CANDIDATES = ROOT / "tests" / "fixtures" / "problems" / "candidates"
# given a new verdict after the committed grade files were made: checked on the CPU until the next visit
# (none now: matmul_persisting_l2, graded 12 % faster than its reference on the morning of 2026-12-06, was
# refused as l2_persisting by the harness of that evening, in plots/grades-h100-corpus-matmul.json)
NOT_YET_ON_A_GPU: set[str] = set()
CORPUS_FILES = ("corpus-matmul.json", "corpus-clamp.json", "corpus-newest.json")  # after grades-GPU-


def _expected(name: str) -> str:
    return (CANDIDATES / name).read_text().splitlines()[0].lstrip("# ").split(":")[0].split(" ")[0]


@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_the_corpus_graded_on_a_gpu_got_what_each_file_names(gpu):
    seen = set()
    for name in CORPUS_FILES:
        entries = json.loads((ROOT / "plots" / f"grades-{gpu}-{name}").read_text())["entries"]
        ref = next(e for e in entries if e["name"] == "reference")
        assert ref["time_ms"] and not ref["flags"] and ref["error"] is None
        for e in entries[1:]:
            if Path(e["source"]).name in NOT_YET_ON_A_GPU:
                continue
            seen.add(Path(e["source"]).name)
            want, codes = _expected(Path(e["source"]).name), [f["code"] for f in e["flags"]]
            graded = e["share"] is not None and not codes and e["error"] is None
            if want == "honest":
                assert graded, e["name"]
            elif want == "no_gain":
                assert not graded or e["time_ms"] >= 0.9 * ref["time_ms"], e["name"]
            elif want in ("wrong", "fails", "not_graded"):
                assert not graded, e["name"]
            else:
                assert want in codes and not graded, (e["name"], codes)
    assert seen == {p.name for p in CANDIDATES.glob("*.py")} - NOT_YET_ON_A_GPU


def test_the_timed_entries_carry_their_kernels_from_cupti():
    entries = {e["name"]: e for e in json.loads((ROOT / "plots" / "grades-h100-corpus-matmul.json").read_text())["entries"]}
    # the reference: one cuBLAS kernel a call; the side-stream cheat: its 200 kernels, none on the caller's events
    assert entries["reference"]["kernels"]["launches"] == 1
    side = entries["matmul_side_stream"]["kernels"]
    assert side["launches"] == 200 and side["span_ms"] > entries["matmul_side_stream"]["event_ms"]
    assert all(e["kernels"] is None for e in entries.values() if e["time_ms"] is None)


def test_a_kernelbench_level1_problem_graded_with_triton_and_inline_cuda():
    doc = json.loads((ROOT / "plots" / "grades-h100-kernelbench-level1.json").read_text())
    by = {e["name"]: e for e in doc["entries"]}
    assert set(by) == {"reference", "level1_19_ReLU_triton", "level1_19_ReLU_cuda"}
    for e in by.values():  # 19_ReLU: 4096 x 393216 FP32, read and written once: DRAM binds
        assert e["verified"] and not e["flags"] and e["error"] is None and e["binding"] == "DRAM"
        assert 0.9 < e["share"] <= 1.0
    assert by["level1_19_ReLU_triton"]["score"] < 0.5  # slower than the reference, a little


def test_a_level3_block_and_a_prompt_example_graded_from_their_files_alone():
    # KernelBench's level3/1_MLP with a Triton epilogue, and its prompt's inline-CUDA tiled matmul
    # (load_inline), each candidate in a process of its own (H100, 2026-12-05)
    mlp = {e["name"]: e for e in json.loads((ROOT / "plots" / "grades-h100-kernelbench-level3.json").read_text())["entries"]}
    assert set(mlp) == {"reference", "level3_1_MLP_triton"}
    for e in mlp.values():  # 1_MLP's three FP32 GEMMs: FP32 binds, about three quarters of the way there
        assert e["verified"] and not e["flags"] and e["error"] is None and e["binding"] == "FP32"
        assert 0.70 < e["share"] < 0.80
    tiled = {e["name"]: e for e in json.loads((ROOT / "plots" / "grades-h100-kernelbench-prompts.json").read_text())["entries"]}
    e = tiled["model_new_ex_tiled_matmul"]
    assert e["verified"] and not e["flags"] and e["error"] is None and e["share"] < 0.2  # a 16 x 16 tile: slow, honest
    assert e["time_ms"] > 4 * tiled["reference"]["time_ms"]


def test_honest_problems_graded_against_themselves_raise_no_flag():
    # plots/honest-h100 (bench/honest_visit.sh on an H100, 2026-12-06): eight fixture problems and the
    # 32 KernelBench problems of bench/honest_problems.txt, each graded with its own reference as its
    # candidate, and a fixture's own candidate (conv_relu_new): every entry verified and graded, no flag
    folder = ROOT / "plots" / "honest-h100"
    listed = {Path(p).stem for p in (ROOT / "bench" / "honest_problems.txt").read_text().split()}
    candidates, problems = 0, set()
    for path in sorted(folder.glob("*.json")):
        entries = json.loads(path.read_text())["entries"]
        assert entries[0]["name"] == "reference" and len(entries) == 2, path.name
        for e in entries:
            assert e["verified"] and e["error"] is None and not e["flags"], (path.name, e["name"])
            assert e["share"] is not None and e["time_ms"] > 0, (path.name, e["name"])
        candidates += 1
        problems.add(Path(entries[0]["source"]).stem)
    assert candidates == 41
    assert listed <= problems and len(problems - listed) == 8  # the fixtures (conv_relu graded twice)


def _matrix(files: list[Path], capsys, monkeypatch) -> dict[str, list[str]]:
    """bench/corpus_matrix.py's two rows over `files`: 'cheat' and 'honest' -> caught, graded, as it must."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("corpus_matrix", ROOT / "bench" / "corpus_matrix.py")
    matrix = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(matrix)
    monkeypatch.chdir(ROOT)
    matrix.main([str(f) for f in files])
    return {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[-2:]}


def test_the_published_matrix_is_what_the_committed_files_give(capsys, monkeypatch):
    # docs/grade.md's matrix: 31 cheats (30 caught, 1 graded: matmul_cached_by_values, at no gain), all as their files
    # say; 60 honest entries graded with no flag
    plots = ROOT / "plots"
    files = [plots / "grades-h100-corpus-matmul.json", plots / "grades-h100-corpus-clamp.json",
             *sorted(plots.glob("grades-h100-kernelbench-*.json")),
             plots / "grades-h200.json", plots / "grades-h200-public.json", *sorted(plots.glob("honest-h100/*.json"))]
    assert _matrix(files, capsys, monkeypatch) == {"cheat": ["30", "1", "31"], "honest": ["0", "60", "60"]}
    assert "| cheat | 30 | 1 | 31 |" in (ROOT / "docs" / "grade.md").read_text()


def test_the_h200_matrix_published_is_what_its_files_give(capsys, monkeypatch):
    # docs/grade.md's H200 matrix: the corpus graded on the H200 (2026-12-06), its other grade files, the
    # KernelBench candidates and the first twenty-three honest problems and a fixture's candidate (2026-12-07):
    # 31 cheats (30 caught, matmul_cached_by_values graded at no gain), 43 honest entries, no flag
    plots = ROOT / "plots"
    files = [plots / f for f in ("grades-h200-corpus-matmul.json", "grades-h200-corpus-clamp.json",
                                 "grades-h200.json", "grades-h200-public.json")]
    files += [*sorted(plots.glob("grades-h200-kernelbench-*.json")), *sorted(plots.glob("honest-h200/*.json"))]
    assert _matrix(files, capsys, monkeypatch) == {"cheat": ["30", "1", "31"], "honest": ["0", "43", "43"]}
    text = (ROOT / "docs" / "grade.md").read_text()
    assert "| cheat (H200) | 30 | 1 | 31 |" in text and "| honest (H200) | 0 | 43 | 43 |" in text


def test_kernelbench_problems_of_three_levels_graded_on_the_h200_from_their_files_alone():
    # the H200 (2026-12-07, bench visit PART=14): 19_ReLU (12.9 GB moved, DRAM binds), 12_Gemm_Multiply_LeakyReLU
    # and 1_MLP (FP32 GEMMs), the prompt's inline-CUDA tiled matmul: every entry verified, no flag
    def entries(name: str) -> dict:
        doc = json.loads((ROOT / "plots" / f"grades-h200-kernelbench-{name}.json").read_text())
        assert doc["device"]["name"] == "NVIDIA H200"
        return {e["name"]: e for e in doc["entries"]}
    relu, gemm, mlp, tiled = (entries(n) for n in ("level1", "level2", "level3", "prompts"))
    for e in [*relu.values(), *gemm.values(), *mlp.values(), *tiled.values()]:
        assert e["verified"] and not e["flags"] and e["error"] is None, e["name"]
    assert {e["binding"] for e in relu.values()} == {"DRAM"} and all(0.9 < e["share"] <= 1.0 for e in relu.values())
    assert 12.8e9 / (relu["reference"]["time_ms"] / 1e3) > 4.0e12  # the reference moves 12.9 GB at over 4 TB/s
    assert {e["binding"] for e in (*gemm.values(), *mlp.values())} == {"FP32"}
    assert tiled["model_new_ex_tiled_matmul"]["time_ms"] > 4 * tiled["reference"]["time_ms"]


def test_the_corpus_graded_again_with_cupti_alone_and_a_reading_flush(capsys, monkeypatch):
    # H100, 2026-12-07: every cheat as it must; the side stream's 200 kernels in CUPTI's records time it in full
    plots = ROOT / "plots"
    entries = {e["name"]: e for e in json.loads((plots / "grades-h100-corpus-matmul-20261207.json").read_text())["entries"]}
    side = entries["matmul_side_stream"]
    assert side["kernels"]["launches"] == 200 and not side["flags"]
    assert side["time_ms"] > 100 * entries["reference"]["time_ms"]  # no gain: 2.68 ms against 0.012
    assert [f["code"] for f in entries["matmul_persisting_l2"]["flags"]] == ["l2_persisting"]
    files = [plots / f for f in ("grades-h100-corpus-matmul-20261207.json", "grades-h100-corpus-clamp-20261207.json",
                                 "grades-h200.json", "grades-h200-public.json")]
    files += sorted(plots.glob("grades-h100-kernelbench-*.json")) + sorted((plots / "honest-h100").glob("*.json"))
    assert _matrix(files, capsys, monkeypatch) == {"cheat": ["29", "2", "31"], "honest": ["0", "60", "60"]}
    assert "| cheat (2026-12-07) | 29 | 2 | 31 |" in (ROOT / "docs" / "grade.md").read_text()
