"""The trace kind: a PyTorch profiler trace (Kineto's Chrome JSON, `.json` or `.json.gz`), read by
its contents (`traceEvents`), its kernels owned by the ops and modules that launched them
(`traces.ops`). Read alone; `show` prints its GPU time by op and phase (and by module where the
trace names modules); `comms` reads the same files for their collectives. A trace has no counters:
no roof is read here (a profile has them: `roofline profile`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError

from ..traces.ops import OpsTrace
from . import models
from .registry import ReadKind, register

TOP = 25  # ops shown in the table; the JSON has them all


def trace_json(doc: OpsTrace) -> dict:
    """The trace's attribution as `show --json` prints it (checked against `models.trace_model()`)."""

    def rows(key: str) -> list[dict]:
        return [{"name": r.name, "phase": r.phase, "time_ms": r.time_us / 1e3, "launches": r.launches,
                 "share": r.time_us / doc.time_us if doc.time_us else 0.0,
                 "kernels": [{"name": n, "time_ms": t / 1e3} for n, t in r.kernels]} for r in doc.by(key)]

    return {"kind": "trace", "source": doc.path, "gpu": doc.gpu, "kernels": len(doc.launches),
            "time_ms": doc.time_us / 1e3, "owned_share": doc.owned_share, "ops": rows("op"),
            "modules": rows("module") if doc.has_modules else None, "notes": list(doc.notes)}


def trace_view(doc: OpsTrace, width: int, key: str | None = None) -> list:
    """The GPU time by op (and by module; with `key`, by that alone, every row), the share owned,
    and what a trace cannot say."""
    from ..render.trace_tables import ops_tables

    if key is not None:
        return [*ops_tables(doc, key, width, None), *_trace_lines(doc)]
    shown = list(ops_tables(doc, "op", width, TOP))
    if doc.has_modules:
        shown += ops_tables(doc, "module", width, TOP)
    return shown + _trace_lines(doc)


def _trace_lines(doc: OpsTrace) -> list:
    """The share of the GPU time owned, and the notes on what a trace cannot say and on its reading."""
    from ..model.units import plural
    from ..render.lines import Note

    shown: list = [f"{doc.owned_share:.1%} of the GPU time ({doc.time_us / 1e3:,.3f} ms over "
                 f"{plural(len(doc.launches), 'kernel')}) is owned by an op: its launch is in the trace and ops are "
                 "open around it"]
    if not doc.has_modules:
        shown.append(Note("no module names in the trace: record it with torch.profiler.profile(with_modules=True) "
                          "or with_stack=True to have each op's nn.Module"))
    shown.append(Note("a trace times kernels but counts no FLOPs or bytes: roofline profile -- COMMAND puts each "
                      "kernel on its roof"))
    return shown + [Note(n) for n in doc.notes]


class TraceKind(ReadKind):
    name = "trace"
    types = (OpsTrace,)
    file_kind = None
    title = "a PyTorch profiler trace"
    short = "a profiler trace"
    pair = "two profiler traces"
    read_by = ("show", "comms")

    @property
    def model(self):
        return models.trace_model()

    def claims(self, data) -> bool:
        return isinstance(data, dict) and isinstance(data.get("traceEvents"), list)

    def parse(self, data, source: str, reads: str | None):
        from ..traces.kineto import gpu_name
        from ..traces.ops import attribute_events

        return attribute_events(data["traceEvents"], source, gpu_name(data))

    def json(self, obj: OpsTrace):
        return models.checked(self.model, trace_json(obj))

    def view(self, obj: OpsTrace, width: int, **context) -> list:
        return trace_view(obj, width)

    def shown(self, paths: list[Path], docs: list):
        doc = docs[0]
        return self.json(doc), lambda width: trace_view(doc, width)

    def shown_by(self, paths: list[Path], docs: list, key: str):
        doc = docs[0]
        if key == "kernel":
            raise UsageError(f"{{by}} kernel: {paths[0]} is a PyTorch profiler trace, read by op or by module (its "
                             "default view shows both); for each kernel on its roof, profile the program: roofline "
                             "profile -- COMMAND", "by")
        if key == "module" and not doc.has_modules:
            raise UsageError(f"{{by}} module: {paths[0]} names no modules; record the trace with "
                             "torch.profiler.profile(with_modules=True) or with_stack=True", "by")
        return self.json(doc), lambda width: trace_view(doc, width, key)


KIND = register(TraceKind())
