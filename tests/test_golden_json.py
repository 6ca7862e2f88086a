"""Golden JSON: the `--json` document of every command that reads or describes something, on
committed inputs, compared with the exact text kept in tests/golden/json/<case>.json (and, parsed,
value for value). These pin what other tools read: a change of a serialiser, of a document model
or of a command's wiring that moves one key, one number or one int/float spelling fails here.

The cases are one dict (`CASES`): case name -> (arguments, exit code). `{name}` in an argument is a
file written for the test (`made_files`); paths of the repository and of the test's folder are
shown relative in the kept text, as in tests/golden.

After an intended change of a document, regenerate with
ROOFLINE_UPDATE_GOLDEN=1 pytest tests/test_golden_json.py and read the diff before committing it."""

import json
import os
from pathlib import Path

import pytest
from conftest import FIXTURES, make_doc
from test_golden import after_doc
from typer.testing import CliRunner

from roofline.cli import app

GOLDEN = Path(__file__).resolve().parent / "golden" / "json"
ROOT = Path(__file__).resolve().parent.parent
PLOTS = ROOT / "plots"
PUBLIC = FIXTURES / "traces" / "public"
RESULTS = str(FIXTURES / "results-h200.json")
GPT2 = str(PLOTS / "profile-h200-gpt2.json")
TRANSFORMER = str(PLOTS / "profile-h200-transformer.json")
FOREACH, FUSED = str(PLOTS / "profile-h200-adamw-foreach.json"), str(PLOTS / "profile-h200-adamw-fused.json")
GRADES = str(PLOTS / "grades-h200.json")
BF16_RUN1, BF16_RUN2 = str(PLOTS / "results-h200-bf16-8192-run1.json"), str(PLOTS / "results-h200-bf16-8192-run2.json")

CASES = {
    # show: every kind of file, and runs of two precisions (a list of documents)
    "show_run": (["show", RESULTS, "--json"], 0),
    "show_schema1": (["show", str(FIXTURES / "results-schema1.json"), "--json"], 0),
    "show_failed": (["show", "{failed}", "--json"], 0),
    "show_user_kernel": (["show", "{after}", "--json"], 0),
    "show_merged": (["show", RESULTS, "{after}", "--json"], 0),
    "show_sweep": (["show", str(PLOTS / "sweep-h200.json"), "--json"], 0),
    "show_energy": (["show", str(PLOTS / "results-h200-energy.json"), "--json"], 0),
    "show_counters": (["show", str(PLOTS / "counters-h200-bf16.json"), "--json"], 0),
    "show_precisions": (["show", str(PLOTS / "results-h200.json"), str(PLOTS / "results-h200-bf16.json"), "--json"], 0),
    "show_profile_gpt2": (["show", GPT2, "--json"], 0),
    "show_grades": (["show", GRADES, "--json"], 0),
    # compare, and compare --max-drop (the gate, once check): two runs, two profiles, two grade files
    "compare_same_gpu": (["compare", RESULTS, "{after}", "--json"], 0),
    "compare_across_gpus": (["compare", RESULTS, "{rtx}", "--json"], 0),
    "compare_different_problems": (["compare", RESULTS, "{small}", "--across-sizes", "--json"], 0),
    "compare_bf16_runs": (["compare", BF16_RUN1, BF16_RUN2, "--json"], 0),
    "compare_adamw": (["compare", FOREACH, FUSED, "--json"], 0),
    "compare_grades": (["compare", GRADES, "{slow_grades}", "--json"], 0),
    "check_same_gpu": (["compare", RESULTS, "{after}", "--max-drop", "5%", "--json"], 1),
    "check_across_gpus": (["compare", RESULTS, "{rtx}", "--max-drop", "10%", "--json"], 0),
    "check_bf16_runs": (["compare", BF16_RUN1, BF16_RUN2, "--max-drop", "5%", "--json"], 0),
    "check_adamw": (["compare", FOREACH, FUSED, "--max-drop", "5%", "--json"], 0),
    "check_grades": (["compare", GRADES, "{slow_grades}", "--max-drop", "5%", "--json"], 1),
    "check_grades_same": (["compare", GRADES, GRADES, "--max-drop", "5%", "--json"], 0),
    # whatif and project: a run and profiles
    "whatif_ladder": (["whatif", RESULTS, "--json"], 0),
    "whatif_energy": (["whatif", str(PLOTS / "results-h200-energy.json"), "--target", "0.5", "--json"], 0),
    "whatif_gpt2": (["whatif", GPT2, "--json"], 0),
    "whatif_transformer": (["whatif", TRANSFORMER, "--json"], 0),
    "project_ladder": (["project", RESULTS, "--gpu", "h100-sxm", "--gpu", "a100-sxm4-80gb", "--json"], 0),
    "project_bf16": (["project", str(PLOTS / "results-h200-bf16.json"), "--gpu", "v100-sxm2", "--json"], 0),
    "project_gpt2": (["project", GPT2, "--gpu", "h100-sxm", "--gpu", "l40s", "--json"], 0),
    "project_transformer": (["project", TRANSFORMER, "--gpu", "b200", "--gpu", "rtx-a6000", "--json"], 0),
    # comms: profiler traces, alone and against nccl-tests
    "comms_public": (["comms", str(PUBLIC), "--gpu", "a100-sxm4-40gb", "--json"], 0),
    "comms_nccl_tests": (["comms", str(PUBLIC / "nccl_data.json.gz"), "--gpu", "a100-sxm4-40gb", "--nccl-tests",
                          str(PUBLIC / "nccl-tests-gb200-nvl72.txt"), "--collective", "all_reduce", "--json"], 0),
    # the model alone: kernels (no compiling), occupancy, device presets
    "kernels_h200": (["kernels", "--gpu", "h200", "--model-only", "--json"], 0),
    "kernels_model_only": (["kernels", "--model-only", "--size", "1024", "--json"], 0),
    "kernels_bf16_h200": (["kernels", "--dtype", "bf16", "--gpu", "h200", "--model-only", "--json"], 0),
    "kernels_source": (["kernels", str(FIXTURES / "kernels" / "tiled_f4.cu"), "--gpu", "h200",
                        "--model-only", "--json"], 0),
    "occupancy_sm120": (["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120", "--json"], 0),
    "occupancy_no_smem_sm90": (["occupancy", "--regs", "32", "--threads", "32", "--arch", "sm_90", "--json"], 0),
    "occupancy_cannot_launch": (["occupancy", "--regs", "96", "--threads", "896", "--arch", "sm_90",
                                 "--target-blocks", "1", "--json"], 0),
    "occupancy_h200_target": (["occupancy", "--regs", "128", "--threads", "256", "--smem", "32768", "--dynamic-smem", "65536", "--gpu", "h200",
                               "--target-blocks", "2", "--json"], 0),
    "device_h200": (["device", "--gpu", "h200", "--json"], 0),
    "device_a100": (["device", "--gpu", "a100-sxm4-80gb", "--json"], 0),
    "device_rtx5080": (["device", "--gpu", "rtx5080", "--json"], 0),
    "device_v100": (["device", "--gpu", "v100-sxm2", "--json"], 0),
    # the schemas of the files
    "schema_run": (["schema"], 0),
    "schema_profile": (["schema", "profile"], 0),
    "schema_grade": (["schema", "grade"], 0),
}


def slow_grades() -> dict:
    """The committed grades with scan_rows_vec4 50 % slower (its samples and CI95 moved with it),
    as tests/test_grade.py edits them."""
    doc = json.loads(Path(GRADES).read_text())
    e = doc["entries"][7]
    e["timing"]["samples_ms"] = [1.5 * t for t in e["timing"]["samples_ms"]]
    e["time_ms"], e["ci95_ms"] = 1.5 * e["time_ms"], [1.5 * x for x in e["ci95_ms"]]
    e["share"], e["score"] = e["t_sol_ms"] / e["time_ms"], None
    e.pop("baseline_ms")
    return doc


def made_files() -> dict:
    """The files the cases name as `{key}`, by key."""
    return {"failed": make_doc(failed=("register_strip", "async_copy")), "after": after_doc(),
            "rtx": make_doc(gpu="rtx5080"), "small": make_doc(n=1024), "slow_grades": slow_grades()}


def run_case(name: str, folder: Path) -> tuple[int, str]:
    """Case `name` run through the app with its files written into `folder`: (exit code, its
    stdout with the paths of `folder`, the fixtures and the repository shown relative)."""
    args, _ = CASES[name]
    made = made_files()
    for key, content in made.items():
        (folder / f"{key}.json").write_text(json.dumps(content))
    for key in made:
        args = [a.replace("{" + key + "}", str(folder / f"{key}.json")) for a in args]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "120"})
    text = result.stdout
    for path, shown in ((folder, ""), (FIXTURES, "tests/fixtures/"), (ROOT, "")):
        text = text.replace(str(path) + "/", shown)
    return result.exit_code, text


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_matches_the_golden_document(name, tmp_path):
    code, got = run_case(name, tmp_path)
    assert code == CASES[name][1], got
    path = GOLDEN / f"{name}.json"
    if os.environ.get("ROOFLINE_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(got)
    want = path.read_text()
    assert json.loads(got) == json.loads(want)
    assert got == want  # and as printed: key order, int and float spellings, indentation
