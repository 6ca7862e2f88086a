"""The document registry (`roofline.documents`): it gives what the commands give today (every
golden --json case through the registry, byte for byte; every decision of `plot` over every kind of
file), a new kind of document is one entry, and no module outside it tests what kind a document is."""

import ast
import json
from pathlib import Path

import pytest
from conftest import FIXTURES
from test_golden_json import ROOT

from typer.testing import CliRunner

from roofline import documents
from roofline.cli import app
from roofline.errors import UsageError
from roofline.render.lines import Note

PLOTS = ROOT / "plots"


# --- the same documents as the commands print ---------------------------------------------------

# (Every golden --json is printed through the registry by the commands themselves: tests/test_golden_json.py.)


def test_what_each_command_reads():
    assert documents.reads_table() == {"show": ("run", "profile", "grade", "trace"), "plot": ("run", "profile", "grade"),
                                       "compare": ("run", "profile", "grade"),
                                       "whatif": ("run", "profile"), "project": ("run", "profile"),
                                       "comms": ("trace",)}
    assert documents.reads("whatif") == ("whatif reads a run's results (roofline run) or a profile of a "
                                         "program (roofline profile)")


# --- plot: the same decisions as api.plot -------------------------------------------------------

DRAWERS = [("roofline_chart", "draw"), ("roofline_chart", "draw_many"), ("sweep_chart", "draw"),
           ("energy_chart", "draw"), ("profile_chart", "draw"), ("grade_chart", "draw"), ("html_report", "write")]
PLOT_FILES = {"run": [FIXTURES / "results-h200.json"], "failed": ["{failed}"], "sweep": [PLOTS / "sweep-h200.json"],
              "energy": [PLOTS / "results-h200-energy.json"], "profile": [PLOTS / "profile-h200-gpt2.json"],
              "grade": [PLOTS / "grades-h200.json"], "precisions": [PLOTS / "results-h200.json",
                                                                      PLOTS / "results-h200-bf16.json"],
              "profile+run": [PLOTS / "profile-h200-gpt2.json", FIXTURES / "results-h200.json"]}
PLOT_ASKS = [(kind, measured, highlight, suffix) for kind in ("roofline", "sweep", "energy") for measured in (False, True)
             for highlight in (None, ["naive"], ["nobody"], ["register_strip"]) for suffix in (".png", ".html")]


# --- a new kind of document is one entry ----------------------------------------------------------

def _toy_kind():
    from typing import ClassVar, Literal

    from roofline.documents.registry import ReadKind
    from roofline.results.schema import _Document

    class ToyResults(_Document):
        kind_name: ClassVar[str] = "toy"
        kind: Literal["toy"] = "toy"
        schema_version: Literal[1] = 1
        cups: int

    class ToyKind(ReadKind):
        name = "toy"
        types = (ToyResults,)
        model = ToyResults
        file_kind = "toy"
        title = "a toy file (a test's)"
        short = "a toy file"
        pair = "two toy files"
        read_by = ("show", "plot", "compare")
        paired_alone = True

        def parse(self, data, source, reads):
            return ToyResults.model_validate(data)

        def json(self, obj):
            return obj.model_dump(mode="json")

        def view(self, obj, width, **context):
            return [f"{obj.cups} cups", Note("a toy")]

        def shown(self, paths, docs):
            return self.json(docs[0]), lambda width: self.view(docs[0], width)

        def chart(self, request, docs, notes):
            request.out.write_text(f"{docs[0].cups} cups drawn")
            return notes + ["drawn as a toy"]

        def compare(self, docs, paths, force, chart_out):
            return docs[1].cups - docs[0].cups

    return ToyKind()


