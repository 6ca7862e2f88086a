"""Golden tests: every printed table and verdict, rendered from fixture results by the command
line, compared with the exact text in tests/golden/ (trailing spaces aside) and the exit code.

After an intended change of output, regenerate with ROOFLINE_UPDATE_GOLDEN=1 pytest tests/test_golden.py
and read the diff before committing it."""

import json
import os
from pathlib import Path

import pytest
from conftest import FIXTURES, make_doc
from typer.testing import CliRunner

from cli import app

GOLDEN = Path(__file__).resolve().parent / "golden"
RESULTS = str(FIXTURES / "results-h200.json")

CASES = {
    "show_h200_80": (80, ["show", "--results", RESULTS]),
    "show_h200_200": (200, ["show", "--results", RESULTS]),
    "show_schema1_120": (120, ["show", "--results", str(FIXTURES / "results-schema1.json")]),
    "show_failed_80": (80, ["show", "--results", "{failed}"]),
    "occupancy_sm120_80": (80, ["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120"]),
    "occupancy_no_smem_sm90_80": (80, ["occupancy", "--regs", "32", "--threads", "32", "--arch", "sm_90"]),
    "occupancy_cannot_launch_80": (80, ["occupancy", "--regs", "96", "--threads", "896", "--arch", "sm_90",
                                        "--target-blocks", "1"]),
    "device_h200_80": (80, ["device", "--gpu", "h200"]),
    "kernels_h200_80": (80, ["kernels", "--gpu", "h200", "--model-only"]),
    "kernels_h200_140": (140, ["kernels", "--gpu", "h200", "--model-only"]),
}


def render(columns: int, args: list[str]) -> str:
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)})
    text = f"exit {result.exit_code}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}"
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_matches_the_golden_text(name, tmp_path):
    columns, args = CASES[name]
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps(make_doc(failed=("register_strip", "async_copy"))))
    args = [a.replace("{failed}", str(failed)) for a in args]
    got = render(columns, args).replace(str(failed), "FAILED.json")
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ROOFLINE_UPDATE_GOLDEN"):
        path.write_text(got)
    assert got == path.read_text()
    if columns < 100:  # one line per kernel: nothing wider than the terminal, no cell wrapped
        assert max(len(line) for line in got.splitlines()) <= columns or name.startswith("device")
