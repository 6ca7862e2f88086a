"""`roofline schema`: the JSON Schema of a kind of document roofline writes (a file, or a
command's --json), from the registry (`roofline.documents.schema_of`)."""

from __future__ import annotations

from typing import Optional

import typer

from ..console import present
from ..defaults import SCHEMA
from ..errors import UsageError
from ..outcome import Outcome

MOUNT = dict(short_help="Print the JSON Schema of results files (or of another document roofline writes).")
RENAMED = {"--profile": "give the kind as an argument: roofline schema profile",
           "--grade": "give the kind as an argument: roofline schema grade"}


def command(
    kind: Optional[str] = typer.Argument(None, metavar="KIND",
                                         help=f"run (results files, schema {SCHEMA}; the default), profile, grade, "
                                              "trace (show's --json of a profiler trace), owners (show --by op|module "
                                              "--json of a profile; owner-changes, compare's), or a command's --json: "
                                              "compare, check, grade-changes, whatif, project, comms, kernels (problems: "
                                              "kernels problem.py), occupancy, device, or "
                                              "any other kind roofline prints (a kind it does not know is answered "
                                              "with the whole list)."),
):
    """Print the JSON Schema of results files (schema 4), for other tools that read them; of
    profile files ("kind": "profile") or grade files ("kind": "grade"); of what show prints for a
    PyTorch profiler trace (trace) or a profile by op or module (owners); or of the --json a command prints (compare, check, whatif,
    project, comms, kernels, occupancy, device)."""
    from .. import documents

    kind = kind or "run"
    if kind not in (known := documents.names()):
        raise UsageError(f"{{kind}} takes {', '.join(known)}; got {kind!r}", "kind")
    present(Outcome(documents.schema_of(kind)))
