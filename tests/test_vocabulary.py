"""The command line against its vocabulary (docs/cli.md), read from the app itself.

How many commands and options there are; a flag spelled alike in two commands takes the same kind
of value; `--out` only ever a command's main product and a reader's extra chart only `--chart`;
none of the spellings issue 42 retired is back; docs/cli.md's table is the app's, option by option;
and every old spelling the app knows (`RENAMED` of each command's module, `MERGED` of the cli) is
answered with exit 2 and one line naming the new one.

`python tests/test_vocabulary.py` prints the app's side of docs/cli.md's table (the first four
columns), to check a new option against or to start its row from."""

import re
from collections import defaultdict
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

import roofline.cli
from roofline.console import OneLineErrors

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = ROOT / "docs" / "cli.md"

COMMANDS = ("run", "profile", "comms", "plot", "show", "occupancy", "device", "kernels", "new", "compare",
            "whatif", "project", "schema")
MAIN_PRODUCT = {"run", "profile", "plot"}  # the commands whose --out is what they make
RETIRED = ("--results", "--source", "--plot", "--m", "--n", "--k", "--sizes")

# Where the code breaks the vocabulary today: each one a strict xfail, so that the fix shows up as a
# failure here and its entry is taken out.
BREAKS: dict[str, str] = {}  # (none today)


def _app():
    return typer.main.get_command(roofline.cli.app)


def _options(command) -> list:
    """A command's options, -h/--help left out."""
    return [p for p in command.params if p.param_type_name == "option" and "--help" not in p.opts]


def _arguments(command) -> list:
    return [p for p in command.params if p.param_type_name == "argument"]


def _spellings(option) -> list[str]:
    return [*option.opts, *option.secondary_opts]


def _by_flag() -> dict[str, list[tuple[str, object]]]:
    """Every flag spelling -> the (command, option) pairs that have it."""
    found = defaultdict(list)
    for name, command in _app().commands.items():
        for option in _options(command):
            for flag in _spellings(option):
                found[flag].append((name, option))
    return found


def _takes(option) -> str:
    return "" if option.is_flag else option.metavar


# options the app takes as lists only to refuse a second one with a line of its own (not repeatable)
ONE_ONLY = {("profile", "--import")}


def app_rows() -> list[tuple[str, str, str, bool]]:
    """(command, flag spellings, the value it takes, repeatable) for every option of the app."""
    return [(name, " / ".join(_spellings(o)), _takes(o), bool(o.multiple) and (name, o.opts[0]) not in ONE_ONLY)
            for name, command in _app().commands.items() for o in _options(command)]


# --- (a) how much there is ------------------------------------------------------------------------

def test_thirteen_commands_at_most_eighty_seven_options():
    # 87: run --timeline (issue 46: --timeline on run as on profile) is the 87th
    app = _app()
    assert tuple(app.commands) == COMMANDS
    assert len(app.commands) <= 13
    options = sum(len(_options(c)) for c in app.commands.values())
    assert 0 < options <= 87, f"{options} options"


# --- (b) one meaning per flag -----------------------------------------------------------------------

def _shared_flags():
    for flag, uses in sorted(_by_flag().items()):
        if len(uses) > 1:
            marks = [pytest.mark.xfail(strict=True, reason=BREAKS[flag])] if flag in BREAKS else []
            yield pytest.param(flag, id=flag, marks=marks)


@pytest.mark.parametrize("flag", list(_shared_flags()))
def test_a_flag_in_two_commands_takes_the_same_value(flag):
    uses = _by_flag()[flag]
    if all(o.is_flag for _, o in uses):
        return
    takes = {name: _takes(o) for name, o in uses}
    assert len(set(takes.values())) == 1, f"{flag} takes {takes}"


def test_the_shared_flags_are_found():
    shared = {f for f, uses in _by_flag().items() if len(uses) > 1}
    assert {"--gpu", "--json", "--chart", "--out", "--declare", "--dtype", "--size"} <= shared


def test_out_is_only_ever_the_main_product():
    having = {name for name, _ in _by_flag()["--out"]}
    assert having == MAIN_PRODUCT


def test_a_reader_s_extra_chart_is_only_ever_chart():
    """Outside plot (whose chart is its product), an option that draws a chart is --chart."""
    for name, command in _app().commands.items():
        if name == "plot":
            continue
        for option in _options(command):
            draws = re.search(r"\bdraws?\b", option.help or "", re.I) and not option.is_flag
            if draws:
                assert option.opts == ["--chart"], f"{name} {option.opts}: {option.help}"
    having = {name for name, _ in _by_flag()["--chart"]}
    assert having == {"comms", "occupancy", "compare", "whatif", "project"}


