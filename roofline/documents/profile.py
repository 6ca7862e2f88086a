"""The profile kind: a program's profile (`roofline profile`, `results.profile`). Read alone; its
view is its kernels' table with its notes; its chart the profile's roofline (no sweep, no energy
per kernel, no highlight), or the HTML report."""

from __future__ import annotations

from pathlib import Path

from .. import files
from ..errors import UsageError
from ..results import store
from ..results.profile import ProfileResults
from .registry import ChartRequest, register
from .work_kind import WorkKind


class ProfileKind(WorkKind):
    name = "profile"
    types = (ProfileResults,)
    model = ProfileResults
    file_kind = "profile"
    title = store.KIND_NAMES["profile"]
    short = "a profile"
    timeline_hint = ("profile the program again with roofline profile --timeline -- COMMAND (Nsight Compute's PM "
                     "sampling), or import a report made with ncu --section PmSampling")
    pair = "two profiles"
    read_by = ("show", "plot", "compare", "whatif", "project")

    def json(self, obj: ProfileResults):
        return store.dump(obj)

    def view(self, obj: ProfileResults, width: int, top: int | None = None, notes: bool = True, **context) -> list:
        """Its `top` kernels (all: None), which roofs its verdicts read, the measured ceilings a counted
        rate went past, its kernels over their runs where it records timelines, then its notes
        (`notes`) as note lines."""
        from ..render.lines import Note
        from ..render.tables import profile_tables
        from ..render.text import ceiling_lines, roofs_line
        from ..render.timeline_tables import timeline_lines, timeline_tables

        return [*profile_tables(obj, width, top), roofs_line(obj), *ceiling_lines(obj), *timeline_tables(obj, width),
                *timeline_lines(obj), *(map(Note, obj.notes) if notes else ())]

    def shown(self, paths: list[Path], docs: list):
        from ..results.timeline import with_phases

        doc = docs[0]
        return with_phases(store.dump(doc)), lambda width: self.view(doc, width)

    def shown_by(self, paths: list[Path], docs: list, key: str):
        if key == "kernel":
            return self.shown(paths, docs)
        from ..analysis.owners import owners_of
        from ..render.lines import Note
        from ..render.owner_tables import near_line, owned_line, rows_tables
        from ..render.text import ceiling_lines, roofs_line
        from .registry import kind_of

        doc = _owned(docs[0], paths[0], "by", key)
        if key == "module" and not any(w.module for w in doc.attribution.owned):
            raise UsageError(f"{{by}} module: {paths[0]} names no modules (no nn.Module ran around its kernels)", "by")
        found = owners_of(doc, key)

        def lines(width: int) -> list:
            return [*rows_tables(found, width), *near_line(found), owned_line(doc, key), roofs_line(doc),
                    *ceiling_lines(doc), *(Note(n) for n in doc.attribution.notes)]

        return kind_of(found).json(found), lines

    def compare_by(self, docs: tuple, paths: tuple[Path, Path], key: str):
        from ..analysis.owners import compare_owners

        before, after = (_owned(doc, path, "by", key) for doc, path in zip(docs, paths))
        return compare_owners(before, after, key, (paths[0].name, paths[1].name))

    def chart(self, request: ChartRequest, docs: list, notes: list[str]) -> list[str]:
        from ..render import html_report, profile_chart

        doc, paths = docs[0], request.paths
        if request.kind in ("op", "module"):
            return self._owner_chart(doc, request, notes)
        if request.kind == "timeline":
            return self.timeline_chart(docs, request, notes)
        if request.highlight:
            raise UsageError("{highlight} applies to run results; a profile's chart shows its top kernels", "highlight")
        if request.kind != "roofline":
            raise UsageError(f"{paths[0]} is a profile of a program, which has no "
                             + ("size sweep; drop {kind} sweep" if request.kind == "sweep" else
                                "energy per kernel (ncu replays each kernel); drop {kind} energy"), "kind")
        if request.measured:
            notes.append("a profile's points are all measured by Nsight Compute; --measured adds nothing")
        if not any(k.intensity(level) for k in doc.kernels for level in ("dram", "l2", "l1")):
            notes.append(f"no kernel can be placed on the roofline: the report holds no operations, or no bytes, "
                         f"for any of them; roofline show {files.shown_path(paths[0])} lists what is "
                         "missing and the ncu option that collects it")
        if request.as_html:  # the report lists the file's own notes among its own
            html_report.write(doc, request.out, paths, notes=notes)
            return notes
        profile_chart.draw(doc, request.out)
        return list(doc.notes) + notes  # its own caveats (how it was made) hold for its chart too


    def _owner_chart(self, doc: ProfileResults, request: ChartRequest, notes: list[str]) -> list[str]:
        from ..render import owner_chart

        if request.highlight:
            raise UsageError("{highlight} applies to run results; a chart by op or module shows its longest rows",
                             "highlight")
        if request.as_html:
            raise UsageError(f"{{kind}} {request.kind} draws a .png, .svg or .pdf; the HTML report (roofline plot "
                             f"{files.shown_path(request.paths[0])} --out report.html) holds the module tree", "kind")
        owner_chart.draw(_owned(doc, request.paths[0], "kind", request.kind), request.kind, request.out)
        return notes


def _owned(doc: ProfileResults, path: Path, param: str, value: str) -> ProfileResults:
    """`doc`, which must record who launched its kernels for `--PARAM VALUE` (`show --by op`,
    `plot --kind module`). Raises UsageError saying how to record them."""
    if doc.attribution is None:
        raise UsageError(f"{{{param}}} {value}: {path} records no op or module per kernel; profile the program again "
                         "with roofline profile -- python ... (ops are recorded from PyTorch's NVTX ranges, or a JAX "
                         "program's HLO, unless --no-ops), or import its report with a PyTorch profiler trace or the "
                         "folder a JAX program dumped its HLO into (roofline profile --import REPORT --trace ...)", param)
    return doc


KIND = register(ProfileKind())
