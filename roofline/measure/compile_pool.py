"""Compiling kernels each in a process of its own (`compile_in_fresh_process`): children forked
from one server that loaded NVRTC with address randomisation off and lives as long as the process
that started it (`_ForkServer`), or, where there is no fork, processes started from scratch. The
children run `toolchain.resources` (NVRTC, or nvcc for a user's file where a toolkit is found);
figures compiled before are taken from `compile_cache`.

`python -m roofline.measure.compile_pool` is either (`roofline.child`, `_child_main`): with the
request {"serve": true} as the first line of its stdin, the server (each later line a folder of
jobs, each job file a request); with {"kernel": ..., "arch": ...}, one kernel compiled in a
process started from scratch, its figures (or error) the answer.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from .. import child
from ..errors import RunError, UsageError
from ..ladder.families import KernelSpec
from ..ladder.user import UserKernel, from_argument, to_argument
from .compile_cache import cache_key, cached_resources, remember
from .nvrtc_compile import KernelResources, compiler_env, warm_up
from .toolchain import resources

CHILD = "roofline.measure.compile_pool"
_ADDR_NO_RANDOMIZE = 0x0040000  # linux/personality.h
COMPILE_TIMEOUT_S = 600


def compile_in_fresh_process(specs: list[KernelSpec | UserKernel], arch: str,
                             cache: bool = True) -> list[KernelResources | RunError]:
    """`toolchain.resources` of each of `specs` for target `arch`, each in a process of its own with
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
    keys = [cache_key(spec, arch) if cache else None for spec in specs]
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
            remember(keys[same[0]], res, on_disk=isinstance(specs[same[0]], KernelSpec))
    return results


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
            (folder / f"{i}.job").write_text(json.dumps(job(spec, arch)))
        with _server_lock:  # one folder at a time
            said = _fork_server().run(tmp, limit)
        return [_answer(folder, i, spec, arch, said) for i, spec in enumerate(specs)]


def job(spec: KernelSpec | UserKernel, arch: str) -> dict:
    """The request that has a compiling child compile `spec` for `arch`."""
    return {"kernel": to_argument(spec), "arch": arch}


def _compiled(request: dict) -> dict:
    """`toolchain.resources`' figures of the kernel `request` (`job`) names, or {'error': why}."""
    try:
        return asdict(resources(from_argument(request["kernel"]), request["arch"]))
    except (RunError, UsageError) as exc:
        return {"error": str(exc)}


class _ForkServer:
    """A process started with the layout fixed (`_fixed_address_space`) that has loaded NVRTC
    and compiled once (`warm_up`), then, for each folder of jobs named on its stdin, forks a
    child per job (`_fork_jobs`) and answers `done` on its stdout. One per roofline process,
    started on the first compile: a listing, a size sweep and a test session pay for the start
    once. It ends when its stdin closes (this process ended)."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace", prefix="roofline-compile-",
                                          suffix=".err")
        self.proc = subprocess.Popen(child.command(CHILD), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, start_new_session=True, env=compiler_env())
        try:
            self.proc.stdin.write(json.dumps({"serve": True}).encode() + b"\n")  # its request, then folders
            self.proc.stdin.flush()
        except OSError:
            pass  # it ended already: `run` says so

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


def _serve(pending: bytes) -> None:
    """The fork server (`_ForkServer`), its request read: with the layout fixed and NVRTC started,
    read one folder of jobs per line (`pending`: what was read after the request) and fork its
    children (`_fork_jobs`), each from the same state: nothing read from the jobs before the fork,
    and what changes here between forks are small objects only."""
    while True:  # the pipe read and written directly: no stream buffers in the state children start from
        line, pending = _line(pending)
        if line is None:
            return
        _fork_jobs(os.fsdecode(line))
        os.write(1, b"done\n")


def _line(pending: bytes) -> tuple[bytes | None, bytes]:
    """The next line of stdin (read directly, without a stream's buffer) after `pending`, and what
    was read past it; (None, b'') at the end of stdin, (the rest, b'') for a last line without its
    newline."""
    while b"\n" not in pending:
        more = os.read(0, 4096)
        if not more:
            return (pending or None), b""
        pending += more
    line, _, pending = pending.partition(b"\n")
    return line, pending


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
    """Compile job `index` of `folder` and write `toolchain.resources`' figures (or the error) as JSON;
    never returns."""
    code = 1
    try:
        err = os.open(os.path.join(folder, f"{index}.err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(err, 2)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the server's stdout carries its answers alone
        with open(os.path.join(folder, f"{index}.job")) as request:
            answer = _compiled(json.load(request))
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
    reply = child.ask(CHILD, job(spec, arch), COMPILE_TIMEOUT_S, env=compiler_env())
    answer = reply.answer
    if not isinstance(answer, dict):
        said = (f"exit code {reply.returncode}): {(reply.stderr_tail or 'no message')[:200]}" if reply.failure == "died"
                else f"{reply.why})")
        return RunError(f"{spec.name} for {arch}: the compiling process failed ({said}")
    return RunError(answer["error"]) if "error" in answer else KernelResources(**answer)


def _fixed_address_space() -> None:
    """Re-run this process with address-space randomisation off, once (Linux: personality
    ADDR_NO_RANDOMIZE, which takes effect at exec; a process that runs with it already is left
    as it is). Elsewhere, or where the call is refused, nothing changes. Nothing has been read
    from stdin yet: the request is there for the process that follows."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        current = libc.personality(0xFFFFFFFF)
        if current == -1 or current & _ADDR_NO_RANDOMIZE or libc.personality(current | _ADDR_NO_RANDOMIZE) == -1:
            return
    except (OSError, AttributeError):
        return
    os.execv(sys.executable, [sys.executable, *child.command(CHILD)[1:], *sys.argv[1:]])


def _child_main() -> None:
    """`python -m roofline.measure.compile_pool`: with the layout fixed and NVRTC started (the state
    a forked child starts from), read the request (the first line of stdin): {"serve": true}, the
    fork server (`_serve`); else one kernel (`job`), its figures (or the error) the answer."""
    _fixed_address_space()
    warm_up()
    line, pending = _line(b"")
    request = json.loads(line or b"{}")
    if request.get("serve"):
        _serve(pending)
        return
    child.answer(json.dumps(_compiled(request)))


if __name__ == "__main__":
    _child_main()