def test_gpu_is_a_modelled_gpu_and_device_the_physical_one():
    """--gpu's help speaks of a preset (or a device file) wherever it is; --device picks a GPU of
    the machine and appears nowhere --gpu means the same."""
    for name, option in _by_flag()["--gpu"]:
        assert option.metavar == "NAME"
        assert re.search(r"preset", option.help or "", re.I), f"{name} --gpu: {option.help}"
    for name, option in _by_flag()["--device"]:
        assert option.metavar == "N|BUS_ID", name


# --- (c) the retired spellings are gone ------------------------------------------------------------

@pytest.mark.parametrize("flag", RETIRED)
def test_no_command_has_a_retired_spelling(flag):
    assert _by_flag().get(flag, []) == []


# --- (d) docs/cli.md's table is the app's ------------------------------------------------------------

def _doc_rows() -> list[tuple[str, str, str, bool]]:
    """The option rows of docs/cli.md's table (its positional inputs left out)."""
    section = CLI_DOC.read_text().split("## Every input and option", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) != 5 or cells[0] in ("command", "---") or cells[2] == "(positional)":
            continue
        command = cells[0].strip("`")
        flags = " / ".join(re.findall(r"`(--[a-z0-9-]+)`", cells[1]))
        takes = cells[2].strip("`").replace("\\|", "|")
        rows.append((command, flags, takes, cells[3] == "yes"))
    return rows


def test_every_option_of_the_app_is_in_the_table_and_no_other():
    doc, app = _doc_rows(), app_rows()
    assert len(doc) > 60
    assert sorted(set(doc) - set(app)) == [], "in docs/cli.md, not in the app (or not as it is there)"
    assert sorted(set(app) - set(doc)) == [], "in the app, not in docs/cli.md's table"


def test_every_input_of_the_app_is_in_the_table():
    text = CLI_DOC.read_text()
    for name, command in _app().commands.items():
        for argument in _arguments(command):
            row = f"| `{name}` | `{argument.metavar}` | (positional) |"
            assert row in text.replace("\\|", "|"), row


def test_the_table_lists_the_thirteen_commands():
    section = CLI_DOC.read_text().split("## The commands", 1)[1].split("\n## ", 1)[0]
    assert tuple(re.findall(r"^\| `([a-z]+)` \|", section, re.M)) == COMMANDS


# --- (e) each old spelling is answered with the new one ---------------------------------------------

# What to pass for each command so that the parser reaches the old flag: it is refused whatever
# follows, before any argument is checked.
def _old_spellings():
    for (command, old), new in sorted(OneLineErrors.renamed.items()):
        yield pytest.param([command, old, "x"], new, f"roofline {command} {old} is renamed: ", id=f"{command} {old}")
    for old, new in sorted(OneLineErrors.merged.items()):
        yield pytest.param([old, "x"], new, f"roofline {old} is now: ", id=old)


def test_the_old_spellings_are_known():
    assert len(OneLineErrors.renamed) >= 25 and set(OneLineErrors.merged) == {"grade", "check", "tune"}
    assert set(roofline.cli.MERGED) == set(OneLineErrors.merged)


@pytest.mark.parametrize("args, new, said", list(_old_spellings()))
def test_an_old_spelling_exits_2_with_one_line_naming_the_new(args, new, said):
    result = CliRunner().invoke(roofline.cli.app, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0] == f"roofline: error: {said}{new}"
    # the new spelling names a flag or command the app has
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", new)) - {"--"}
    flags = set(_by_flag())
    assert named <= flags, f"{new!r} names {named - flags}"


def test_the_doc_gives_every_old_spelling():
    section = CLI_DOC.read_text().split("## Old spellings", 1)[1]
    olds = [cells.split(" | ")[0] for cells in section.splitlines() if cells.startswith("| `roofline")]
    for (command, old) in OneLineErrors.renamed:
        assert any(f"`roofline {command} " in o and re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", o)
                   for o in olds), f"docs/cli.md does not give roofline {command} {old}"
    for old in OneLineErrors.merged:
        assert any(o.startswith(f"| `roofline {old} ") for o in olds), f"docs/cli.md does not give roofline {old}"


if __name__ == "__main__":
    print("| command | input or flag | takes | repeatable |")
    for command, flags, takes, repeatable in app_rows():
        flags = " / ".join(f"`{f}`" for f in flags.split(" / "))
        takes = f"`{takes}`".replace("|", "\\|") if takes else ""
        print(f"| `{command}` | {flags} | {takes} | {'yes' if repeatable else ''} |")
