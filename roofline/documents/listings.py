"""The descriptions: the ladder's (or the user's) kernels listed (`roofline kernels`:
`ladder.listing.KernelListing`), an occupancy (`roofline occupancy`: `model.occupancy.OccupancyReport`) and a
GPU (`roofline device`: `model.device.DeviceSpec`). Each with its `--json` (checked against its
model) and its view.

`occupancy_json` and `device_json` import neither the results models nor numpy, so that the
`occupancy` command stays light: call them directly there rather than through the registry (whose
first use imports every kind)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from ..model.device import DeviceSpec
from . import models
from .registry import DocumentKind, register


def occupancy_json(report) -> dict:
    """An `OccupancyReport`'s `--json`, checked against `models.OccupancyJson`."""
    return models.checked(models.OccupancyJson, report.to_json())


def device_json(spec: DeviceSpec) -> dict:
    """A GPU's `--json`: its fields, its arch and ridge point, and the rates a device file gave
    (`flops_per_sm_per_clock`, so that the JSON read back as a device file keeps them), checked
    against `models.device_model()`."""
    from ..model.device import file_rate

    rates = {k: file_rate(src) for k, src in (spec.peak_sources or {}).items() if file_rate(src) is not None}
    document = dict(asdict(spec), arch=spec.arch, ridge_point_flop_per_byte=round(spec.ridge_point, 2),
                    flops_per_sm_per_clock=rates)
    return models.checked(models.device_model(), document)


class KernelsKind(DocumentKind):
    name = "kernels"

    @property
    def types(self):
        from ..ladder.listing import KernelListing

        return (KernelListing,)

    @property
    def model(self):
        return models.kernels_model()

    def view(self, obj, width: int, model_only: bool = False, autotuned_tile: str | None = None, **context) -> list:
        """Its tables, why a kernel is unavailable, and what an uncompiled `autotuned_tile` lacks."""
        from ..render.tables import kernels_tables

        shown = [*kernels_tables(obj, width), *(row.unavailable for row in obj.rows if row.unavailable)]
        if obj.arch is None and autotuned_tile is not None:
            why = "with --model-only" if model_only else "without a target"
            shown.append(f"--autotuned-tile is not compiled {why}, so the compiler has not checked the tile; "
                         + ("drop --model-only" if model_only else "add --arch sm_XY"))
        return shown


class OccupancyKind(DocumentKind):
    name = "occupancy"
    model = models.OccupancyJson

    @property
    def types(self):
        from ..model.occupancy import OccupancyReport

        return (OccupancyReport,)

    def json(self, obj) -> dict:
        return occupancy_json(obj)

    def view(self, obj, width: int, out: Path | None = None, **context) -> list:
        """Its table, why it cannot launch, the target's answer, the chart written to `out`."""
        from ..render.tables import occupancy_table

        occ = obj.occupancy
        return [occupancy_table(occ), *([f"cannot launch: {occ.reason}"] if occ.reason else []),
                *([obj.target_text] if obj.target_text else []), *([f"wrote {out}"] if out is not None else [])]


class DeviceKind(DocumentKind):
    name = "device"
    types = (DeviceSpec,)

    @property
    def model(self):
        return models.device_model()

    def json(self, obj: DeviceSpec) -> dict:
        return device_json(obj)

    def view(self, obj: DeviceSpec, width: int, **context) -> list:
        """Its table, their sources, the roofs of every precision and level, and a note on the
        tensor cores' clock where it differs."""
        from ..render.tables import device_source, device_table, peaks_tables
        from ..render.text import tensor_clock_note

        clock = tensor_clock_note(obj.tensor_clock_mhz, obj.max_sm_clock_mhz)
        return [device_table(obj), device_source(obj), *peaks_tables(obj, width), *([clock] if clock else [])]


KERNELS = register(KernelsKind())
OCCUPANCY = register(OccupancyKind())
DEVICE = register(DeviceKind())
