"""The CUDA sources of the ladder: found in the installed package or the source checkout, with
local includes (`#include "x.cuh"`) inlined, each once, so that the text is self-contained (CuPy's
compile cache keys on the source text, not on included files)."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import RunError

_INCLUDE = re.compile(r'^#include "([^"]+)"[ \t]*$', re.MULTILINE)


def kernels_dir() -> Path:
    """The folder of the `.cu` sources, roofline/kernels/ (package data of the wheel, the same
    folder in a source checkout). Raises RunError when it does not hold them."""
    folder = Path(__file__).resolve().parent.parent / "kernels"
    if not (folder / "common.cuh").is_file():
        raise RunError(f"the CUDA kernel sources are missing from {folder}: reinstall roofline "
                       "(pip install --force-reinstall roofline)")
    return folder


def _expand(folder: Path, name: str, seen: set[str]) -> str:
    if name in seen:
        return ""
    seen.add(name)
    text = (folder / name).read_text().replace("#pragma once\n", "")
    return _INCLUDE.sub(lambda m: _expand(folder, m.group(1), seen), text)


def source(file_name: str) -> str:
    """The text of `roofline/kernels/<file_name>` with its local includes inlined, each once."""
    return _expand(kernels_dir(), file_name, set())