def test_a_new_kind_of_document_is_one_entry(tmp_path):
    """A toy kind registered in the test, nothing else touched: `load` reads its files and
    refuses them for the commands that do not read it, in words its entry gives; `show`, `plot`
    and `compare` dispatch to it; and the commands' refusals of other files name it."""
    toy = documents.register(_toy_kind())
    try:
        a, b = tmp_path / "a.json", tmp_path / "b.json"
        a.write_text(json.dumps({"kind": "toy", "cups": 3}))
        b.write_text(json.dumps({"kind": "toy", "cups": 5}))
        doc = documents.load(a, "show")
        assert documents.kind_of(doc) is toy and doc.cups == 3
        with pytest.raises(UsageError, match=r"a toy file \(a test's\), which show, plot and compare read; "
                                             r"whatif reads a run's results .* or a profile"):
            documents.load(a, "whatif")
        assert documents.reads("show").endswith("a grade file (roofline run), a PyTorch profiler trace or a toy file "
                                                "(a test's)")
        assert documents.reads("compare").endswith("two grade files or two toy files")
        docs, notes = documents.read_all([a])
        document, view = documents.shown([a], docs)
        assert document["cups"] == 3 and view(80) == ["3 cups", "a toy"] and isinstance(view(80)[1], Note)
        assert documents.view(doc, 80)[0] == "3 cups"
        out = tmp_path / "toy.png"
        assert documents.chart([a], out) == ["drawn as a toy"] and out.read_text() == "3 cups drawn"
        assert documents.compare(a, b) == 2
        with pytest.raises(UsageError, match="is not a toy file but a run's results .* and .*a.json is one"):
            documents.compare(FIXTURES / "results-h200.json", a)
        with pytest.raises(UsageError, match="give it alone"):
            documents.read_all([a, b])
        assert documents.schema_of("toy")["properties"]["cups"]["type"] == "integer"
        r = CliRunner().invoke(app, ["show", str(a)])  # and the command line with it, nothing else touched
        assert r.exit_code == 0 and r.stdout.splitlines()[0] == "3 cups" and "roofline: note: a toy" in r.stderr
        r = CliRunner().invoke(app, ["whatif", str(a)])
        assert r.exit_code == 2 and "a toy file (a test's), which show, plot and compare read" in r.stderr
        r = CliRunner().invoke(app, ["schema", "toy"])
        assert r.exit_code == 0 and json.loads(r.stdout)["properties"]["cups"]["type"] == "integer"
    finally:
        documents.unregister("toy")
    with pytest.raises(UsageError, match="kind 'toy' is not one roofline writes"):
        documents.load(a)


def test_every_kind_module_is_found_without_a_list():
    """The registry imports every module of roofline/documents (the kinds of file first, in the order
    refusals name them): each kind a module there declares is registered, with no list to edit."""
    import re

    declared = {name for path in (ROOT / "roofline" / "documents").glob("*.py")
                for name in re.findall(r'^    name = "([a-z-]+)"$', path.read_text(), re.M)}
    assert len(declared) == 16 and declared == set(documents.names())
    assert documents.names()[:4] == ["run", "profile", "grade", "trace"]
    r = CliRunner().invoke(app, ["schema", "nope"])
    assert r.exit_code == 2 and all(name in r.stderr for name in declared)


# --- no module outside roofline/documents tests a document kind -----------------------------------

DOCUMENT_TYPES = {"Results", "ProfileResults", "GradeResults", "GradeChanges", "WorkComparison", "Check", "WhatIf",
                  "Projection", "CommsReport"}
DOCUMENT_KINDS = {"run", "profile", "grade"}
# `.kind` in these is something else: a random draw's, a graded subject's, a dtype's, an energy fit's
OTHER_KINDS = ("roofline/measure/", "roofline/workload/", "roofline/model/")
# to be wired to the registry by the split of the commands (they call `documents` then)
PENDING: set[str] = set()  # every module asks the registry now


def _kindish(node) -> str | None:
    """'kind' where `node` reads something's kind (`x.kind`, `kind`, `getattr(x, "kind")`,
    `x.get("kind")`), 'named' where it reads a document's kind as the registry names it
    (`x.kind_name`, `kind_of(x)`), else None."""
    if isinstance(node, ast.Attribute):
        return "named" if node.attr == "kind_name" else "kind" if node.attr == "kind" else None
    if isinstance(node, ast.Name):
        return "kind" if node.id == "kind" else None
    if isinstance(node, ast.Call):
        called = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if called == "kind_of":
            return "named"
        if called in ("getattr", "get") and any(isinstance(a, ast.Constant) and a.value == "kind" for a in node.args):
            return "kind"
    return None


