"""How to install an optional part of roofline (an extra of its distribution), said so that it
works for an installed copy: the packages the extra brings, read from the installed distribution's
own metadata, rather than "pip install '.[extra]'", which needs the source folder.

The extras are declared once, in pyproject.toml's `[project.optional-dependencies]`; this module
only reads what the installed wheel (or editable install) recorded of them.
"""

from __future__ import annotations

import re
from functools import lru_cache

_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@lru_cache(maxsize=None)
def requirements(extra: str) -> tuple[str, ...]:
    """The requirement strings roofline's extra `extra` adds (e.g. for "report": ("plotly>=5.20",)),
    their environment markers other than the extra's dropped; () when roofline is not installed as
    a distribution (run from a bare source folder) or has no such extra."""
    from importlib import metadata

    try:
        requires = metadata.requires("roofline") or []
    except metadata.PackageNotFoundError:
        return ()
    found = []
    for req in requires:
        spec, _, marker = req.partition(";")
        if extra in _EXTRA.findall(marker):
            found.append(spec.strip().replace(" ", ""))
    return tuple(found)


def install_hint(extra: str) -> str:
    """One clause saying how to add `extra` to this installation: "pip install 'plotly>=5.20'
    (roofline's report extra)", or, where the metadata is not there, "install roofline's report
    extra (pip install '.[report]' in roofline's source folder)"."""
    reqs = requirements(extra)
    if reqs:
        return f"pip install {' '.join(repr(r) for r in reqs)} (roofline's {extra} extra)"
    return f"install roofline's {extra} extra (pip install '.[{extra}]' in roofline's source folder)"
