"""The energy a kernel took, as recorded: joules per launch from NVML's energy counter over loops
of its launches (`measure.energy`), with its 95 % confidence interval over the loops, the average
board power while they ran, and what follows from them with the kernel's work: GFLOP per joule and
bytes per joule. Pure Python: reading a file never loads the measuring code.
"""

from __future__ import annotations

from dataclasses import dataclass

from .timing import ci95_half, median_ci95

STABLE_ENERGY = 0.02  # a kernel's joules per launch known to +/-2 % (its CI95 over the loops) is stable


@dataclass(frozen=True)
class Energy:
    """A kernel's energy from `len(loops_j)` loops of its launches (`measure.energy`), each of
    `launches` launches: joules per launch (the median over the loops), the average board power
    while they ran in W (the median), a loop's seconds of wall clock (the median), and the joules
    per launch of the L2 flush that preceded each launch, measured alone and subtracted (0 without
    one). `loops_j` holds each loop's joules per launch (empty in files written before loops were
    repeated: one loop then); `windowed` says the power came from the energy counter's own updates
    inside each loop (False: from its readings at the loop's two ends); `clock_mhz` the SM clock
    they ran at (a loop is a second of sustained load: at a power cap it is below the clock the
    kernel was timed at, and a launch takes longer there, `ms_per_launch`)."""

    joules_per_launch: float
    watts: float
    launches: int
    seconds: float
    subtracted_j: float = 0.0
    loops_j: tuple[float, ...] = ()
    windowed: bool = False
    clock_mhz: int | None = None  # the SM clock while the loops ran (the median of NVML's readings), None where not read

    @property
    def ms_per_launch(self) -> float:
        """A launch's share of a loop's wall clock in ms, its L2 flush included: under a second of
        sustained load a GPU at its power cap runs slower than in the short bursts it is timed in."""
        return 1000 * self.seconds / self.launches

    def gflop_per_j(self, flops: float) -> float | None:
        """GFLOP per joule of a launch doing `flops` FLOPs (None for no energy measured)."""
        return flops / self.joules_per_launch / 1e9 if self.joules_per_launch > 0 else None

    def bytes_per_j(self, nbytes: float | None) -> float | None:
        """Bytes per joule of a launch moving `nbytes` (None without bytes or energy)."""
        return nbytes / self.joules_per_launch if nbytes and self.joules_per_launch > 0 else None

    @property
    def ci95_j(self) -> tuple[float, float] | None:
        """The 95 % confidence interval of the joules per launch over the loops
        (`model.timing.median_ci95`: from 6 loops, their lowest and highest); None for fewer."""
        return median_ci95(self.loops_j)

    @property
    def ci95_half(self) -> float | None:
        """`ci95_j`'s half-width over the joules per launch: 0.02 means known to +/-2 %; None
        without an interval or energy."""
        return ci95_half(self.loops_j) if self.joules_per_launch > 0 else None

    @property
    def stable(self) -> bool | None:
        """Whether the joules per launch are known to within STABLE_ENERGY; None without an interval."""
        half = self.ci95_half
        return None if half is None else half <= STABLE_ENERGY


@dataclass(frozen=True)
class EnergyFit:
    """The board power at several loads of one resource, fitted as P = static_w + pj_per_unit x
    rate (least squares over `points` loads; each error is the fit's standard error): the energy
    one FLOP (`unit` 'FLOP') or one byte ('byte') takes there, in picojoules, and the power the
    board draws while that resource runs at no rate, in W."""

    kind: str  # 'fp32', 'fp16_tensor', 'dram', 'l2'
    unit: str  # 'FLOP' or 'byte'
    pj_per_unit: float
    pj_error: float
    static_w: float
    static_error: float
    points: int

    @property
    def resolved(self) -> bool:
        """Whether the board's power rose with the rate: the energy per unit above zero by more than
        two standard errors. Not so where every load ran at the power limit (an H100's FP16 tensor
        loads, 2026-12-07: -0.163 ± 0.076 pJ per FLOP at 797 W), and such a fit is no energy."""
        return self.pj_per_unit > 2 * self.pj_error


@dataclass(frozen=True)
class EnergyCeilings:
    """What `device --measure` found about energy: the idle board power (W, nothing running) and a
    fit per resource (`EnergyFit`), with when it was measured."""

    idle_w: float
    fits: tuple[EnergyFit, ...]
    measured_at: str

    def fit(self, kind: str) -> EnergyFit | None:
        """The fit of resource `kind`, or None where it was not measured or is not resolved
        (`EnergyFit.resolved`: no energy per unit to model with)."""
        return next((f for f in self.fits if f.kind == kind and f.resolved), None)

    def gflop_per_j(self, intensity: float, compute: str, peak_gflops: float, dram_gbps: float) -> float | None:
        """The energy ceiling at arithmetic intensity `intensity` (FLOP per DRAM byte): the GFLOP
        per joule of a kernel running on the roofline (its time max(FLOPs / `peak_gflops`, bytes /
        `dram_gbps`)), paying each FLOP of kind `compute` and each DRAM byte its fitted energy and
        the compute fit's static power for its time (the energy roofline of Choi, Bedard, Fowler
        and Vuduc, "A roofline model of energy", IPDPS 2013). None without both fits."""
        flop, byte = self.fit(compute), self.fit("dram")
        if flop is None or byte is None or intensity <= 0:
            return None
        seconds_per_flop = max(1 / (peak_gflops * 1e9), 1 / (intensity * dram_gbps * 1e9))
        joules_per_flop = (flop.pj_per_unit + byte.pj_per_unit / intensity) * 1e-12 + flop.static_w * seconds_per_flop
        return 1e-9 / joules_per_flop if joules_per_flop > 0 else None
