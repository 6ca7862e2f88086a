"""The energy roofline: each kernel's GFLOP per joule (measured, `run --energy`) against its
arithmetic intensity over its DRAM bytes (counted, else the model's: `tables.energy_bytes`), under the
energy ceiling fitted by
`device --measure` (`model.energy.EnergyCeilings.gflop_per_j`: a kernel on the roofline paying the
fitted energy per FLOP and per DRAM byte and the static power for its time). Where no ceiling was
fitted the points are drawn alone and the chart says how to get one.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results.schema import Results
from .chart import check_output, kernel_style, new_figure, save_atomic, text
from .style import MEMORY_COLORS, compute_color
from .tables import energy_bytes
from .text import gemm_title

# The fit each precision's compute energy is read from: FP32's own; the tensor-core precisions
# share the tensor cores' datapath, of which `device --measure` fits FP16 (cuBLAS).
ENERGY_FIT = {"fp32": "fp32", "bf16_tensor": "fp16_tensor", "fp16_tensor": "fp16_tensor", "tf32_tensor": "fp16_tensor"}


def points(doc: Results) -> list[tuple[str, float, float]]:
    """(name, FLOP per byte of the bytes its energy reads, GFLOP/J) of every verified, timed kernel
    with bytes (`tables.energy_bytes`: DRAM counted, else modelled) whose energy was measured: the
    fitted ceiling charges its energy per DRAM byte."""
    flops = doc.problem.problem.flops
    out = []
    for k in doc.kernels:
        nbytes = energy_bytes(k)[0]
        if k.timed and nbytes and k.energy is not None and k.energy.gflop_per_j(flops):
            out.append((k.name, flops / nbytes, k.energy.gflop_per_j(flops)))
    return out


def _axis_bytes(doc: Results) -> str:
    """What the x axis's bytes are: 'counted DRAM or model DRAM', as `tables.energy_bytes` names them."""
    kinds = sorted({energy_bytes(k)[1] for k in doc.kernels if k.timed and k.energy is not None and energy_bytes(k)[0]})
    return " or ".join(kinds) or "model DRAM"


def ceiling(doc: Results, intensities: list[float]) -> list[float | None]:
    """The energy ceiling (GFLOP/J) at each of `intensities`, from the device's fitted energy
    ceilings, the measured roof of the run's precision (else its peak) and the measured DRAM
    bandwidth (else its peak); None everywhere without a fit."""
    energy = doc.device.measured_energy
    if energy is None:
        return [None] * len(intensities)
    peak = doc.peak_gflops(measured=True) or doc.peak_gflops()
    bw = doc.device.measured_dram_gbps or doc.device.peak_dram_gbps
    kind = ENERGY_FIT.get(doc.precision, "fp32")
    return [energy.gflop_per_j(i, kind, peak, bw) for i in intensities]


def draw(doc: Results, out: Path) -> Path:
    """Draw the energy roofline of `doc` into `out` (.png, .svg or .pdf), atomically. Raises
    UsageError when no kernel's energy was measured."""
    fmt = check_output(out)
    if not points(doc):
        raise UsageError("no kernel's energy was measured; run the kernels with roofline run --energy")
    save_atomic(render(doc), Path(out), fmt)
    return Path(out)


def render(doc: Results):
    """The energy roofline of `doc` as a matplotlib Figure."""
    import numpy as np

    pts = points(doc)
    fig = new_figure(10, 6.5, 120)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo = min(i for _, i, _ in pts) / 8  # wide enough to show the ceiling bend at the ridge point
    hi = max(i for _, i, _ in pts) * 8
    xs = list(np.geomspace(lo, hi, 200))
    ys = ceiling(doc, xs)
    energy = doc.device.measured_energy
    level = doc.compute_level
    if any(y is not None for y in ys):
        fit = energy.fit(ENERGY_FIT.get(doc.precision, "fp32"))
        dram = energy.fit("dram")
        label = (f"energy ceiling (fitted): {fit.pj_per_unit:.3g} ± {fit.pj_error:.2g} pJ/FLOP "
                 f"({'FP16 tensor fit' if fit.kind == 'fp16_tensor' else 'FP32'}), "
                 f"{dram.pj_per_unit:.3g} ± {dram.pj_error:.2g} pJ/DRAM byte, {fit.static_w:,.0f} W static")
        ax.plot(xs, ys, color=compute_color(level), lw=2, label=text(label))
    else:
        kinds = (ENERGY_FIT.get(doc.precision, "fp32"), "dram")
        unresolved = [f for f in (energy.fits if energy is not None else ()) if f.kind in kinds and not f.resolved]
        why = (f"no energy ceiling: the {', '.join(f.kind for f in unresolved)} fit is not resolved (the power did not "
               "rise with the rate)" if unresolved else "no energy ceiling: roofline device --measure fits one on this GPU")
        ax.text(0.02, 0.02, why, transform=ax.transAxes, fontsize=9, color=MEMORY_COLORS["DRAM"])
    for i, (name, x, y) in enumerate(pts):
        style = kernel_style(name, i, len(pts))
        ax.scatter([x], [y], s=60, zorder=3, color=style["color"], marker=style["marker"],
                   label=text(f"{name}: {y:,.0f} GFLOP/J"))
    ref = doc.reference.energy
    if ref is not None and ref.gflop_per_j(doc.problem.problem.flops):
        ax.axhline(ref.gflop_per_j(doc.problem.problem.flops), color="#444444", ls=":", lw=1.2,
                   label=text(f"cuBLAS: {ref.gflop_per_j(doc.problem.problem.flops):,.0f} GFLOP/J (no model: a line)"))
    ax.set_xlabel(f"arithmetic intensity (FLOP per byte: {_axis_bytes(doc)})")
    ax.set_ylabel("GFLOP per joule (measured: NVML's energy over loops of launches)")
    ax.set_title(text(f"Energy roofline: {gemm_title(doc.problem.problem)} on {doc.device.name}"), fontsize=11)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.text(0.01, 0.005, "Intensity: FLOPs over the bytes DRAM served (counted by Nsight Compute, else the model's: "
             "the panels the grid's waves fetch past the L2);\nthe ceiling prices each at DRAM's energy. The L2 and "
             "shared-memory traffic a kernel moves costs energy the ceiling does not price.",
             fontsize=8, color="0.35", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig
