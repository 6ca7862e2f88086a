"""Output files that are never left half-written: checked before the work, written atomically;
and the user's input files read (`read_source`) or, a Python one, run as a module (`import_file`).

`check_writable` refuses, up front, a path the command could not write at the end (so that a
long GPU run is not lost at its last step); `write_atomic` writes through a temporary file in the
same folder, gives it the permissions a plain new file would have (umask applied), and renames it
into place: an interrupted or failed write leaves any earlier file whole and no temporary behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable

from .errors import RunError, UsageError


def check_results_out(path: Path, profile: bool, kind: str | None = None) -> Path:
    """Return `path` if a results file (`profile`: a program's profile; `kind` 'grade': a grade
    file; else a run's, a sweep's or a tile search's) can be written there (`check_writable`)
    without losing another: its name must end in .json, and a file already there must be a
    results file of the same kind, which the new one replaces. Raises UsageError otherwise, in
    one line."""
    check_writable(path)
    path = Path(path)
    kind = kind or ("profile" if profile else None)
    what = {"profile": "profile", "grade": "grade file"}.get(kind, "run")
    if path.suffix.lower() != ".json":
        noun = {"profile": "profile", "grade": "grade"}.get(kind, "results")
        raise UsageError(f"{{out}} {path}: a {noun} file is JSON; give it a .json name, e.g. "
                         f"{path.with_suffix('.json').name if path.suffix else path.name + '.json'}", "out")
    if not path.exists():
        return path
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or "schema" not in doc:
        raise UsageError(f"{{out}} {path}: the file there is no roofline results file, and writing would lose it; "
                         "give {out} another file name", "out")
    theirs = doc.get("kind")
    if theirs != kind:
        held = {"profile": "a program's profile", "grade": "grades"}.get(theirs, "a run's results")
        raise UsageError(f"{{out}} {path}: the file there holds {held}, which this {what} would replace; give {{out}} "
                         "another file name", "out")
    return path


def check_writable(path: Path) -> Path:
    """Return `path` if a file can be written there. Raises UsageError for an empty name, an
    existing folder, device, pipe or socket of that name (an atomic write would replace it with a
    plain file), a folder that does not exist or cannot be written."""
    text = str(path)
    if not text.strip():
        raise UsageError("the output file name is empty")
    path = Path(path)
    try:
        if path.is_dir():
            raise UsageError(f"cannot write {path}: it is a folder; give a file name")
        if path.exists() and not path.is_file():
            raise UsageError(f"cannot write {path}: it is a device, pipe or socket, not a file; give a file name")
        folder = path.parent
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"cannot write {path}: {folder} is a file, not a folder")
        if not folder.is_dir():
            raise UsageError(f"cannot write {path}: folder {folder} does not exist")
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise UsageError(f"cannot write {str(path)[:80]}: {exc.strerror}") from None
    # bytes as the file system counts them (os.fsencode keeps the bytes of a name that is not
    # valid UTF-8), with room for the temporary file's prefix and suffix
    if len(os.fsencode(path.name)) > 255 - 20:
        raise UsageError(f"cannot write {str(path)[:80]}...: the file name is too long")
    try:  # a real probe: permission bits do not tell for root, read-only mounts or /proc
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write {path}: folder {folder} is not writable (a file made there failed: "
                         f"{exc.strerror})") from None
    return path


def from_cwd(path) -> Path:
    """`path` relative to the working folder where it lies below it, else as it is (what a file
    records, and a child process started in the same folder finds)."""
    try:
        return Path(path).relative_to(Path.cwd())
    except ValueError:
        return Path(path)


def shown_path(path) -> str:
    """A path as text that any output, and NVRTC, can take: a byte of its name that is not valid
    UTF-8 (a surrogate escape, as Python reads such names) written as '\\xe9'."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def check_not_input(out: Path, inputs, what: str = "the files read", param: str = "out") -> None:
    """Refuse an output that is one of `inputs` (the same file by path or, where both exist, by
    device and inode: a link to it too), so that writing never replaces what was read. Raises
    UsageError naming the parameter `param` (the output's: `out`, or a reader's `chart_out`)."""
    target = Path(out)
    for p in inputs:
        p = Path(p)
        same = target.resolve() == p.resolve()
        try:
            if not same and target.exists() and p.exists():
                same = os.path.samefile(target, p)
        except OSError:  # a name the system cannot look up (too long): not the same file; its reading says why
            same = False
        if same:
            raise UsageError(f"{{{param}}} {out} is one of {what}; write to another name", param)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, write: Callable[[str], None]) -> None:
    """Create or replace `path` atomically: `write(tmp_name)` fills a temporary file in the same
    folder, which then replaces `path` in one rename. Raises UsageError for a path
    `check_writable` refuses, RunError when the write itself fails (disk full, I/O error);
    exceptions raised by `write` other than OSError propagate unchanged. No temporary file
    survives a failure."""
    path = check_writable(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise RunError(f"cannot write {path}: {exc.strerror}") from None
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise RunError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass


def cache_file(name: str) -> Path:
    """A file in roofline's per-user cache folder: $XDG_CACHE_HOME/roofline, else ~/.cache/roofline."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "roofline" / name


def read_cache(path: Path) -> dict:
    """The JSON object in cache file `path`; {} when it is missing, unreadable or not an object."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def update_cache(path: Path, key: str, value) -> Path:
    """Set `key` to `value` in cache file `path` (created with its folder if need be), atomically.
    Returns `path`."""
    data = read_cache(path)
    data[key] = value
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(Path(path), lambda tmp: Path(tmp).write_text(json.dumps(data, indent=1) + "\n"))
    return Path(path)


MAX_SOURCE_BYTES = 4 * 1024 * 1024


def read_source(path: Path) -> str:
    """The text of a user's `.cu` file. Raises UsageError (one line) when it is missing, a folder,
    unreadable, not text, or over 4 MiB."""
    path = Path(path)
    try:
        if path.is_dir():
            raise UsageError(f"{path} is a folder; give a .cu file")
        if path.exists() and not path.is_file():
            raise UsageError(f"{path} is not a regular file; give a .cu file")
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
        if path.stat().st_size > MAX_SOURCE_BYTES:
            raise UsageError(f"{path}: larger than {MAX_SOURCE_BYTES // 2**20} MiB; is it a CUDA source?")
        return path.read_text(encoding="utf-8").lstrip("\ufeff")  # NVRTC does not take a byte-order mark
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None


def import_file(path: Path, prefix: str):
    """Run the user's Python file `path` as a module named `prefix` + a hash of its path, its folder
    on `sys.path` while it runs (so that it imports its neighbours), and return the module. Whatever
    the file raises propagates, for the caller to say in its words; the half-made module is not kept."""
    import importlib.util
    import sys

    path = Path(path)
    name = f"{prefix}{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        sys.path.remove(folder)
    return module
