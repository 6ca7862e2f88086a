"""Usage errors of the library's layers name the parameters a Python caller passed, and the command
line words the same errors with its flags (`errors.UsageError`: a placeholder per parameter;
`console` maps each to the command's flag): `parse_max_drop('x')` says "max_drop 'x': ...",
`roofline check --max-drop x` says "--max-drop 'x': ...". No layer below the command line writes
one of its flags into a usage error, `api` and `measure` included, and every placeholder a usage
error writes is a parameter it declares and the command line has a flag for (a static walk of
their sources)."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from roofline.analysis.check import parse_max_drop
from roofline.analysis.whatif import check_target
from roofline.cli import app
from roofline.console import _flags as console_flags
from roofline.errors import UsageError
from roofline.ladder import tiles
from roofline.model.device import from_preset
from roofline.model.occupancy import max_registers_for_blocks
from roofline.model.arch import parse_arch
from roofline.model.precision import check_dtype
from roofline.nsight.run import Options

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "plots" / "results-h200.json"
FLAG = re.compile(r"--[a-z][a-z0-9-]+")
# The command line, whose own messages name its flags: the Typer app, `python -m roofline`, the
# terminal, what each command shows, and the per-command modules it may be split into. Every other
# module of the package is the library, whichever files it is made of.
COMMAND_LINE = ("cli", "__main__", "console", "outcome", "commands")
LIBRARY_SOURCES = sorted(path for path in (ROOT / "roofline").rglob("*.py")
                         if path.relative_to(ROOT / "roofline").parts[0].removesuffix(".py") not in COMMAND_LINE)
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
# files whose usage errors still name flags: files.py's output checks say `--out PATH: ...`, which
# reaches a Python caller of a chart's `draw` or `collect` as written (the walk reached it once
# it covered the whole library rather than a list of its packages)
NOT_YET: set[str] = set()  # (none: every module words its parameters as placeholders)


def _flags() -> set[str]:
    group = typer.main.get_command(app)
    return {o for name in group.list_commands(None) for p in group.get_command(None, name).params
            for o in [*p.opts, *getattr(p, "secondary_opts", [])] if o.startswith("--")}


LIBRARY = [  # (call, the parameter it names, how the message begins for a Python caller)
    (lambda: parse_max_drop("x"), "max_drop", "max_drop 'x': give a fraction"),
    (lambda: check_target(2), "target", "target: 2 (200 %) is not a fraction of the roof"),
    (lambda: check_dtype("int8"), "dtype", "dtype takes fp32, bf16, fp16, tf32, got 'int8'"),
    (lambda: tiles.parse_tile("1"), "autotuned_tile", "autotuned_tile takes 5 positive integers"),
    (lambda: max_registers_for_blocks(parse_arch("sm_90"), 256, 0), "target_blocks", "target_blocks must be >= 1"),
    (lambda: Options(launch_count=0).check(), "launch_count", "launch_count must be 1 to 100,000, got 0"),
    (lambda: from_preset("/no/such/gpu.toml"), "gpu", "gpu /no/such/gpu.toml: cannot read the device file"),
]


@pytest.mark.parametrize("call, param, begins", LIBRARY)
def test_a_library_call_names_the_parameter_and_no_flag(call, param, begins):
    with pytest.raises(UsageError) as caught:
        call()
    exc = caught.value
    assert str(exc).startswith(begins) and not FLAG.search(str(exc)), str(exc)
    assert exc.param == param and exc.params[0] == param


@pytest.mark.parametrize("args, says", [
    (["compare", str(RESULTS), str(RESULTS), "--max-drop", "x"], "--max-drop 'x': give a fraction"),
    (["whatif", str(RESULTS), "--target", "2"], "--target: 2 (200 %) is not a fraction of the roof"),
    (["occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_90", "--target-blocks", "0"],
     "--target-blocks must be >= 1, got 0"),
    (["occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_90", "--smem", "60000"],
     "static shared memory must be at most 49,152 bytes (48 KB), got 60,000; use --dynamic-smem for more"),
    (["kernels", "--gpu", "h200", "--model-only", "--autotuned-tile", "1"], "--autotuned-tile takes 5 positive"),
    (["profile", "--launch-count", "0", "--", "true"], "--launch-count must be 1 to 100,000, got 0"),
    (["device", "--gpu", "/no/such/gpu.toml"], "--gpu /no/such/gpu.toml: cannot read the device file"),
    (["project", str(RESULTS), "--gpu", "/no/such/gpu.toml"], "--gpu /no/such/gpu.toml: cannot read"),
])
def test_the_same_error_through_the_command_line_names_the_flag(args, says):
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2 and r.stderr.startswith(f"roofline: error: {says}"), r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_placeholders_are_worded_by_the_caller_and_kept_through_a_prefix_and_a_pickle():
    exc = UsageError("{max_drop} 'x': or pass {force}", "max_drop", ["force"])
    flags = {"max_drop": "--max-drop", "force": "--force"}
    assert str(exc) == "max_drop 'x': or pass force"
    assert exc.worded(flags) == "--max-drop 'x': or pass --force"
    assert exc.worded({"force": "--force"}) == "max_drop 'x': or pass --force"  # a name the caller lacks: as it is
    assert exc.prefixed("a.json: ").worded(flags) == "a.json: --max-drop 'x': or pass --force"
    assert pickle.loads(pickle.dumps(exc)).worded(flags) == exc.worded(flags)
    plain = UsageError("a.json: {not a placeholder}")  # braces of no declared parameter stay as written
    assert str(plain) == plain.worded(flags) == "a.json: {not a placeholder}" and plain.param is None


def _usage_errors(tree: ast.AST):
    """Each `UsageError(...)` call: its node and its message's string constants and f-string parts,
    joined (an f-string's `{{size}}` is the constant `{size}`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "UsageError" and node.args:
            parts = [n.value for n in ast.walk(node.args[0]) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            yield node, "".join(parts)


def _messages(tree: ast.AST):
    """Each `UsageError(...)` call's line and message (`_usage_errors`)."""
    for node, text in _usage_errors(tree):
        yield node.lineno, text


def _declared(call: ast.Call) -> set[str] | None:
    """The parameters a `UsageError(message, param, mentions)` call declares; None where one is
    worked out at run time (it cannot be read from the source)."""
    given = {**dict(zip(("param", "mentions"), call.args[1:])), **{k.arg: k.value for k in call.keywords}}
    names: set[str] = set()
    for value in given.values():
        items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        for item in items:
            if not isinstance(item, ast.Constant):
                return None
            if isinstance(item.value, str):
                names.add(item.value)
    return names


def test_no_layer_below_the_command_line_names_a_flag_in_a_usage_error():
    """Hints naming another tool's or another command's line (`ncu --import ...`, `roofline run
    --all`) are commands to type, not this command's parameters: they may stay."""
    flags, found = _flags(), []
    for path in LIBRARY_SOURCES:
        if str(path.relative_to(ROOT)) in NOT_YET:
            continue
        for line, text in _messages(ast.parse(path.read_text())):
            text = re.sub(r"(ncu|roofline [a-z]+)\b[^`;)]*", "", text)
            named = [f for f in FLAG.findall(text) if f in flags]
            if named:
                found.append(f"{path.relative_to(ROOT)}:{line}: {', '.join(named)}")
    assert not found, found


def test_every_placeholder_is_a_declared_parameter_the_command_line_has_a_flag_for():
    """`{size}` in a message the error does not declare would reach the user as written; one that no
    command has (`{timeout_s}` for `run --timeout`) would reach them bare. (A parameter declared but
    not written, `registers` of `occupancy --regs`, only says which one was refused.)"""
    group = typer.main.get_command(app)
    known = set(console_flags(group, []))  # every command's parameters, as the console maps them
    found = []
    for path in LIBRARY_SOURCES:
        for node, text in _usage_errors(ast.parse(path.read_text())):
            declared, written = _declared(node), set(PLACEHOLDER.findall(text))
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if declared is not None and written - declared:
                found.append(f"{where}: {sorted(written - declared)} not declared")
            if written - known:
                found.append(f"{where}: {sorted(written - known)} no command's parameter")
    assert not found, found
