"""The compiled figures of kernels (`nvrtc_compile.KernelResources`), kept and reused: in this
process for every kernel, and on disk (one small JSON file per kernel, target and compiler) for
ladder kernels, whose text is the whole program, under ~/.cache/roofline/compiled (or
$ROOFLINE_COMPILE_CACHE; 'off' for none), keyed on the source text, entry, options, target and
compiler (`cache_key`: NVRTC's library, or the nvcc that compiles a user's file, its version and
the file's compile options). A user's file may include headers of its own, which its text does
not show, so it is kept in memory only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from ..errors import RunError, UsageError
from ..files import cache_file, write_atomic
from ..ladder.families import KernelSpec
from ..ladder.user import UserKernel
from .nvcc_compile import nvcc_identity
from .nvrtc_compile import KernelResources, compile_options, nvrtc_version

_CACHE_FOLDER = "ROOFLINE_COMPILE_CACHE"  # a folder; empty or "off": no cache on disk
_CACHE_FORMAT = 2  # 2: the figures name their compiler
_memo: dict[str, KernelResources] = {}
_memo_lock = threading.Lock()


def compile_cache_folder() -> Path | None:
    """The folder of compiled figures kept on disk: $ROOFLINE_COMPILE_CACHE if set (empty or
    'off': none), else `compiled/` in roofline's per-user cache folder (`files.cache_file`)."""
    folder = os.environ.get(_CACHE_FOLDER)
    if folder is None:
        return cache_file("compiled")
    return None if folder.strip() in ("", "off") else Path(folder)


def cache_key(spec: KernelSpec | UserKernel, arch: str) -> str | None:
    """What decides ptxas's figures, hashed: the program text, the entry, the options, the target
    and the compiler (`toolchain.choose`: NVRTC's version and library file, or nvcc's path, size,
    modification time and version), with roofline's version and this cache's format. None (not
    kept) for a user's kernel that includes a file from its own folder or takes include folders
    or files in its options, which can change while the text stays the same, and where the
    compiler cannot be chosen (each compile then says why)."""
    from .. import __version__
    from .toolchain import NVCC, choose

    if isinstance(spec, UserKernel) and (_includes_own_files(spec) or _includes_elsewhere(spec)):
        return None
    try:
        chosen = choose(spec)
        if chosen.name == NVCC:
            compiler, options = [NVCC, *nvcc_identity(chosen.path)], list(spec.build.options)
        else:
            compiler, options = _compiler_identity(), list(compile_options(spec))
    except (RunError, UsageError, OSError):  # nothing to reuse, and each compile says why
        return None
    ident = [_CACHE_FORMAT, __version__, compiler, spec.target(arch), spec.source_name, spec.source_text(),
             spec.name_expression, options]
    return hashlib.sha256(json.dumps(ident).encode()).hexdigest()


_INCLUDED = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


def _includes_elsewhere(spec: UserKernel) -> bool:
    """Whether the user's compile options name include folders or files (-I, -isystem, -include)."""
    return any(o.startswith(("-I", "-isystem", "-include", "--include-path", "--system-include", "--pre-include"))
               for o in spec.build.options)


def _includes_own_files(spec: UserKernel) -> bool:
    """Whether the user's file names in an #include a file that its folder holds."""
    return any((spec.path.parent / name).exists() for name in _INCLUDED.findall(spec.source_text()))


@lru_cache(maxsize=None)
def _compiler_identity() -> list:
    """NVRTC's (major, minor) and, where /proc tells which library file is loaded (Linux), its
    path, size and modification time: a patch release changes the file, not the version."""
    identity: list = list(nvrtc_version())
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({ln.split()[-1] for ln in maps if os.path.basename(ln.split()[-1]).startswith("libnvrtc")})
        for path in paths:
            stat = os.stat(path)
            identity.append([path, stat.st_size, stat.st_mtime_ns])
    except (OSError, IndexError):
        pass
    return identity


def cached_resources(key: str | None) -> KernelResources | None:
    """The figures kept under `key` (`cache_key`), in this process or on disk; None when there
    are none (or the file is unreadable, or not what this version writes)."""
    if key is None:
        return None
    with _memo_lock:
        if key in _memo:
            return _memo[key]
    folder = compile_cache_folder()
    if folder is None:
        return None
    try:
        data = json.loads((folder / f"{key}.json").read_text())
        res = KernelResources(**data)
    except (OSError, ValueError, TypeError):
        return None
    fields = (res.registers, res.static_smem_bytes, res.local_bytes)
    if not all(type(v) is int and v >= 0 for v in fields) or not (
            res.max_threads_per_block is None or type(res.max_threads_per_block) is int):
        return None
    with _memo_lock:
        _memo[key] = res
    return res


def remember(key: str, res: KernelResources, on_disk: bool) -> None:
    """Keep `res` under `key` in this process and, `on_disk`, in the cache folder, written
    atomically (a temporary file renamed into place), so that processes sharing the folder read
    whole files only. A folder that cannot be written is no error: the figures are then kept in
    memory alone."""
    with _memo_lock:
        _memo[key] = res
    folder = compile_cache_folder()
    if not on_disk or folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / f"{key}.json", lambda tmp: Path(tmp).write_text(json.dumps(asdict(res)) + "\n"))
    except (OSError, RunError, UsageError):
        pass
