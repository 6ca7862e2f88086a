"""Which way calls go between roofline's layers while one command runs.

    python tools/layer_trace.py plot plots/results-h200.json --out /tmp/x.png
    python tools/layer_trace.py --json trace.json -- show plots/results-h200.json

Runs the `roofline` command line given (everything after this script's own options, or after
`--`) in-process, through Typer's CliRunner over `roofline.cli.app`, under `sys.setprofile`, and
records every call into a function of the `roofline` package from the nearest `roofline` function
below it on the stack (so a callback handed down and called back through matplotlib, pydantic or
functools counts as called by the module that called it). Each module is placed in a layer by
LAYERS below, and two kinds of call are counted:

  climbs back  a call from a module of a lower layer into a module of a higher layer;
  re-entries   a call into a module already on the stack below the caller, left for another
               module and now returned to (A -> B -> A), whatever the layers.

Each is counted as distinct edges (caller function -> callee function) and as calls; the edges are
printed, most called first. Modules that no entry of LAYERS or BESIDE covers are reported as
unknown: their calls are not counted either way. Run it in a fresh interpreter (as here): what a
command imports as it runs is traced too, and a module already imported is not imported again.
The exit code is the command's; `--json FILE` also writes the counts and edges as JSON.
"""

from __future__ import annotations

# --- the layers, top to bottom ----------------------------------------------------------------
# Each entry names modules by prefix: "roofline.render" covers roofline.render and every module
# under it; the longest matching name decides, so a module can be moved out of its package's layer
# by naming it on its own line. Edit freely: nothing else in this script names a module.
LAYERS: list[tuple[str, list[str]]] = [
    ("command line", ["roofline.cli", "roofline.__main__", "roofline.console", "roofline.commands"]),
    ("api", ["roofline.api", "roofline.outcome"]),
    ("documents", ["roofline.documents"]),
    ("collect", ["roofline.collect", "roofline.grading"]),
    ("analysis, render", ["roofline.analysis", "roofline.render"]),
    ("results", ["roofline.results"]),
    ("sources", ["roofline.nsight", "roofline.measure", "roofline.traces"]),
    ("ladder, workload", ["roofline.ladder", "roofline.workload"]),
    ("model", ["roofline.model"]),
]
# Modules beside the layers, used by all of them (errors, files, defaults, ...): calls into or
# out of them are neither climbs nor re-entries, and they are not reported as unknown.
BESIDE: list[str] = ["roofline", "roofline.errors", "roofline.provenance", "roofline.files", "roofline.defaults", "roofline.progress",
                     "roofline.extras", "roofline.kernels", "roofline.child", "roofline.declarations",
                     "roofline.build_options"]
PACKAGE = "roofline"

import json  # noqa: E402  (the table above is what a reader edits; it stays first)
import sys  # noqa: E402
import threading  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

BESIDE_LAYER = -1


def _index(layers=LAYERS, beside=BESIDE) -> dict[str, int]:
    out = {name: depth for depth, (_, names) in enumerate(layers) for name in names}
    out.update({name: BESIDE_LAYER for name in beside if name not in out})
    return out


def layer_of(module: str, index: dict[str, int]) -> int | None:
    """The depth of `module`'s layer (0 at the top), BESIDE_LAYER for a module beside them, None
    where no entry covers it: the longest entry that is the module or a package above it."""
    best = None
    for name, depth in index.items():
        if (module == name or module.startswith(name + ".")) and (best is None or len(name) > len(best[0])):
            if name == PACKAGE and module != PACKAGE:  # "roofline" beside covers the package's own __init__ only
                continue
            best = (name, depth)
    return None if best is None else best[1]


