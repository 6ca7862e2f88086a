"""Every file in plots/ has its making command in bench/plots.sh (the GPU runs through
bench/ladder.sh's steps, named 'h200'), and every committed chart shows what its command draws from
the committed JSON now: the same texts, lines, points, colours, scales and limits, recorded as a
scene in tests/golden/charts/ (tests/chart_scene.py), not the same bytes (matplotlib is not pinned,
and another version may write the same chart with other bytes)."""

import functools
import os
import re
import shlex
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "plots.sh"
SCENES = Path(__file__).resolve().parent / "golden" / "charts"  # what each committed chart shows


def _commands(path: Path) -> list[str]:
    """The `roofline ...` command lines of a shell script (and its `python3 bench/...` ones, which
    write with --out too, and its `bash bench/...` and `cp` ones, which write their last argument),
    continuation lines joined."""
    text = path.read_text().replace("\\\n", " ")
    return [" ".join(line.split()) for line in text.splitlines()
            if line.strip().startswith(("roofline ", "python3 bench/", "bash bench/", "cp "))]


def _outputs(commands: list[str], name: str = "h200") -> set[str]:
    found = set()
    for command in commands:
        for match in re.finditer(r'--(?:out|chart) "?plots/([^" ]+)"?', command):
            found.add(match.group(1).replace("$name", name))
        last = command.split()[-1].strip('"')
        if command.startswith(("bash bench/", "cp ")) and last.startswith("plots/"):
            found.add(last.removeprefix("plots/").replace("$name", name))
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
    committed = {p.relative_to(ROOT / "plots").as_posix() for p in (ROOT / "plots").rglob("*") if p.is_file()}
    folders = {m for m in made if m.endswith("/")}  # `cp ... plots/FOLDER/`: what it copies there
    assert {c for c in committed - made if not any(c.startswith(f) for f in folders)} == set(), \
        "in plots/ without a making command"
    assert made - folders - committed == set(), "made but not committed"
    assert all(any(c.startswith(f) for c in committed) for f in folders), "a folder made but not committed"


def drawn(args: list[str], out: Path) -> list:
    """Run `roofline ARGS` in-process from the repository root and return the matplotlib figures it
    saved (each still saved to its file by matplotlib: the hook records, it does not replace)."""
    from matplotlib.figure import Figure
    from typer.testing import CliRunner

    from roofline.cli import app

    figures, save = [], Figure.savefig

    def recording(fig, *a, **kw):
        figures.append(fig)
        return save(fig, *a, **kw)

    Figure.savefig = recording
    try:
        result = CliRunner().invoke(app, args)
    finally:
        Figure.savefig = save
    assert result.exit_code == 0, result.output
    assert out.is_file(), result.output
    return figures


def png_decodes(path: Path, fig) -> None:
    """The cheap check of the bytes: `path` is a PNG that decodes, of the figure's size in pixels."""
    from PIL import Image

    with Image.open(path) as image:
        assert image.format == "PNG"
        image.load()
        width, height = image.size
    w_in, h_in = fig.get_size_inches()
    assert (width, height) == (round(w_in * fig.dpi), round(h_in * fig.dpi)), path


COMMANDS = {Path(re.search(r"--(?:out|chart) plots/(\S+)", c).group(1)).stem: c for c in _charts()}


@functools.cache
def drawn_scene(name: str) -> dict:
    """The scene of committed chart `name` as its command in bench/plots.sh draws it now, from the
    repository root, into a folder of its own; once per process (both tests below read it). The
    file written is checked to be a PNG that decodes, of the figure's size."""
    import chart_scene

    command = COMMANDS[name]
    target = re.search(r"--(?:out|chart) (plots/\S+)", command).group(1)
    args = shlex.split(command)[1:]
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / Path(target).name
        args[args.index(target)] = str(out)
        try:
            os.chdir(ROOT)
            (fig,) = drawn(args, out)
        finally:
            os.chdir(cwd)
        if out.suffix == ".png":
            png_decodes(out, fig)
        got = chart_scene.scene(fig)
    golden = SCENES / f"{name}.json"
    if os.environ.get("ROOFLINE_UPDATE_GOLDEN"):
        chart_scene.dump(got, golden)
    return got


