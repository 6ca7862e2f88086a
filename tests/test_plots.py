"""Every file in plots/ has its making command in bench/plots.sh (the GPU runs through
bench/ladder.sh's steps, named 'h200'), and every committed chart is what its command draws from
the committed JSON now, byte for byte."""

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "plots.sh"


def _commands(path: Path) -> list[str]:
    """The `roofline ...` command lines of a shell script, continuation lines joined."""
    text = path.read_text().replace("\\\n", " ")
    return [" ".join(line.split()) for line in text.splitlines() if line.strip().startswith("roofline ")]


def _outputs(commands: list[str], name: str = "h200") -> set[str]:
    found = set()
    for command in commands:
        for match in re.finditer(r'--out "?plots/([^" ]+)"?', command):
            found.add(match.group(1).replace("$name", name))
    return found


def _charts() -> list[str]:
    """The commands of the script's charts part (what follows its `!= gpu` test)."""
    tail = SCRIPT.read_text().split('if [ "$part" != gpu ]; then', 1)[1]
    text = tail.replace("\\\n", " ")
    return [" ".join(line.split()) for line in text.splitlines() if line.strip().startswith("roofline ")]


def test_every_file_in_plots_has_its_making_command():
    made = _outputs(_commands(SCRIPT)) | _outputs(_commands(ROOT / "bench" / "ladder.sh"))
    ladder_steps = re.search(r"for step in ([a-z ]+); do bash bench/ladder.sh h200", SCRIPT.read_text()).group(1).split()
    assert set(ladder_steps) == {"tune", "ladder", "sweep", "shapes", "user", "profile"}  # charts: below
    committed = {p.name for p in (ROOT / "plots").iterdir() if p.is_file()}
    assert committed - made == set(), "in plots/ without a making command"
    assert made - committed == set(), "made but not committed"


@pytest.mark.xdist_group("committed_charts")
@pytest.mark.parametrize("command", _charts(), ids=lambda c: re.search(r"--out plots/(\S+)", c).group(1))
def test_every_committed_chart_redraws_byte_for_byte(command, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from roofline.cli import app

    monkeypatch.chdir(ROOT)
    target = re.search(r"--out (plots/\S+)", command).group(1)
    args = shlex.split(command)[1:]
    args[args.index(target)] = str(tmp_path / Path(target).name)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / Path(target).name).read_bytes() == (ROOT / target).read_bytes(), target


def test_every_committed_results_file_is_valid_against_the_published_schema():
    """`roofline schema` (and `--profile`) is what other tools validate files with: every file in
    plots/ passes it."""
    import json

    import jsonschema

    from roofline.commands import schema as schema_cmd

    for path in sorted((ROOT / "plots").glob("*.json")):
        doc = json.loads(path.read_text())
        jsonschema.validate(doc, schema_cmd.schema(profile=doc.get("kind") == "profile", grade=doc.get("kind") == "grade"))
