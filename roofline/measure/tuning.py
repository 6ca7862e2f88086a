"""The tile search of the autotuned kernel: every tile of `ladder.tiles.candidates()` compiled,
verified against cuBLAS and timed on this GPU, exactly as the ladder is (`runner.run`). A tile
that does not compile (the kernel's static_asserts, the shared-memory limit) is invalid and left
out; the fastest verified tile wins."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import RunError
from ..ladder.families import BY_NAME, TUNABLE
from ..ladder.tiles import candidates
from ..model.device import DeviceSpec
from ..model.problem import Problem
from ..progress import Progress
from .runner import KernelRun, RunOutput, run


@dataclass(frozen=True)
class TuneOutcome:
    """A finished search: the run of every candidate, the winner among them, and the number of
    candidates that compiled."""

    output: RunOutput
    winner: KernelRun
    valid: int

    @property
    def verified(self) -> int:
        """Candidates that compiled, verified and were timed."""
        return sum(1 for r in self.output.kernels if r.ok)


def search(problem: Problem, device: DeviceSpec, progress: Progress | None = None) -> TuneOutcome:
    """Compile, verify and time every candidate tile of the autotuned kernel on `problem`.
    Raises RunError when no candidate verifies."""
    fam = BY_NAME[TUNABLE]
    output = run([fam.spec(p, "variant") for p in candidates()], problem, device, progress)
    timed = [r for r in output.kernels if r.ok]
    if not timed:
        raise RunError("no candidate tile compiled and verified")
    valid = sum(1 for r in output.kernels if r.compiled is not None)
    return TuneOutcome(output, min(timed, key=lambda r: r.timing.median_ms), valid)
