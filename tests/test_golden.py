"""Golden tests: every printed table and verdict, rendered from fixture results by the command
line, compared with the exact text in tests/golden/ (no line ends in a space) and the exit code.

After an intended change of output, regenerate with ROOFLINE_UPDATE_GOLDEN=1 pytest tests/test_golden.py
and read the diff before committing it."""

import json
import os
from pathlib import Path

import pytest
from conftest import FIXTURES, make_doc, set_rate, user_record
from typer.testing import CliRunner

from roofline.cli import app
from roofline.model.arch import parse_arch
from roofline.model.occupancy import calculate

GOLDEN = Path(__file__).resolve().parent / "golden"
RESULTS = str(FIXTURES / "results-h200.json")
PLOTS = Path(__file__).resolve().parent.parent / "plots"

CASES = {
    "show_h200_80": (80, ["show", RESULTS]),
    "show_h200_200": (200, ["show", RESULTS]),
    "show_schema1_120": (120, ["show", str(FIXTURES / "results-schema1.json")]),
    "show_failed_80": (80, ["show", "{failed}"]),
    "occupancy_sm120_80": (80, ["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120"]),
    "occupancy_no_smem_sm90_80": (80, ["occupancy", "--regs", "32", "--threads", "32", "--arch", "sm_90"]),
    "occupancy_cannot_launch_80": (80, ["occupancy", "--regs", "96", "--threads", "896", "--arch", "sm_90",
                                        "--target-blocks", "1"]),
    "device_h200_80": (80, ["device", "--gpu", "h200"]),
    "kernels_h200_80": (80, ["kernels", "--gpu", "h200", "--model-only"]),
    "kernels_h200_140": (140, ["kernels", "--gpu", "h200", "--model-only"]),
    "compare_same_gpu_80": (80, ["compare", RESULTS, "{after}"]),
    "compare_same_gpu_140": (140, ["compare", RESULTS, "{after}"]),
    "compare_across_gpus_140": (140, ["compare", RESULTS, "{rtx}"]),
    "compare_different_problems_80": (80, ["compare", RESULTS, "{small}"]),
    "show_user_kernel_140": (140, ["show", "{after}"]),
    # the decision commands on real H200 profiles: GPT-2 from transformers (no kernel of it written
    # here), and the transformer step before and after one change (AdamW's foreach -> fused kernels)
    "whatif_gpt2_140": (140, ["whatif", str(PLOTS / "profile-h200-gpt2.json")]),
    "show_profile_gpt2_120": (120, ["show", str(PLOTS / "profile-h200-gpt2.json")]),
    "project_gpt2_140": (140, ["project", str(PLOTS / "profile-h200-gpt2.json"), "--gpu", "h100-sxm", "--gpu", "l40s"]),
    "compare_adamw_140": (140, ["compare", str(PLOTS / "profile-h200-adamw-foreach.json"),
                                str(PLOTS / "profile-h200-adamw-fused.json")]),
    "check_adamw_140": (140, ["compare", str(PLOTS / "profile-h200-adamw-foreach.json"),  # the gate (was check)
                              str(PLOTS / "profile-h200-adamw-fused.json"), "--max-drop", "5%"]),
}


def after_doc() -> dict:
    """The committed H200 results changed as a user's next run might have: register_tiling_2d
    1.25x faster at 96 registers, naive slower, one kernel gone, and a user kernel added."""
    doc = json.loads((FIXTURES / "results-h200.json").read_text())
    by_name = {k["name"]: k for k in doc["kernels"]}
    for name, factor in (("register_tiling_2d", 1 / 1.25), ("naive", 1.1), ("vectorized", 0.995)):
        k = by_name[name]
        set_rate(k, k["gflops"] / factor)
        k.pop("timing", None)
    k = by_name["register_tiling_2d"]
    k["registers"] = 96
    k["occupancy"] = calculate(parse_arch("sm_90"), 96, 256, k["static_smem_bytes"]).to_dict()
    doc["kernels"].remove(by_name["smem_tiling"])
    doc["kernels"].append(user_record(doc, "mine"))
    return doc


def _fill(arg: str, folder: Path, keys) -> str:
    for key in keys:
        arg = arg.replace("{" + key + "}", str(folder / f"{key}.json"))
    return arg


def render(columns: int, args: list[str]) -> str:
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)})
    return f"exit {result.exit_code}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_matches_the_golden_text(name, tmp_path):
    columns, args = CASES[name]
    paths = {"failed": make_doc(failed=("register_strip", "async_copy")), "after": after_doc(),
             "rtx": make_doc(gpu="rtx5080"), "small": make_doc(n=1024)}
    for key, content in paths.items():
        (tmp_path / f"{key}.json").write_text(json.dumps(content))
    args = [_fill(a, tmp_path, paths) for a in args]
    got = render(columns, args).replace(str(tmp_path) + "/", "").replace(str(FIXTURES) + "/", "")
    got = got.replace(str(PLOTS) + "/", "plots/")
    got = got.replace("failed.json", "FAILED.json")
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ROOFLINE_UPDATE_GOLDEN"):
        path.write_text(got)
    assert got == path.read_text()
    lines = got.splitlines()
    assert [line for line in lines if line != line.rstrip()] == []  # no padding left at the ends of lines
    stdout = got.split("\n--- stderr\n")[0].splitlines()  # errors and notes are one line each, by contract
    assert [line for line in stdout if len(line) > columns] == []  # nothing wider than the terminal
    assert [line for line in lines if "…" in line] == []  # no cell cut
