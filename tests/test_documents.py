"""The document registry (`roofline.documents`): it gives what the commands give today (every
golden --json case through the registry, byte for byte; every decision of `plot` over every kind of
file), a new kind of document is one entry, and no module outside it tests what kind a document is."""

import ast
import json
from pathlib import Path

import pytest
from conftest import FIXTURES, make_doc
from test_golden_json import CASES, GOLDEN, ROOT, run_case
from typer.testing import CliRunner

from roofline import api, api_occupancy, documents
from roofline.cli import app
from roofline.errors import UsageError
from roofline.render.lines import Note

PLOTS = ROOT / "plots"


# --- the same documents as the commands print ---------------------------------------------------

# command -> the api function whose result the registry turns into the --json (show: its files' reading)
CAPTURED = {"compare": (api, "compare"), "check": (api, "check"), "whatif": (api, "whatif"),
            "project": (api, "project"), "comms": (api, "comms"), "kernels": (api, "kernels"),
            "device": (api, "device"), "occupancy": (api_occupancy, "occupancy"), "show": (api, "show_all")}


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][0][0] in CAPTURED))
def test_the_registry_prints_every_golden_document_byte_for_byte(name, tmp_path, monkeypatch):
    """Each case run as the command runs it, the api's result captured; the registry's document
    of that result (and for show, of the files read again through `documents.read_all`) printed
    as the command prints it is the golden text."""
    command = CASES[name][0][0]
    module, function = CAPTURED[command]
    calls = []
    original = getattr(module, function)

    def capture(*args, **kwargs):
        result = original(*args, **kwargs)
        calls.append((args, kwargs, result))
        return result

    monkeypatch.setattr(module, function, capture)
    folder = tmp_path / "files"
    folder.mkdir()
    code, printed = run_case(name, folder)
    assert code == CASES[name][1] and len(calls) == 1
    args, kwargs, result = calls[0]
    if command == "show":
        paths = args[0]
        docs, notes = documents.read_all(paths, "show")
        assert (docs, notes) == result
        document, _ = documents.shown(paths, docs)
    elif command == "compare":
        document = documents.to_json(documents.compare(*args, **kwargs))
    elif command == "check":
        document = documents.to_json(documents.check(*args, **kwargs))
    elif command == "occupancy":
        document = documents.occupancy_json(result)
    elif command == "device":
        document = documents.device_json(result)
    else:
        document = documents.to_json(result)
    text = json.dumps(document, indent=1) + "\n"
    for path, shown in ((folder, ""), (FIXTURES, "tests/fixtures/"), (ROOT, "")):
        text = text.replace(str(path) + "/", shown)
    assert text == printed == (GOLDEN / f"{name}.json").read_text()


def test_reads_and_refusals_are_the_api_s():
    assert documents.reads_table() == api.READS
    for command in api.READS:
        assert documents.reads(command) == api.reads(command)
    grades, profile = PLOTS / "grades-h200.json", PLOTS / "profile-h200-gpt2.json"
    for path, command in ((grades, "whatif"), (grades, "project"), (FIXTURES / "traces" / "public" / "nccl_data.json.gz",
                                                                       "show"), (PLOTS / "bogus.json", "plot")):
        with pytest.raises(UsageError) as ours:
            documents.load(path, command)
        with pytest.raises(UsageError) as theirs:
            api.read(path, command)
        assert str(ours.value) == str(theirs.value)
    run = FIXTURES / "results-h200.json"
    with pytest.raises(UsageError, match=r"results-h200.json: a run's results \(roofline run or tune\), not a grade "
                                         r"file \(roofline grade writes them\)$"):
        documents.load_kind(run, "grade", why=" (roofline grade writes them)")
    assert documents.load_kind(grades, "grade").entries
    for pair in ((grades, FIXTURES / "results-h200.json"), (profile, grades)):
        for command in ("compare", "check"):
            call = (documents.compare, api.compare) if command == "compare" else (documents.check, api.check)
            with pytest.raises(UsageError) as ours:
                call[0](*pair)
            with pytest.raises(UsageError) as theirs:
                call[1](*pair)
            assert str(ours.value) == str(theirs.value)