def _kind_tests(path: Path) -> list[str]:
    """The places in `path` that test what kind a document is: isinstance against a document
    type; a comparison of a document's kind as the registry names it (`kind_name`, `kind_of`);
    of a kind with 'run', 'profile' or 'grade'; or of two kinds (outside the packages whose
    `.kind` is something else)."""
    found = []
    rel = str(path.relative_to(ROOT))
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            named |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if named & DOCUMENT_TYPES:
                found.append(f"{rel}:{node.lineno}: isinstance(..., {', '.join(sorted(named & DOCUMENT_TYPES))})")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            strings = {s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)}
            kinds = [k for k in map(_kindish, sides) if k]
            if ("named" in kinds or (kinds and strings & DOCUMENT_KINDS)
                    or (len(kinds) > 1 and not rel.startswith(OTHER_KINDS))):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_the_registry_tests_a_document_kind():
    found = []
    for path in sorted((ROOT / "roofline").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel.startswith("roofline/documents/") or rel in PENDING:
            continue
        found += _kind_tests(path)
    assert found == []
    # the test finds what it is for: the modules still to be wired hold such tests today
    assert any(_kind_tests(ROOT / p) for p in PENDING) or not PENDING


def test_the_registry_sits_above_analysis_render_and_results():
    """`analysis`, `render` and `results` import nothing of `documents`; `documents` imports no
    command module (but the listing types, until they move below it)."""
    from test_layers import _imported_modules

    for package in ("results", "analysis", "render", "model"):
        for name, modules in _imported_modules(package).items():
            assert [m for m in modules if m.startswith("roofline.documents")] == [], f"{package}/{name}"
    for name, modules in _imported_modules("documents").items():
        bad = [m for m in modules if m.startswith(("roofline.cli", "roofline.outcome", "roofline.console",
                                                   "roofline.measure", "roofline.collect"))]
        assert bad == [], f"documents/{name} imports {bad}"


def test_importing_documents_loads_nothing_and_occupancy_json_stays_light():
    import subprocess
    import sys

    code = ("import sys; import roofline.documents; from roofline.documents import occupancy_json, device_json; "
            "from roofline.commands import occupancy; occupancy_json(occupancy.occupancy(64, 256, arch='sm_90')); "
            "print(sorted(m for m in sys.modules if m.startswith(('roofline.results', 'roofline.analysis', 'numpy', "
            "'matplotlib', 'roofline.api'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_new_command_is_one_room():
    """A room (a module with MOUNT, command, and its old spellings) mounted as the app mounts each
    (`cli.mount`): its command runs, its help is the console's, its old flag answers in one line."""
    import types

    import typer

    from roofline import cli
    from roofline.console import present
    from roofline.outcome import Outcome

    room = types.ModuleType("toy_room")
    room.MOUNT = dict(short_help="Count cups.")
    room.RENAMED = {"--mugs": "--cups N"}

    def command(cups: int = typer.Option(1, "--cups", metavar="N", help="Cups.")):
        present(Outcome({"cups": cups}, lambda width: [f"{cups} cups"]))

    room.command = command
    toy = typer.Typer(cls=cli.OneLineErrors, add_completion=False)
    cli.mount(toy, "toy", room)
    cli.mount(toy, "show", __import__("roofline.commands.show", fromlist=["show"]))  # a group of two
    try:
        r = CliRunner().invoke(toy, ["toy", "--cups", "3"])
        assert (r.exit_code, r.stdout) == (0, "3 cups\n")
        r = CliRunner().invoke(toy, ["toy", "--mugs", "3"])
        assert r.exit_code == 2 and r.stderr == "roofline: error: roofline toy --mugs is renamed: --cups N\n"
    finally:
        cli.OneLineErrors.renamed.pop(("toy", "--mugs"), None)


def test_what_commands_print_with_json_is_refused_by_name_where_a_file_is_read(tmp_path):
    """A listing printed with --json (the kernel listing, an op table) given where a results file is
    read: one line naming the command that printed it, exit 2."""
    plots = ROOT / "plots"
    runs = [str(plots / f"results-h200-bf16-8192-run{i}.json") for i in (1, 2)]
    profiles = [str(plots / f"profile-h200-adamw-{k}.json") for k in ("foreach", "fused")]
    printed = {"listing.json": (["kernels", "--model-only", "--json"], "the kernel listing `roofline kernels --json`"),
               "ops.json": (["show", str(plots / "profile-h200-llama-ops.json"), "--by", "op", "--json"],
                            "the op or module table `roofline show FILE --by op|module --json`"),
               "whatif.json": (["whatif", runs[0], "--json"], "the what-if `roofline whatif FILE --json`"),
               "compare.json": (["compare", *runs, "--json"], "the comparison `roofline compare A B --json`"),
               "compare-profiles.json": (["compare", *profiles, "--json"], "the comparison `roofline compare A B"),
               "project.json": (["project", runs[0], "--gpu", "h100-sxm", "--json"],
                                "the projection `roofline project FILE --json`")}
    for name, (command, says) in printed.items():
        made = CliRunner().invoke(app, command)
        assert made.exit_code == 0, made.output
        (tmp_path / name).write_text(made.stdout)
        for reader in (["show"], ["plot", "--out", str(tmp_path / "x.png")], ["whatif"]):
            r = CliRunner().invoke(app, [reader[0], str(tmp_path / name), *reader[1:]])
            assert r.exit_code == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, (name, r.output)


def test_show_json_of_runs_of_two_problems_is_an_array_of_one_run_document_each():
    # an FP32 run and a TF32 one are not merged: --json prints both, each a schema run document
    import jsonschema

    plots = ROOT / "plots"
    r = CliRunner().invoke(app, ["show", str(plots / "results-h200.json"), str(plots / "results-h200-tf32.json"), "--json"])
    assert r.exit_code == 0, r.output
    docs = json.loads(r.stdout)
    schema = json.loads(CliRunner().invoke(app, ["schema", "run"]).stdout)
    assert isinstance(docs, list) and [d["problem"]["dtype"] for d in docs] == ["float32", "tf32"]
    for d in docs:
        jsonschema.validate(d, schema)
