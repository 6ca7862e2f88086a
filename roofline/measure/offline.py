"""Compiling through NVRTC for any target, without a GPU: registers, local memory and shared
memory of a kernel, and the dynamic shared memory a kernel file declares.

Each kernel is compiled (CuPy's low-level NVRTC binding, which loads the NVRTC library from the
CUDA wheels or the system toolkit; no driver needed) for `-arch=sm_XY` with `-Xptxas -v`, and the
figures are read from ptxas's report in the program log:

    ptxas info    : Used 128 registers, used 1 barriers, 8192 bytes smem
    ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

(CuPy's own RawModule cannot do this: it appends the current device's -arch after ours.)
NVRTC 13 may answer from the CUDA compute cache without running ptxas (and so without the
report); the package turns that cache off when it loads (`roofline/__init__.py`).

Each kernel compiles in a process of its own, forked from a server that loaded NVRTC with address
randomisation off and lives as long as the process that started it (`compile_in_fresh_process`,
`_ForkServer`), and the figures are kept: in the process, and for
ladder kernels on disk under ~/.cache/roofline/compiled (or $ROOFLINE_COMPILE_CACHE; 'off' for
none), keyed on the source text, entry, options, target and compiler.

Dynamic shared memory: a kernel that takes it defines the constant `<kernel>_smem_bytes<params>`. Compiling
the name expression `roofline_smem_probe<<kernel>_smem_bytes<params>>` makes the compiler
evaluate it; the number comes back inside the probe's mangled name (`nvrtcGetLoweredName`). Only
the empty probe is instantiated, so this costs a parse, not a kernel build.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path

from ..errors import RunError, UsageError
from ..files import cache_file, write_atomic
from ..ladder.families import KernelSpec
from ..ladder.sources import source
from ..ladder.user import UserKernel, from_argument, to_argument
from ..model.arch import ArchLimits
from ..model.occupancy import Occupancy, calculate
from .nvml import INSTALL_HINT

_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_STACK = re.compile(r"(\d+) bytes stack frame")
_PROBE = "template <int BYTES> __global__ void roofline_smem_probe() {}\n"
_LOWERED_INT = re.compile(r"ILi(\d+)E")
_MAXNTID = re.compile(r"\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")
_CACHE_VARIABLE = "CUDA_CACHE_DISABLE"
_FIXED_LAYOUT = "ROOFLINE_FIXED_LAYOUT"  # set in a compiling child once it runs without randomisation
_ADDR_NO_RANDOMIZE = 0x0040000  # linux/personality.h
COMPILE_TIMEOUT_S = 600


def compiler_env() -> dict[str, str]:
    """The environment of a process roofline starts to compile in: this one's, with the CUDA
    compute cache off (CUDA_CACHE_DISABLE=1; a caller's own setting wins). NVRTC 13 answers a
    repeated compile from that cache without running ptxas, so without the register report
    `compile_for` reads, and it reads the variable once, when it loads: so the variable is set
    where roofline starts a process (and by the `roofline` command itself, `roofline.cli`), never
    in a program that merely imports the library."""
    return {**os.environ, _CACHE_VARIABLE: os.environ.get(_CACHE_VARIABLE, "1")}


@dataclass(frozen=True)
class KernelResources:
    """ptxas's figures for one kernel on one target: 32-bit registers per thread, static shared
    memory per block in bytes, and local memory per thread in bytes (the stack frame, where
    spilled registers go: 0 means nothing spills; the same figure the driver reports as
    `local_size_bytes`)."""

    registers: int
    static_smem_bytes: int
    local_bytes: int
    max_threads_per_block: int | None = None  # __launch_bounds__' limit (PTX .maxntid); None: none declared

    def launch_bounds_reason(self, threads: int) -> str | None:
        """Why a block of `threads` cannot launch under the kernel's __launch_bounds__, or None."""
        if self.max_threads_per_block is not None and threads > self.max_threads_per_block:
            return (f"its __launch_bounds__ allow at most {self.max_threads_per_block} threads per block; "
                    f"the block has {threads}")
        return None


def parse_ptxas_log(log: str) -> KernelResources:
    """The figures from a `-Xptxas -v` log holding one kernel. Raises RunError when the log has
    no 'Used N registers' line (e.g. ptxas did not run)."""
    used = _USED.search(log)
    if used is None:
        raise RunError("the compiler log holds no ptxas resource report")
    smem = _SMEM.search(log)
    stack = _STACK.search(log)
    return KernelResources(registers=int(used.group(1)), static_smem_bytes=int(smem.group(1)) if smem else 0,
                           local_bytes=int(stack.group(1)) if stack else 0)


def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC library CuPy loads. Raises RunError when there is none."""
    try:
        from cupy_backends.cuda.libs import nvrtc

        return tuple(nvrtc.getVersion())
    except ImportError:
        raise RunError(f"CuPy is not installed: {INSTALL_HINT}") from None
    except Exception as exc:  # the NVRTC shared library could not be found or loaded
        raise RunError(f"NVRTC could not be loaded ({exc}); {INSTALL_HINT}") from None


def _unsupported(arch: str) -> RunError:
    major, minor = nvrtc_version()
    other = "cuda13" if major < 13 else "cuda12"
    return RunError(f"this NVRTC ({major}.{minor}) cannot compile for {arch}; the other CUDA flavour may: in a "
                    f"fresh environment, pip install '.[{other}]' (the two CuPy flavours cannot be installed together)")


def check_target(arch: str) -> None:
    """Raise RunError (one line) unless the loaded NVRTC can compile for `arch` ('sm_90',
    'sm_90a'): the CUDA 12 NVRTC stops short of sm_110, the CUDA 13 one has dropped sm_70/72.
    Uses nvrtcGetSupportedArchs; an NVRTC without it is let through (compile errors then say)."""
    nvrtc_version()  # a clean RunError when CuPy or NVRTC is missing
    from cupy_backends.cuda.libs import nvrtc

    try:
        supported = set(nvrtc.getSupportedArchs())
    except Exception:
        return
    if int(arch.removeprefix("sm_").rstrip("af")) not in supported:
        raise _unsupported(arch)


def compile_for(spec: KernelSpec | UserKernel, arch: str) -> KernelResources:
    """Compile `spec` for target `arch` ('sm_90') through NVRTC and return ptxas's figures.

    The program ptxas sees is the kernel's file and nothing else: the CUDA compute cache, which
    would answer a repeated compile without ptxas's report, is turned off in every process
    roofline compiles in (CUDA_CACHE_DISABLE=1, `compiler_env`). Changing the source to miss the cache instead
    changed what ptxas allocated (async_copy read 219 registers in one process and 226 in the
    next). Raises RunError naming the kernel and the target, with the compiler's error lines, when
    it does not compile (a tile the kernel's static_asserts reject, a user's mistake, a target
    this NVRTC does not support), or when the report is missing all the same."""
    nvrtc_version()
    return _resources(spec.source_name, spec.name, spec.target(arch), spec.source_text(), spec.name_expression,
                      compile_options(spec))


def compile_cubin(spec: KernelSpec | UserKernel, arch: str) -> tuple[bytes, str]:
    """(cubin, lowered name) of `spec` compiled for GPU target `arch` at the kernel's own target
    (`spec.target`: 'sm_90a' for wgmma's arch-specific instructions, which CuPy's own compile,
    fixed to the plain 'sm_90', cannot reach). Raises RunError as `compile_for` does."""
    nvrtc_version()
    _, lowered, cubin = _compile(spec.source_name, spec.name_expression, spec.target(arch), spec.source_text(),
                                 spec.name_expression, ptxas=False, options=compile_options(spec), cubin=True)
    return cubin, lowered


@lru_cache(maxsize=None)
def _resources(file_name: str, name: str, arch: str, text: str, expression: str,
               options: tuple[str, ...]) -> KernelResources:
    """`compile_for`, once per source text, kernel, target and options in a process (a user
    kernel's child checks it at the ragged shape and then at the problem's)."""
    log, lowered, ptx = _compile(file_name, name, arch, text, expression, options=options)
    try:
        return replace(parse_ptxas_log(log), max_threads_per_block=max_threads(ptx, lowered))
    except RunError:
        if not log.strip("\x00\n "):
            raise RunError(f"{name} for {arch}: NVRTC answered from the CUDA compute cache without running "
                           f"ptxas, so there is no register report; start roofline with {_CACHE_VARIABLE}=1 "
                           f"(it is {os.environ.get(_CACHE_VARIABLE)!r} here)") from None
        tail = " | ".join(ln.strip() for ln in log.strip("\x00\n ").splitlines()[-3:])
        raise RunError(f"{name} for {arch}: the compiler log holds no ptxas resource report "
                       f"(log ends: {tail})") from None


def compile_in_fresh_process(specs: list[KernelSpec | UserKernel], arch: str,
                             cache: bool = True) -> list[KernelResources | RunError]:
    """`compile_for` of each of `specs` for target `arch`, each in a process of its own with
    address-space randomisation off (Linux), several at a time; a kernel that does not compile is
    its RunError. With `cache`, figures compiled before with the same compiler are reused
    (`cached_resources`) and new ones kept.

    Why a process per kernel: ptxas's register allocation can depend on where things lie in
    memory. Compiled one after another in one process, with the addresses randomised, async_copy
    read 226 registers in 39 of 40 processes and 219 in the 40th, and warptiling 65 instead of 64
    in 1 of 16; a fresh process per kernel with a fixed layout gave the same count every time
    (bench/NOTES.md). One process started with the layout fixed loads NVRTC, then forks one
    child per kernel, each from the same state, so a kernel's figures do not depend on the
    others in the list or their order (`_ForkServer`: started once, it serves every later call);
    where fork is missing, each kernel gets a process started from scratch."""
    keys = [_cache_key(spec, arch) if cache else None for spec in specs]
    results: list[KernelResources | RunError | None] = [cached_resources(key) for key in keys]
    todo: dict[str | int, list[int]] = {}  # one compile per program (tile_by_shape is full_tiles' at its tile)
    for i, res in enumerate(results):
        if res is None:
            todo.setdefault(keys[i] if keys[i] is not None else i, []).append(i)
    first = [same[0] for same in todo.values()]
    compiled = (_compile_forked if hasattr(os, "fork") else _compile_each)([specs[i] for i in first], arch) if first else []
    for same, res in zip(todo.values(), compiled):
        for i in same:
            results[i] = res
        if keys[same[0]] is not None and isinstance(res, KernelResources):
            _remember(keys[same[0]], res, on_disk=isinstance(specs[same[0]], KernelSpec))
    return results


# Compiled figures, reused: in this process for every kernel, and on disk (one small JSON file per
# kernel, target and compiler) for ladder kernels, whose text is the whole program. A user's file
# may include headers of its own, which its text does not show, so it is kept in memory only.
_CACHE_FOLDER = "ROOFLINE_COMPILE_CACHE"  # a folder; empty or "off": no cache on disk
_CACHE_FORMAT = 1
_memo: dict[str, KernelResources] = {}
_memo_lock = threading.Lock()


def compile_cache_folder() -> Path | None:
    """The folder of compiled figures kept on disk: $ROOFLINE_COMPILE_CACHE if set (empty or
    'off': none), else `compiled/` in roofline's per-user cache folder (`files.cache_file`)."""
    folder = os.environ.get(_CACHE_FOLDER)
    if folder is None:
        return cache_file("compiled")
    return None if folder.strip() in ("", "off") else Path(folder)


def _cache_key(spec: KernelSpec | UserKernel, arch: str) -> str | None:
    """What decides ptxas's figures, hashed: the program text, the entry, the options, the target
    and the compiler (NVRTC's version and library file), with roofline's version and this cache's
    format. None (not kept) for a user's kernel that includes a file from its own folder, which
    can change while the text stays the same."""
    from .. import __version__

    if isinstance(spec, UserKernel) and _includes_own_files(spec):
        return None
    try:
        compiler = _compiler_identity()
    except RunError:  # no NVRTC: nothing to reuse, and each compile says why
        return None
    ident = [_CACHE_FORMAT, __version__, compiler, spec.target(arch), spec.source_name, spec.source_text(),
             spec.name_expression, list(compile_options(spec))]
    return hashlib.sha256(json.dumps(ident).encode()).hexdigest()


_INCLUDED = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


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
    """The figures kept under `key` (`_cache_key`), in this process or on disk; None when there
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


def _remember(key: str, res: KernelResources, on_disk: bool) -> None:
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


def _compile_forked(specs: list[KernelSpec | UserKernel], arch: str) -> list[KernelResources | RunError]:
    """Each of `specs` compiled in a child of the fork server (`_fork_server`). The jobs and the
    answers pass through files in a temporary folder: job i in `i.job`, its figures or error in
    `i.json`, its stderr in `i.err`, its exit status in `i.status`."""
    if not specs:
        return []
    workers = max(1, os.cpu_count() or 1)
    limit = COMPILE_TIMEOUT_S * -(-len(specs) // workers)
    with tempfile.TemporaryDirectory(prefix="roofline-compile-") as tmp:
        folder = Path(tmp)
        for i, spec in enumerate(specs):
            (folder / f"{i}.job").write_text(json.dumps([to_argument(spec), arch]))
        with _server_lock:  # one folder at a time
            said = _fork_server().run(tmp, limit)
        return [_answer(folder, i, spec, arch, said) for i, spec in enumerate(specs)]


class _ForkServer:
    """A process started with the layout fixed (`_fixed_address_space`) that has loaded NVRTC
    and compiled once (`_warm_up`), then, for each folder of jobs named on its stdin, forks a
    child per job (`_fork_jobs`) and answers `done` on its stdout. One per roofline process,
    started on the first compile: a listing, a size sweep and a test session pay for the start
    once. It ends when its stdin closes (this process ended)."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace", prefix="roofline-compile-",
                                          suffix=".err")
        self.proc = subprocess.Popen([sys.executable, "-m", "roofline.measure.offline", "--serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     start_new_session=True, env=compiler_env())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, folder: str, limit: float) -> str:
        """Have the jobs in `folder` compiled; '' when they were, else why the server gave no
        answer (it ended, or took longer than `limit` s and was stopped with its children)."""
        import select

        ready = []
        try:
            self.proc.stdin.write(os.fsencode(folder) + b"\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], limit)
            if ready and self.proc.stdout.readline() == b"done\n":
                return ""
        except (OSError, ValueError):
            pass
        if ready or self.proc.poll() is not None:
            said = f"the compiling process ended ({self._last_line()})"
        else:
            said = f"no answer within {limit} s"
        self.stop()
        return said

    def _last_line(self) -> str:
        self.proc.wait()
        self.log.seek(0)
        lines = [ln.strip() for ln in self.log.read().splitlines() if ln.strip()]
        return lines[-1] if lines else f"exit code {self.proc.returncode}"

    def stop_if_owner(self) -> None:
        if os.getpid() == self.owner and self.alive():
            self.stop()

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the children too
        except OSError:
            pass
        self.proc.wait()


_server: _ForkServer | None = None
_server_lock = threading.Lock()


def _fork_server() -> _ForkServer:
    """The fork server of this process (hold `_server_lock`), started anew when there is none,
    it has ended, or it was started by the process this one was forked from. Stopped, with any
    child still compiling, when this process exits."""
    global _server
    if _server is None or not _server.alive() or _server.owner != os.getpid():
        _server = _ForkServer()
        atexit.register(_server.stop_if_owner)
    return _server


def _answer(folder: Path, index: int, spec: KernelSpec | UserKernel, arch: str, stderr: str) -> KernelResources | RunError:
    """Job `index`'s figures or error; when it wrote none, a RunError with its exit status and the
    last line it (else the forking process) wrote on stderr."""
    try:
        answer = json.loads((folder / f"{index}.json").read_text())
        return RunError(answer["error"]) if "error" in answer else KernelResources(**answer)
    except (OSError, ValueError, TypeError, KeyError):
        pass

    def last_line(text: str) -> str:
        return next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")

    def read(name: str) -> str:
        try:
            return (folder / name).read_text(errors="replace").strip()
        except OSError:
            return ""

    said = last_line(read(f"{index}.err")) or last_line(stderr) or "no message"
    return RunError(f"{spec.name} for {arch}: the compiling process failed (exit code "
                    f"{read(f'{index}.status') or 'unknown'}): {said[:200]}")


def _serve() -> None:
    """`python -m roofline.measure.offline --serve`: the fork server (`_ForkServer`). With the
    layout fixed and NVRTC started, read one folder of jobs per line and fork its children
    (`_fork_jobs`), each from the same state: nothing read from the jobs before the fork, and what
    changes here between forks are small objects only."""
    _fixed_address_space()
    _warm_up()  # CuPy and NVRTC loaded and started once, before any fork
    pending = b""
    while True:  # the pipe read and written directly: no stream buffers in the state children start from
        while b"\n" not in pending:
            more = os.read(0, 4096)
            if not more:
                return
            pending += more
        line, _, pending = pending.partition(b"\n")
        _fork_jobs(os.fsdecode(line))
        os.write(1, b"done\n")


def _fork_jobs(folder: str) -> None:
    """A child per job file of `folder` (`_forked_child`), as many at a time as there are CPUs;
    returns when every one has ended, its exit status written."""
    workers = max(1, os.cpu_count() or 1)
    children: dict[int, int] = {}
    index = 0
    while os.path.exists(os.path.join(folder, f"{index}.job")):
        if len(children) == workers:
            _reap(folder, children)
        pid = os.fork()
        if pid == 0:
            _forked_child(folder, index)
        children[pid] = index
        index += 1
    while children:
        _reap(folder, children)


def _reap(folder: str, children: dict[int, int]) -> None:
    pid, status = os.wait()
    index = children.pop(pid)
    with open(os.path.join(folder, f"{index}.status"), "w") as out:
        out.write(str(os.waitstatus_to_exitcode(status)))


def _forked_child(folder: str, index: int) -> None:
    """Compile job `index` of `folder` and write `compile_for`'s figures (or the error) as JSON;
    never returns."""
    code = 1
    try:
        err = os.open(os.path.join(folder, f"{index}.err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(err, 2)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the server's stdout carries its answers alone
        with open(os.path.join(folder, f"{index}.job")) as job:
            kernel, arch = json.load(job)
        try:
            answer = asdict(compile_for(from_argument(kernel), arch))
        except (RunError, UsageError) as exc:
            answer = {"error": str(exc)}
        with open(os.path.join(folder, f"{index}.json"), "w") as out:
            out.write(json.dumps(answer))
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def _compile_each(specs: list[KernelSpec | UserKernel], arch: str) -> list[KernelResources | RunError]:
    """Each of `specs` in a process started from scratch, several at a time (where there is no fork)."""
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda spec: _compile_in_child(spec, arch), specs))


def _compile_in_child(spec: KernelSpec | UserKernel, arch: str) -> KernelResources | RunError:
    proc = subprocess.run([sys.executable, "-m", "roofline.measure.offline", to_argument(spec), arch],
                          capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, env=compiler_env())
    try:
        answer = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        last = next((ln for ln in reversed(proc.stderr.splitlines()) if ln.strip()), "no message")
        return RunError(f"{spec.name} for {arch}: the compiling process failed (exit code {proc.returncode}): "
                        f"{last.strip()[:200]}")
    return RunError(answer["error"]) if "error" in answer else KernelResources(**answer)


def _fixed_address_space() -> None:
    """Re-run this process with address-space randomisation off, once (Linux: personality
    ADDR_NO_RANDOMIZE, which takes effect at exec). Elsewhere, or where the call is refused,
    nothing changes."""
    if not sys.platform.startswith("linux") or os.environ.get(_FIXED_LAYOUT):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        current = libc.personality(0xFFFFFFFF)
        if current == -1 or libc.personality(current | _ADDR_NO_RANDOMIZE) == -1:
            return
    except (OSError, AttributeError):
        return
    os.environ[_FIXED_LAYOUT] = "1"
    os.execv(sys.executable, [sys.executable, "-m", "roofline.measure.offline", *sys.argv[1:]])


def _warm_up() -> None:
    """Load NVRTC and compile an empty kernel without ptxas: NVRTC's first compile in a process
    spends about 0.3 s starting its front end, which a forked child then inherits instead of
    paying again. Where NVRTC is missing nothing happens here; each compile then says why."""
    try:
        nvrtc_version()
        from cupy_backends.cuda.libs import nvrtc

        arch = f"sm_{max(nvrtc.getSupportedArchs())}"
        _compile("roofline_warm_up.cu", "warm-up", arch, "__global__ void roofline_warm_up() {}\n",
                 "roofline_warm_up", ptxas=False)
    except Exception:
        pass


def _child_main() -> None:
    """`python -m roofline.measure.offline KERNEL ARCH`: print `compile_for`'s figures (or the
    error) as one JSON line. `... --serve`: the fork server (`_serve`)."""
    if sys.argv[1:2] == ["--serve"]:
        _serve()
        return
    _fixed_address_space()
    _warm_up()  # the state a forked child starts from
    try:
        answer = asdict(compile_for(from_argument(sys.argv[1]), sys.argv[2]))
    except (RunError, UsageError) as exc:
        answer = {"error": str(exc)}
    print(json.dumps(answer))


def dynamic_smem_bytes(spec: KernelSpec | UserKernel, arch: str = "sm_80") -> int:
    """The dynamic shared memory `spec` is launched with, in bytes: a user kernel's declared
    figure, or as a ladder kernel's file computes it (0 for a kernel that takes none). Raises
    RunError when the expression does not compile."""
    if spec.smem_expression is None:
        return spec.fixed_dynamic_smem_bytes
    return _probe_smem(spec.family.source_file, spec.name_expression, spec.smem_expression, spec.target(arch))


@lru_cache(maxsize=None)
def _probe_smem(file_name: str, label: str, expression: str, arch: str) -> int:
    """`dynamic_smem_bytes`, compiled once per kernel, tile and target in a process (a size sweep
    launches the same kernels at every size)."""
    nvrtc_version()
    lowered = _compile(file_name, label, arch, source(file_name) + _PROBE, f"roofline_smem_probe<{expression}>",
                       ptxas=False)[1]
    match = _LOWERED_INT.search(lowered)
    if match is None:
        raise RunError(f"{label}: cannot read its dynamic shared memory from {lowered!r}")
    return int(match.group(1))


def max_threads(ptx: str, lowered: str) -> int | None:
    """The product of the `.maxntid X, Y, Z` directive (what `__launch_bounds__` compiles to) of
    entry `lowered` in `ptx`; None when the entry declares none."""
    start = ptx.find(f".entry {lowered}(")
    if start < 0:
        return None
    body = ptx.find("{", start)
    match = _MAXNTID.search(ptx, start, body if body > 0 else len(ptx))
    return None if match is None else int(match.group(1)) * int(match.group(2) or 1) * int(match.group(3) or 1)


def _without_name_map(log: str) -> str:
    """The log without the errors NVRTC reports on its own name-expression lookup (`__nv_name_map`),
    which follow from an error in the file and only repeat the entry."""
    out, in_map = [], False
    for line in log.splitlines():
        if line.startswith("__nv_name_map"):
            in_map = True
        elif not (in_map and (line.startswith(" ") or not line.strip())):  # its quoted lines go with it
            in_map = False
            out.append(line)
    return "\n".join(out)


def compile_options(spec: KernelSpec | UserKernel) -> tuple[str, ...]:
    """NVRTC options besides the target, for this compile and CuPy's: the kernel's own, and for a
    user's kernel the CUDA header folders (`cuda_include_options`)."""
    return spec.compile_options + (cuda_include_options() if isinstance(spec, UserKernel) else ())


def launch_check(res: KernelResources, limits: ArchLimits, threads: int, dynamic_smem: int) -> tuple[Occupancy, str | None]:
    """The calculated occupancy of a compiled kernel and why a block of `threads` cannot launch on
    `limits`' SM (a resource over the limit, or its __launch_bounds__), None when it can."""
    occ = calculate(limits, max(res.registers, 1), threads, res.static_smem_bytes, dynamic_smem)
    return occ, occ.reason or res.launch_bounds_reason(threads)


@lru_cache(maxsize=None)
def cuda_include_options() -> tuple[str, ...]:
    """-I options for the CUDA headers a kernel may include (<cuda_fp16.h>, <cuda_pipeline.h>):
    the include folders of the CUDA wheels (nvidia/cuda_runtime, nvidia/cu13) and of the toolkit
    CuPy finds (CUDA_PATH), those that exist."""
    import importlib.util

    found = []
    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cuda_runtime/include", "cu13/include", "cu12/include"):
            if os.path.isdir(os.path.join(base, sub)):
                found.append(os.path.join(base, sub))
    try:
        import cupy

        cuda_path = cupy.cuda.get_cuda_path()
    except Exception:
        cuda_path = None
    if cuda_path and os.path.isdir(os.path.join(cuda_path, "include")):
        found.append(os.path.join(cuda_path, "include"))
    return tuple(f"-I{folder}" for folder in dict.fromkeys(found))


def compiler_lines(log: str, limit: int = 12) -> list[str]:
    """The lines of an NVRTC log that say what is wrong ('mine.cu(12): error: ...' and the source
    lines it quotes), at most `limit`, without the empty ones and the summary line."""
    lines = [ln.rstrip() for ln in log.strip("\x00\n ").splitlines()
             if ln.strip() and "detected in the compilation" not in ln]
    return lines[:limit] + ([f"... ({len(lines) - limit} more lines)"] if len(lines) > limit else [])


def _compile(file_name: str, label: str, arch: str, text: str, expression: str,
             ptxas: bool = True, options: tuple[str, ...] = ("-std=c++17",),
             cubin: bool = False) -> tuple[str, str, str | bytes]:
    """Compile `text` (named `file_name` in messages) for `arch` with `expression` instantiated;
    returns (program log, lowered name, PTX), or with `cubin` the binary in place of the PTX. A failure is a RunError whose first line starts with
    `label`, followed by the compiler's own lines (`compiler_lines`)."""
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(text, file_name, [], [])
    try:
        nvrtc.addNameExpression(prog, expression)
        flags = [f"-arch={arch}", *options] + (["-Xptxas", "-v"] if ptxas else [])
        try:
            nvrtc.compileProgram(prog, flags)
        except Exception as exc:
            log = nvrtc.getProgramLog(prog) or str(exc)
            if "gpu-architecture" in log:
                raise _unsupported(arch) from None
            errors = [ln for ln in log.splitlines() if ": error" in ln]
            if errors and all(ln.startswith("__nv_name_map") for ln in errors):  # only the entry failed
                raise RunError(f"{label}: {file_name} has no kernel {expression!r}; check the entry's name and "
                               "template arguments") from None
            lines = compiler_lines(_without_name_map(log)) or [str(exc)]
            raise RunError(f"{label} does not compile for {arch}:\n" + "\n".join(f"  {ln}" for ln in lines)) from None
        try:
            lowered = nvrtc.getLoweredName(prog, expression)
        except Exception:
            raise RunError(f"{label}: {file_name} has no kernel {expression!r}; check the entry's name and "
                           "template arguments") from None
        if cubin:
            return nvrtc.getProgramLog(prog), lowered, nvrtc.getCUBIN(prog)
        ptx = nvrtc.getPTX(prog)
        return nvrtc.getProgramLog(prog), lowered, ptx.decode() if isinstance(ptx, bytes) else ptx
    finally:
        nvrtc.destroyProgram(prog)


if __name__ == "__main__":
    _child_main()