def test_the_views_are_outcome_s(tmp_path):
    """`documents.shown`, and each decision's view, give the lines `outcome` gives (the same
    text; `Note` lines from `render.lines`)."""
    from roofline import outcome

    def text(lines):
        from rich.console import Console

        def shown(x):
            console = Console(width=120, record=True, file=open("/dev/null", "w"))
            console.print(x)
            return console.export_text()
        return [(type(x).__name__, x if isinstance(x, str) else shown(x)) for x in lines]

    for files in ([FIXTURES / "results-h200.json"], [PLOTS / "sweep-h200.json"], [PLOTS / "profile-h200-gpt2.json"],
                  [PLOTS / "grades-h200.json"], [PLOTS / "results-h200.json", PLOTS / "results-h200-bf16.json"]):
        docs, notes = documents.read_all(files)
        document, view = documents.shown(files, docs)
        theirs = outcome.show(files, docs, notes)
        assert document == theirs.document
        assert text(view(120)) == text(theirs.view(120))
    before, after = PLOTS / "profile-h200-adamw-foreach.json", PLOTS / "profile-h200-adamw-fused.json"
    cmp = documents.compare(before, after)
    assert text(documents.view(cmp, 120, before=before, after=after)) == text(outcome.compare(cmp, before, after,
                                                                                              None).view(120))
    gate = documents.check(after, before)
    assert text(documents.view(gate, 120)) == text(outcome.check(gate).view(120))
    w = api.whatif(PLOTS / "profile-h200-gpt2.json")
    assert text(documents.view(w, 120, out=Path("w.png"))) == text(outcome.whatif(w, Path("w.png")).view(120))
    p = api.project(PLOTS / "profile-h200-gpt2.json", ["h100-sxm"])
    assert text(documents.view(p, 120)) == text(outcome.project(p, None).view(120))
    spec = api.device("h200")
    assert text(documents.view(spec, 120)) == text(outcome.device(spec).view(120))


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


def test_chart_makes_every_decision_api_plot_makes(tmp_path, monkeypatch):
    """Every kind of file under every --kind, --measured, --highlight and .png/.html: the same
    drawing called with the same arguments, the same notes, or the same refusal."""
    from roofline import render
    import importlib

    drawn = []
    for module, function in DRAWERS:
        mod = importlib.import_module(f"roofline.render.{module}")
        monkeypatch.setattr(mod, function, lambda *a, _w=f"{module}.{function}", **k: drawn.append((_w, a, k)))
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps(make_doc(failed=("register_strip",))))
    seen = set()
    for files, paths in PLOT_FILES.items():
        paths = [failed if p == "{failed}" else p for p in paths]
        for kind, measured, highlight, suffix in PLOT_ASKS:
            out = tmp_path / f"chart{suffix}"
            outcome = []
            for plot in (api.plot, documents.chart):
                drawn.clear()
                try:
                    notes = plot(paths, out, kind, measured, highlight)
                    outcome.append(("notes", notes, [(w, len(a), k) for w, a, k in drawn]))
                except UsageError as exc:
                    outcome.append(("refused", str(exc), []))
            assert outcome[0] == outcome[1], (files, kind, measured, highlight, suffix)
            seen.add((files, outcome[0][0]))
    assert {f for f, how in seen if how == "notes"} == set(PLOT_FILES) - {"profile+run"}  # each kind drawn somehow
    assert len({f for f, how in seen if how == "refused"}) >= 6


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
        assert documents.reads("show").endswith("a grade file (roofline grade) or a toy file (a test's)")
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
    finally:
        documents.unregister("toy")
    with pytest.raises(UsageError, match="kind 'toy' is not one roofline writes"):
        documents.load(a)


# --- no module outside roofline/documents tests a document kind -----------------------------------

DOCUMENT_TYPES = {"Results", "ProfileResults", "GradeResults", "GradeChanges", "WorkComparison", "Check", "WhatIf",
                  "Projection", "CommsReport"}
DOCUMENT_KINDS = {"run", "profile", "grade"}
# `.kind` in these is something else: a random draw's, a graded subject's, a dtype's, an energy fit's
OTHER_KINDS = ("roofline/measure/", "roofline/workload/", "roofline/model/")
# to be wired to the registry by the split of the commands (they call `documents` then)
PENDING = {"roofline/api.py", "roofline/outcome.py"}


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
            "from roofline import api_occupancy; occupancy_json(api_occupancy.occupancy(64, 256, arch='sm_90')); "
            "print(sorted(m for m in sys.modules if m.startswith(('roofline.results', 'roofline.analysis', 'numpy', "
            "'matplotlib', 'roofline.api'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['roofline.api_occupancy']"