class Trace:
    """The calls between roofline functions of one run, counted as they happen."""

    def __init__(self, layers=LAYERS, beside=BESIDE):
        self.layers = layers
        self.index = _index(layers, beside)
        self._layer: dict[str, int | None] = {}
        self.calls = 0
        self.edges: Counter = Counter()
        self.climbs: Counter = Counter()
        self.reentries: Counter = Counter()
        self.unknown: set[str] = set()

    def layer(self, module: str) -> int | None:
        if module not in self._layer:
            self._layer[module] = found = layer_of(module, self.index)
            if found is None:
                self.unknown.add(module)
        return self._layer[module]

    def profile(self, frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__") or ""
        if module != PACKAGE and not module.startswith(PACKAGE + "."):
            return
        # the roofline functions below this one on the stack, nearest first
        below = []
        f = frame.f_back
        while f is not None:
            name = f.f_globals.get("__name__") or ""
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                below.append((name, f.f_code))
            f = f.f_back
        if not below:
            return
        caller_module, caller_code = below[0]
        if caller_module == module:
            return
        edge = (caller_module, caller_code.co_qualname, module, frame.f_code.co_qualname)
        self.calls += 1
        self.edges[edge] += 1
        low, high = self.layer(caller_module), self.layer(module)
        if low is None or high is None or BESIDE_LAYER in (low, high):
            return
        if high < low:
            self.climbs[edge] += 1
        if any(name == module for name, _ in below[1:]):
            self.reentries[edge] += 1

    def layer_name(self, module: str) -> str:
        depth = self.layer(module)
        return "unknown" if depth is None else "beside" if depth == BESIDE_LAYER else self.layers[depth][0]

    def report(self) -> dict:
        def listed(counter: Counter) -> list[dict]:
            return [{"caller": f"{a}:{af}", "caller layer": self.layer_name(a), "callee": f"{b}:{bf}",
                     "callee layer": self.layer_name(b), "calls": n}
                    for (a, af, b, bf), n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))]

        return {"calls": self.calls, "edges": len(self.edges),
                "climbs": len(self.climbs), "climb calls": sum(self.climbs.values()),
                "reentries": len(self.reentries), "reentry calls": sum(self.reentries.values()),
                "climbs listed": listed(self.climbs), "reentries listed": listed(self.reentries),
                "unknown modules": sorted(self.unknown)}


def run(args: list[str], trace: Trace | None = None) -> tuple[int, str, Trace]:
    """Run `roofline ARGS` in-process under the trace; its exit code, output and the trace."""
    from typer.testing import CliRunner

    from roofline.cli import app

    trace = trace or Trace()
    runner = CliRunner()
    threading.setprofile(trace.profile)
    sys.setprofile(trace.profile)
    try:
        result = runner.invoke(app, args)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return result.exit_code, result.output, trace


def _print(report: dict, args: list[str], code: int, output: str, limit: int) -> None:
    print(f"roofline {' '.join(args)}: exit {code}")
    if code != 0:
        lines = output.strip().splitlines()
        print("  " + (lines[-1] if lines else "(no output)"))
    print(f"calls between roofline modules: {report['calls']} ({report['edges']} distinct caller -> callee)")
    for key, calls, title in (("climbs", "climb calls", "climbs back (a lower layer calling a higher one)"),
                              ("reentries", "reentry calls", "re-entries (a module called again after it was left)")):
        print(f"{title}: {report[key]} distinct, {report[calls]} calls")
        for e in report[f"{key} listed"][:limit]:
            print(f"  {e['caller']} [{e['caller layer']}] -> {e['callee']} [{e['callee layer']}]  x{e['calls']}")
        if report[key] > limit:
            print(f"  ... and {report[key] - limit} more (--limit N)")
    if report["unknown modules"]:
        print("unknown modules (in no layer; their calls not counted): " + ", ".join(report["unknown modules"]))


def main(argv: list[str]) -> int:
    out, limit = None, 40
    while argv and argv[0] in ("--json", "--limit", "--", "-h", "--help"):
        flag = argv.pop(0)
        if flag == "--":
            break
        if flag in ("-h", "--help"):
            print(__doc__)
            return 0
        if not argv:
            print(f"layer_trace: {flag} needs a value", file=sys.stderr)
            return 2
        value = argv.pop(0)
        if flag == "--json":
            out = Path(value)
        else:
            limit = int(value)
    if not argv:
        print("layer_trace: give a roofline command line, e.g. show plots/results-h200.json", file=sys.stderr)
        return 2
    code, output, trace = run(argv)
    report = trace.report()
    _print(report, argv, code, output, limit)
    if out is not None:
        out.write_text(json.dumps({"args": argv, "exit code": code, **report}, indent=1) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