@pytest.mark.xdist_group("committed_charts")
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_committed_chart_draws_what_its_scene_records(name):
    """Each chart of bench/plots.sh, drawn from the committed JSON now, shows what
    tests/golden/charts/<name>.json records: the same texts, lines and points (their data), colours,
    styles, scales, limits and ticks (tests/chart_scene.py, within tolerances), whatever bytes the
    installed matplotlib writes. After an intended change of a chart, regenerate the scenes with
    ROOFLINE_UPDATE_GOLDEN=1 pytest tests/test_plots.py and read their diff."""
    import chart_scene

    golden = SCENES / f"{name}.json"
    found = chart_scene.differences(drawn_scene(name), chart_scene.load(golden), part="content")
    assert found == [], f"plots/{name} draws otherwise than {golden.relative_to(ROOT)}:\n" + "\n".join(found)


@pytest.mark.xdist_group("committed_charts")
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_committed_chart_places_its_labels_where_its_scene_records(name):
    """Where each chart's texts stand (their offsets from the points they label, their angles)
    and where its axes sit, as its scene records: under the matplotlib release that recorded the
    scene only, since these follow the fonts' extents, which another release may measure otherwise
    (tests/test_chart_layout.py holds every release to labels clear of each other)."""
    import chart_scene

    golden = SCENES / f"{name}.json"
    want = chart_scene.load(golden)
    got = drawn_scene(name)
    if not chart_scene.same_matplotlib(want):
        pytest.skip(f"the scene was recorded under matplotlib {want.get('matplotlib')}, this is {got['matplotlib']}")
    found = chart_scene.differences(got, want, part="placement")
    assert found == [], f"plots/{name} places its texts otherwise than {golden.relative_to(ROOT)}:\n" + "\n".join(found)


def test_every_chart_scene_belongs_to_a_committed_chart():
    """No scene outlives its chart: each file in tests/golden/charts/ is a chart of bench/plots.sh."""
    assert {p.stem for p in SCENES.glob("*.json")} == set(COMMANDS)


def test_every_committed_results_file_is_valid_against_the_published_schema():
    """`roofline schema` (and `--profile`) is what other tools validate files with: every file in
    plots/ passes it."""
    import json

    import jsonschema

    from roofline import documents

    for path in sorted((ROOT / "plots").rglob("*.json")):
        doc = json.loads(path.read_text())
        jsonschema.validate(doc, documents.schema_of(doc.get("kind", "run")))


def test_a_scene_comparison_notices_what_a_reader_would():
    """The comparison is not so loose that it passes a changed chart: a point moved by 1 %, a roof
    in another colour, a label's words, a scale, a label moved by a few points each fail it; a
    number within its tolerance passes."""
    import copy

    import chart_scene

    want = chart_scene.load(SCENES / "roofline-h200.json")
    ax = want["axes"][0]
    point = next(i for i, line in enumerate(ax["lines"]) if line["marker"] != "None" and len(line["x"]) == 1)
    labelled = next(i for i, t in enumerate(ax["texts"]) if "offset points" in t)

    def changed(edit) -> list[str]:
        got = copy.deepcopy(want)
        edit(got["axes"][0])
        return chart_scene.differences(got, want)

    assert changed(lambda a: a["lines"][point]["y"].__setitem__(0, a["lines"][point]["y"][0] * 1.01))
    assert changed(lambda a: a["lines"][0].__setitem__("color", "#ff7f0eff"))
    assert changed(lambda a: a["texts"][0].__setitem__("text", a["texts"][0]["text"] + "!"))
    assert changed(lambda a: a.__setitem__("yscale", "linear"))
    assert changed(lambda a: a["texts"][labelled]["offset points"].__setitem__(0, 1e3))
    assert chart_scene.differences(want, want) == []
    assert not changed(lambda a: a["lines"][point]["y"].__setitem__(0, a["lines"][point]["y"][0] * (1 + 1e-6)))
    assert not changed(lambda a: a["lines"][0].__setitem__("color", "#1f77b5ff"))  # one step of 255
    # a label's move is placement only: what is drawn is the same
    got = copy.deepcopy(want)
    got["axes"][0]["texts"][labelled]["offset points"][0] += 3
    assert chart_scene.differences(got, want, part="content") == []
    assert chart_scene.differences(got, want, part="placement")
