"""`roofline device`: peaks, ceilings and per-SM limits of a GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import typer

from ..console import present
from ..errors import UsageError
from ..outcome import Outcome

if TYPE_CHECKING:
    from ..model.device import DeviceSpec


MOUNT = dict(short_help="Peaks, ceilings and per-SM limits of a GPU.")


def command(
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME", help="Describe a preset (or device file, mygpu.toml) instead of this GPU."),
    measure: bool = typer.Option(False, "--measure", help="Measure this GPU's sustained ceilings now (and cache "
                                                          "them): DRAM, L2, shared memory, FP32, tensor-core FP16, "
                                                          "launch latency; and its energy per FLOP and per byte, "
                                                          "fitted from the power at four loads of each, and idle "
                                                          "power."),
    as_json: bool = typer.Option(False, "--json", help="Print the device JSON."),
):
    """Clocks, per-SM limits and the ridge point of this GPU (NVML) or of a preset (--gpu NAME, no
    GPU needed), then the roof of every precision (FP64, FP32, FP16/BF16 on the CUDA cores, the
    tensor-core FP64, FP16, BF16, TF32, FP8 and INT8) and of every memory level (DRAM, L2,
    L1/shared) as per-SM per-clock throughput x SMs x clock, with its source; with --measure,
    the sustained ceilings beside them (copy, FMA chains, L2- and shared-memory-resident streams,
    cuBLAS FP16 on the tensor cores) and the energy ceilings (pJ per FLOP and per DRAM or L2
    byte with their fit's error, idle power) that `plot --kind energy` draws."""

    present(view(device(gpu, measure)), as_json)


def device(gpu: str | None = None, measure: bool = False) -> DeviceSpec:
    """A preset's figures (`gpu`), or this GPU's through NVML; with `measure`, this GPU's ceilings
    measured now (and cached), its energy ceilings with them (`measure.energy_ceilings`). Raises
    UsageError for an unknown preset or `measure` with a preset;
    RunError when there is no GPU and no preset, or for `measure` without a GPU."""
    from ..measure import ceilings, nvml
    if measure and gpu is not None:
        raise UsageError("{measure} needs this machine's GPU; it cannot measure a {gpu} preset", "measure", ["gpu"])
    if measure:
        nvml.require_gpu()  # like run: no GPU here is a runtime failure (exit 1)
    spec = nvml.describe(gpu)
    if not measure:
        return spec
    from ..measure import energy_ceilings

    return energy_ceilings.measure_and_remember(ceilings.measure(spec, refresh=True).attach(spec))


def view(spec: DeviceSpec) -> Outcome:
    """A GPU's figures: as JSON with its arch and ridge point (`documents`); its table, their sources,
    the roofs of every precision and level, and a note on the tensor cores' clock where it differs."""
    from .. import documents

    return Outcome(documents.to_json(spec), lambda width: documents.view(spec, width))
