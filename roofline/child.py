"""How roofline starts a Python process of its own, and how that process answers: one protocol for
every child (the compile server and its one-off compiles, a user's kernel run apart, a graded
workload, the launch `run --profile` counts, NVIDIA's report reader, a graded `run --profile`'s call).

    parent                                          child (`python -m roofline.MODULE`)
    command(MODULE) or command(MODULE, file)        request(): the request, a JSON object
    ask(MODULE, request, limit_s): the request      ... does its work ...
      (or Started(MODULE) early, .ask(...) later)
      as JSON on the child's stdin, `sent_at`       answer(text): one line of JSON, the last of
      added; waits at most limit_s seconds           its stdout (what a kernel printed comes
                                                     before it); the process ends at once

A process run under Nsight Compute (whose stdin belongs to ncu's own caller) gets its request in
a file instead, named on its command line (`command(MODULE, write_request(request, folder))`),
and answers with its exit code: ncu's report is the answer.

The parent always gets a `Reply`: the child's answer, or why it gave none, in the words every
caller repeats (`Reply.why`): a child stopped at its limit ('timeout'), or one that ended without
an answer ('died', its exit code and the last line it wrote on stderr). A launch that outlives
its time inside a child (`measure.waiting.LaunchTimeout`) is the child's to report in its answer:
it cannot touch the GPU again, so it answers at once and ends (`answer` never returns), and
`seconds_before` tells how long the child ran before that launch (start-up, compile, inputs).

Imports nothing of roofline: `nsight` starts its reader through it as `measure` does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NoReturn

REQUEST_FLAG = "--request"


def command(module: str, request_file: Path | None = None) -> list[str]:
    """The command line of child `module` (`roofline.measure.isolated`): this Python, the module;
    with `request_file`, the file its request is read from (a process run under ncu)."""
    return [sys.executable, "-m", module] + ([REQUEST_FLAG, str(request_file)] if request_file is not None else [])


def write_request(request: dict, folder: Path, name: str = "request.json") -> Path:
    """`request` written as JSON to `folder`/`name`, for a child that reads it from there
    (`command(module, file)`); the file's path."""
    path = Path(folder) / name
    path.write_text(json.dumps({**request, "sent_at": time.time()}), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Reply:
    """What a child gave: `answer` (its last line of stdout as `read` took it), else `failure`
    ('timeout' or 'died') and `why` (one line); `returncode` and `stderr_tail` (its last
    non-empty line on stderr, '' for none) where it ended."""

    answer: object = None
    failure: str | None = None
    why: str | None = None
    returncode: int | None = None
    stderr_tail: str = ""


class Started:
    """Child `module`, started now with its stdin open: its interpreter starts and its imports run
    (those `serve`'s `prepare` does) while the parent does other work; `ask` then sends its
    request. A parent grading several entries one after another starts the next one's child while
    the current one runs, each entry still in a fresh process of its own. `close` ends a child
    that was never asked."""

    def __init__(self, module: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(command(module), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)

    def ask(self, request: dict, limit_s: float | None, read: Callable[[str], object] = json.loads) -> Reply:
        """`request` sent (as `ask` does) and the child's `Reply`, waiting at most `limit_s` seconds
        from now. Never raises for the child."""
        payload = json.dumps({**request, "sent_at": time.time()})
        try:
            out, err = self.proc.communicate(payload, timeout=limit_s)
        except subprocess.TimeoutExpired:
            self.close()
            return Reply(failure="timeout", why=f"timeout: its process was stopped after {limit_s:g} s without an answer")
        except (BrokenPipeError, OSError):  # it ended before reading its request
            out, err = self.proc.communicate()
        return _reply(out, err, self.proc.returncode, read)

    def close(self) -> None:
        """End the child if it still runs, and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def ask(module: str, request: dict, limit_s: float | None, read: Callable[[str], object] = json.loads,
        env: dict[str, str] | None = None) -> Reply:
    """Run child `module` with `request` as JSON on its stdin (`sent_at` added: the wall clock when
    it was started, `seconds_before`) for at most `limit_s` seconds, and read its answer: the last
    line of its stdout, through `read` (a line `read` refuses, raising ValueError, is no answer).
    Never raises for the child: a `Reply` without an answer says why."""
    payload = json.dumps({**request, "sent_at": time.time()})
    try:
        proc = subprocess.run(command(module), input=payload, capture_output=True, text=True, timeout=limit_s,
                              env=env)
    except subprocess.TimeoutExpired:
        return Reply(failure="timeout", why=f"timeout: its process was stopped after {limit_s:g} s without an answer")
    return _reply(proc.stdout, proc.stderr, proc.returncode, read)


def _reply(stdout: str, stderr: str, returncode: int | None, read: Callable[[str], object]) -> Reply:
    """The `Reply` of a child that ended with `stdout`, `stderr` and `returncode`."""
    lines = (stdout or "").strip().splitlines()
    try:
        answer = read(lines[-1]) if lines else None
    except ValueError:
        answer = None
    if answer is not None:
        return Reply(answer=answer, returncode=returncode)
    last = next((ln.strip() for ln in reversed((stderr or "").strip().splitlines()) if ln.strip()), "")
    ended = "ended" if returncode == 0 else "died"
    if lines and returncode == 0:  # it ended cleanly, its last line not the report this parent asked for (forged, stray)
        return Reply(failure="died", returncode=returncode, stderr_tail=last,
                     why=f"its process {ended} (exit code {returncode}) with a last line that is not the harness's "
                         f"report (a forged or stray line: {lines[-1].strip()[:80]!r})")
    return Reply(failure="died", returncode=returncode, stderr_tail=last,
                 why=f"its process {ended} (exit code {returncode}) without a report: {(last or 'no message')[:200]}")


def request(argv: list[str] | None = None) -> dict:
    """The child's request: from the file its command line names (`REQUEST_FLAG`), else its stdin."""
    argv = sys.argv[1:] if argv is None else argv
    if REQUEST_FLAG in argv[:-1]:
        return json.loads(Path(argv[argv.index(REQUEST_FLAG) + 1]).read_text(encoding="utf-8"))
    return json.loads(sys.stdin.read())


def answer(text: str | None = None) -> NoReturn:
    """Write `text` (one line of JSON; nothing for a child whose answer is its exit code) as the
    last line of stdout and end the process at once with code 0: a kernel stopped for its time may
    still be running, and the driver ends it with the process."""
    if text is not None:
        sys.stdout.write(text.rstrip("\n") + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def serve(handle: Callable[[dict], str | None], failed: Callable[[dict, Exception], str],
          prepare: Callable[[], None] | None = None) -> NoReturn:
    """The child's whole life: `prepare()` (the imports every request needs, done before the
    request is read: a `Started` child does them while its parent waits on another), its
    `request()`, `handle(request)`'s answer (None: the exit code is the answer), or for an
    exception `failed(request, exc)`'s (which may raise it on, to end the process with a traceback
    and a non-zero exit code); then `answer`, which ends it. An exception in `prepare` is
    `failed`'s too, with the request read after it."""
    trouble = None
    if prepare is not None:
        try:
            prepare()
        except Exception as exc:  # noqa: BLE001 - answered below, once the request is known
            trouble = exc
    req = request()
    if trouble is not None:
        answer(failed(req, trouble))
    try:
        text = handle(req)
    except Exception as exc:  # noqa: BLE001 - every child's failure is answered, in its own words
        text = failed(req, exc)
    answer(text)


def since_sent(req: dict) -> float:
    """Seconds since the parent started the child that reads `req` (its `sent_at`): the
    interpreter's start, imports, compile and inputs included."""
    return time.time() - req.get("sent_at", time.time())


def seconds_before(req: dict, waited_s: float) -> float:
    """Seconds the child ran before the launch it waited `waited_s` seconds for (0 or more)."""
    return max(0.0, since_sent(req) - waited_s)
