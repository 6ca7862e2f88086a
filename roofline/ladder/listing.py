"""The ladder (or the user's kernels) listed at one size for a target: each kernel's traffic model,
floors against a GPU's roofs, and, compiled for the target, its registers, shared memory,
occupancy and waves (`roofline kernels`; its `--json` is `to_json`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from ..model.precision import PRECISIONS
from ..model.roofs import COMPUTE_LEVEL, LAUNCH, memory_floor
from .user import UserKernel

if TYPE_CHECKING:
    from ..measure.nvrtc_compile import KernelResources
    from ..model.device import DeviceSpec
    from ..model.occupancy import Occupancy
    from ..model.roofs import Verdict
    from ..model.traffic import ModelFigures
    from ..model.waves import Waves
    from .families import KernelSpec


@dataclass(frozen=True)
class KernelRow:
    """One kernel of the listing: its model at the size, and for a target its resources and
    occupancy (or why it has none)."""

    spec: KernelSpec | UserKernel
    figures: ModelFigures | None
    floors: Verdict | None = None
    resources: KernelResources | None = None
    dynamic_smem_bytes: int = 0
    occupancy: Occupancy | None = None
    unavailable: str | None = None
    error: str | None = None
    waves: Waves | None = None


@dataclass(frozen=True)
class KernelListing:
    """The ladder (or the user's kernels) at one size, for a target `arch` (None: model only) and
    a `device` (for floors); `notes` on user kernels whose launch and model disagree."""

    size: int
    arch: str | None
    device: DeviceSpec | None
    rows: list[KernelRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dtype: str = "fp32"  # the precision listed (`model.precision.DTYPES`)
    targets: dict[str, str] = field(default_factory=dict)  # kernel -> its compile target where not `arch` (sm_90a)

    @property
    def compute_level(self) -> str:
        """The compute roof the floors are read against: 'FP32', 'BF16 tensor', ..."""
        return COMPUTE_LEVEL[PRECISIONS[self.dtype].key]

    def to_json(self) -> dict:
        """The listing as JSON: per kernel its template and tile source, model, floors (with a
        device), and for a target registers, local_bytes, shared memory, the occupancy JSON and the
        target it was built for ('sm_90a' for wgmma) (and for a user's kernel the compiler that
        built it: 'nvcc 13.0.88', 'NVRTC 12.9'); a kernel that declares its own work, that work at
        its sizes (`declared`). `size` is the GEMM size the model is at, which such a kernel does not use."""
        out = []
        for r in self.rows:
            row = {"name": r.spec.name, "summary": r.spec.summary, "template": r.spec.name_expression,
                   "tile_source": r.spec.tile_source, "threads_per_block": r.spec.threads_per_block}
            if isinstance(r.spec, UserKernel):
                row["source"] = r.spec.describe()
            if r.resources is not None:
                row.update(registers=r.resources.registers, local_bytes=r.resources.local_bytes,
                           static_smem_bytes=r.resources.static_smem_bytes,
                           dynamic_smem_bytes=r.dynamic_smem_bytes, occupancy=r.occupancy.to_dict())
                if isinstance(r.spec, UserKernel) and r.resources.compiler:
                    row["compiler"] = r.resources.compiler
                row["target"] = self.targets.get(r.spec.name, self.arch)
            for key in ("unavailable", "error"):
                if getattr(r, key):
                    row[key] = getattr(r, key)
            if r.waves is not None:
                row["waves"] = asdict(r.waves)
            row["model"] = asdict(r.figures) if r.figures is not None else None
            if getattr(r.spec, "workload", None):  # a kernel that declares its own work: at its sizes
                row["declared"] = self.declared(r.spec)
            if r.floors is not None:
                v = r.floors
                memory = memory_floor(v)
                row["floors"] = {"memory_floor_ms": memory.floor_ms if memory else None,
                                 "memory_level": memory.level if memory else None,
                                 "compute_floor_ms": v.floor(self.compute_level).floor_ms,
                                 "levels_ms": {f.level: f.floor_ms for f in v.floors},
                                 "set_aside": {f.level: f.aside for f in v.floors if f.aside},
                                 "binding": "compute" if v.binding.level == self.compute_level
                                 else "launch" if v.binding.level == LAUNCH else "memory",
                                 "binding_level": v.binding.level}
            out.append(row)
        return {"size": self.size, "arch": self.arch, "device": self.device.name if self.device else None,
                "kernels": out, "notes": list(self.notes)}

    def declared(self, kernel) -> dict:
        """A kernel's declared work at the sizes it declares (or --size gave), for the JSON and the
        table alike (`declared_work` with this listing's device)."""
        return declared_work(kernel, self.device)

    @property
    def errors(self) -> list[str]:
        """The kernels that did not compile or cannot launch on the target, one message each."""
        return [r.error for r in self.rows if r.error]


def declared_work(kernel: UserKernel, device: DeviceSpec | None) -> dict:
    """A graded kernel's declared work at its sizes: 'workload' (its text), 'sizes', 'flops' (FLOPs
    per precision key), 'bytes' (compulsory), 'flop_per_byte' (None without bytes), and with a
    `device` its speed of light 't_sol_ms' (`model.sol.speed_of_light`: the device's roofs, no
    launch floor) and the roof that binds it, 'binding_level' (both None without a device or where
    no roof takes its work)."""
    from ..model import sol

    d, work = kernel.declared, kernel.declared.work()
    out = {"workload": d.workload_text(), "sizes": dict(d.sizes), "flops": dict(work.flops),
           "bytes": work.nbytes, "flop_per_byte": work.intensity, "t_sol_ms": None, "binding_level": None}
    if device is not None:
        light = sol.speed_of_light(work, device.roofs, device.l2_bytes)
        if light.binding is not None:
            out.update(t_sol_ms=light.ms, binding_level=light.binding.level)
    return out
